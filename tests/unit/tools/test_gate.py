"""The gate's door (issue #14): hard denials, scoped approvals with patterns, --yes semantics,
honest (sanitized) prompts and the audit entries every decision leaves."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from agentui.contracts import ConfirmationChoice, ConfirmationRequest
from agentui.tools import (
    Approvals,
    GateRequest,
    Scope,
    ToolContext,
    default_registry,
    gate,
    project_allowlist_path,
)
from agentui.tools.answers import auto_answer, parse_tty, scope_label, tty_menu
from agentui.tools.safety import Verdict, assess, assess_call, sanitize


class Answer:
    """Answers every request with `choice`, recording what it was shown."""

    def __init__(self, choice: ConfirmationChoice | bool) -> None:
        self.choice = choice
        self.requests: list[GateRequest] = []

    async def __call__(self, req: GateRequest) -> ConfirmationChoice | bool:
        self.requests.append(req)
        return self.choice


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "a.txt").write_text("keep")
    return w


def ctx(ws: Path, approvals: Approvals, confirm: object, task: str = "t1", log: list | None = None) -> ToolContext:
    return ToolContext(workspace=ws, task_id=task, confirm=confirm, approvals=approvals,  # type: ignore[arg-type]
                       log=(log.append if log is not None else None))


async def test_hard_deny_ignores_every_approval(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/nonexistent-agentui-home/user")  # a home outside the temp dirs
    approvals = Approvals()
    yes = Answer(ConfirmationChoice.PROJECT)
    a = assess("rm -rf ~/Documents", ws)
    assert a.verdict is Verdict.DENY
    error = await gate(ctx(ws, approvals, yes), "shell", "rm -rf ~/Documents", a)
    assert error and "hard deny-list" in error and yes.requests == []


async def test_always_for_an_overwrite_does_not_approve_rm(ws: Path, tmp_path: Path) -> None:
    """The issue's regression: one "always" given to a harmless overwrite let `rm -rf` run later."""
    approvals = Approvals(tmp_path / "allow.txt")
    always = Answer(ConfirmationChoice.PROJECT)
    overwrite = assess("echo x > a.txt", ws)
    assert await gate(ctx(ws, approvals, always), "shell", "echo x > a.txt", overwrite) is None
    assert always.requests[0].scopes() == (Scope.ONCE,)  # an overwrite has no pattern to store
    deny = Answer(ConfirmationChoice.DENY)
    error = await gate(ctx(ws, approvals, deny), "shell", "rm -rf a.txt", assess("rm -rf a.txt", ws))
    assert error and len(deny.requests) == 1
    assert not (tmp_path / "allow.txt").exists()


async def test_task_session_project_scopes(ws: Path, tmp_path: Path) -> None:
    log: list[dict] = []
    allow = project_allowlist_path(tmp_path / "data", ws)
    approvals = Approvals(allow, ws)
    npm = assess("npm test", ws)
    assert npm.patterns == ("npm test",)
    # once: asked again next time
    once = Answer(ConfirmationChoice.APPROVE)
    assert await gate(ctx(ws, approvals, once, log=log), "shell", "npm test", npm) is None
    assert await gate(ctx(ws, approvals, once, log=log), "shell", "npm test", npm) is None
    assert len(once.requests) == 2
    # task: covers the same task only, and only that pattern
    task = Answer(ConfirmationChoice.TASK)
    assert await gate(ctx(ws, approvals, task, log=log), "shell", "npm test", npm) is None
    assert (
        await gate(ctx(ws, approvals, task, log=log), "shell", "npm test -- --ci", assess("npm test -- --ci", ws))
        is None
    )
    assert len(task.requests) == 1
    other = Answer(False)
    assert await gate(ctx(ws, approvals, other, task="t2"), "shell", "npm test", npm)
    assert await gate(ctx(ws, approvals, other), "shell", "npm install", assess("npm install", ws))
    assert len(other.requests) == 2
    # session: every task of this runtime
    session = Answer(ConfirmationChoice.SESSION)
    make = assess("make build", ws)
    assert await gate(ctx(ws, approvals, session, task="t3"), "shell", "make build", make) is None
    assert await gate(ctx(ws, approvals, Answer(False), task="t4"), "shell", "make build", make) is None
    # project: a file the user can read and edit; a new runtime reads it
    project = Answer(ConfirmationChoice.PROJECT)
    commit = assess("git commit -m 'x'", ws)
    assert await gate(ctx(ws, approvals, project), "shell", "git commit -m x", commit) is None
    text = allow.read_text()
    assert "git commit\n" in text and text.startswith("# agentui project allow-list")
    fresh = Approvals(allow, ws)
    assert await gate(ctx(ws, fresh, Answer(False), task="t9"), "shell", "git commit -m y",
                      assess("git commit -m y", ws)) is None
    allow.write_text(text.replace("git commit\n", ""))  # the user deletes the line
    assert await gate(ctx(ws, fresh, Answer(False), task="t9"), "shell", "git commit -m y",
                      assess("git commit -m y", ws))
    # the audit log has every decision with its scope and patterns
    approvals_logged = [e for e in log if e["decision"] == "approved"]
    assert {e["scope"] for e in approvals_logged} == {"once", "task"}
    assert all(e["patterns"] == ["npm test"] for e in approvals_logged)
    assert any(e["automatic"] for e in approvals_logged)


async def test_secrets_are_never_answered_by_approvals(ws: Path, tmp_path: Path) -> None:
    (ws / ".env").write_text("TOKEN=x")
    approvals = Approvals()
    a = default_registry("linux")
    yes = Answer(ConfirmationChoice.PROJECT)
    rec = await a.call("read_file", {"path": ".env"}, ctx(ws, approvals, yes))
    assert rec.ok and yes.requests[0].human_only and yes.requests[0].scopes() == (Scope.ONCE,)
    rec = await a.call("read_file", {"path": ".env"}, ctx(ws, approvals, Answer(False)))
    assert not rec.ok  # asked again: a secret read is approved once at a time


def test_yes_and_unconfined() -> None:
    def req(**kw: object) -> SimpleNamespace:
        base = {"human_only": False, "escalation": False, "sandboxed": True}
        return SimpleNamespace(**{**base, **kw})

    assert auto_answer(req(), yes=True, unconfined=False) is ConfirmationChoice.APPROVE
    assert auto_answer(req(sandboxed=False), yes=True, unconfined=False) is None  # no sandbox: --yes cannot
    assert auto_answer(req(human_only=True), yes=True, unconfined=True) is None  # secrets need a person
    assert auto_answer(req(escalation=True), yes=True, unconfined=False) is None
    assert auto_answer(req(escalation=True), yes=False, unconfined=True) is ConfirmationChoice.APPROVE
    assert auto_answer(req(sandboxed=False), yes=False, unconfined=True) is ConfirmationChoice.APPROVE
    assert auto_answer(req(), yes=False, unconfined=False) is None


def test_tty_menu_shows_the_pattern_and_parses_answers() -> None:
    r = ConfirmationRequest(request_id="r", task_id="t", tool="shell", command="git commit -m x", reasons=["x"],
                            patterns=["git commit"], scopes=["once", "task", "session", "project"])
    menu = tty_menu(r)
    assert '[p] Always for this project: "git commit"' in menu and "[d] deny (default)" in menu
    assert parse_tty("p", r) is ConfirmationChoice.PROJECT
    assert parse_tty("", r) is ConfirmationChoice.DENY
    assert parse_tty("yes", r) is ConfirmationChoice.APPROVE
    once = r.model_copy(update={"scopes": ["once"], "patterns": []})
    assert parse_tty("p", once) is ConfirmationChoice.DENY  # not offered → deny, never broader
    assert scope_label("task", ["npm test"]) == 'For this task: "npm test"'


def test_sanitize_makes_terminal_tricks_visible() -> None:
    shown = sanitize("rm -f a.txt #\x1b[1A\x1b[2K\rls -la")
    assert "\x1b" not in shown and "\r" not in shown
    assert shown == "rm -f a.txt #\\x1b[1A\\x1b[2K\\x0dls -la"
    assert sanitize("rm a\u202etxt") == "rm a\\u202etxt"
    assert sanitize("a\nb") == "a\nb"


async def test_prompt_is_sanitized(ws: Path) -> None:
    seen = Answer(False)
    command = "rm -f a.txt #\x1b[2K\rls -la"
    await default_registry("linux").call("shell", {"command": command}, ctx(ws, Approvals(), seen))
    [req] = seen.requests
    assert "\x1b" not in req.command and "\\x1b[2K" in req.command
    assert req.cwd == str(ws.resolve()) and (ws / "a.txt").exists()


async def test_assess_call_is_the_gate_for_other_tools(ws: Path) -> None:
    """The entry point MCP tools use: ask with the arguments shown, pattern = the tool name."""
    a = assess_call("mcp:github.create_issue", {"title": "x\x1b[2J", "body": "y"})
    assert a.verdict is Verdict.ASK and a.patterns == ("mcp:github.create_issue",)
    assert '"title": "x\\\\u001b[2J"' in a.reasons[0] or "\\x1b" in a.reasons[0] or "u001b" in a.reasons[0]
    approvals = Approvals()
    session = Answer(ConfirmationChoice.SESSION)
    assert await gate(ctx(ws, approvals, session), "mcp:github.create_issue", "{}", a) is None
    assert await gate(ctx(ws, approvals, Answer(False)), "mcp:github.create_issue", "{}", a) is None
    assert assess_call("mcp:x.y", {}, allow_listed=True).verdict is Verdict.SAFE
