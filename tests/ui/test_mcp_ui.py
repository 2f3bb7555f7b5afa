"""MCP in the terminal UI, with a real MCP server process (tests/mcpserver) and the fake LLM: the
servers start in the background (the UI is usable meanwhile, the status line counts them, a failed
one is named), a goal given meanwhile waits for them, a tool's progress notifications show in the
stage line, a server's form (elicitation) is a modal, and the project's trusted `.agentui/mcp.toml`
is loaded as an editor's session loads it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agentui.clock import FakeClock
from agentui.config import Config
from agentui.ids import SeededIds
from agentui.llm import LLMPool
from agentui.memory import InMemoryMemory
from agentui.ui.app import AgentApp
from agentui.ui.elicit import ElicitModal
from agentui.ui.status import StatusBar
from agentui.ui.widgets import BusView, StageLine
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.ui.test_app import SIZE, type_task, wait_for

ROOT = str(Path(__file__).resolve().parents[2])


def server(*extra: str, **kw) -> dict:  # noqa: ANN003
    return {"command": sys.executable, "args": ["-m", "tests.mcpserver", *extra], "cwd": ROOT, **kw}


def make_app(fake, tmp_path: Path, servers: dict) -> AgentApp:  # noqa: ANN001
    cfg = Config.model_validate({"llm": {"base_url": fake.base_url, "max_retries": 0},
                                 "pipeline": {"correction_budget": 0}, "ggs": {"time_budget_ms": 10**9},
                                 "memory": {"dreamer_interval_s": 0}, "mcp": {"servers": servers},
                                 "tools": {"timeout_s": 60}})
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    clock = FakeClock()
    ids = SeededIds(3, readable=True)
    return AgentApp(cfg, data_dir=tmp_path / "data", workspace=ws, clock=clock, ids=ids, animate=False,
                    pool=LLMPool(cfg), memory=InMemoryMemory(clock, ids))


def script_tool(fake, tool: str, checks: list[str] | None = None, **args) -> None:  # noqa: ANN001, ANN003
    fake.script("perceiver", [perceive(f"use {tool}")])
    fake.script("planner", [plan(["the tool answered"], sub(f"call {tool}", "the tool answers", tools=[tool]),
                                 checks=checks)])
    fake.script("executor", [call(tool, **args), finish("done")])
    fake.script("agent_validator", [verdicts("pass")])
    fake.script("meta_validator", [merge("done", "pass", summary="done")])


def bus(app: AgentApp) -> BusView:
    return app.screen_stack[0].query_one(BusView)  # the main screen's, also under a modal


def tool_evidence(app: AgentApp, tool: str) -> str | None:
    for env in bus(app).envs:
        if env.type == "ExecutionResult":
            for rec in env.payload.tool_calls:
                if rec.tool == tool:
                    return rec.evidence if rec.ok else f"failed: {rec.error}"
    return None


def ended(app: AgentApp, tool: str) -> bool:
    """The tool's call has a result and the task is over (how the validators judge it is not the point)."""
    return tool_evidence(app, tool) is not None and app.current is None


async def test_an_mcp_form_is_a_modal_whose_answer_the_server_receives(fakellm, tmp_path):
    script_tool(fakellm, "t.book")
    app = make_app(fakellm, tmp_path, {"t": server(allow=["book"])})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "book a table")
        await wait_for(pilot, lambda: isinstance(app.screen, ElicitModal), steps=600)
        modal = app.screen
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "field-name")  # the first field
        assert modal.query_one("#elicit-message").render().plain == "Book a table: who, how many, and where?"
        for ch in "ann":
            await pilot.press(ch)
        await pilot.press("tab")
        for ch in "20":  # above the schema's maximum of 12
            await pilot.press(ch)
        await pilot.press("ctrl+y")
        await pilot.pause(0.1)
        assert isinstance(app.screen, ElicitModal)  # not sent: the field says why
        assert modal.query_one("#error-guests").render().plain == "at most 12"
        await pilot.press("backspace", "backspace", "3", "tab", "space")  # 3 guests; outside: on
        await pilot.press("tab", "enter", "down", "enter")  # area: window → garden
        assert modal.values() == {"name": "ann", "guests": "3", "outside": True, "area": "garden"}
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: ended(app, "t.book"), steps=600)
        assert tool_evidence(app, "t.book") == \
            'accepted: {"name":"ann","guests":3,"outside":true,"area":"garden"}'


async def test_declining_and_cancelling_a_form_reach_the_server(fakellm, tmp_path):
    app = make_app(fakellm, tmp_path, {"t": server(allow=["book"])})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        for key, said in (("ctrl+n", "decline"), ("escape", "cancel")):
            script_tool(fakellm, "t.book")
            await type_task(pilot, f"book a table ({key})")
            await wait_for(pilot, lambda: isinstance(app.screen, ElicitModal), steps=600)
            await pilot.press(key)
            await wait_for(pilot, lambda: ended(app, "t.book"), steps=600)
            assert tool_evidence(app, "t.book") == said
            bus(app).envs.clear()


async def test_servers_start_in_the_background_and_a_goal_waits_for_them(fakellm, tmp_path):
    script_tool(fakellm, "t.count", checks=["echo 5"], n=5)
    slow = {"command": sys.executable, "args": ["-m", "tests.mcpserver.raw", "--slow-start", "3"], "cwd": ROOT}
    app = make_app(fakellm, tmp_path, {"t": server(allow=["count"]), "slow": slow,
                                       "bad": server("--crash-on-start")})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        bar = app.query_one(StatusBar)
        assert bar.fields["mcp"].startswith("MCP: ") and "(starting)" in bar.fields["mcp"]  # the UI is up first
        await type_task(pilot, "count to five")
        assert app._mcp_goal == "count to five" and app.current is None  # waiting for the servers
        assert "waiting for the MCP servers" in app.query_one(StageLine).seen[-1]
        await wait_for(pilot, lambda: ended(app, "t.count"), steps=600)
        assert bar.fields["mcp"] == "MCP: 2/3 ready, failed: bad"
        assert any("MCP server 'bad'" in p for p in bar.problem_lines)
        assert tool_evidence(app, "t.count") == "counted to 5"
        seen = app.query_one(StageLine).seen
        steps = [s for s in seen if s.startswith("running t.count:") and " — " in s]
        assert steps and steps[-1].endswith("— 5/5 (100%): step 5"), seen


async def test_the_trusted_project_file_adds_its_servers(fakellm, tmp_path):
    from agentui.mcp.projectfile import load, trust

    app = make_app(fakellm, tmp_path, {})
    ws = tmp_path / "ws"
    (ws / ".agentui").mkdir()
    (ws / ".agentui" / "mcp.toml").write_text(
        f"[mcp.servers.proj]\ncommand = {json.dumps(sys.executable)}\nargs = ['-m', 'tests.mcpserver']\n"
        f"cwd = {json.dumps(ROOT)}\nallow = ['echo']\n")
    async with app.run_test(size=SIZE) as pilot:  # untrusted: not used, and said once
        await wait_for(pilot, lambda: app.runtime is not None)
        assert app.runtime.mcp is None
        assert any("not used until you trust it" in p for p in app.runtime.problems)
    trust(load(ws, tmp_path / "data"), ws, tmp_path / "data")
    script_tool(fakellm, "proj.echo", text="from the project")
    app = make_app(fakellm, tmp_path, {})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "echo it")
        await wait_for(pilot, lambda: ended(app, "proj.echo"), steps=600)
        assert app.query_one(StatusBar).fields["mcp"] == "MCP: 1/1 ready"
        assert tool_evidence(app, "proj.echo") == "from the project"


async def test_quitting_while_servers_start_stops_them_at_once(fakellm, tmp_path):
    import time

    slow = {"command": sys.executable, "args": ["-m", "tests.mcpserver.raw", "--slow-start", "60"], "cwd": ROOT}
    app = make_app(fakellm, tmp_path, {"slow": slow})
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None and app._mcp_ready is not None)
        await wait_for(pilot, lambda: bool(app.runtime.mcp.starting))
        conn = app.runtime.mcp.starting["slow"]
        started = time.monotonic()
        await app._stop_and_exit()
        assert time.monotonic() - started < 10  # not the server's 15 s start timeout
        assert app._mcp_ready.cancelled() and not conn.alive
