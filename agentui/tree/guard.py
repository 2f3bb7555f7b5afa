"""The guard: a shell command run in the repository after an agent `done` (exit 0 = pass).

Its stdout and stderr are each capped (default 100 KB) in guard.log with "[truncated N bytes]".
Both pipes are drained as the guard writes: only the capped head of each is kept, the rest is
counted, so memory stays bounded whatever the guard prints.
The remaining iteration budget is its timeout; a timeout or a spawn error is a runner-internal
failure (no attempt consumed), not a guard fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class GuardRun:
    outcome: str  # "pass" | "fail" | "timeout" | "error"
    exit_code: int | None
    log: str
    seconds: float
    error: str = ""


CHUNK = 64 * 1024


class Drain:
    """One pipe's output: the first `limit` bytes kept, the total counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.head = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]

    async def read_all(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while chunk := await stream.read(CHUNK):
            self.feed(chunk)

    def text(self) -> str:
        return cap(bytes(self.head), self.limit, total=self.total)


def cap(data: bytes, limit: int, *, total: int | None = None) -> str:
    """At most `limit` bytes of UTF-8 in the log: invalid bytes become U+FFFD (3 bytes each), so
    the kept prefix is the longest one whose decoded text still fits, and the rest is counted.
    `total` is the output's whole length when `data` holds only its head."""
    total = len(data) if total is None else total
    keep = min(len(data), limit)
    text = data[:keep].decode("utf-8", errors="replace")
    if len(text.encode("utf-8")) > limit:
        lo, hi = 0, keep  # the longest prefix whose text fits (binary search: text grows with the prefix)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if len(data[:mid].decode("utf-8", errors="replace").encode("utf-8")) <= limit:
                lo = mid
            else:
                hi = mid - 1
        keep, text = lo, data[:lo].decode("utf-8", errors="replace")
    if total > keep:
        text += f"\n[truncated {total - keep} bytes]\n"
    return text


def format_log(command: str, stdout: str, stderr: str, tail: str = "") -> str:
    """The log from each stream's capped text (`cap` / `Drain.text`)."""
    return (f"$ {command}\n=== stdout ===\n{stdout}\n=== stderr ===\n{stderr}\n"
            + (f"=== {tail} ===\n" if tail else ""))


async def run_guard(command: str, repo: Path, *, timeout_s: float, output_cap: int) -> GuardRun:
    t0 = time.monotonic()
    if timeout_s <= 0:
        return GuardRun("timeout", None, f"$ {command}\nno time left in the iteration budget\n", 0.0,
                        "no time left for the guard")
    spawn = asyncio.ensure_future(asyncio.create_subprocess_shell(
        command, cwd=repo, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True))
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # Ctrl+C after the fork, before the pipes are connected: asyncio would kill the shell alone
        # and then wait for its children to close the pipes. Finish the spawn, kill the group.
        try:
            proc = await asyncio.wait_for(spawn, 5)
        except BaseException:
            spawn.cancel()
            raise asyncio.CancelledError() from None
        _kill_group(proc.pid)
        await _reap(proc)
        raise
    except (OSError, ValueError) as e:  # ValueError: a NUL in the command (it cannot reach exec)
        shown = command.replace("\0", "\\0")
        return GuardRun("error", None, f"$ {shown}\ncould not start: {e}\n", time.monotonic() - t0,
                        f"guard could not start: {e}")
    out, err = Drain(output_cap), Drain(output_cap)
    tasks = [asyncio.ensure_future(out.read_all(proc.stdout)), asyncio.ensure_future(err.read_all(proc.stderr)),
             asyncio.ensure_future(proc.wait())]
    try:
        _, pending = await asyncio.wait(tasks, timeout=timeout_s)
    except asyncio.CancelledError:
        _kill_group(proc.pid)  # Ctrl+C: the guard's whole process group goes too
        await _reap(proc)
        await _settle(tasks)
        raise
    if pending:
        _kill_group(proc.pid)
        await _reap(proc)
        await _settle(tasks)
        log = format_log(command, "", "", f"guard timed out after {timeout_s:.0f} s")
        return GuardRun("timeout", None, log, time.monotonic() - t0, f"guard timed out after {timeout_s:.0f} s")
    broken = next((t.exception() for t in tasks if t.exception() is not None), None)
    if broken is not None:  # reading a pipe failed: the guard's result is unknown
        _kill_group(proc.pid)
        await _reap(proc)
        return GuardRun("error", proc.returncode, format_log(command, out.text(), err.text(), f"error: {broken}"),
                        time.monotonic() - t0, f"guard output could not be read: {broken}")
    code = proc.returncode
    log = format_log(command, out.text(), err.text(), f"exit {code}")
    if code == 127 and not out.total:
        # the shell could not find the command: a broken guard, not a failing one
        return GuardRun("error", code, log, time.monotonic() - t0, f"guard command not found: {command}")
    return GuardRun("pass" if code == 0 else "fail", code, log, time.monotonic() - t0)


async def _settle(tasks: list[asyncio.Future]) -> None:
    """Cancel what is still reading or waiting and collect every outcome, so none is reported as
    an exception nobody retrieved."""
    for t in tasks:
        t.cancel()
    await asyncio.wait(tasks, timeout=5)
    for t in tasks:
        if t.done() and not t.cancelled():
            t.exception()


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Wait (briefly) for the killed leader, so no zombie outlives the step, then close its pipes
    while the loop still runs (a grandchild may hold them open)."""
    from agentui.tools.shell import KILL_GRACE_S, close_transport

    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(proc.wait()), KILL_GRACE_S)
    close_transport(proc)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
