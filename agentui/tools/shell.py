"""The `shell` tool and the subprocess runner every external-program tool shares.

Each command runs in its own process group, so a timeout or a cancellation takes down everything
it started (SIGTERM, then SIGKILL after a grace period) and reaps it before returning.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import os
import signal
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentui.contracts import ToolCallRecord
from agentui.tools import nearby, safety
from agentui.tools.registry import BaseTool, ToolContext, gate, sandbox_active
from agentui.tools.safety import envsecrets
from agentui.tools.sandbox import Policy, blocked_by_sandbox, wrap

KILL_GRACE_S = 0.5
# Beyond this much output, the middle is dropped while reading (the head and tail are kept).
MAX_CAPTURE_BYTES = 2_000_000
# After the main process exits, how long to wait for background children to close the pipe.
_DRAIN_S = 0.5

# LESSSECURE=1: less (and macOS `more`) run no input preprocessor, lesskey file, shell or log file,
# so the allow-listed `less FILE` only reads
_QUIET_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "TERM": "dumb", "LESSSECURE": "1",
              "LESSHISTFILE": "-"}
# Variables that make bash (or an allow-listed reader) run code or resolve paths behind the gate's back.
_UNSAFE_ENV = ("CDPATH", "BASH_ENV", "ENV", "GLOBIGNORE", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "PS4",
               "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "IFS",
               "LESSOPEN", "LESSCLOSE", "LESSKEY", "LESSKEYIN", "LESSKEY_SYSTEM", "LESSKEYIN_SYSTEM",
               "LESSKEY_CONTENT", "LESSEDIT", "LESS", "MORE")


def tool_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a tool process: only the harmless variables (envsecrets.tool_environment:
    no keys, tokens or passwords, none of agentui's own), quiet pagers, no CDPATH/BASH_ENV, no
    relative PATH entries."""
    env = {k: v for k, v in envsecrets.tool_environment().items()
           if k not in _UNSAFE_ENV and not k.startswith("BASH_FUNC_")}
    env["PATH"] = ":".join(p for p in env.get("PATH", "/usr/bin:/bin").split(":") if os.path.isabs(p))
    return {**env, **_QUIET_ENV, **(extra or {})}


_PR_SET_DUMPABLE = 4


@functools.cache
def hide_own_environ(platform: str = sys.platform) -> None:
    """Linux: make agentui's own /proc/<pid>/environ (its API keys), mem and maps unreadable to the
    processes it starts. With dumpable off the kernel gives those files to root, so a tool running
    as the same user cannot read them even where no PID namespace hides agentui (Landlock, no
    sandbox). It also turns off core dumps and same-user ptrace of agentui; children are unaffected
    (exec makes them dumpable again)."""
    if not platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


@dataclass
class ProcessResult:
    returncode: int | None
    output: str  # stdout, with stderr merged in when asked
    stderr: str
    timed_out: bool


async def run_process(
    argv: list[str],
    *,
    cwd: Path,
    timeout_s: float,
    merge_stderr: bool = True,
    env: dict[str, str] | None = None,
) -> ProcessResult:
    """Run `argv` in a new process group; kill the group on timeout or cancellation."""
    hide_own_environ()
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
            start_new_session=True,
            env=tool_env(env),
        )
    )
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # The child already runs while asyncio connects its pipes; cancelling that step would
        # kill only the leader and orphan its children. Let it finish, then kill the group.
        try:
            proc = await asyncio.wait_for(spawn, KILL_GRACE_S)
        except BaseException:
            spawn.cancel()
            raise asyncio.CancelledError() from None
        await kill_group(proc)
        close_transport(proc)
        raise
    readers = [asyncio.create_task(_read_capped(proc.stdout))]
    if not merge_stderr:
        readers.append(asyncio.create_task(_read_capped(proc.stderr)))
    timed_out = False
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout_s)
        except TimeoutError:
            timed_out = True
            await kill_group(proc)
        # Background children may keep the pipe open; do not wait for them forever.
        _done, pending = await asyncio.wait(readers, timeout=_DRAIN_S)
        for task in pending:
            task.cancel()
        texts = [t.result() if t in _done else "" for t in readers]
    except BaseException:  # cancellation (or anything else): no orphans, reaped before re-raising
        await kill_group(proc)
        for task in readers:
            task.cancel()
        close_transport(proc)
        raise
    return ProcessResult(
        returncode=proc.returncode,
        output=texts[0],
        stderr=texts[1] if len(texts) > 1 else "",
        timed_out=timed_out,
    )


async def kill_group(proc: asyncio.subprocess.Process, grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM the process group, SIGKILL it after `grace_s`, and reap the leader."""
    _signal_group(proc.pid, signal.SIGTERM)
    if proc.returncode is None:
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), grace_s)
        except (TimeoutError, asyncio.CancelledError):
            pass
    _signal_group(proc.pid, signal.SIGKILL)  # children that ignored SIGTERM
    if proc.returncode is None:
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), grace_s)
        except (TimeoutError, asyncio.CancelledError):
            pass


def close_transport(proc: asyncio.subprocess.Process) -> None:
    """Close the process's pipes now, while the loop runs. A cancelled run leaves them open (a killed
    child's EOF is not read yet); closed later by the garbage collector, after the loop, they print
    "Exception ignored … Event loop is closed" with a traceback on stderr (on SIGTERM/SIGHUP)."""
    transport = getattr(proc, "_transport", None)  # asyncio exposes no public close for it
    if transport is not None:
        transport.close()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _read_capped(stream: asyncio.StreamReader | None) -> str:
    """Read a stream to EOF, keeping at most MAX_CAPTURE_BYTES (head and tail)."""
    if stream is None:
        return ""
    half = MAX_CAPTURE_BYTES // 2
    head = bytearray()
    tail: deque[bytes] = deque()
    tail_len = 0
    dropped = 0
    while chunk := await stream.read(65536):
        if len(head) < half:
            take = half - len(head)
            head += chunk[:take]
            chunk = chunk[take:]
        if chunk:
            tail.append(chunk)
            tail_len += len(chunk)
            while tail_len - len(tail[0]) >= half:
                tail_len -= len(tail[0])
                dropped += len(tail.popleft())
    text = head.decode("utf-8", errors="replace")
    if dropped:
        text += f"\n… [{dropped} bytes dropped while reading] …\n"
    return text + b"".join(tail).decode("utf-8", errors="replace")


def _preview(command: str, ctx: ToolContext, assessment: safety.Assessment) -> Any:
    """The diff the question shows for a command whose line alone fixes what it writes to one
    workspace file (`cat > f <<'EOF'`, `echo … >> f`); None for any other command."""
    from agentui.tools import diffs, fsaccess
    from agentui.tools.literal_writes import literal_write

    lw = literal_write(command)
    if lw is None:
        return None
    ws = Path(os.path.realpath(ctx.workspace))
    rel = fsaccess.relative_in(ws, Path(os.path.normpath(ws / lw.path)))
    if rel is None or rel == ".":
        return None

    # a secret's text never goes into the question (it travels the bus into the task log)
    secret = assessment.human_only or safety.assess_read(ws / rel, ws).human_only

    async def preview() -> Any:
        return await asyncio.to_thread(diffs.propose, ws, rel, lw.content, append=lw.append, secret=secret)

    return preview


class ShellTool(BaseTool):
    name = "shell"
    description = (
        "Run a bash command in the workspace and return its combined stdout/stderr. "
        "Destructive or out-of-workspace effects ask the user first."
    )
    brief = "run a bash command in the workspace; returns its output"
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "bash command line"}},
        "required": ["command"],
    }

    def target(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return str(args["command"])

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        command: str = args["command"]
        if not command.strip():
            return self.fail(args, "empty command")
        if not ctx.workspace.is_dir():
            return self.fail(args, f"workspace is not a directory: {ctx.workspace}")
        assessment = safety.assess(command, ctx.workspace)
        denial = await gate(ctx, self.name, command, assessment, preview=_preview(command, ctx, assessment))
        if denial:
            return self.fail(args, denial)
        argv = ["/bin/bash", "-c", command]
        confined = sandbox_active(ctx)
        network = bool(assessment.network) and assessment.needs_confirmation  # shown and approved
        result = await execute(sandboxed(argv, ctx, network=network), ctx)
        blocked = blocked_by_sandbox(result.output, result.returncode) if confined else None
        if blocked and assessment.needs_confirmation and not result.timed_out:
            # an approved command the sandbox stopped: ask once more, never escalate silently
            again = safety.Assessment(safety.Verdict.ASK, (
                f"the OS sandbox blocked it: {blocked}", "run it again WITHOUT the sandbox (unconfined)?"),
                once_only=True, cwd=str(ctx.workspace), writes=assessment.writes, network=assessment.network)
            if await gate(ctx, self.name, command, again, escalation=True) is None:
                result = await execute(argv, ctx)
        if result.timed_out:
            return self.fail(
                args,
                f"timed out after {ctx.timeout_s:g}s (process group killed)",
                evidence=result.output,
                exit_code=result.returncode,
            )
        if result.returncode != 0:
            note = f" (the OS sandbox blocked it: {blocked})" if blocked else ""
            note += nearby.unended_exec(command, result.output) or \
                nearby.missing_folder(ctx.workspace, result.output, assessment.writes) or \
                await asyncio.to_thread(nearby.hint, ctx.workspace, nearby.missing_names(result.output))
            return self.fail(
                args, f"exit code {result.returncode}{note}", evidence=result.output, exit_code=result.returncode
            )
        output = result.output
        if not output.strip():  # `find . -name '*TODO*'` for a word that is in the files, not their names
            output = await asyncio.to_thread(nearby.found_no_name, ctx.workspace, command) or output
        if note := nearby.unended_exec(command, output, exit_ok=True):  # `find … -exec grep x {} | sort` exits 0
            output = output.rstrip("\n") + "\n" + note.strip() + "\n"
        if "No such file or directory" in output:  # `grep x settings.ini | cut …` exits 0 on the error
            if note := await asyncio.to_thread(nearby.hint, ctx.workspace, nearby.missing_names(output)):
                output = output.rstrip("\n") + "\n" + note.strip() + "\n"
        return self.ok(args, output, exit_code=0, writes=assessment.writes)


async def execute(argv: list[str], ctx: ToolContext) -> ProcessResult:
    """Run `argv` (already inside the sandbox when there is one) locally, or in the host's terminal
    (an ACP client's terminal/*) with the same cleaned environment; the gate has already said yes."""
    host = ctx.host
    if host is not None and getattr(host, "terminal", False):
        from agentui.tools.hooks import HostNotStarted

        # `env -i`: the client's terminal starts from the client's environment; only ours, scrubbed, is kept
        env = tool_env()
        clean = ["/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv]
        try:
            got = await host.run(clean, env, ctx)
        except HostNotStarted:
            pass  # the client could not start a terminal: nothing ran, so run it here
        else:
            return ProcessResult(returncode=got.returncode, output=got.output, stderr="", timed_out=got.timed_out)
    return await run_process(reaped(argv), cwd=ctx.workspace, timeout_s=ctx.timeout_s)


REAPER_SCRIPT = Path(__file__).with_name("reaper.py")


def reaped(argv: list[str], platform: str = sys.platform) -> list[str]:
    """On Linux, `argv` under reaper.py, so what it leaves running (`setsid -f`, `nohup … &`) is killed
    when it ends or agentui dies; bubblewrap's PID namespace already does that, so it runs as is."""
    if not platform.startswith("linux") or (argv and os.path.basename(argv[0]) == "bwrap"):
        return list(argv)
    return [sys.executable, "-I", "-S", str(REAPER_SCRIPT), str(os.getpid()), "--", *argv]


def sandboxed(argv: list[str], ctx: ToolContext, *, network: bool = False) -> list[str]:
    """`argv` inside the OS sandbox of `ctx` (unchanged when there is none or --unconfined)."""
    if not sandbox_active(ctx):
        return list(argv)
    ws = Path(os.path.realpath(ctx.workspace))
    return wrap(ctx.sandbox, Policy(ws, network=network), argv, ws)
