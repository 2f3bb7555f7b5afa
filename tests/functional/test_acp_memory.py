"""Memory in ACP: a plan made with lessons from memory names them to the editor — a thought with
one line per Megram (its id, level, space and the lesson's first words) and the plan update's
`_meta`. A real `agentui acp` process over stdio, the fake LLM over HTTP, a real LevelDB store in
the data dir."""

from __future__ import annotations

import asyncio

from acp import text_block

from agentui.clock import SystemClock
from agentui.ids import UuidIds
from agentui.memory import ENV_LOCAL, open_memory
from agentui.memory.workkind import request_space
from agentui.paths import DataLayout
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.functional.test_acp import Client, agent, ws

REQUEST = "how many txt files are here?"
LESSON = "failed (abandon) for \"count files\": avoid glob `**/*.txt` (no usable result)"


async def test_a_plan_made_with_memory_names_its_lessons_to_the_editor(fakellm, tmp_path):
    w = ws(tmp_path)
    (w / "a.txt").write_text("x\n")
    space = request_space(REQUEST)
    assert space is not None
    mem = open_memory(DataLayout(tmp_path / "data").memory_db, SystemClock(), UuidIds())
    lesson = mem.remember(LESSON, level="C", space=space, entity=ENV_LOCAL, sigma=-1.0)
    other = mem.remember("use ruff, not flake8", level="C", space="intent:lint_code", entity=ENV_LOCAL, sigma=1.0)
    await mem.close()
    fakellm.script("perceiver", [perceive("count the txt files")])
    fakellm.script("planner", [plan(["the count is given"], sub("count .txt files", "a number", tools=["shell"]),
                                    checks=["ls *.txt | wc -l"])])
    fakellm.script("executor", [call("shell", command="ls *.txt | wc -l"), finish("1")])
    fakellm.script("agent_validator", [verdicts("pass", quote="1")])
    fakellm.script("meta_validator", [merge("1", "pass", summary="1 txt file")])
    client = Client()
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block(REQUEST)]), 60)
    assert resp.stop_reason == "end_turn"
    assert "**/*.txt" in fakellm.calls("planner")[0]["messages"][1]["content"]  # the plan was made with it
    [thought] = [t for t in client.texts("agent_thought_chunk") if t.startswith("R2 planned with memory")]
    assert thought.splitlines() == [
        f"R2 planned with memory {lesson.id} (agentui memory show ID; forget ID drops a bad lesson):",
        f"- {lesson.id} C {space}: {LESSON}"]
    assert other.id not in thought  # another kind of work's rule is not named
    plans = client.of("plan")
    assert plans and all(p.field_meta == {"agentui": {"memory": [
        {"id": lesson.id, "level": "C", "space": space, "lesson": LESSON}]}} for p in plans)
    at = next(i for i, u in enumerate(client.updates) if u.session_update == "agent_thought_chunk"
              and u.content.text.startswith("R2 planned with memory"))
    assert at < client.updates.index(plans[0])  # named before the plan it was made with
