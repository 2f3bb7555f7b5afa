"""A file write the gate asks about carries its change (a bounded unified diff, the text before and
after), and "for this session" approves later writes to that one file only — never another file, a
command, the project file, a code place or a secret."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentui.contracts import ConfirmationChoice
from agentui.tools import (
    Approvals,
    Scope,
    ToolContext,
    ToolRegistry,
    default_registry,
    diffs,
)
from agentui.tools.safety import assess_write
from tests.unit.tools.test_gate import Answer  # records what each question showed


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "notes.txt").write_text("one\ntwo\nthree\n")
    (w / "other.txt").write_text("x\n")
    return w


@pytest.fixture
def registry(tmp_path: Path) -> ToolRegistry:
    r = default_registry("linux")
    r.approvals = Approvals(tmp_path / "data" / "allow.txt")  # a project file: never written for a file write
    return r


def ctx(ws: Path, confirm: Answer, task: str = "t1") -> ToolContext:
    return ToolContext(workspace=ws, task_id=task, confirm=confirm)


async def test_an_overwrite_asks_with_its_unified_diff(registry: ToolRegistry, ws: Path) -> None:
    yes = Answer(ConfirmationChoice.APPROVE)
    rec = await registry.call("write_file", {"path": "notes.txt", "content": "one\n2\nthree\nfour"}, ctx(ws, yes))
    assert rec.ok, rec.error
    [req] = yes.requests
    change = req.change
    assert change is not None and change.path == "notes.txt" and change.abs_path == str(ws.resolve() / "notes.txt")
    lines = change.diff.splitlines()
    assert lines[:2] == ["--- a/notes.txt", "+++ b/notes.txt"]
    assert "-two" in lines and "+2" in lines and "+four" in lines and " one" in lines
    assert (change.added, change.removed) == (2, 1)
    # the texts an ACP client draws its own diff from: the file now, and as it will be (line end added)
    assert change.old_text == "one\ntwo\nthree\n" and change.new_text == "one\n2\nthree\nfour\n"
    assert (ws / "notes.txt").read_text() == "one\n2\nthree\nfour\n"


async def test_a_write_that_runs_unasked_builds_no_preview(registry: ToolRegistry, ws: Path) -> None:
    yes = Answer(ConfirmationChoice.APPROVE)
    rec = await registry.call("write_file", {"path": "new.txt", "content": "hi"}, ctx(ws, yes))
    assert rec.ok and yes.requests == []


def test_a_new_file_an_append_and_a_binary_file(ws: Path) -> None:
    new = diffs.propose(ws, "sub/new.txt", "a\nb\n", append=False)
    assert new.new_file and new.old_text is None and new.new_text == "a\nb\n"
    assert new.diff.splitlines()[:3] == ["--- /dev/null", "+++ b/sub/new.txt", "@@ -0,0 +1,2 @@"]
    grown = diffs.propose(ws, "notes.txt", "four\n", append=True)
    assert grown.new_text == "one\ntwo\nthree\nfour\n" and (grown.added, grown.removed) == (1, 0)
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    blob = diffs.propose(ws, "blob.bin", "text", append=False)
    assert blob.binary and blob.old_text is None and blob.new_text is None
    assert blob.diff.startswith("(binary file, 30 bytes: not shown")


def test_a_large_diff_is_cut_with_a_count_of_the_rest(ws: Path) -> None:
    old = "".join(f"line {i}\n" for i in range(1000))
    (ws / "big.txt").write_text(old)
    change = diffs.propose(ws, "big.txt", old.replace("line", "LINE"), append=False)
    lines = change.diff.splitlines()
    assert len(lines) == diffs.MAX_DIFF_LINES + 1
    total = 2 + 1 + 2000  # the two file lines, one hunk, every line removed and added
    assert lines[-1] == f"… {total - diffs.MAX_DIFF_LINES} more lines"
    assert (change.added, change.removed) == (1000, 1000)
    assert change.old_text is not None and len(change.old_text) < diffs.MAX_TEXT_CHARS  # still carried whole


def test_control_characters_in_the_content_are_shown_not_obeyed(ws: Path) -> None:
    change = diffs.propose(ws, "notes.txt", "ok\x1b[2K\rrm -rf /\n", append=False)
    assert "\x1b" not in change.diff and "+ok\\x1b[2K\\x0drm -rf /" in change.diff.splitlines()


async def test_for_this_session_covers_that_file_only(registry: ToolRegistry, ws: Path, tmp_path: Path) -> None:
    session = Answer(ConfirmationChoice.SESSION)
    rec = await registry.call("write_file", {"path": "notes.txt", "content": "v1\n"}, ctx(ws, session))
    assert rec.ok, rec.error
    [first] = session.requests
    assert first.patterns == ("write_file notes.txt",)
    assert first.scopes() == (Scope.ONCE, Scope.TASK, Scope.SESSION)  # never "always for this project"
    # the same file again, in a later task of the session: not asked
    deny = Answer(ConfirmationChoice.DENY)
    for task in ("t1", "t2"):
        rec = await registry.call("write_file", {"path": "./notes.txt", "content": f"{task}\n"}, ctx(ws, deny, task))
        assert rec.ok, rec.error
    assert deny.requests == [] and (ws / "notes.txt").read_text() == "t2\n"
    # another file: asked (and denied here)
    rec = await registry.call("write_file", {"path": "other.txt", "content": "y\n"}, ctx(ws, deny))
    assert not rec.ok and len(deny.requests) == 1 and deny.requests[0].patterns == ("write_file other.txt",)
    assert (ws / "other.txt").read_text() == "x\n"
    # nothing reached the project file
    assert not (tmp_path / "data" / "allow.txt").exists()


async def test_for_this_task_ends_with_the_task(registry: ToolRegistry, ws: Path) -> None:
    task = Answer(ConfirmationChoice.TASK)
    assert (await registry.call("write_file", {"path": "notes.txt", "content": "a\n"}, ctx(ws, task))).ok
    deny = Answer(ConfirmationChoice.DENY)
    assert (await registry.call("write_file", {"path": "notes.txt", "content": "b\n"}, ctx(ws, deny))).ok
    assert deny.requests == []
    assert not (await registry.call("write_file", {"path": "notes.txt", "content": "c\n"}, ctx(ws, deny, "t2"))).ok
    assert len(deny.requests) == 1


async def test_a_project_answer_to_a_file_write_counts_once(registry: ToolRegistry, ws: Path, tmp_path: Path) -> None:
    always = Answer(ConfirmationChoice.PROJECT)
    assert (await registry.call("write_file", {"path": "notes.txt", "content": "a\n"}, ctx(ws, always))).ok
    deny = Answer(ConfirmationChoice.DENY)
    assert not (await registry.call("write_file", {"path": "notes.txt", "content": "b\n"}, ctx(ws, deny))).ok
    assert not (tmp_path / "data" / "allow.txt").exists()


async def test_a_file_approval_never_stands_for_a_command_nor_a_command_for_a_file(
        registry: ToolRegistry, ws: Path) -> None:
    session = Answer(ConfirmationChoice.SESSION)
    assert (await registry.call("write_file", {"path": "notes.txt", "content": "a\n"}, ctx(ws, session))).ok
    # a program of that very name and argument (its pattern is the program's name): still asked
    deny = Answer(ConfirmationChoice.DENY)
    rec = await registry.call("shell", {"command": "write_file notes.txt"}, ctx(ws, deny))
    assert not rec.ok and len(deny.requests) == 1
    # and the other way: the same words approved as a command do not cover the file
    registry.approvals.record(Scope.SESSION, "t1", ["write_file other.txt"])
    rec = await registry.call("write_file", {"path": "other.txt", "content": "b\n"}, ctx(ws, deny))
    assert not rec.ok and len(deny.requests) == 2


async def test_code_places_and_secrets_still_ask_every_time(registry: ToolRegistry, ws: Path) -> None:
    (ws / "Makefile").write_text("all:\n")
    (ws / ".env").write_text("KEY=1\n")
    session = Answer(ConfirmationChoice.SESSION)
    for name in ("Makefile", ".env"):
        assert (await registry.call("write_file", {"path": name, "content": "x\n"}, ctx(ws, session))).ok
    assert [r.scopes() for r in session.requests] == [(Scope.ONCE,), (Scope.ONCE,)]
    makefile, env = (r.change for r in session.requests)
    assert makefile.diff.splitlines()[-2:] == ["-all:", "+x"]  # a code place: the diff is shown
    # a secret's text never enters the request (it travels the bus into the task log)
    assert env.old_text is None and env.new_text is None and "KEY" not in env.diff
    assert env.diff.startswith("(a secret file: its text is not shown")
    again = Answer(ConfirmationChoice.DENY)
    for name in ("Makefile", ".env"):
        assert not (await registry.call("write_file", {"path": name, "content": "y\n"}, ctx(ws, again))).ok
    assert len(again.requests) == 2


def test_a_name_that_shows_differently_gets_no_pattern(ws: Path) -> None:
    (ws / "a\x1bb.txt").write_text("x")
    a = assess_write(ws / "a\x1bb.txt", ws)
    assert a.once_only and not a.patterns and not a.file_scoped


def test_a_file_too_large_to_diff_and_a_change_of_line_ends_say_so(ws: Path) -> None:
    (ws / "huge.txt").write_text("x" * (diffs.MAX_READ_BYTES + 10))
    huge = diffs.propose(ws, "huge.txt", "short\n", append=False)
    assert huge.old_text is None and huge.new_text is None
    assert huge.diff == f"(a large file: {diffs.MAX_READ_BYTES + 10} bytes; the change is not shown line by line " \
                        "— the write replaces it with 6 characters)"
    assert diffs.propose(ws, "notes.txt", "one\r\ntwo\r\nthree\r\n", append=False).diff == "(only line ends change)"
    assert diffs.propose(ws, "notes.txt", "one\ntwo\nthree\n", append=False).diff.startswith("(no change")
