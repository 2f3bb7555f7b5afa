"""The TUI driven with Pilot over the fake LLM: real runtime, real tools, real memory."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from agentui.clock import FakeClock
from agentui.config import Config
from agentui.contracts import ConfirmationChoice
from agentui.ids import SeededIds
from agentui.llm import LLMPool
from agentui.memory import InMemoryMemory
from agentui.ui.app import AgentApp
from agentui.ui.modals import ClarifyModal, ConfirmModal
from agentui.ui.screens import MemoryScreen
from agentui.ui.widgets import BusView, PipelineLine
from tests.fakellm import Reply
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts

SIZE = (140, 40)


def make_app(fake, tmp_path: Path, **kw) -> AgentApp:
    cfg = Config.model_validate({"llm": {"base_url": fake.base_url, "max_retries": 0},
                                 "pipeline": {"correction_budget": 0}, "ggs": {"time_budget_ms": 10**9},
                                 "memory": {"dreamer_interval_s": 0}})
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    clock = FakeClock()
    ids = SeededIds(3, readable=True)
    return AgentApp(cfg, data_dir=tmp_path / "data", workspace=ws, clock=clock, ids=ids, animate=False,
                    pool=LLMPool(cfg), memory=InMemoryMemory(clock, ids), **kw)


async def wait_for(pilot, cond, steps: int = 200) -> None:
    for _ in range(steps):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not reached")


def script_happy(fake) -> None:
    fake.script("perceiver", [perceive("count the txt files")])
    fake.script(
        "planner",
        [plan(["the count is given"], sub("count .txt files", "a number", tools=["shell"]), checks=["echo 2"])],
    )
    fake.script("executor", [call("shell", command="echo 2"), finish("2")])
    fake.script("agent_validator", [verdicts("pass", quote="2")])
    fake.script("meta_validator", [merge("2", "pass", summary="2 txt files")])


async def type_task(pilot, text: str) -> None:
    for ch in text:
        await pilot.press("space" if ch == " " else ch)
    await pilot.press("enter")


async def test_type_a_task_and_watch_it_complete(fakellm, tmp_path):
    script_happy(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "count txt")
        await wait_for(pilot, lambda: any(e.type == "FinalResult" for e in app.query_one(BusView).envs))
        assert app.current is None
        bus = app.query_one(BusView)
        assert [e.type for e in bus.envs if e.type == "FinalResult"] == ["FinalResult"]
        assert "init→accept" in app.query_one(PipelineLine).text
        await pilot.press("ctrl+d")  # task detail
        assert type(app.screen).__name__ == "TaskDetailScreen"
        await pilot.press("escape")
        await pilot.press("up")  # history
        assert app.query_one("#task").value == "count txt"


async def test_answer_a_clarification(fakellm, tmp_path):
    script_happy(fakellm)
    fakellm._scripts["perceiver"].clear()
    fakellm.script("perceiver", [Reply.json({"kind": "clarify", "question": "Count what?"}), perceive("count txt")])
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "count")
        await wait_for(pilot, lambda: isinstance(app.screen, ClarifyModal))
        await type_task(pilot, "txt files")
        await wait_for(pilot, lambda: app.current is None)
        assert "txt files" in fakellm.calls("perceiver")[1]["messages"][1]["content"]


async def _confirm_flow(fakellm, tmp_path, key: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "junk.txt").write_text("x")
    fakellm.script("perceiver", [perceive("delete junk.txt")])
    fakellm.responder("planner", lambda _r: plan(["junk.txt gone"], sub("rm junk.txt", "gone", tools=["shell"])))
    fakellm.responder("executor", lambda r: call("shell", command="rm junk.txt") if len(r["messages"]) == 2
                      else finish("done"))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", quote="rm junk.txt"))
    fakellm.responder("meta_validator", lambda _r: merge("removed", "pass"))
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "delete junk")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        assert "rm junk.txt" in str(app.screen.query_one("#command").render())
        await pilot.press(key)
        await wait_for(pilot, lambda: app.current is None)
        decisions = [e.payload.decision for e in app.query_one(BusView).envs if e.type == "ConfirmationDecision"]
    return ws, decisions


async def test_approve_a_confirmation(fakellm, tmp_path):
    ws, decisions = await _confirm_flow(fakellm, tmp_path, "a")
    assert decisions == [ConfirmationChoice.APPROVE] and not (ws / "junk.txt").exists()


async def test_deny_a_confirmation(fakellm, tmp_path):
    ws, decisions = await _confirm_flow(fakellm, tmp_path, "d")
    assert decisions == [ConfirmationChoice.DENY] and (ws / "junk.txt").read_text() == "x"


async def test_abort_mid_task_keeps_the_app(fakellm, tmp_path):
    fakellm.script("perceiver", [perceive("wait")])
    fakellm.script("planner", [plan(["waited"], sub("wait", "waited"))])
    fakellm.script("executor", [call("shell", command="sleep 30")])
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "wait")
        await wait_for(pilot, lambda: any(e.type == "DispatchManifest" for e in app.query_one(BusView).envs))
        await pilot.pause(0.3)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.current is None)
        assert any(e.type == "TaskCancelled" for e in app.query_one(BusView).envs)
        assert "cancelled" in app.query_one("#stage").text
        assert app.is_running


async def test_browse_and_filter_megrams(fakellm, tmp_path):
    app = make_app(fakellm, tmp_path)
    app.memory.remember("run tests before committing")
    app.memory.remember("never force-push", space="tool:git")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await pilot.press("ctrl+o")
        assert isinstance(app.screen, MemoryScreen)
        table = app.screen.query_one(DataTable)
        assert table.row_count == 2
        await pilot.press("slash")
        for ch in "space:git":
            await pilot.press(ch)
        await pilot.pause(0.1)
        assert table.row_count == 1
        assert "never force-push" in str(app.screen.query_one("#mem-detail").render()) or table.row_count == 1
        await pilot.press("escape")


async def test_switch_theme(fakellm, tmp_path):
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        first = app.theme
        await pilot.press("ctrl+t")
        assert app.theme != first and app.theme in app.theme_names
        assert {"agentui-dark", "agentui-light"} <= set(app.theme_names)


async def test_onboarding_without_an_llm(tmp_path):
    clock = FakeClock()
    ids = SeededIds(3, readable=True)
    app = AgentApp(Config(), data_dir=tmp_path / "data", workspace=tmp_path, clock=clock, ids=ids, animate=False,
                   memory=InMemoryMemory(clock, ids))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        text = str(app.query_one("#onboarding").render())
        assert "No LLM available" in text and "Ctrl+S" in text and "Ctrl+Y" not in text
        await type_task(pilot, "do it")
        assert app.current is None
        await pilot.press("ctrl+o")
        assert isinstance(app.screen, MemoryScreen)  # memory browsing still works


async def test_bus_cursor_opens_the_payload_and_filters_by_role_and_type(tmp_path):
    from agentui.ui.modals import PayloadModal
    from tests.ui.test_snapshots import replay_app

    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        bus = app.query_one(BusView)
        await wait_for(pilot, lambda: any(e.type == "FinalResult" for e in bus.rows))
        await pilot.press("ctrl+l")  # focus the bus stream
        assert bus.has_focus and bus.selected.type == "FinalResult"
        await pilot.press("up", "up")
        picked = bus.selected
        await pilot.press("enter")
        assert isinstance(app.screen, PayloadModal) and app.screen.env is picked
        await pilot.press("escape")
        bus.set_filter("type:PlanDirective")
        assert [e.type for e in bus.rows] == ["PlanDirective"]
        bus.set_filter("role:ggs")
        assert bus.rows and all("ggs" in (e.sender.value, e.receiver.value) for e in bus.rows)
        bus.set_filter("type:LLMUsage")  # hidden unless asked for by type
        assert bus.rows and all(e.type == "LLMUsage" for e in bus.rows)
        bus.set_filter("")
        assert not any(e.type == "LLMUsage" for e in bus.rows)


async def test_replay_rebuilds_costs_and_audits_the_recording(tmp_path):
    from agentui.ui.widgets import AuditFeed, ResultPanel
    from tests.ui.test_snapshots import replay_app

    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: "replay finished" in app.query_one("#stage").text)
        await wait_for(pilot, lambda: "by_role" in app.task_stats("task-000001"))
        assert app.audit_history and app.audit_history[-1].messages_seen > 0  # the replayed Auditor's report
        assert app.query_one(AuditFeed).lines
        stats = app.task_stats("task-000001")
        assert stats["by_role"]["planner"]["calls"] == 2 and stats["tool_calls"] == 3
        assert app.query_one(ResultPanel).stats["by_role"]["planner"]["calls"] == 2  # the cost table


async def test_question_mark_on_an_empty_input_opens_help_and_types_otherwise(fakellm, tmp_path):
    from agentui.ui.screens import HelpScreen

    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("w", "h", "y", "question_mark")
        assert app.query_one("#task").value == "why?"


async def test_every_theme_is_in_the_command_palette(fakellm, tmp_path):
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for name in app.theme_names:
            assert f"Theme: {name}" in titles
        for needed in ("Abort task", "Memory browser", "Task detail", "Audit reports", "Settings", "History",
                       "Help & glossary", "Copy the final answer", "Quit"):
            assert needed in titles
        # one entry per thing: no second help (Textual's "Keys"), no extra theme switchers
        assert sum("help" in t.casefold() or t == "Keys" for t in titles) == 1
        assert sorted(t for t in titles if "theme" in t.casefold()) == sorted(f"Theme: {n}" for n in app.theme_names)
        assert len(titles) == len(set(titles))
        app.set_theme("agentui-light")
        assert app.theme == "agentui-light"
