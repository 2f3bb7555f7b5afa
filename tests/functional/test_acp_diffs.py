"""A file write's permission request carries the change as ACP `diff` content, against a real
`agentui acp` process on the fake LLM; "allow always" for it covers that file, not another."""

from __future__ import annotations

import asyncio

from acp import text_block

from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.functional.test_acp import Client, agent, ws
from tests.functional.test_acp_modes import overwrite


async def test_an_overwrite_asks_with_diff_content(fakellm, tmp_path):
    w = overwrite(fakellm, tmp_path)
    client = Client(answers=["approve"])
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        resp = await asyncio.wait_for(
            conn.prompt(session_id=s.session_id, prompt=[text_block("rewrite notes.txt")]), 60)
    assert resp.stop_reason == "end_turn"
    [(tool_call, options)] = client.permissions
    [diff] = [c for c in tool_call.content if c.type == "diff"]
    assert diff.path == str((w / "notes.txt").resolve()) and diff.old_text == "old" and diff.new_text == "new"
    wire = diff.model_dump(by_alias=True)
    assert wire["oldText"] == "old" and wire["newText"] == "new" and wire["type"] == "diff"
    [always] = [o for o in options if o.kind == "allow_always"]
    assert '"write_file notes.txt"' in always.name
    assert (w / "notes.txt").read_text() == "new"


async def test_a_large_rewrite_sends_the_bounded_unified_diff_as_text(fakellm, tmp_path):
    w = ws(tmp_path)
    (w / "big.txt").write_text("".join(f"row {i}\n" for i in range(20000)))  # over the carried-text bound
    fakellm.script("perceiver", [perceive("rewrite big.txt")])
    fakellm.script("planner", [plan(["big.txt is short"], sub("rewrite big.txt", "big.txt is short",
                                                              tools=["write_file"]))])
    fakellm.script("executor", [call("write_file", path="big.txt", content="short\n"), finish("rewrote big.txt")])
    fakellm.script("agent_validator", [verdicts("pass", quote="big.txt")])
    fakellm.script("meta_validator", [merge("rewrote big.txt", "pass", summary="big.txt rewritten")])
    client = Client(answers=["deny"])
    async with agent(fakellm, tmp_path, client, ggs={"max_replans": 1}) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("rewrite big.txt")]), 60)
    [(tool_call, _)] = client.permissions
    assert not [c for c in tool_call.content if c.type == "diff"]
    texts = [c.content.text for c in tool_call.content if c.type == "content"]
    shown = texts[0].splitlines()
    assert shown[:3] == ["big.txt:", "--- a/big.txt", "+++ b/big.txt"]
    assert shown[-1].startswith("… ") and shown[-1].endswith(" more lines")
    assert (w / "big.txt").read_text().startswith("row 0\n")


async def test_allow_always_covers_later_writes_to_that_file_only(fakellm, tmp_path):
    w = ws(tmp_path)
    (w / "notes.txt").write_text("one\n")
    (w / "other.txt").write_text("x\n")
    fakellm.script("perceiver", [perceive("update the notes")])
    fakellm.responder("planner",
                      lambda _r: plan(["notes updated"], sub("update notes", "updated", tools=["write_file"])))
    steps = iter([call("write_file", path="notes.txt", content="two\n"),
                  call("write_file", path="notes.txt", content="three\n"),
                  call("write_file", path="other.txt", content="y\n"), finish("done")])
    fakellm.responder("executor", lambda _r: next(steps, finish("done")))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", quote="notes.txt"))
    fakellm.responder("meta_validator", lambda _r: merge("updated", "pass"))
    client = Client(answers=["always", "deny"])
    async with agent(fakellm, tmp_path, client, ggs={"max_replans": 1}) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("update the notes")]), 60)
    asked = [[c.path for c in tc.content if c.type == "diff"] for tc, _ in client.permissions]
    assert asked == [[str((w / "notes.txt").resolve())], [str((w / "other.txt").resolve())]]
    assert (w / "notes.txt").read_text() == "three\n" and (w / "other.txt").read_text() == "x\n"
