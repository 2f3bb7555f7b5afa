"""`agentui acp` end to end (#18): the SDK's client side drives a real `agentui acp` process over
stdio; the roles run on the fake LLM over HTTP with real tools in a temporary workspace."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

from tests.fakellm import Reply
from tests.functional.pipeline import call, finish, infeasible, merge, perceive, plan, sub, verdicts

ROOT = Path(__file__).resolve().parents[2]
# the SDK terminates the agent 2 s after closing its stdin, and can then race its exit
# (ProcessLookupError); on a loaded machine agentui's shutdown takes longer than that
SLOW_EXIT = {"shutdown_timeout": 60.0}


class Client:
    """An ACP client (editor) that records every update and answers permissions from a list."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.updates: list = []
        self.permissions: list = []
        self.answers = list(answers or [])
        self.seen: list[str] = []  # update kinds and "permission", in arrival order

    async def session_update(self, session_id, update, **_kw):  # noqa: ANN001, ANN201
        self.updates.append(update)
        self.seen.append(update.session_update)

    async def request_permission(self, session_id, tool_call, options, **_kw):  # noqa: ANN001, ANN201
        self.permissions.append((tool_call, options))
        self.seen.append("permission")
        choice = self.answers.pop(0) if self.answers else "cancel"
        if choice == "cancel":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=choice))

    def of(self, kind: str) -> list:
        return [u for u in self.updates if u.session_update == kind]

    def texts(self, kind: str) -> list[str]:
        return [u.content.text for u in self.of(kind)]


@asynccontextmanager
async def agent(fake, tmp_path: Path, client: Client, capabilities=None, **sections):  # noqa: ANN001, ANN003
    doc = {"llm": {"base_url": fake.base_url, "max_retries": 0, "backoff_base_s": 0.0},
           "pipeline": {"correction_budget": 0}, "ggs": {"time_budget_ms": 10**9}}
    for k, v in sections.items():
        doc.setdefault(k, {}).update(v)
    cfg = tmp_path / "config.toml"
    cfg.write_text("\n".join(f"[{k}]\n" + "\n".join(f"{kk} = {json.dumps(vv)}" for kk, vv in v.items())
                             for k, v in doc.items()) + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    async with spawn_agent_process(client, sys.executable, "-m", "agentui.cli", "--config", str(cfg),
                                   "--data-dir", str(tmp_path / "data"), "acp", env=env, cwd=str(ROOT),
                                   transport_kwargs=SLOW_EXIT) as (conn, proc):
        init = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION,
                                                      client_capabilities=capabilities), 30)
        assert init.protocol_version == 1 and init.agent_capabilities.load_session
        yield conn
    assert proc.returncode is not None


def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir(exist_ok=True)
    return w


async def test_a_prompt_turn_is_a_task_with_plan_tool_calls_thoughts_permission_and_the_result(fakellm, tmp_path):
    w = ws(tmp_path)
    (w / "old.log").write_text("x")
    fakellm.script("perceiver", [perceive("delete old.log")])
    fakellm.script("planner", [plan(["old.log is gone"], sub("remove old.log", "old.log no longer exists",
                                                            tools=["shell"]))])
    fakellm.script("executor", [call("shell", command="rm old.log"), finish("removed old.log")])
    fakellm.script("agent_validator", [verdicts("pass")])
    fakellm.script("meta_validator", [merge("removed old.log", "pass", summary="old.log deleted")])
    client = Client(answers=["approve"])
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("delete old.log")]), 60)
    assert resp.stop_reason == "end_turn"
    assert not (w / "old.log").exists()
    [(call_, options)] = client.permissions
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert "rm old.log" in call_.title and call_.raw_input["command"] == "rm old.log"
    plans = client.of("plan")
    assert plans[0].entries[0].content == "remove old.log" and plans[0].entries[0].status == "pending"
    assert plans[-1].entries[0].status == "completed"
    [tool] = client.of("tool_call")  # shown when it starts; the permission refers to it (live, #18)
    assert tool.kind == "execute" and tool.status == "in_progress" and tool.raw_input == {"command": "rm old.log"}
    assert call_.tool_call_id == tool.tool_call_id
    [done] = client.of("tool_call_update")
    assert done.tool_call_id == tool.tool_call_id and done.status == "completed"
    assert any("R1 understood: delete log files" in t for t in client.texts("agent_thought_chunk"))  # the kind of work
    assert client.texts("agent_message_chunk")[-1].startswith("old.log deleted")
    usage = client.of("usage_update")
    assert len(usage) == 6 and resp.usage is not None and resp.usage.total_tokens > 0
    # the order an editor shows: plan before the tool call, the message last
    kinds = [k for k in client.seen if k != "usage_update"]
    assert kinds.index("plan") < kinds.index("tool_call") < kinds.index("permission") \
        < kinds.index("tool_call_update") < kinds.index("agent_message_chunk")


def delete_keep(fake, tmp_path: Path) -> Path:  # noqa: ANN001
    """A workspace with keep.txt and a model that asks to `rm keep.txt`, then gives up once denied."""
    w = ws(tmp_path)
    (w / "keep.txt").write_text("precious")
    fake.responder("perceiver", lambda _r: perceive("delete keep.txt"))
    fake.responder("planner", lambda _r: plan(["keep.txt removed"], sub("remove keep.txt", "file gone")))
    fake.responder("executor", lambda r: call("shell", command="rm keep.txt")
                   if len(r["messages"]) == 2 else infeasible("the user denied the deletion"))
    return w


async def test_reject_always_denies_without_asking_again_in_the_session(fakellm, tmp_path):
    w = delete_keep(fakellm, tmp_path)
    client = Client(answers=["deny_always"])
    async with agent(fakellm, tmp_path, client, ggs={"max_replans": 1}) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        for _ in range(2):  # two tasks in one session, each asking to run the same command
            resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("delete keep.txt")]),
                                          60)
            assert resp.stop_reason == "end_turn"
            assert client.texts("agent_message_chunk")[-1].startswith("abandon")
    assert (w / "keep.txt").read_text() == "precious"
    assert len(client.permissions) == 1  # the second task's identical command was denied without asking
    logs = sorted((tmp_path / "data" / "tasks").glob("*.jsonl"))
    assert len(logs) == 2
    for f in logs:
        decisions = [json.loads(x) for x in f.read_text().splitlines()]
        assert [d["decision"] for d in decisions if d.get("kind") == "confirmation"] == ["deny"]
    assert any(t.startswith("GGS ") for t in client.texts("agent_thought_chunk"))


class Silent(Client):
    """An editor that never answers a permission request."""

    async def request_permission(self, session_id, tool_call, options, **_kw):  # noqa: ANN001, ANN201
        self.permissions.append((tool_call, options))
        await asyncio.Event().wait()


async def test_an_unanswered_permission_request_is_a_denial_after_the_timeout(fakellm, tmp_path):
    w = delete_keep(fakellm, tmp_path)
    client = Silent()
    async with agent(fakellm, tmp_path, client, ggs={"max_replans": 1}, acp={"permission_timeout_s": 1}) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        # before the timeout existed this turn waited for the editor until cancelled
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("delete keep.txt")]), 60)
    assert resp.stop_reason == "end_turn" and client.permissions
    assert (w / "keep.txt").read_text() == "precious"
    assert client.texts("agent_message_chunk")[-1].startswith("abandon")
    assert [u.status for u in client.of("tool_call_update")][:1] == ["failed"]
    [log] = (tmp_path / "data" / "tasks").glob("*.jsonl")
    asked = [json.loads(x) for x in log.read_text().splitlines() if '"confirmation"' in x]
    assert asked and all((d["decision"], d["by"]) == ("deny", "timeout") for d in asked)
    approvals = [json.loads(x) for x in (tmp_path / "data" / "audit" / "approvals.jsonl").read_text().splitlines()]
    assert approvals and all((a["decision"], a["by"]) == ("denied", "timeout") for a in approvals)


async def test_a_clarifying_question_ends_the_turn_and_the_next_prompt_answers_it(fakellm, tmp_path):
    fakellm.script("perceiver", [Reply.json({"kind": "clarify", "question": "Which folder?"}),
                                 Reply.json({"kind": "task", "intent": "clean src", "scope": "src"})])
    fakellm.script("planner", [plan(["src is clean"], sub("list src", "src is listed"))])
    client = Client()
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(ws(tmp_path)), mcp_servers=[])
        r1 = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("clean")]), 60)
        assert r1.stop_reason == "end_turn" and client.texts("agent_message_chunk") == ["Which folder?"]
        r2 = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("src")]), 60)
    assert r2.stop_reason == "end_turn"
    second = fakellm.calls("perceiver")[1]["messages"][-1]["content"]
    assert "User message:\nclean" in second and "Answer to clarifying question 1: src" in second


async def test_session_cancel_stops_the_task_like_esc(fakellm, tmp_path):
    fakellm.script("perceiver", [perceive("count files")])
    fakellm.script("planner", [plan(["a count"], sub("count files", "a number is reported"), checks=["ls | wc -l"])])
    fakellm.script("executor", [Reply.json({"tool": "finish", "output": "3"}, delay_s=60)])
    client = Client()
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(ws(tmp_path)), mcp_servers=[])
        turn = asyncio.create_task(conn.prompt(session_id=s.session_id, prompt=[text_block("count files")]))
        for _ in range(200):
            if client.of("plan"):
                break
            await asyncio.sleep(0.05)
        await conn.cancel(session_id=s.session_id)
        resp = await asyncio.wait_for(turn, 15)
    assert resp.stop_reason == "cancelled"


async def test_sessions_are_listed_and_loaded_from_the_data_dir(fakellm, tmp_path):
    w = ws(tmp_path)
    first = Client()
    async with agent(fakellm, tmp_path, first) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("hi")]), 60)
    assert first.texts("agent_message_chunk")  # R1's greeting fast path answered
    later = Client()
    async with agent(fakellm, tmp_path, later) as conn:  # a new process on the same data dir
        listed = await conn.list_sessions(cwd=str(w))
        assert [x.session_id for x in listed.sessions] == [s.session_id]
        assert listed.sessions[0].title == "hi" and listed.sessions[0].cwd == str(w.resolve())
        assert (await conn.list_sessions(cwd=str(tmp_path))).sessions == []
        await conn.load_session(cwd=str(w), session_id=s.session_id, mcp_servers=[])
    assert later.texts("user_message_chunk") == ["hi"]
    assert later.texts("agent_message_chunk") == first.texts("agent_message_chunk")


async def test_mcp_servers_passed_by_the_client_join_the_session(fakellm, tmp_path):
    from acp.schema import McpServerStdio

    fakellm.script("perceiver", [perceive("echo through the server")])
    fakellm.script("planner", [plan(["hello is echoed"], sub("echo hello", "hello is shown", tools=["t.echo"]))])
    fakellm.script("executor", [call("t.echo", text="hello"), finish("hello")])
    fakellm.script("agent_validator", [verdicts("pass")])
    fakellm.script("meta_validator", [merge("hello", "pass", summary="echoed hello")])
    client = Client(answers=["approve"])
    srv = McpServerStdio(name="t", command=sys.executable, args=["-m", "tests.mcpserver"], env=[])
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(ROOT), mcp_servers=[srv])
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("echo hello")]), 60)
    assert resp.stop_reason == "end_turn"
    assert "t.echo" in fakellm.calls("executor")[0]["messages"][1]["content"]
    [(perm, _)] = client.permissions
    assert perm.title.startswith("t.echo: t.echo") and '"text": "hello"' in perm.title
    [tool] = client.of("tool_call")
    [done] = client.of("tool_call_update")
    assert tool.title == "t.echo hello" and done.status == "completed" and done.content[0].content.text == "hello"


async def test_without_an_llm_each_prompt_says_what_to_set(tmp_path):
    client = Client()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTUI_BASE", "OPENAI_"))}
    async with spawn_agent_process(client, sys.executable, "-m", "agentui.cli", "--data-dir", str(tmp_path / "d"),
                                   "acp", env={**env, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT),
                                   transport_kwargs=SLOW_EXIT) as (conn, _proc):
        await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 30)
        s = await conn.new_session(cwd=str(ws(tmp_path)), mcp_servers=[])
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("count files")]), 30)
    assert resp.stop_reason == "end_turn"
    [msg] = client.texts("agent_message_chunk")
    assert "cannot run tasks" in msg and "AGENTUI_BASE_URL" in msg


def test_version_info_names_the_sdk_and_protocol() -> None:
    import subprocess

    p = subprocess.run([sys.executable, "-m", "agentui.cli", "acp", "--version-info"], capture_output=True,
                       text=True, timeout=60, cwd=str(ROOT))
    assert p.returncode == 0 and p.stdout.strip().startswith("agent-client-protocol 0.12.")
    assert "ACP protocol version 1" in p.stdout


async def test_the_executors_and_r4bs_text_arrives_as_thought_chunks_before_the_message(fakellm, tmp_path):
    """Streamed replies reach the editor while they are generated: thought chunks naming the role,
    the executor's before the tool call it asks for, all of them before the final message."""
    w = ws(tmp_path)
    (w / "a.txt").write_text("1\n2\n3\n")
    step = {"tool": "shell", "args": {"command": "wc -l a.txt"}}
    done = {"tool": "finish", "output": "a.txt has 3 lines"}
    fakellm.script("perceiver", [perceive("count the lines of a.txt")])
    fakellm.script("planner", [plan(["the count is given"], sub("count the lines of a.txt", "a number is reported",
                                                                 tools=["shell"]))])
    fakellm.script("executor", [Reply.stream(step, chunk_delay_s=0.02), Reply.stream(done, chunk_delay_s=0.02)])
    fakellm.script("agent_validator", [verdicts("pass", quote="3 a.txt")])
    fakellm.script("meta_validator", [Reply.stream({"merged_output": "3", "answer": "a.txt has 3 lines",
                                                    "summary": "3 lines", "verdicts": [{"verdict": "pass"}]},
                                                   chunk_delay_s=0.02)])
    client = Client()
    async with agent(fakellm, tmp_path, client) as conn:
        s = await conn.new_session(cwd=str(w), mcp_servers=[])
        resp = await asyncio.wait_for(conn.prompt(session_id=s.session_id, prompt=[text_block("lines of a.txt?")]), 60)
    assert resp.stop_reason == "end_turn"
    thoughts = client.texts("agent_thought_chunk")
    live = "".join(t for t in thoughts if not t.startswith(("R1 ", "GGS ", "R2 ", "Step ")))
    assert f"\nR3 Executor: {json.dumps(step)}" in live and f"\nR3 Executor: {json.dumps(done)}" in live
    assert "\nR4b Meta-Validator: {\"merged_output\": \"3\"" in live
    # several chunks per reply (it streamed), not one whole reply after the call
    pieces = [t for t in thoughts if t and t in live]
    assert len(pieces) > 4
    order = [(u.session_update, getattr(getattr(u, "content", None), "text", "")) for u in client.updates]
    first_step = next(i for i, (k, t) in enumerate(order) if k == "agent_thought_chunk" and "R3 Executor" in t)
    message = next(i for i, (k, _t) in enumerate(order) if k == "agent_message_chunk")
    last_live = max(i for i, (k, t) in enumerate(order) if k == "agent_thought_chunk" and t in pieces)
    tool = next(i for i, (k, _t) in enumerate(order) if k == "tool_call")
    assert first_step < tool and last_live < message
    assert client.texts("agent_message_chunk")[-1].startswith("3 lines")
