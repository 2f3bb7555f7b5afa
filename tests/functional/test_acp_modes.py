"""ACP beyond a prompt turn, against a real `agentui acp` process on the fake LLM: session modes as
approval presets, agentui's commands, the context meter (`usage_update.size`), session titles,
stop reasons, failed calls that never started, and a permission request nobody answered."""

from __future__ import annotations

import asyncio

from acp import text_block

from tests.functional.pipeline import call, finish, infeasible, merge, perceive, plan, sub, verdicts
from tests.functional.test_acp import Client, Silent, agent, delete_keep, ws


def overwrite(fake, tmp_path):  # noqa: ANN001, ANN201
    w = ws(tmp_path)
    (w / "notes.txt").write_text("old")
    fake.script("perceiver", [perceive("rewrite notes.txt")])
    fake.script("planner", [plan(["notes.txt says new"], sub("rewrite notes.txt", "notes.txt says new",
                                                             tools=["write_file"]))])
    fake.script("executor", [call("write_file", path="notes.txt", content="new"), finish("rewrote notes.txt")])
    fake.script("agent_validator", [verdicts("pass", quote="notes.txt")])
    fake.script("meta_validator", [merge("rewrote notes.txt", "pass", summary="notes.txt rewritten")])
    return w


async def test_accept_edits_mode_writes_without_asking(fakellm, tmp_path):
    w = overwrite(fakellm, tmp_path)
    client = Client(answers=["deny"])
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        assert s.modes.current_mode_id == "ask"
        await conn.set_session_mode(session_id=s.session_id, mode_id="accept-edits")
        resp = await asyncio.wait_for(
            conn.prompt(session_id=s.session_id, prompt=[text_block("rewrite notes.txt")]), 60
        )
    assert resp.stop_reason == "end_turn"
    assert (w / "notes.txt").read_text() == "new" and client.permissions == []


async def test_ask_mode_asks_for_an_overwrite(fakellm, tmp_path):
    w = overwrite(fakellm, tmp_path)
    client = Client(answers=["approve"])
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        resp = await asyncio.wait_for(
            conn.prompt(session_id=s.session_id, prompt=[text_block("rewrite notes.txt")]), 60
        )
    assert resp.stop_reason == "end_turn" and len(client.permissions) == 1  # ask: the overwrite asked


async def test_commands_are_announced_and_answered_without_a_task(fakellm, tmp_path):
    client = Client()
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(ws(tmp_path)), mcp_servers=[])
        for _ in range(100):
            if client.of("available_commands_update"):
                break
            await asyncio.sleep(0.05)
        [cmds] = client.of("available_commands_update")
        assert {c.name for c in cmds.available_commands} == {"help", "mcp", "memory", "remember", "forget", "audit",
                                                             "tree", "usage"}
        for text in ("/help", "/mcp", "/usage", "/memory 3", "/audit"):
            resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block(text)]), 30)
            assert resp.stop_reason == "end_turn"
    said = client.texts("agent_message_chunk")
    assert said[0].startswith("agentui commands:") and "/memory" in said[0]
    assert "No MCP servers" in said[1] and "No LLM calls" in said[2] and "Nothing remembered" in said[3]
    assert said[4].startswith("report: ") and "messages" in said[4], said[4]
    assert fakellm.calls() == []  # no task ran: no LLM call


async def test_remember_and_forget_over_acp_use_memory_with_no_llm_call(fakellm, tmp_path):
    from agentui.clock import SystemClock
    from agentui.ids import UuidIds
    from agentui.memory import open_memory
    from agentui.paths import DataLayout

    client = Client(answers=["keep", "forget"])
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(ws(tmp_path)), mcp_servers=[])
        for text in ("/remember always use tabs", "/remember", "/remember run the tests first"):
            resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block(text)]), 30)
            assert resp.stop_reason == "end_turn"
        said = client.texts("agent_message_chunk")
        assert said[0].startswith("remembered: always use tabs  (id ") and "space user" in said[0]
        assert said[1].startswith("/remember TEXT")
        second = said[2].split("(id ", 1)[1].split(";", 1)[0]
        for text in (f"/forget {second}", f"/forget {second}", "/forget nosuchid"):
            resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block(text)]), 30)
            assert resp.stop_reason == "end_turn"
        said = client.texts("agent_message_chunk")
    assert said[3] == f"kept {second}" and said[4] == f"forgot {second}" and said[5].startswith("/forget nosuchid")
    assert len(client.permissions) == 2 and second in client.permissions[0][0].title
    assert fakellm.calls() == []  # commands, not tasks: no LLM call
    mem = open_memory(DataLayout(tmp_path / "data").memory_db, SystemClock(), UuidIds())
    try:
        kept = [m for m in await mem.query_recent(10)]
    finally:
        await mem.close()
    assert [(m.content, m.level.value, m.space) for m in kept] == [("always use tabs", "C", "user")]


async def test_tree_over_acp_outlines_the_session_folders_goal_tree_with_no_llm_call(fakellm, tmp_path):
    import subprocess
    import sys

    plain = ws(tmp_path)
    repo = tmp_path / "repo"
    repo.mkdir()
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "tree", "--repo", str(repo), "init", "ship the",
                        "frobnicator", "--guard", "true"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    client = Client()
    async with agent(fakellm, tmp_path, client) as conn:
        for cwd in (plain, repo):
            s = await conn.new_session(cwd=str(cwd), mcp_servers=[])
            resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("/tree")]), 30)
            assert resp.stop_reason == "end_turn"
    said = client.texts("agent_message_chunk")
    assert said[0].startswith(f"No goal tree in {plain}; start one with: agentui tree init"), said[0]
    assert "ship the frobnicator" in said[1], said[1]
    assert fakellm.calls() == []


async def test_usage_updates_carry_the_models_context_window_and_the_session_gets_a_title(fakellm, tmp_path):
    fakellm.context_window = 32768
    w = overwrite(fakellm, tmp_path)
    client = Client(answers=["approve"])
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(
            conn.prompt(session_id=s.session_id, prompt=[text_block("rewrite   notes.txt\nplease")]), 60
        )
    usage = client.of("usage_update")
    assert usage and all(u.size == 32768 and 0 < u.used < u.size for u in usage)
    titles = [u.title for u in client.of("session_info_update")]
    assert titles and titles[-1] == "rewrite notes.txt please"


async def test_a_call_that_never_started_is_sent_whole_never_as_an_orphan_update(fakellm, tmp_path):
    fakellm.script("perceiver", [perceive("read a file without saying which")])
    fakellm.script("planner", [plan(["done"], sub("read it", "it is shown"))])
    # arguments the registry refuses before the call starts (no `path`)
    fakellm.responder("executor", lambda r: call("read_file", file=1) if len(r["messages"]) == 2
                      else infeasible("bad arguments"))
    fakellm.responder("agent_validator", lambda _r: verdicts("fail:logical"))
    fakellm.responder("meta_validator", lambda _r: merge("nothing", "fail:logical", summary="could not"))
    client = Client()
    async with agent(fakellm, tmp_path, client, ggs={"max_replans": 1}) as conn:
        s = await conn.new_session(cwd=str(ws(tmp_path)), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("use nope")]), 60)
    seen: set[str] = set()
    for u in client.updates:
        if u.session_update == "tool_call":
            seen.add(u.tool_call_id)
        elif u.session_update == "tool_call_update":
            assert u.tool_call_id in seen, f"orphan tool_call_update {u.tool_call_id}"
    bad = [u for u in client.of("tool_call") if u.title.startswith("read_file")]
    assert bad and bad[0].status == "failed" and "bad arguments" in bad[0].raw_output["error"]


async def test_a_hard_denied_command_ends_the_turn_as_a_refusal(fakellm, tmp_path):
    fakellm.script("perceiver", [perceive("wipe the disk")])
    fakellm.responder("planner", lambda _r: plan(["the disk is wiped"], sub("wipe", "the disk is empty")))
    fakellm.responder("executor", lambda r: call("shell", command="rm -rf /") if len(r["messages"]) == 2
                      else infeasible("the safety gate refused"))
    fakellm.responder("agent_validator", lambda _r: verdicts("fail:environmental"))
    fakellm.responder("meta_validator", lambda _r: merge("nothing", "fail:environmental", summary="refused"))
    client = Client()
    async with agent(fakellm, tmp_path, client, ggs={"max_replans": 1}) as conn:
        s = await conn.new_session(cwd=str(ws(tmp_path)), mcp_servers=[])
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("wipe the disk")]), 60)
    assert client.permissions == []
    assert resp.stop_reason == "refusal"


async def test_an_unanswered_permission_is_said_as_such_and_no_advice_names_a_flag(fakellm, tmp_path):
    w = delete_keep(fakellm, tmp_path)
    client = Silent()
    async with agent(fakellm, tmp_path, client, ggs={"max_replans": 1}, acp={"permission_timeout_s": 1}) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("delete keep.txt")]), 60)
    [failed, *_] = [u for u in client.of("tool_call_update") if u.status == "failed"]
    error = failed.raw_output["error"]
    assert "did not answer the permission request within 1 s" in error and "denied by user" not in error
    final = client.texts("agent_message_chunk")[-1]
    assert final.startswith("abandon") and "--yes" not in final and "You denied" not in final


async def test_mcp_servers_start_in_the_background_and_the_first_task_waits_for_them(fakellm, tmp_path):
    import sys
    import time

    from acp.schema import McpServerStdio

    from tests.functional.test_acp import ROOT

    fakellm.script("perceiver", [perceive("echo through the server")])
    fakellm.script("planner", [plan(["hello is echoed"], sub("echo hello", "hello is shown", tools=["slow.echo"]))])
    fakellm.script("executor", [call("slow.echo", text="hello"), finish("hello")])
    fakellm.script("agent_validator", [verdicts("pass", quote="hello")])
    fakellm.script("meta_validator", [merge("hello", "pass", summary="echoed hello")])
    client = Client(answers=["approve"])
    srv = McpServerStdio(name="slow", command=sys.executable, args=["-m", "tests.mcpserver.raw", "--slow-start", "8"],
                         env=[])
    async with agent(fakellm, tmp_path, client) as conn:
        started = time.monotonic()
        s = await asyncio.wait_for(conn.new_session(cwd=str(ROOT), mcp_servers=[srv]), 30)
        assert time.monotonic() - started < 6  # not held up by the server's 8 s start
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("/mcp")]), 10)
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("echo hello")]), 60)
    assert resp.stop_reason == "end_turn"
    said = client.texts("agent_message_chunk")
    assert said[0].startswith("MCP servers still starting: slow")
    assert any("Waiting for the MCP servers" in t for t in said)
    [done] = client.of("tool_call_update")
    assert done.status == "completed" and done.content[0].content.text == "hello"


async def test_mcp_prompts_are_commands_and_at_server_uri_attaches_a_resource(fakellm, tmp_path):
    import sys

    from acp.schema import McpServerStdio

    from tests.functional.test_acp import ROOT

    fakellm.responder("perceiver", lambda _r: perceive("answer"))
    fakellm.responder("planner", lambda _r: plan(["answered"], sub("answer", "answered")))
    fakellm.responder("executor", lambda _r: finish("done"))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", quote="done"))
    fakellm.responder("meta_validator", lambda _r: merge("done", "pass", summary="done"))
    client = Client()
    srv = McpServerStdio(name="t", command=sys.executable, args=["-m", "tests.mcpserver"], env=[])
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(ROOT), mcp_servers=[srv])
        for text in ("/t.review file=app.py", "what should I buy? @t:note://today", "/t.review",
                     "/mcp resources"):
            resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block(text)]), 60)
            assert resp.stop_reason == "end_turn"
    names = {c.name for u in client.of("available_commands_update") for c in u.available_commands}
    assert "t.review" in names and "help" in names
    goals = [c["messages"][-1]["content"] for c in fakellm.calls("perceiver")]
    assert any("Review app.py and list its problems." in g for g in goals)
    assert any("what should I buy?" in g and "[resource @t:note://today]\nremember the milk" in g for g in goals)
    said = client.texts("agent_message_chunk")
    assert any(t == "/t.review needs file=…" for t in said)
    assert any("@t:note://today" in t and "@t:note://{day} (template" in t for t in said)


async def test_an_mcp_servers_progress_shows_in_its_live_tool_call(fakellm, tmp_path):
    import sys

    from acp.schema import McpServerStdio

    from tests.functional.test_acp import ROOT

    fakellm.script("perceiver", [perceive("count to 3 with the server")])
    fakellm.script(
        "planner", [plan(["counted"], sub("count to 3", "it counted", tools=["t.count"]), checks=["echo 3"])]
    )
    fakellm.script("executor", [call("t.count", n=3), finish("counted to 3")])
    fakellm.script("agent_validator", [verdicts("pass", quote="counted to 3")])
    fakellm.script("meta_validator", [merge("counted to 3", "pass", summary="counted")])
    client = Client(answers=["approve"])
    srv = McpServerStdio(name="t", command=sys.executable, args=["-m", "tests.mcpserver"], env=[])
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(ROOT), mcp_servers=[srv])
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("count to 3")]), 60)
    assert resp.stop_reason == "end_turn"
    # the MCP call (the plan's check, a shell command, is a tool call of its own)
    [start] = [c for c in client.of("tool_call") if "echo 3" not in str(c.raw_input)]
    updates = [u for u in client.of("tool_call_update") if u.tool_call_id == start.tool_call_id]
    shown = [u.content[0].content.text for u in updates if u.status == "in_progress"]
    assert shown[-1] == "progress 3/3 (100%): step 3" and len(shown) == 3
    assert updates[-1].status == "completed" and updates[-1].content[0].content.text == "counted to 3"


async def test_a_model_chosen_in_the_editor_runs_the_next_task_on_that_tier(fakellm, tmp_path):
    w = overwrite(fakellm, tmp_path)
    client = Client(answers=["approve"])
    async with agent(fakellm, tmp_path, client, llm={"model": "configured-model"}) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        [brain, tool] = s.config_options
        assert brain.id == "brain_model" and brain.current_value == "configured-model"
        assert {o.value for o in brain.options} == {"configured-model", "fake-model"}
        got = await conn.set_config_option(config_id="brain_model", session_id=s.session_id, value="fake-model")
        assert got.config_options[0].current_value == "fake-model"
        assert got.config_options[1].current_value == "configured-model"
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("rewrite notes.txt")]), 60)
    assert {c["model"] for c in fakellm.calls("perceiver") + fakellm.calls("planner")} == {"fake-model"}
    assert {c["model"] for c in fakellm.calls("executor")} == {"configured-model"}
    assert (w / "notes.txt").read_text() == "new"


async def test_a_projects_mcp_file_is_used_only_once_trusted(fakellm, tmp_path):
    import json
    import subprocess
    import sys

    from tests.functional.test_acp import ROOT

    w = ws(tmp_path)
    (w / ".agentui").mkdir()
    (w / ".agentui" / "mcp.toml").write_text(
        f"[mcp.servers.proj]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = ['-m', 'tests.mcpserver.raw']\ncwd = {json.dumps(str(ROOT))}\n")
    client = Client()
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("/mcp")]), 30)
    said = "".join(client.texts("agent_message_chunk"))
    assert "defines MCP servers (proj) that are not used until you trust it" in said and "No MCP servers" in said
    p = subprocess.run([sys.executable, "-m", "agentui.cli", "--data-dir", str(tmp_path / "data"), "mcp", "trust",
                        "--workspace", str(w)], capture_output=True, text=True, timeout=60, cwd=str(ROOT))
    assert p.returncode == 0 and "trusted" in p.stdout, p.stderr
    client = Client()
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("hi")]), 30)
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("/mcp")]), 30)
    assert client.texts("agent_message_chunk")[-1].startswith("proj: 1 tools")
    (w / ".agentui" / "mcp.toml").write_text((w / ".agentui" / "mcp.toml").read_text() + "# changed\n")
    client = Client()
    async with agent(fakellm, tmp_path, client) as conn:  # a changed file is untrusted again
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("/mcp")]), 30)
    assert "not used until you trust it" in "".join(client.texts("agent_message_chunk"))
