"""Snapshots of every screen and modal at a fixed size, with a fixed clock, fixed IDs and no
animation. Review the SVGs in tests/ui/__snapshots__ when they change."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from agentui.clock import FakeClock
from agentui.config import Config
from agentui.contracts import ClarificationRequest, ConfirmationRequest
from agentui.ids import SeededIds
from agentui.memory import InMemoryMemory
from agentui.ui.app import AgentApp
from agentui.ui.modals import ClarifyModal, ConfirmModal

SIZE = (130, 36)
DEMO = Path(__file__).resolve().parents[2] / "demo" / "recording.jsonl"
DATA = Path("/tmp/agentui-snapshot-data")


def replay_app(theme: str = "dark", data: Path | None = None) -> AgentApp:
    clock = FakeClock(datetime(2026, 3, 1, tzinfo=UTC))
    ids = SeededIds(5, readable=True)
    cfg = Config.model_validate({"ui": {"theme": theme}})
    mem = InMemoryMemory(clock, ids)
    for text, space in (("run the tests before committing", "user"),
                        ("read_file on settings.ini failed", "tool:read_file")):
        mem.remember(text, space=space)
    return AgentApp(cfg, data_dir=data or DATA, clock=clock, ids=ids, replay=DEMO, speed=0, animate=False, memory=mem,
                    workspace=Path("/tmp/agentui-demo/ws"), config_file=Path("/tmp/agentui-snapshot/config.toml"))


async def _settle(pilot) -> None:
    for _ in range(40):
        await pilot.pause(0.05)
        if "replay" in pilot.app.query_one("#stage").text and pilot.app.query_one("#stage").busy is False:
            break
    await pilot.pause(0.1)


def test_main_screen_after_replay(snap_compare):
    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=_settle)


def test_main_screen_light_theme(snap_compare):
    assert snap_compare(replay_app("light"), terminal_size=SIZE, run_before=_settle)


def test_memory_browser(snap_compare):
    async def go(pilot):
        await _settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause(0.2)

    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=go)


def test_task_detail(snap_compare):
    async def go(pilot):
        await _settle(pilot)
        await pilot.press("ctrl+d")
        await pilot.pause(0.2)

    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=go)


def test_audit_screen(snap_compare):
    async def go(pilot):
        await _settle(pilot)
        await pilot.press("ctrl+r")
        await pilot.pause(0.2)

    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=go)


def test_confirmation_modal(snap_compare):
    async def go(pilot):
        await _settle(pilot)
        req = ConfirmationRequest(request_id="r1", task_id="t1", tool="shell", command="rm -rf build && npm test",
                                  reasons=["rm deletes build", "npm is not on the read-only allow-list"],
                                  cwd="/work/proj", patterns=["rm -rf build", "npm test"],
                                  scopes=["once", "task", "session", "project"], writes=["build"], sandboxed=True)
        pilot.app.push_screen(ConfirmModal(req))
        await _footer_ready(pilot)

    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=go)


def test_clarification_modal(snap_compare):
    async def go(pilot):
        await _settle(pilot)
        pilot.app.push_screen(ClarifyModal(ClarificationRequest(request_id="r1", task_id="t1",
                                                                question="Which files should I count?", round=1)))
        await pilot.pause(0.2)

    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=go)


def test_onboarding_without_llm(snap_compare, monkeypatch):
    monkeypatch.setenv("AGENTUI_SANDBOX", "off")  # the status line's sandbox field depends on the machine (#14)
    clock = FakeClock(datetime(2026, 3, 1, tzinfo=UTC))
    ids = SeededIds(5, readable=True)
    app = AgentApp(Config(), data_dir=DATA, workspace=Path("/tmp"), clock=clock, ids=ids, animate=False,
                   memory=InMemoryMemory(clock, ids))

    async def go(pilot):
        for _ in range(40):
            await pilot.pause(0.05)
            if pilot.app.runtime is not None:
                break
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=go)


def test_startup_problems_show_as_a_badge_and_a_notification(snap_compare, monkeypatch):
    """An MCP server that fails to start (a Runtime problem) is a "⚠ 1 problem" badge in the status
    line and a warning notification (#18)."""
    monkeypatch.setenv("AGENTUI_SANDBOX", "off")
    clock = FakeClock(datetime(2026, 3, 1, tzinfo=UTC))
    ids = SeededIds(5, readable=True)
    cfg = Config.model_validate({"mcp": {"servers": {"docs": {"command": "/nonexistent/agentui-test-mcp"}}}})
    app = AgentApp(cfg, data_dir=DATA, workspace=Path("/tmp"), clock=clock, ids=ids, animate=False,
                   memory=InMemoryMemory(clock, ids))

    async def go(pilot):
        for _ in range(100):
            await pilot.pause(0.05)
            if pilot.app.runtime is not None and "problem" in pilot.app.query_one("StatusBar").shown:
                break
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=SIZE, run_before=go)


def test_main_screen_80x24(snap_compare):
    """The smallest terminal we promise: the audit pane folds away, the result scrolls, the footer
    still shows Help, Memory, Audit, Copy, History and Settings."""
    assert snap_compare(replay_app(), terminal_size=(80, 24), run_before=_settle)


def test_main_screen_80x24_light(snap_compare):
    assert snap_compare(replay_app("light"), terminal_size=(80, 24), run_before=_settle)


def test_main_screen_200x50(snap_compare):
    assert snap_compare(replay_app(), terminal_size=(200, 50), run_before=_settle)


def test_help_screen(snap_compare):
    async def go(pilot):
        await _settle(pilot)
        await pilot.press("f1")
        await pilot.pause(0.2)

    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=go)


def test_settings_screen(snap_compare):
    async def go(pilot):
        await _settle(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause(0.3)

    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=go)


def _history_data() -> Path:
    """A data dir holding the demo task as a past session (a fixed path: it is shown on screen)."""
    import shutil

    root = Path("/tmp/agentui-snapshot-history")
    shutil.rmtree(root, ignore_errors=True)
    (root / "recordings").mkdir(parents=True)
    shutil.copy(DEMO, root / "recordings" / "task-000001.bus.jsonl")
    return root


def test_history_screen(snap_compare):
    async def go(pilot):
        await _settle(pilot)
        await pilot.press("ctrl+g")
        for _ in range(40):
            await pilot.pause(0.05)
            if pilot.app.screen.records:
                break
        await pilot.pause(0.2)

    assert snap_compare(replay_app(data=_history_data()), terminal_size=SIZE, run_before=go)


def _open_history_replay():
    async def go(pilot):
        await _settle(pilot)
        await pilot.press("ctrl+g")
        for _ in range(40):
            await pilot.pause(0.05)
            if pilot.app.screen.records:
                break
        await pilot.press("enter")
        await pilot.pause(0.3)

    return go


def test_history_replay_screen(snap_compare):
    assert snap_compare(replay_app(data=_history_data()), terminal_size=SIZE, run_before=_open_history_replay())


def test_history_replay_screen_80x24(snap_compare):
    """A past task at 80×24: the result goes under the bus; the cost table's numbers are whole."""
    assert snap_compare(replay_app(data=_history_data()), terminal_size=(80, 24),
                        run_before=_open_history_replay())


def test_settings_screen_80x24(snap_compare):
    async def go(pilot):
        await _settle(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause(0.3)

    assert snap_compare(replay_app(), terminal_size=(80, 24), run_before=go)


async def _footer_ready(pilot) -> None:
    """A dialog's own footer draws its keys a frame or two after the dialog: wait for them."""
    from textual.widgets._footer import FooterKey

    for _ in range(40):
        await pilot.pause(0.05)
        if pilot.app.screen.query(FooterKey):
            break
    await pilot.pause(0.1)


def _confirm(pilot):
    req = ConfirmationRequest(request_id="r1", task_id="t1", tool="shell", command="rm -rf build && npm test",
                              reasons=["rm deletes build", "npm is not on the read-only allow-list"],
                              cwd="/work/proj", patterns=["rm -rf build", "npm test"],
                              scopes=["once", "task", "session", "project"], writes=["build"], sandboxed=True)
    pilot.app.push_screen(ConfirmModal(req))


def test_confirmation_modal_80x24(snap_compare):
    """At 80×24 the approval's own footer is on screen and says what Esc does there: deny."""
    async def go(pilot):
        await _settle(pilot)
        _confirm(pilot)
        await _footer_ready(pilot)

    assert snap_compare(replay_app(), terminal_size=(80, 24), run_before=go)


def test_main_screen_60x18(snap_compare):
    """Below 80×24 the screen degrades: the bus and the result keep rows, the input loses its border."""
    assert snap_compare(replay_app(), terminal_size=(60, 18), run_before=_settle)


def test_settings_80x24_says_what_save_did(snap_compare, monkeypatch):
    """Ctrl+S on an endpoint that refuses: the answer is on screen at 80×24, not below the fold."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()

    async def go(pilot):
        await _settle(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause(0.3)
        pilot.app.screen.query_one("#set-url").value = f"http://127.0.0.1:{port}/v1"
        await pilot.press("ctrl+s")
        for _ in range(100):
            await pilot.pause(0.05)
            if "not saved" in str(pilot.app.screen.query_one("#set-status").render()):
                break
        # the port differs per run: the snapshot shows a fixed one
        status = pilot.app.screen.query_one("#set-status")
        status.update(str(status.render()).replace(str(port), "9"))
        pilot.app.screen.query_one("#set-url").value = "http://127.0.0.1:9/v1"
        await pilot.pause(0.2)

    assert snap_compare(replay_app(), terminal_size=(80, 24), run_before=go)


def test_accepted_snapshots_are_real_svgs():
    """A snapshot holding `0` once passed silently (the app's exit value replaced the SVG)."""
    for f in (Path(__file__).parent / "__snapshots__" / "test_snapshots").glob("*.svg"):
        text = f.read_text(encoding="utf-8")
        assert text.startswith("<svg") and len(text) > 5000, f.name
