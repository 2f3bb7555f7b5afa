"""MCP tools against the SDK's in-memory server (#18): names, schemas, the gate, errors, caps, logs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agentui.config import McpServerConfig
from agentui.mcp import McpHub
from agentui.mcp.hub import normalise_schema
from agentui.tools import ToolContext, default_registry
from tests.mcpserver.__main__ import build

CFG = McpServerConfig(command="unused-in-process", allow=["echo", "big", "sleep"])


@pytest.fixture
async def hub(tmp_path: Path):
    marker = tmp_path / "calls.txt"
    h = McpHub({"t": CFG}, inproc={"t": build(str(marker))})
    reg = default_registry()
    problems = await h.attach(reg)
    assert problems == []
    h.marker = marker
    h.reg = reg
    yield h
    await h.aclose()


def calls(h) -> list[str]:  # noqa: ANN001
    return h.marker.read_text().split() if h.marker.exists() else []


async def test_tools_join_the_registry_namespaced_with_their_schemas(hub) -> None:
    names = [s["name"] for s in hub.reg.specs()]
    assert {"t.echo", "t.add", "t.fail", "t.big", "t.sleep", "t.die", "t.env"} <= set(names)
    assert "shell" in names  # built-ins stay
    spec = next(s for s in hub.reg.specs() if s["name"] == "t.add")
    assert spec["parameters"]["required"] == ["a", "b"]
    assert spec["parameters"]["properties"]["a"]["type"] == "integer"
    assert spec["description"].startswith("[MCP t] Add two integers")


async def test_allow_listed_tool_runs_without_asking(hub, tmp_path) -> None:
    asked = []

    async def confirm(*a):  # noqa: ANN002, ANN202
        asked.append(a)
        return False

    rec = await hub.reg.call("t.echo", {"text": "hi"}, ToolContext(workspace=tmp_path, confirm=confirm))
    assert rec.ok and rec.evidence == "hi" and asked == [] and calls(hub) == ["echo"]


async def test_unlisted_tool_asks_with_its_arguments_and_a_denial_never_calls_it(hub, tmp_path) -> None:
    asked = []

    async def deny(req):  # noqa: ANN001, ANN202 - a tools.GateRequest (#14)
        asked.append((req.tool, req.command, list(req.reasons)))
        return False

    rec = await hub.reg.call("t.add", {"a": 2, "b": 40}, ToolContext(workspace=tmp_path, confirm=deny))
    assert not rec.ok and rec.error.startswith("denied by user")
    assert asked and asked[0][0] == "t.add" and '{"a": 2, "b": 40}' in asked[0][1]
    assert "external MCP server 't'" in asked[0][2][0]
    assert calls(hub) == []  # the server never saw the call
    # non-interactive (no one to confirm) is a denial too
    rec = await hub.reg.call("t.add", {"a": 2, "b": 40}, ToolContext(workspace=tmp_path))
    assert not rec.ok and "non-interactive" in rec.error and calls(hub) == []


async def test_approved_call_runs(hub, tmp_path) -> None:
    async def yes(*_a):  # noqa: ANN202
        return True

    rec = await hub.reg.call("t.add", {"a": 2, "b": 40}, ToolContext(workspace=tmp_path, confirm=yes))
    assert rec.ok and rec.evidence == "42" and rec.target == "2"


async def test_tool_error_is_a_failed_record_with_the_message(hub, tmp_path) -> None:
    async def yes(*_a):  # noqa: ANN202
        return True

    rec = await hub.reg.call("t.fail", {"message": "disk on fire"}, ToolContext(workspace=tmp_path, confirm=yes))
    assert not rec.ok and "disk on fire" in rec.error and rec.tool == "t.fail"


async def test_bad_arguments_are_refused_before_the_server(hub, tmp_path) -> None:
    rec = await hub.reg.call("t.echo", {"text": 3}, ToolContext(workspace=tmp_path))
    assert not rec.ok and "must be string" in rec.error and calls(hub) == []


async def test_output_is_capped_and_the_full_output_logged(hub, tmp_path) -> None:
    logged: list[dict] = []
    ctx = ToolContext(workspace=tmp_path, output_cap_chars=300, log=logged.append, task_id="t1")
    rec = await hub.reg.call("t.big", {"n": 5000}, ctx)
    assert rec.ok and len(rec.evidence) <= 300 and "chars omitted" in rec.evidence
    [entry] = logged
    assert entry["tool"] == "t.big" and len(entry["full_output"]) == 5000 and entry["log_ref"] == rec.log_ref


async def test_a_slow_call_times_out_instead_of_hanging(hub, tmp_path) -> None:
    ctx = ToolContext(workspace=tmp_path, timeout_s=0.5)
    rec = await asyncio.wait_for(hub.reg.call("t.sleep", {"seconds": 30}, ctx), 10)
    assert not rec.ok and "timed out" in rec.error and "0.5 s" in rec.error
    # the connection is still usable afterwards
    rec = await hub.reg.call("t.echo", {"text": "still here"}, ctx)
    assert rec.ok and rec.evidence == "still here"


def test_list_types_become_any_of() -> None:
    schema = {"type": "object", "properties": {"x": {"type": ["string", "null"], "description": "d"}}}
    out = normalise_schema(schema)
    assert out["properties"]["x"] == {"description": "d", "anyOf": [{"type": "string"}, {"type": "null"}]}
    assert normalise_schema({})["type"] == "object"
    json.dumps(out)


async def test_unusable_tool_names_and_too_many_tools_are_left_out_and_said(tmp_path: Path) -> None:
    from mcp.server.mcpserver import MCPServer

    from agentui.mcp.client import MAX_TOOLS

    srv = MCPServer("noisy", log_level="WARNING")

    def f() -> str:
        return "x"

    for name in ["ok", "has space", "new\nline", "x" * 100, "tidy\u202e", *(f"t{i:03d}" for i in range(MAX_TOOLS + 5))]:
        srv.add_tool(f, name=name, description="d" * 5000)
    h = McpHub({"n": CFG}, inproc={"n": srv})
    reg = default_registry()
    problems = await asyncio.wait_for(h.attach(reg), 30)
    try:
        mine = [n for n in reg.names() if n.startswith("n.")]
        assert len(mine) == MAX_TOOLS and "n.ok" in mine and not any(" " in n or "\n" in n for n in mine)
        [line] = problems
        assert line.startswith("MCP server 'n': 10 tools left out") and "has space" in line
        assert "\u202e" not in line and "\n" not in line  # names shown escaped (a bidi override, a newline)
        assert "new\\nline" in line
        assert len(reg.get("n.ok").description) <= 1100  # descriptions are capped too
    finally:
        await h.aclose()


async def test_an_mcp_call_is_never_sandboxed_so_yes_cannot_approve_it(hub, tmp_path) -> None:
    from agentui.tools.answers import auto_answer
    from agentui.tools.sandbox import SandboxInfo

    asked = []

    async def confirm(req):  # noqa: ANN001, ANN202
        asked.append(req)
        return auto_answer(req, yes=True, unconfined=False) or False  # what `agentui run --yes` answers

    ctx = ToolContext(workspace=tmp_path, confirm=confirm, sandbox=SandboxInfo("bwrap", "/usr/bin/bwrap", "test"))
    rec = await hub.reg.call("t.add", {"a": 2, "b": 40}, ctx)
    [req] = asked
    assert req.sandboxed is False and not rec.ok and "denied" in rec.error
    assert "add" not in calls(hub)  # the server never saw the call


def test_a_failure_reason_is_one_line() -> None:
    from pydantic import BaseModel, ValidationError

    from agentui.mcp.client import _reason

    class M(BaseModel):
        a: dict
        b: int

    try:
        M.model_validate({"a": "not a schema", "b": "x"})
    except ValidationError as e:
        reason = _reason(BaseExceptionGroup("g", [e]))
    assert "\n" not in reason and reason.startswith("2 validation errors for M") and len(reason) <= 300
