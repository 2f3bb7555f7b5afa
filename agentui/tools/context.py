"""What a tool call may touch and how it is bounded (`ToolContext`), and what the gate asks a person
(`GateRequest`): the types the gate, the registry and every tool share, kept below all of them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentui.contracts import ApprovalRecord
from agentui.tools.approvals import Approvals, Scope


@dataclass(frozen=True)
class GateRequest:
    """What the gate asks the user: everything shown is sanitized (no ANSI, no control characters)."""

    tool: str
    command: str
    reasons: tuple[str, ...]
    cwd: str = ""
    patterns: tuple[str, ...] = ()  # what "always for this project" stores; empty: once only
    writes: tuple[str, ...] = ()
    network: tuple[str, ...] = ()
    human_only: bool = False  # a secret or a remembered always-ask rule: --yes and stored approvals never answer it
    sandboxed: bool = False  # the command will run inside the OS sandbox
    escalation: bool = False  # the sandbox blocked it; the question is "run it unconfined?"
    file_scoped: bool = False  # the pattern names one file: approvable for the task or session, not the project
    change: Any = None  # a FileDiff (diffs.propose): what a file write would change, shown before the answer

    def scopes(self) -> tuple[Scope, ...]:
        """The answers this request offers besides deny."""
        if self.escalation or self.human_only or not self.patterns:
            return (Scope.ONCE,)
        if self.file_scoped:
            return (Scope.ONCE, Scope.TASK, Scope.SESSION)
        return (Scope.ONCE, Scope.TASK, Scope.SESSION, Scope.PROJECT)


Preview = Callable[[], Awaitable[Any]]
"""Builds what an effect would change (a FileDiff), called only when the gate asks a person."""

ConfirmFn = Callable[[GateRequest], Awaitable[Any]]
"""GateRequest -> a ConfirmationChoice (approve = once, task, session, project, deny) or a bool."""

Announce = Callable[[ApprovalRecord], Awaitable[None]]
"""Publishes a gate outcome on the bus (safety → user), where the Auditor's tap reads it."""

RulesFn = Callable[[str], Awaitable[list[str]]]
"""tool name -> the texts of the rules remembered for it (memory's `tool:<name>` space)."""

@dataclass
class ToolContext:
    """What a tool call may touch and how it is bounded."""

    workspace: Path
    task_id: str = ""
    subtask_id: str | None = None
    confirm: ConfirmFn | None = None  # None => deny anything that needs confirmation
    timeout_s: float = 60.0
    output_cap_chars: int = 4000
    log: Callable[[dict[str, Any]], None] | None = None  # full, uncapped evidence for the task log
    blocked_tools: frozenset[str] = frozenset()
    waited_s: float = 0.0  # time spent waiting for the user's confirmation: not tool time
    approvals: Approvals | None = None  # filled by the registry when None
    sandbox: Any = None  # a sandbox.SandboxInfo; filled by the registry when None
    unconfined: bool | None = None  # True: run without the OS sandbox (--unconfined)
    announce: Announce | None = None  # gate outcomes onto the bus for the Auditor; filled by the registry
    rules: RulesFn | None = None  # remembered tool rules (memory `tool:<name>`); filled by the registry
    host: Any = None  # a hooks.HostIO (an ACP client's fs/terminal); None: local I/O
    call_id: str = ""  # the registry's id of the call in progress (live observers)
