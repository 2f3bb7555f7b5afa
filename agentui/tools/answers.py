"""Who answers a confirmation when no human does: `--yes` and `--unconfined`.

`--yes` approves, once, what will run inside the OS sandbox (plus whatever the allow-list already
covers); it never answers a secret read, an escalation out of the sandbox, or anything at all when
no sandbox is available. `--unconfined` is the explicit "approve everything and run without the
sandbox" mode; secrets still need a human and the hard deny-list still refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentui.contracts import AnsweredBy, ConfirmationChoice


@dataclass(frozen=True)
class Answer:
    """A confirmation handler's answer with who gave it (the Auditor records both)."""

    choice: ConfirmationChoice
    by: AnsweredBy = "user"

# TTY answers → choices (the default, an empty line, is deny).
TTY_KEYS = {
    "o": ConfirmationChoice.APPROVE, "once": ConfirmationChoice.APPROVE, "y": ConfirmationChoice.APPROVE,
    "yes": ConfirmationChoice.APPROVE, "a": ConfirmationChoice.APPROVE,
    "t": ConfirmationChoice.TASK, "task": ConfirmationChoice.TASK,
    "s": ConfirmationChoice.SESSION, "session": ConfirmationChoice.SESSION,
    "p": ConfirmationChoice.PROJECT, "project": ConfirmationChoice.PROJECT,
}
_SCOPE_KEYS = {"once": "o", "task": "t", "session": "s", "project": "p"}


def auto_answer(req: Any, *, yes: bool, unconfined: bool) -> ConfirmationChoice | None:
    """The answer `--yes`/`--unconfined` gives to a ConfirmationRequest, or None (a human must)."""
    found = auto(req, yes=yes, unconfined=unconfined)
    return found.choice if found is not None else None


def auto(req: Any, *, yes: bool, unconfined: bool) -> Answer | None:
    """`auto_answer` with who answered: "unconfined" or "yes" (inside the sandbox). Memory's Caution
    band (`req.caution`) asks to go ahead with a plan, not to run a command: --yes is that go-ahead.
    The plan's commands still meet the gate one by one."""
    if getattr(req, "caution", False):
        return Answer(ConfirmationChoice.APPROVE, "unconfined" if unconfined else "yes") if yes or unconfined else None
    if req.human_only:
        return None
    if req.escalation:
        return Answer(ConfirmationChoice.APPROVE, "unconfined") if unconfined else None
    if unconfined:
        return Answer(ConfirmationChoice.APPROVE, "unconfined")
    if yes and req.sandboxed:
        return Answer(ConfirmationChoice.APPROVE, "yes")
    return None


def why_not_auto(req: Any, *, yes: bool) -> str:
    """One line saying why a non-interactive run denied `req`."""
    if getattr(req, "caution", False):
        return "memory advised caution; --yes gives the go-ahead"
    if req.human_only:
        return "secret paths and remembered `ask:` rules always need a person at the prompt"
    if req.escalation:
        return "leaving the sandbox needs a person at the prompt or --unconfined"
    if yes and not req.sandboxed:
        return "no OS sandbox here, so --yes cannot approve; allow the pattern in the project file or use --unconfined"
    return "non-interactive; --yes approves inside the OS sandbox"


def scope_label(scope: str, patterns: list[str]) -> str:
    """The button/prompt text of a scope, the stored pattern included before the user picks it."""
    shown = ", ".join(f'"{p}"' for p in patterns[:3]) + (" …" if len(patterns) > 3 else "")
    return {
        "once": "Once",
        "task": f"For this task: {shown}",
        "session": f"For this session: {shown}",
        "project": f"Always for this project: {shown}",
    }[scope]


def tty_menu(req: Any) -> str:
    parts = [f"[{_SCOPE_KEYS[s]}] {scope_label(s, req.patterns)}" for s in req.scopes]
    return "  " + " · ".join(parts) + " · [d] deny (default): "


def parse_tty(answer: str, req: Any) -> ConfirmationChoice:
    choice = TTY_KEYS.get(answer.strip().lower(), ConfirmationChoice.DENY)
    offered = {"approve" if s == "once" else s for s in req.scopes}
    return choice if choice.value in offered else ConfirmationChoice.DENY
