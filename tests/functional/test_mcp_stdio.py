"""MCP tools from a real stdio server process (tests/mcpserver), through the registry and through a
whole task on the fake LLM (#18)."""

from __future__ import annotations

import asyncio
import json
import sys
import time

from agentui.config import McpServerConfig
from agentui.contracts import ConfirmationChoice
from agentui.mcp import McpHub
from agentui.roles.agent_validator import environmental_evidence
from agentui.tools import ToolContext, default_registry
from tests.functional.pipeline import call, finish, merge, perceive, plan, run_task, sub, verdicts

ROOT = str(__import__("pathlib").Path(__file__).resolve().parents[2])


def server(*extra: str, **kw) -> McpServerConfig:  # noqa: ANN003
    return McpServerConfig(command=sys.executable, args=["-m", "tests.mcpserver", *extra], cwd=ROOT, **kw)


async def test_stdio_server_tools_run_and_a_crash_mid_task_is_an_environmental_failure(tmp_path) -> None:
    hub = McpHub({"t": server(allow=["echo", "die", "add"])})
    reg = default_registry()
    assert await hub.attach(reg) == []
    try:
        ctx = ToolContext(workspace=tmp_path, timeout_s=20)
        rec = await reg.call("t.add", {"a": 1, "b": 2}, ctx)
        assert rec.ok and rec.evidence == "3"
        started = time.monotonic()
        rec = await asyncio.wait_for(reg.call("t.die", {"code": 3}, ctx), 15)
        assert (
            not rec.ok and "MCP server 't' is not available: it exited or closed the connection during die" in rec.error
        )
        assert environmental_evidence([rec])  # R4a reads it as an environmental failure
        assert time.monotonic() - started < 10  # reported, not waited out (the call timeout is 20 s)
        rec = await asyncio.wait_for(reg.call("t.echo", {"text": "x"}, ctx), 5)
        assert not rec.ok and "is not available (not running)" in rec.error and environmental_evidence([rec])
        assert not any(s["name"].startswith("t.") for s in reg.specs())  # new plans no longer see them
    finally:
        await hub.aclose()


async def test_a_server_that_fails_to_start_is_one_clear_problem_not_a_hang(tmp_path) -> None:
    hub = McpHub({"bad": server("--crash-on-start"), "missing": McpServerConfig(command=str(tmp_path / "nope")),
                  "good": server(allow=["echo"])})
    reg = default_registry()
    problems = await asyncio.wait_for(hub.attach(reg), 30)
    try:
        assert len(problems) == 2
        bad = next(p for p in problems if "'bad'" in p)
        assert "failed to start" in bad and "configured to crash on start" in bad  # its stderr is quoted
        assert "No such file" in next(p for p in problems if "'missing'" in p)
        assert "good.echo" in reg and not any(n.startswith(("bad.", "missing.")) for n in reg.names())
    finally:
        await hub.aclose()


async def test_the_child_gets_an_allow_listed_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AGENTUI_TEST_SECRET", "s3cret")
    hub = McpHub({"t": server(allow=["env"], env={"GIVEN": "${AGENTUI_TEST_SECRET}-ok"})})
    reg = default_registry()
    assert await hub.attach(reg) == []
    try:
        ctx = ToolContext(workspace=tmp_path)
        assert (await reg.call("t.env", {"name": "AGENTUI_TEST_SECRET"}, ctx)).evidence == "<unset>"
        assert (await reg.call("t.env", {"name": "GIVEN"}, ctx)).evidence == "s3cret-ok"
    finally:
        await hub.aclose()


async def test_a_task_calls_an_mcp_tool_after_confirmation_and_logs_it(fakellm, tmp_path) -> None:
    fakellm.script("perceiver", [perceive("add two numbers with the server")])
    fakellm.script("planner", [plan(["the sum is reported"], sub("add 20 and 22", "a number is reported",
                                                                 tools=["t.add"]))])
    fakellm.script("executor", [call("t.add", a=20, b=22), finish("42")])
    fakellm.script("agent_validator", [verdicts("pass")])
    fakellm.script("meta_validator", [merge("42", "pass", summary="42")])
    asked = []

    async def approve(req):  # noqa: ANN001, ANN202
        asked.append(req)
        return ConfirmationChoice.APPROVE

    mcp = {"servers": {"t": server().model_dump()}}
    r = await run_task(fakellm, tmp_path, "add 20 and 22", confirm=approve, mcp=mcp,
                       ggs={"time_budget_ms": 10**9})
    assert r.final.directive.value == "accept" and r.final.output == "42"
    [req] = asked
    assert req.tool == "t.add" and '"a": 20' in req.command
    [res] = r.of("ExecutionResult")
    [rec] = res.tool_calls
    assert rec.tool == "t.add" and rec.ok and rec.evidence == "42"
    # the executor was offered the MCP tool by name; the task log has the same record as built-ins
    assert "t.add" in fakellm.calls("executor")[0]["messages"][1]["content"]
    log = [json.loads(x) for x in (tmp_path / "data" / "tasks" / f"{r.final.task_id}.jsonl").read_text().splitlines()]
    tool_recs = [x for x in log if x["kind"] == "tool"]
    assert [x["tool"] for x in tool_recs] == ["t.add"] and tool_recs[0]["full_output"] == "42"
    assert r.runtime.mcp is None  # stopped with the runtime


async def test_a_server_flooding_stderr_keeps_only_its_tail(tmp_path) -> None:
    from agentui.mcp.client import STDERR_KEEP, McpConnection, McpUnavailable

    conn = McpConnection("flood", server("--flood-stderr", "64"))
    try:
        await asyncio.wait_for(conn.start(30), 60)
        raise AssertionError("the server exits before the handshake")
    except McpUnavailable as e:
        assert "last words after the flood" in str(e)
    finally:
        await conn.close()
    assert len(conn._tail.buf) <= STDERR_KEEP  # 64 MB went through a pipe; a few KB were kept


def test_a_server_that_does_not_speak_json_rpc_is_one_line_without_a_traceback(tmp_path) -> None:
    import os
    import subprocess

    cfg = tmp_path / "c.toml"
    script = "import sys, time; print('{this is not json', flush=True); sys.stdin.readline(); time.sleep(60)"
    cfg.write_text(f"[mcp.servers.bad]\ncommand = {json.dumps(sys.executable)}\nargs = ['-c', {json.dumps(script)}]\n"
                   "startup_timeout_s = 3\n")
    p = subprocess.run([sys.executable, "-m", "agentui.cli", "--config", str(cfg), "--data-dir", str(tmp_path / "d"),
                        "mcp", "list"], capture_output=True, text=True, timeout=60, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert p.returncode == 1 and "Traceback" not in p.stderr + p.stdout
    assert "bad:" in p.stdout and "(FAILED)" in p.stdout and "Failed to parse JSONRPC message" in p.stdout


async def test_a_tool_with_an_invalid_schema_is_left_out_with_one_warning_and_the_others_work(tmp_path) -> None:
    # a hand-written server: the SDK's own refuses to send these schemas; the SDK's client rejects the
    # whole tools/list for any one of them
    bad = McpServerConfig(command=sys.executable, args=["-m", "tests.mcpserver.raw", "--bad-schemas"], cwd=ROOT,
                          allow=["echo"])
    hub = McpHub({"b": bad})
    reg = default_registry()
    problems = await asyncio.wait_for(hub.attach(reg), 30)
    try:
        assert sorted(n for n in reg.names() if n.startswith("b.")) == ["b.echo"]
        assert [p.split(":")[0] for p in problems] == ["MCP server 'b'"] * 4  # one warning per bad tool
        for tool in ("s_string", "s_banana", "s_missing", "s_array"):
            [line] = [p for p in problems if f"tool '{tool}'" in p]
            assert "invalid input schema" in line and "left out" in line and "\n" not in line
        assert hub.reports[0].ok and hub.reports[0].tools == ["echo"]
        rec = await reg.call("b.echo", {"text": "still usable"}, ToolContext(workspace=tmp_path, timeout_s=20))
        assert rec.ok and rec.evidence == "still usable"
    finally:
        await hub.aclose()


def test_mcp_list_names_each_tool_left_out_for_its_schema(tmp_path) -> None:
    import os
    import subprocess

    cfg = tmp_path / "c.toml"
    cfg.write_text(f"[mcp.servers.b]\ncommand = {json.dumps(sys.executable)}\n"
                   f"args = ['-m', 'tests.mcpserver.raw', '--bad-schemas']\ncwd = {json.dumps(ROOT)}\n")
    p = subprocess.run([sys.executable, "-m", "agentui.cli", "--config", str(cfg), "--data-dir", str(tmp_path / "d"),
                        "mcp", "list"], capture_output=True, text=True, timeout=60, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert p.returncode == 0 and "Traceback" not in p.stderr + p.stdout, p.stdout + p.stderr
    warned = [ln for ln in p.stdout.splitlines() if ln.startswith("  warning: MCP server 'b': tool '")]
    assert len(warned) == 4 and "s_banana' left out: invalid input schema (inputSchema.type" in "".join(warned)
    assert "  b.echo — asks first" in p.stdout
