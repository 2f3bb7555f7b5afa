"""One ordered outbox per ACP session: bus envelopes and live tool calls, in the order they
happened, sent to the client by one task.

Tool calls are observed on the registry (`tools.hooks.ToolWatcher`), not on the bus, so each call
is shown when it starts and updated when it ends. The watcher runs on the tool's task; before
queueing a call it moves everything already published on the bus into the outbox, so a plan is
never shown after the tool calls it led to.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentui.acp.mapping import Mapper, tool_end, tool_start
from agentui.contracts import Envelope
from agentui.tools import fsaccess
from agentui.tools.hooks import ToolEvent
from agentui.tools.safety import paths

TERMINAL = {"FinalResult": "end_turn", "PerceiverReply": "end_turn", "TaskCancelled": "cancelled"}
OLD_TEXT_LIMIT = 1_000_000  # bytes of a file's old text kept for a write's diff
FLUSH_TIMEOUT_S = 10.0


def old_text(workspace: Path, target: str) -> str | None:
    """A workspace file's current text for a diff, read without following links out and without
    blocking (a FIFO, a device, a secret or a big file: no diff). None if it does not exist."""
    ws = Path(os.path.realpath(workspace))
    rel = fsaccess.relative_in(ws, Path(target)) or fsaccess.relative_in(workspace, Path(target))
    if not rel or rel == "." or paths.is_secret(Path(os.path.realpath(target)), target):
        return None
    try:
        fd = fsaccess.open_beneath(ws, rel, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > OLD_TEXT_LIMIT:
            return None
        data = fh.read(OLD_TEXT_LIMIT + 1)
    if fsaccess.looks_binary(data):
        return None
    return data.decode("utf-8", "replace")


class Stream:
    def __init__(self, tap: Any, send: Callable[[Any], Awaitable[None]],
                 on_end: Callable[[str, str], None]) -> None:
        self.tap = tap
        self.send = send
        self.on_end = on_end  # (task id, stop reason) once a task's last update is sent
        self.mapper = Mapper()
        self.out: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.current: dict[tuple[str, str | None], str] = {}  # (task, subtask) → the call in progress
        self.old: dict[str, str | None] = {}  # call id → the file's text before a write
        self.terminals: dict[str, str] = {}  # call id → the client terminal it ran in
        self.started: set[str] = set()  # calls the client was told about with a `tool_call`
        self.timeouts: dict[str, float] = {}  # call id → seconds its permission request went unanswered
        self.tasks: list[asyncio.Task[None]] = []

    def start(self, name: str) -> None:
        self.tasks = [asyncio.create_task(self._pump(), name=f"{name}:pump"),
                      asyncio.create_task(self._sender(), name=f"{name}:send")]

    async def stop(self) -> None:
        for t in self.tasks:
            t.cancel()
        for t in self.tasks:
            with contextlib.suppress(BaseException):
                await t

    # -- producers (never block) ----------------------------------------------------------------
    def _drain(self) -> None:
        for env in self.tap.drain():
            self.out.put_nowait(("env", env))

    async def _pump(self) -> None:
        async for env in self.tap:
            self.out.put_nowait(("env", env))

    def watch(self, ev: ToolEvent) -> None:
        """The registry's watcher: called on the tool's task as a call starts and as it ends."""
        self._drain()
        key = (ev.task_id, ev.subtask_id)
        if ev.record is None:
            self.current[key] = ev.call_id
            self.started.add(ev.call_id)
            if ev.tool == "write_file" and ev.target:  # the host replaces it with the editor's buffer
                self.old[ev.call_id] = old_text(ev.workspace, ev.target)
            self.out.put_nowait(("update", tool_start(ev)))
            return
        if self.current.get(key) == ev.call_id:
            del self.current[key]
        waited = self.timeouts.pop(ev.call_id, None)
        if waited is not None and ev.record.error and ev.record.error.startswith("denied by user"):
            ev = replace(ev, record=ev.record.model_copy(update={"error": (
                f"denied: the editor did not answer the permission request within {waited:g} s"
                + ev.record.error[len("denied by user"):])}))
        # a call that ended before it started (an unknown tool, bad arguments) is sent whole: a
        # `tool_call_update` for a call the client never saw would be an orphan
        update = tool_end(ev, old_text=self.old.pop(ev.call_id, None), terminal=self.terminals.pop(ev.call_id, None),
                          whole=ev.call_id not in self.started)
        self.started.discard(ev.call_id)
        self.out.put_nowait(("update", update))

    def push(self, update: Any) -> None:
        self._drain()
        self.out.put_nowait(("update", update))

    async def flush(self) -> None:
        """Wait until everything queued so far has been sent (bounded: a stuck client is not a hang)."""
        self._drain()
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.out.put_nowait(("flush", done))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(done), FLUSH_TIMEOUT_S)

    # -- the one consumer -----------------------------------------------------------------------
    async def _sender(self) -> None:
        while True:
            kind, item = await self.out.get()
            if kind == "flush":
                if not item.done():
                    item.set_result(None)
            elif kind == "update":
                await self.send(item)
            else:
                env: Envelope = item
                for update in self.mapper.updates(env):
                    await self.send(update)
                if env.type in TERMINAL and env.task_id:
                    self.on_end(env.task_id, TERMINAL[env.type])
