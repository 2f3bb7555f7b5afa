"""The newcomer's report on the TUI (#17): settings write only what the user changed and never hang,
user text in square brackets survives Rich markup, the pipeline line tells the truth — Pilot over the
fake LLM (a real HTTP server), a real runtime and real files."""

from __future__ import annotations

import tomllib

from textual.widgets import Input

from agentui.ui.settings import SettingsScreen, check_endpoint, url_problem
from tests.ui.test_app import SIZE, wait_for
from tests.ui.test_product import _closed_port, _fill, _no_llm_app


def _status(app) -> str:
    return str(app.screen.query_one("#set-status").render())


async def test_saving_settings_writes_only_the_fields_the_user_changed(fakellm, tmp_path):
    cfg_file = tmp_path / "config.toml"
    app = _no_llm_app(tmp_path, cfg_file)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, SettingsScreen)
        assert "saved to" not in str(app.screen.query_one("#set-path").render())  # nothing saved yet
        await _fill(pilot, "#set-url", fakellm.base_url)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen), steps=300)
    doc = tomllib.loads(cfg_file.read_text())
    assert doc["llm"]["base_url"] == fakellm.base_url
    assert "tools" not in doc and "ui" not in doc and "model" not in doc["llm"]  # untouched: not pinned


async def test_settings_can_still_change_the_workspace(fakellm, tmp_path):
    cfg_file = tmp_path / "config.toml"
    other = tmp_path / "other"
    other.mkdir()
    app = _no_llm_app(tmp_path, cfg_file)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await pilot.press("ctrl+s")
        await _fill(pilot, "#set-url", fakellm.base_url)
        await _fill(pilot, "#set-ws", str(other))
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen), steps=300)
        await wait_for(pilot, lambda: app.workspace == other.resolve())
    assert tomllib.loads(cfg_file.read_text())["tools"]["workspace"] == str(other)


async def test_settings_reject_malformed_urls_at_once(tmp_path):
    app = _no_llm_app(tmp_path, tmp_path / "c.toml")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await pilot.press("ctrl+s")
        for url in ("http://", "http://127.0.0.1:99999/v1", "not a url"):
            await _fill(pilot, "#set-url", url)
            await pilot.press("f5")
            await wait_for(pilot, lambda: "not a URL" in _status(app), steps=40)
            await _fill(pilot, "#set-url", "")
            await pilot.press("ctrl+s")  # save too: a message, not "checking…" forever
            await _fill(pilot, "#set-url", url)
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: "not a URL" in _status(app), steps=40)
    assert not (tmp_path / "c.toml").exists()


def test_url_problem_names_scheme_host_and_port():
    assert url_problem("http://127.0.0.1:11434/v1") is None and url_problem("localhost:1234") is None
    assert "port" in url_problem("http://127.0.0.1:99999/v1")
    assert "host" in url_problem("http://")
    assert url_problem("ftp://x/v1")


async def test_check_endpoint_is_bounded_and_turns_errors_into_a_message(tmp_path):
    import asyncio
    import time

    from agentui.config import Config

    # a server that accepts and never answers: the check ends at its bound with a message
    async def silent(reader, writer):
        await asyncio.sleep(30)

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        cfg = Config.model_validate({"llm": {"base_url": f"http://127.0.0.1:{port}/v1", "max_retries": 0}})
        t0 = time.monotonic()
        ok, msg = await check_endpoint(cfg, timeout_s=0.5)
        assert not ok and msg and time.monotonic() - t0 < 5
    finally:
        server.close()
    ok, msg = await check_endpoint(Config.model_validate({"llm": {"base_url": f"http://127.0.0.1:{_closed_port()}/v1"}}))
    assert not ok and msg


# -- square brackets are text, not markup --------------------------------------------------------
RULE = "never run [rm -rf] in /"


def _cells(table) -> list[str]:
    return [c.plain if hasattr(c, "plain") else str(c) for r in range(table.row_count) for c in table.get_row_at(r)]


def _toasts(app) -> str:
    """The notifications' text as a Toast draws it (markup parsed when the notification says so)."""
    from textual.content import Content

    return "\n".join(Content.from_markup(n.message).plain if n.markup else n.message for n in app._notifications)


async def test_bracketed_rule_survives_the_megram_table_and_its_notifications(tmp_path):
    from textual.widgets import DataTable

    app = _no_llm_app(tmp_path, tmp_path / "c.toml")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None and app.memory is not None)
        await pilot.press("ctrl+o")
        await pilot.pause(0.1)
        await pilot.press("r")
        await pilot.pause(0.1)
        await _fill(pilot, "Input", RULE)
        await pilot.press("enter")
        await pilot.pause(0.2)
        table = app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        # what the cell draws, not just what it holds: render the row's content cell
        from rich.console import Console

        cell = next(c for r in range(table.row_count) for c in table.get_row_at(r) if "never run" in str(c))
        con = Console(width=80, record=True)
        con.print(cell if not isinstance(cell, str) else __import__("rich.text").text.Text.from_markup(cell))
        assert "[rm -rf]" in con.export_text()


async def test_no_llm_notification_keeps_the_config_section_name(tmp_path):
    app = _no_llm_app(tmp_path, tmp_path / "c.toml")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        assert "[llm]" in app.llm_error
        app.query_one("#task", Input).value = "count the files"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "base_url/model" in _toasts(app))
        assert "[llm]" in _toasts(app)
        app.notify("remembered [rm -rf] rule")
        await wait_for(pilot, lambda: "[rm -rf]" in _toasts(app))



# -- the pipeline line ---------------------------------------------------------------------------
async def test_pipeline_line_says_cancelled_after_escape(fakellm, tmp_path):
    from agentui.ui.widgets import BusView, PipelineLine
    from tests.functional.pipeline import call, perceive, plan, sub
    from tests.ui.test_app import make_app, type_task

    fakellm.script("perceiver", [perceive("wait")])
    fakellm.script("planner", [plan(["waited"], sub("wait", "waited"))])
    fakellm.script("executor", [call("shell", command="sleep 30")])
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "wait")
        await wait_for(pilot, lambda: any(e.type == "DispatchManifest" for e in app.query_one(BusView).envs))
        assert "running" in app.query_one(PipelineLine).text
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.current is None)
        line = app.query_one(PipelineLine).text
        assert "running" not in line and "cancelled" in line, line


async def test_bus_title_counts_what_it_lists_and_names_hidden_usage():
    from agentui.ui.widgets import BusView
    from tests.ui.test_product import _replayed
    from tests.ui.test_snapshots import replay_app

    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot)
        bus = app.query_one(BusView)
        hidden = sum(e.type == "LLMUsage" for e in bus.envs)
        assert hidden and len(bus.rows) == len(bus.envs) - hidden
        title = str(app.query_one("#bus-title").render())
        assert f"{len(bus.rows)} shown ({hidden} usage hidden)" in title, title


async def test_palette_finds_the_glossary(tmp_path):
    from textual.fuzzy import Matcher

    app = _no_llm_app(tmp_path, tmp_path / "c.toml")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert any(Matcher("glossary").match(t) > 0 for t in titles), titles


async def test_header_keeps_sandbox_and_memory_counts_at_80_columns():
    from agentui.ui.status import StatusBar
    from tests.ui.test_product import _replayed
    from tests.ui.test_snapshots import replay_app

    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _replayed(pilot)
        bar = app.query_one(StatusBar)
        bar.set(workspace="/home/someone/projects/agentui-workspace", sandbox="no sandbox (asks before "
                "risky commands)", memory="M12 K3 C1 T0")
        await pilot.pause(0.1)
        assert len(bar.shown) <= 78, bar.shown
        assert "no sandbox" in bar.shown and "M12 K3 C1 T0" in bar.shown, bar.shown
        assert "/home/someone/projects/agentui-workspace" in bar.text  # the whole line stays in .text / the tooltip


async def test_without_an_llm_the_bus_keeps_its_rows_at_80x24(tmp_path):
    from agentui.ui.widgets import BusView

    app = _no_llm_app(tmp_path, tmp_path / "c.toml")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None and app.llm_error)
        await pilot.pause(0.1)
        assert app.query_one("#onboarding").display and not app.query_one("#hint").display
        assert app.query_one(BusView).size.height >= 5, app.query_one(BusView).size


async def test_result_totals_are_visible_at_80x24():
    from tests.ui.test_product import _replayed
    from tests.ui.test_snapshots import replay_app

    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _replayed(pilot)
        await pilot.pause(0.1)
        screen = app.export_screenshot().replace("&#160;", " ")
        assert "total 10 calls" in screen, "no totals on screen"
