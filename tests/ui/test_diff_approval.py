"""A file write's approval shows its diff: coloured, scrollable, above the choices, which stay on
screen at 80×24; "for this session" approves later writes to that file and asks for another."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Button

from agentui.contracts import ConfirmationChoice, ConfirmationRequest, FileDiff
from agentui.tools.diffs import unified
from agentui.ui.modals import ConfirmModal
from agentui.ui.widgets import BusView
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.ui.test_app import make_app, type_task, wait_for
from tests.ui.test_snapshots import _footer_ready, _settle, replay_app

OLD = "".join(f"port_{i} = {8000 + i}\n" for i in range(40))
NEW = OLD.replace("port_3 = 8003", "port_3 = 9003").replace("port_30 = 8030\n", "") + "host = example.org\n"


def file_request() -> ConfirmationRequest:
    diff, added, removed = unified(OLD, NEW, "settings.ini")
    return ConfirmationRequest(
        request_id="r1", task_id="t1", tool="write_file", command="/work/proj/settings.ini",
        reasons=["overwrites an existing file: settings.ini"], cwd="/work/proj", patterns=["write_file settings.ini"],
        scopes=["once", "task", "session"], writes=["settings.ini"],
        change=FileDiff(path="settings.ini", abs_path="/work/proj/settings.ini", diff=diff, old_text=OLD,
                        new_text=NEW, added=added, removed=removed))


def test_file_write_approval_80x24(snap_compare):
    async def go(pilot):
        await _settle(pilot)
        pilot.app.push_screen(ConfirmModal(file_request()))
        await _footer_ready(pilot)

    assert snap_compare(replay_app(), terminal_size=(80, 24), run_before=go)


def test_file_write_approval_160x50(snap_compare):
    async def go(pilot):
        await _settle(pilot)
        pilot.app.push_screen(ConfirmModal(file_request()))
        await _footer_ready(pilot)

    assert snap_compare(replay_app(), terminal_size=(160, 50), run_before=go)


async def test_at_80x24_every_choice_is_on_screen_and_the_diff_scrolls_by_keyboard():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(pilot)
        answers: list = []
        app.push_screen(ConfirmModal(file_request()), answers.append)
        await _footer_ready(pilot)
        scr = app.screen
        for b in scr.query(Button):
            assert b.region.height == 1 and 0 <= b.region.y and b.region.bottom <= 23, (b.id, b.region)
        assert {b.id for b in scr.query(Button)} == {"approve", "task", "session", "deny"}
        box = scr.query_one("#diff", VerticalScroll)
        assert box.region.height >= 3 and box.max_scroll_y > 0
        assert scr.focused is scr.query_one("#deny", Button)  # the safe default keeps focus
        await pilot.press("pagedown")
        await pilot.pause(0.1)
        assert box.scroll_y > 0
        await pilot.press("p")  # not offered for a file write: does nothing
        await pilot.pause(0.1)
        assert answers == []
        await pilot.press("s")
        await wait_for(pilot, lambda: answers)
    assert answers == [ConfirmationChoice.SESSION]


async def test_the_diff_is_coloured_from_the_theme():
    app = replay_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await _settle(pilot)
        app.push_screen(ConfirmModal(file_request()))
        await _footer_ready(pilot)
        from agentui.ui.palette import theme_colour

        text = app.screen._diff_text(file_request().change.diff)
        colour = {text.plain[sp.start:sp.end]: sp.style.color.name.lower() for sp in text.spans if sp.style.color}
        assert colour["+port_3 = 9003"] == theme_colour(app.current_theme, "success").hex6.lower()
        assert colour["-port_3 = 8003"] == theme_colour(app.current_theme, "error").hex6.lower()
        hunks = [c for k, c in colour.items() if k.startswith("@@ ")]
        assert hunks and set(hunks) == {theme_colour(app.current_theme, "secondary").hex6.lower()}


def _two_writes(fakellm, ws, second: str) -> None:
    (ws / "notes.txt").write_text("one\ntwo\n")
    (ws / "other.txt").write_text("x\n")
    fakellm.script("perceiver", [perceive("update the notes")])
    fakellm.responder("planner", lambda _r: plan(["notes updated"], sub("update notes", "updated",
                                                                         tools=["write_file"])))
    steps = iter([call("write_file", path="notes.txt", content="one\n2\n"),
                  call("write_file", path="notes.txt", content="one\n2\nthree\n"),
                  call("write_file", path=second, content="y\n"), finish("done")])
    fakellm.responder("executor", lambda _r: next(steps, finish("done")))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", quote="notes.txt"))
    fakellm.responder("meta_validator", lambda _r: merge("updated", "pass"))


async def test_for_this_session_is_not_asked_again_for_that_file_and_is_for_another(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    _two_writes(fakellm, ws, "other.txt")
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "update the notes")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        first = app.screen.req
        assert first.change is not None and "-two" in first.change.diff and "+2" in first.change.diff
        assert "write_file notes.txt" in str(app.screen.query_one("#session", Button).label)
        await pilot.press("s")
        # the second write to notes.txt runs unasked; the write to other.txt asks
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal) and app.screen.req is not first)
        second = app.screen.req
        assert second.patterns == ["write_file other.txt"] and "+y" in second.change.diff
        assert (ws / "notes.txt").read_text() == "one\n2\nthree\n"
        await pilot.press("d")
        await wait_for(pilot, lambda: app.current is None)
        asked = [e.payload for e in app.query_one(BusView).envs if e.type == "ConfirmationRequest"]
    assert [r.command.rsplit("/", 1)[-1] for r in asked] == ["notes.txt", "other.txt"]
    assert (ws / "other.txt").read_text() == "x\n"


def _long_command_request(change: FileDiff | None = None) -> ConfirmationRequest:
    script = "python3 - <<'PY'\n" + "".join(f"print({i})\n" for i in range(40)) + "PY"
    return ConfirmationRequest(
        request_id="r2", task_id="t1", tool="shell", command=script, reasons=["python3 runs code"],
        cwd="/work/proj", patterns=["python3"], scopes=["once", "task"], change=change)


async def test_a_long_command_scrolls_in_its_box_and_the_choices_stay_on_screen():
    app = replay_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _settle(pilot)
        app.push_screen(ConfirmModal(_long_command_request()))
        await _footer_ready(pilot)
        scr = app.screen
        for b in scr.query(Button):
            assert 0 <= b.region.y and b.region.bottom <= 23, (b.id, b.region)
        box = scr.query_one("#command-box", VerticalScroll)
        assert box.max_scroll_y > 0  # the rest of the command is there, one key away
        await pilot.press("pagedown")
        await pilot.pause(0.1)
        assert box.scroll_y > 0
