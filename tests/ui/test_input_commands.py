"""The task input's `/` commands and `@path` mentions: agentui's verbs without leaving the input,
and workspace files or folders attached to the goal the runtime receives."""

from __future__ import annotations

from agentui.ui.commands import FILE_CAP, attachments, complete_path, goal_with_attachments
from agentui.ui.screens import AuditScreen, MemoryScreen
from agentui.ui.settings import SettingsScreen
from agentui.ui.widgets import BusView, ResultPanel, TaskInput
from tests.ui.test_app import SIZE, make_app, script_happy, type_task, wait_for


async def _type(pilot, text: str) -> None:
    pilot.app.query_one(TaskInput).value = text
    await pilot.press("enter")
    await pilot.pause(0.1)


async def test_slash_commands_reach_agentuis_verbs(fakellm, tmp_path):
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await _type(pilot, "/remember run the tests before committing")
        m = next(m for m in app.memory.list() if m.content == "run the tests before committing")
        assert m.space == "user" and m.level.value == "C"
        assert not fakellm.calls("perceiver")  # a command, never a goal
        await _type(pilot, "/memory tests")
        assert isinstance(app.screen, MemoryScreen)
        assert app.screen.query_one("#mem-filter").value == "tests"
        await pilot.press("escape")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, MemoryScreen))
        await _type(pilot, "/audit")
        assert isinstance(app.screen, AuditScreen)
        await pilot.press("escape")
        await _type(pilot, "/settings")
        assert isinstance(app.screen, SettingsScreen)
        await pilot.press("escape")
        await _type(pilot, f"/forget {m.id[:10]}")
        await pilot.press("y")
        await wait_for(pilot, lambda: not any(x.id == m.id for x in app.memory.list()))
        await _type(pilot, "/tree")
        assert type(app.screen).__name__ == "TreeScreen"
        await pilot.press("escape")


async def test_clear_empties_the_bus_and_the_result(fakellm, tmp_path):
    script_happy(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await type_task(pilot, "count txt")
        await wait_for(pilot, lambda: any(e.type == "FinalResult" for e in app.query_one(BusView).envs))
        await _type(pilot, "/clear")
        assert not app.query_one(BusView).envs and "no result yet" in str(app.query_one(ResultPanel).render())


async def test_a_path_that_starts_with_a_slash_is_still_a_goal(fakellm, tmp_path):
    app = make_app(fakellm, tmp_path)
    assert not app.is_command("/etc/hosts has how many lines?") and app.is_command("/clear")
    assert app.is_command("/nosuch")  # a word after "/" is a command (unknown: a note, not a goal)


async def test_mentions_complete_from_the_workspace_and_attach_the_file(fakellm, tmp_path):
    script_happy(fakellm)
    app = make_app(fakellm, tmp_path)
    ws = tmp_path / "ws"
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    (ws / "src").mkdir()
    (ws / "src" / "main.py").write_text("print(1)\n")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        ti = app.query_one(TaskInput)
        ti.focus()
        for ch in "count lines in @no":
            await pilot.press("space" if ch == " " else ch)
        await wait_for(pilot, lambda: ti._suggestion == "count lines in @notes.txt")
        await pilot.press("tab")
        assert ti.value == "count lines in @notes.txt"
        await pilot.press("enter")
        await wait_for(pilot, lambda: fakellm.calls("perceiver"))
        sent = fakellm.calls("perceiver")[0]["messages"][-1]["content"]
        assert "Attached the file notes.txt" in sent and "alpha\nbeta" in sent, sent


def test_attachments_are_bounded_and_stay_in_the_workspace(tmp_path):
    (tmp_path / "big.txt").write_text("x" * (FILE_CAP * 3))
    (tmp_path / "d").mkdir()
    for i in range(100):
        (tmp_path / "d" / f"f{i:03}.txt").write_text("")
    outside = tmp_path.parent / "outside-secret.txt"
    outside.write_text("TOP-SECRET-CONTENT")
    try:
        goal, att = goal_with_attachments("look at @big.txt and @d/ and @../outside-secret.txt", tmp_path)
        assert [(a.path, a.kind, a.cut) for a in att] == [("big.txt", "file", True), ("d/", "folder", True)]
        assert "TOP-SECRET-CONTENT" not in goal and len(goal) < FILE_CAP + 2000
        assert attachments("mail me@example.com", tmp_path) == []  # not a mention: no space before @
        assert complete_path(tmp_path, "d/f09") == "d/f090.txt" and complete_path(tmp_path, "b") == "big.txt"
        assert complete_path(tmp_path, "") == "d/"
    finally:
        outside.unlink()
