"""The TUI as a newcomer meets it (#17): it says what it is doing, lets you copy, keeps screens from
stacking over a pending question, remembers past tasks and edits its settings — driven with Pilot over
the fake LLM (a real HTTP server), a real runtime and real files."""

from __future__ import annotations

import json
import socket
import tomllib

from textual.widgets import DataTable, Input

from agentui.clock import FakeClock
from agentui.config import Config
from agentui.contracts import ConfirmationRequest
from agentui.ids import SeededIds
from agentui.memory import InMemoryMemory
from agentui.ui.app import AgentApp
from agentui.ui.help import HelpScreen, key_name
from agentui.ui.modals import ConfirmModal, PayloadModal
from agentui.ui.screens import MemoryScreen
from agentui.ui.widgets import BusView, PipelineLine, ResultPanel, StageLine
from tests.functional.pipeline import call, perceive, plan, sub
from tests.ui.test_app import SIZE, make_app, script_happy, type_task, wait_for
from tests.ui.test_snapshots import replay_app


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


async def _replayed(pilot) -> None:
    await wait_for(pilot, lambda: "replay finished" in pilot.app.query_one(StageLine).text)


# -- say what it is doing -----------------------------------------------------------------------
async def test_a_running_task_shows_its_round_clock_tokens_and_calls_never_idle(fakellm, tmp_path):
    script_happy(fakellm)
    slow = perceive("count the txt files")
    slow.delay_s = 0.6  # time to look at the screen while R1 thinks
    fakellm._scripts["perceiver"].clear()
    fakellm.script("perceiver", [slow])
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        status = app.query_one("#status").text
        assert str(tmp_path / "ws") in status or "ws" in status
        assert fakellm.base_url.split("//")[1].split("/")[0] in status and "sandbox" in status
        await type_task(pilot, "count txt")
        pl = app.query_one(PipelineLine)
        assert "round running" in pl.text and "no task yet" not in pl.text
        await wait_for(pilot, lambda: app.current is None and "init→accept" in pl.text)
        sl = app.query_one(StageLine)
        assert "task " in sl.text and "6 LLM calls" in sl.text and "1 tool calls" in sl.text
        assert " in / " in sl.text and " out tokens" in sl.text
        # one subtask: nobody to wait for
        assert not any("waiting for the other" in s for s in sl.seen), list(sl.seen)
        assert "R4b merging the results…" in sl.seen
        assert app.query_one("#status").healthy is True  # the pool saw the endpoint answer


async def test_status_line_shows_an_endpoint_that_went_down(tmp_path):
    from agentui.llm import LLMPool

    cfg = Config.model_validate({"llm": {"base_url": f"http://127.0.0.1:{_closed_port()}/v1", "max_retries": 0},
                                 "memory": {"dreamer_interval_s": 0}})
    (tmp_path / "ws").mkdir()
    clock, ids = FakeClock(), SeededIds(3, readable=True)
    app = AgentApp(cfg, data_dir=tmp_path / "data", workspace=tmp_path / "ws", clock=clock, ids=ids, animate=False,
                   pool=LLMPool(cfg), memory=InMemoryMemory(clock, ids))
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "hello there, count files")
        await wait_for(pilot, lambda: app.current is None, steps=400)
        await wait_for(pilot, lambda: app.query_one("#status").healthy is False)
        assert "down" in app.query_one("#status").text


async def test_replay_does_not_invite_a_goal_and_its_cost_table_has_role_times(tmp_path):
    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot)
        assert "ready for the next goal" not in app.query_one(StageLine).text
        assert "replay" in app.query_one("#task", Input).placeholder
        stats = app.query_one(ResultPanel).stats
        assert stats["wall_s"] > 1 and all(r["seconds"] > 0 for r in stats["by_role"].values())
        assert "/tmp/agentui-demo/ws" in app.query_one("#status").text


async def test_help_names_keys_readably_and_explains_the_terms(tmp_path):
    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        text = str(app.screen.query_one("#help-text").render())
        for needed in ("Ctrl+O", "F1", "Enter", "↑ / ↓", "Ctrl+P", "Ctrl+Q", "Esc", "∇L", "Ω", "M/K/C/T"):
            assert needed in text, needed
        assert "question_mark" not in text and "ctrl+o" not in text
    assert key_name("question_mark") == "?" and key_name("ctrl+o") == "Ctrl+O" and key_name("escape,q") == "Esc / q"


async def test_pipeline_fields_have_glossary_tooltips(tmp_path):
    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot)
        tips = {w.id: str(w.tooltip) for w in app.query(".pl-field") if w.tooltip}
        assert tips["pl-d"].startswith("D — distance to done") and tips["pl-omega"].startswith("Ω — ")
        assert tips["pl-grad"].startswith("∇L — ") and tips["pl-p"].startswith("P — ")


async def test_first_run_hint_until_there_is_a_past_task(fakellm, tmp_path):
    script_happy(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        hint = app.query_one("#hint")
        assert hint.display and "D" in str(hint.render())
        await type_task(pilot, "count txt")
        assert not hint.display
        await wait_for(pilot, lambda: app.current is None)
    app2 = make_app(fakellm, tmp_path)
    async with app2.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app2.runtime is not None)
        assert not app2.query_one("#hint").display  # the data dir has a past task now


async def test_memory_count_that_ends_after_the_status_bar_is_gone_does_not_crash(fakellm, tmp_path):
    """CI once saw the memory-count worker finish its stats read while the app was shutting down:
    NoMatches for the status bar, raised through run_test. The count must just have nowhere to go."""
    from agentui.ui.status import StatusBar

    script_happy(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None and app.memory is not None)
        await app.query_one(StatusBar).remove()
        worker = app.refresh_memory_counts()
        await app.workers.wait_for_complete([worker])
        await pilot.pause()
        assert app.sub_title.startswith("M0 K0 C0 T0")
        assert app.is_running


async def test_bus_filter_stays_visible_after_escape(tmp_path):
    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot)
        await pilot.press("ctrl+f")
        for ch in "role:ggs":
            await pilot.press(ch)
        await pilot.press("escape")
        title = str(app.query_one("#bus-title").render())
        bus = app.query_one(BusView)
        assert "filter 'role:ggs'" in title and f"{len(bus.rows)} of {len(bus.envs)} shown" in title
        assert app.query_one("#bus-title").has_class("filtered")


async def test_ctrl_l_then_enter_opens_the_newest_line(tmp_path):
    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot)
        await pilot.press("ctrl+l", "enter")
        assert isinstance(app.screen, PayloadModal) and app.screen.env.type == "FinalResult"


# -- copy ---------------------------------------------------------------------------------------
async def test_copy_answer_bus_line_payload_and_megram(tmp_path):
    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot)
        await pilot.press("ctrl+y")
        assert app.clipboard == "The server port is 8080 (config.ini)."
        await pilot.press("ctrl+l", "c")
        assert app.clipboard.startswith("ggs→user FinalResult: change_path→accept")
        await pilot.press("enter", "c")
        assert json.loads(app.clipboard)["type"] == "FinalResult"
        await pilot.press("escape", "escape", "ctrl+o")
        assert isinstance(app.screen, MemoryScreen)
        await pilot.pause(0.1)
        await pilot.press("c")
        assert "\n" in app.clipboard and app.clipboard.split("\n", 1)[1] in (
            "run the tests before committing", "read_file on settings.ini failed")


async def test_ctrl_c_does_not_abort_esc_does(fakellm, tmp_path):
    fakellm.script("perceiver", [perceive("wait")])
    fakellm.script("planner", [plan(["waited"], sub("wait", "waited"))])
    fakellm.script("executor", [call("shell", command="sleep 30")])
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "wait")
        await wait_for(pilot, lambda: any(e.type == "DispatchManifest" for e in app.query_one(BusView).envs))
        await pilot.press("ctrl+c")
        await pilot.pause(0.3)
        assert app.current is not None and app.is_running
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.current is None)


# -- screens do not stack over a question --------------------------------------------------------
async def test_pending_confirmation_is_not_covered(tmp_path):
    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot)
        app.push_screen(ConfirmModal(ConfirmationRequest(request_id="r", task_id="t", tool="shell",
                                                         command="rm -rf build", reasons=["rm deletes files"])))
        await pilot.pause(0.1)
        for key in ("ctrl+o", "ctrl+r", "ctrl+d", "ctrl+g", "ctrl+s", "f1"):
            await pilot.press(key)
            assert isinstance(app.screen, ConfirmModal), key
        assert len(app.screen_stack) == 2


async def test_megram_filter_escape_and_rule_text(tmp_path):
    app = replay_app()
    async with app.run_test(size=SIZE) as pilot:
        await _replayed(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause(0.1)
        table = app.screen.query_one(DataTable)
        cells = [str(c) for r in range(table.row_count) for c in table.get_row_at(r)]
        assert "run the tests before committing" in cells  # the remembered rule's text
        await pilot.press("slash", "r", "u", "n")
        await pilot.press("escape")
        assert isinstance(app.screen, MemoryScreen) and table.has_focus and app.screen.filter == "run"
        await pilot.press("escape")
        assert not isinstance(app.screen, MemoryScreen)


# -- settings -----------------------------------------------------------------------------------
def _no_llm_app(tmp_path, cfg_file):
    clock = FakeClock()
    ids = SeededIds(3, readable=True)
    (tmp_path / "ws").mkdir(exist_ok=True)
    return AgentApp(Config(), data_dir=tmp_path / "data", workspace=tmp_path / "ws", clock=clock, ids=ids,
                    animate=False, memory=InMemoryMemory(clock, ids), config_file=cfg_file)


async def _fill(pilot, wid: str, text: str) -> None:
    inp = pilot.app.screen.query_one(wid, Input)
    inp.value = text


async def test_settings_reject_a_bad_url_and_apply_a_good_one(fakellm, tmp_path):
    cfg_file = tmp_path / "conf" / "config.toml"
    cfg_file.parent.mkdir()
    cfg_file.write_text('[ui]\nbus_history = 300\n\n[ggs]\nmax_replans = 2\n', encoding="utf-8")
    app = _no_llm_app(tmp_path, cfg_file)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        assert app.llm_error
        await pilot.press("ctrl+s")
        from agentui.ui.settings import SettingsScreen

        assert isinstance(app.screen, SettingsScreen)
        assert str(cfg_file) in str(app.screen.query_one("#set-path").render())
        await _fill(pilot, "#set-url", f"http://127.0.0.1:{_closed_port()}/v1")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: "not saved" in str(app.screen.query_one("#set-status").render()))
        assert "max_replans = 2" in cfg_file.read_text() and "base_url" not in cfg_file.read_text()
        await _fill(pilot, "#set-url", fakellm.base_url)
        await _fill(pilot, "#set-key", "sk-test-secret")
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not isinstance(app.screen, SettingsScreen), steps=300)
        await wait_for(pilot, lambda: app.runtime is not None and not app.llm_error and app.runtime.pool is not None,
                       steps=300)
        doc = tomllib.loads(cfg_file.read_text())
        assert doc["llm"]["base_url"] == fakellm.base_url
        assert doc["ggs"]["max_replans"] == 2 and doc["ui"]["bus_history"] == 300  # other keys kept
        assert "sk-test-secret" not in cfg_file.read_text()  # never in clear
        assert fakellm.base_url.split("//")[1].split("/")[0] in app.query_one("#status").text
        assert not app.query_one("#onboarding").display


async def test_settings_detects_a_local_server_and_its_models(fakellm, tmp_path):
    app = _no_llm_app(tmp_path, tmp_path / "c.toml")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await pilot.press("ctrl+s")
        scr = app.screen
        scr.detect((("fake server", fakellm.base_url), ("nobody", f"http://127.0.0.1:{_closed_port()}/v1")))
        await wait_for(pilot, lambda: scr.found)
        assert [s.name for s in scr.found] == ["fake server"] and scr.found[0].models
        from textual.widgets import Select

        sel = scr.query_one("#set-found", Select)
        sel.value = f"{fakellm.base_url}\t{scr.found[0].models[0]}"
        await pilot.pause(0.1)
        assert scr.query_one("#set-url", Input).value == fakellm.base_url
        assert scr.query_one("#set-model", Input).value == scr.found[0].models[0]


# -- history ------------------------------------------------------------------------------------
async def test_history_lists_replays_and_reruns_a_past_task(fakellm, tmp_path):
    script_happy(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "count txt")
        await wait_for(pilot, lambda: app.current is None)
        await pilot.pause(0.2)
        await pilot.press("ctrl+g")
        from agentui.ui.sessions import HistoryScreen, ReplayScreen

        scr = app.screen
        assert isinstance(scr, HistoryScreen)
        await wait_for(pilot, lambda: scr.records)
        table = scr.query_one(DataTable)
        row = [str(c) for c in table.get_row_at(0)]
        assert row[1] == "count txt" and row[2] == "accept" and row[3] == "6"
        await pilot.press("enter")
        assert isinstance(app.screen, ReplayScreen)
        assert app.screen.query_one(ResultPanel).copy_text == "2"
        assert app.screen.query_one(ResultPanel).stats["by_role"]["executor"]["calls"] == 2
        # the check that confirmed the answer is named as the live task named it
        assert "checked by `echo 2` → 2" in str(app.screen.query_one(ResultPanel).render()._renderable.renderables[0])
        await pilot.press("escape")
        await pilot.press("r")  # the goal runs again: a second UserInput with the same text
        await wait_for(pilot, lambda: app.screen is app.screen_stack[0]
                       and sum(e.type == "UserInput" for e in app.query_one(BusView).envs) == 2)
        if app.current and app.runtime:
            await app.runtime.cancel(app.current, "test over")
        assert [e.payload.text for e in app.query_one(BusView).envs if e.type == "UserInput"] == ["count txt"] * 2


def test_glossary_explains_every_mark_of_the_ggs_line():
    """The newcomer's `init→abandon ⊥ … ∇L=+0.00`: the glossary says what prev→current and each
    ∇L arrow mean, so the line and the F1 text agree (#12)."""
    from agentui.describe import ARROWS
    from agentui.ui.glossary import GLOSSARY

    for arrow in ARROWS.values():
        assert arrow in GLOSSARY["∇L"], arrow
    assert "previous→current" in GLOSSARY["directive"]
