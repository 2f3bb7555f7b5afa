"""Hooks a front end attaches to the tool registry: live observers of each call, and the
host's own file and terminal access (an ACP client's `fs/*` and `terminal/*`).

Both are optional and never change what the safety gate decides: a tool asks the gate first, then
does its I/O locally or through the host. Plain Python; no SDK is imported here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agentui.contracts import ToolCallRecord


@dataclass(frozen=True)
class ToolEvent:
    """One tool call starting (`record` None) or ended (its final, capped record)."""

    call_id: str
    tool: str
    args: dict[str, Any]
    target: str
    task_id: str
    subtask_id: str | None
    workspace: Path
    record: ToolCallRecord | None = None


ToolWatcher = Callable[[ToolEvent], None]
"""Called synchronously on the tool's task; it must not block (queue the event and return)."""


def notify(watchers: list[ToolWatcher], event: ToolEvent) -> None:
    for watch in list(watchers):
        with contextlib.suppress(Exception):  # an observer is evidence, never control flow
            watch(event)


@dataclass
class HostRun:
    """A command run by the host (same fields the shell tool reads from a local run)."""

    returncode: int | None
    output: str
    timed_out: bool = False


class HostNotStarted(Exception):
    """The host could not start the command (nothing ran): the tool runs it locally instead."""


class HostIO(Protocol):
    """The host's file and terminal access; a capability left False means: do it locally."""

    reads: bool
    writes: bool
    terminal: bool

    async def read_text(self, path: Path, ctx: Any) -> str: ...

    async def write_text(self, path: Path, content: str, ctx: Any, *, append: bool = False) -> None: ...

    async def run(self, argv: list[str], env: dict[str, str], ctx: Any) -> HostRun:
        """Raises HostNotStarted when nothing ran; a timeout kills it and sets `timed_out`."""
        ...
