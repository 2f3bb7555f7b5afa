"""The task input's `/` commands and `@path` mentions: agentui's verbs without leaving the input,
and workspace files or folders attached to the goal the runtime receives."""

from __future__ import annotations

import json

from agentui.ui.commands import (
    FILE_CAP,
    SECRET_WHY,
    attach_notice,
    attachments,
    complete_path,
    goal_with_attachments,
    mentions,
    quote_completion,
)
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
        goal, att, _ = goal_with_attachments("look at @big.txt and @d/ and @../outside-secret.txt", tmp_path)
        assert [(a.path, a.kind, a.cut) for a in att] == [("big.txt", "file", True), ("d/", "folder", True)]
        assert "TOP-SECRET-CONTENT" not in goal and len(goal) < FILE_CAP + 2000
        assert attachments("mail me@example.com", tmp_path) == []  # not a mention: no space before @
        assert complete_path(tmp_path, "d/f09") == "d/f090.txt" and complete_path(tmp_path, "b") == "big.txt"
        assert complete_path(tmp_path, "") == "d/"
    finally:
        outside.unlink()


def _notes(app) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


def test_a_secret_file_is_never_attached_and_the_user_is_told(tmp_path):
    (tmp_path / ".env").write_text("API_KEY=supersecret123\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nKEYBODY\n")
    (tmp_path / "d" / "plain.txt").write_text("hello\n")
    goal, att, refused = goal_with_attachments("lines in @.env and @d and @d/id_rsa", tmp_path)
    assert "supersecret123" not in goal and "KEYBODY" not in goal
    assert [(r.path, r.why) for r in refused] == [(".env", SECRET_WHY), ("d/id_rsa", SECRET_WHY)]
    # the folder is attached without its secret file, and says so (a count, no name, no content)
    assert [(a.path, a.kind, a.hidden) for a in att] == [("d", "folder", 1)]
    assert "plain.txt" in goal and "id_rsa" not in att[0].text and "1 secret file(s) left out" in goal
    notice, warn = attach_notice(att, refused)
    assert warn and "not attached: .env is a secret file — ask the agent to read it and approve the read" in notice
    assert "d (folder, 1 secret file(s) left out)" in notice


def test_mentions_with_spaces_and_the_ones_not_attached_are_reported(tmp_path):
    (tmp_path / "my notes.txt").write_text("one\ntwo\n")
    (tmp_path.parent / "outside.txt").write_text("x")
    try:
        for typed in ('lines in @"my notes.txt"', "lines in @my\\ notes.txt", 'lines in @"my notes.txt".'):
            goal, att, refused = goal_with_attachments(typed, tmp_path)
            assert [a.path for a in att] == ["my notes.txt"] and "one\ntwo" in goal and not refused, typed
        _, refused = mentions("see @nope.txt and @../outside.txt, mail bob@example.com", tmp_path)
        assert [(r.path, r.why) for r in refused] == [("nope.txt", "no such file or folder in the workspace"),
                                                      ("../outside.txt", "is outside the workspace")]
        assert mentions("mail bob@example.com today", tmp_path) == ([], [])  # an e-mail: not a mention
        assert attach_notice([], []) == ("", False)
    finally:
        (tmp_path.parent / "outside.txt").unlink()
    assert quote_completion("lines in @my", "lines in @my notes.txt") == 'lines in @"my notes.txt"'
    assert quote_completion("lines in @no", "lines in @notes.txt") == "lines in @notes.txt"
    assert quote_completion("/rem", "/remember") == "/remember"


async def test_tab_quotes_a_name_with_a_space_and_it_is_attached(fakellm, tmp_path):
    script_happy(fakellm)
    app = make_app(fakellm, tmp_path)
    (tmp_path / "ws" / "my notes.txt").write_text("gamma\ndelta\n")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        ti = app.query_one(TaskInput)
        ti.focus()
        for ch in "lines in @my":
            await pilot.press("space" if ch == " " else ch)
        await wait_for(pilot, lambda: ti._suggestion == "lines in @my notes.txt")
        await pilot.press("right")  # → takes the completion as Tab does
        assert ti.value == 'lines in @"my notes.txt"'
        ti.value = "lines in @my"
        await wait_for(pilot, lambda: ti._suggestion == "lines in @my notes.txt")
        await pilot.press("tab")
        assert ti.value == 'lines in @"my notes.txt"'
        await pilot.press("enter")
        await wait_for(pilot, lambda: fakellm.calls("perceiver"))
        sent = fakellm.calls("perceiver")[0]["messages"][-1]["content"]
        assert "Attached the file my notes.txt" in sent and "gamma\ndelta" in sent, sent
        assert "attached my notes.txt (file)" in _notes(app)


async def test_a_missing_mention_is_announced_not_dropped(fakellm, tmp_path):
    script_happy(fakellm)
    app = make_app(fakellm, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await _type(pilot, "lines in @nope.txt, ask bob@example.com")
        await wait_for(pilot, lambda: fakellm.calls("perceiver"))
        notes = _notes(app)
        assert "not attached: nope.txt no such file or folder in the workspace" in notes, notes
        assert "example.com" not in notes


async def test_an_at_mentioned_secret_never_reaches_the_model(fakellm, tmp_path):
    script_happy(fakellm)
    app = make_app(fakellm, tmp_path)
    ws = tmp_path / "ws"
    (ws / ".env").write_text("API_KEY=supersecret123\n")
    (ws / "cfg").mkdir()
    (ws / "cfg" / ".env.local").write_text("TOKEN=alsosecret456\n")
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runtime is not None)
        await _type(pilot, "how many lines in @.env and @cfg/.env.local and @cfg")
        await wait_for(pilot, lambda: any(e.type == "FinalResult" for e in app.query_one(BusView).envs))
        prompts = json.dumps(fakellm.calls())
        assert fakellm.calls("perceiver") and "supersecret123" not in prompts and "alsosecret456" not in prompts
        bus = json.dumps([str(e.payload) for e in app.query_one(BusView).envs])
        assert "supersecret123" not in bus and "alsosecret456" not in bus
        notes = _notes(app)
        assert "not attached: .env is a secret file — ask the agent to read it and approve the read" in notes
        assert "not attached: cfg/.env.local is a secret file" in notes
        assert "cfg (folder, 1 secret file(s) left out)" in notes, notes
