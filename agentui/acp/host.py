"""The ACP client as the tools' host: `fs/read_text_file`, `fs/write_text_file` and
`terminal/*`, used only for what the client advertised in `initialize`.

The tools call this after the safety gate has said yes (tools/files.py, tools/shell.py); it only
changes where the I/O happens, so the editor sees unsaved buffers, diffs and a live terminal.
Every request is bounded: a client that never answers is a failed call, not a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from acp import helpers as h
from acp.schema import EnvVariable

from agentui.tools import fsaccess
from agentui.tools.hooks import HostNotStarted, HostRun

REQUEST_TIMEOUT_S = 30.0  # one fs or terminal bookkeeping request (or the tool timeout, if shorter)
OUTPUT_BYTE_LIMIT = 2_000_000  # like the local runner's capture (shell.MAX_CAPTURE_BYTES)
CLEANUP_TIMEOUT_S = 5.0


def _caps(caps: Any) -> tuple[bool, bool, bool]:
    fs = getattr(caps, "fs", None)
    return (getattr(fs, "read_text_file", None) is True, getattr(fs, "write_text_file", None) is True,
            getattr(caps, "terminal", None) is True)


class AcpHost:
    def __init__(self, conn: Any, session_id: str, caps: Any, stream: Any, launcher_dir: Path | None = None) -> None:
        self.conn = conn
        self.launcher_dir = launcher_dir  # where `agentui-run` is written (the data dir's, private)
        self.session_id = session_id
        self.reads, self.writes, self.terminal = _caps(caps)
        self.stream = stream  # the session's outbox (old texts for diffs, terminal content)

    @property
    def any(self) -> bool:
        return self.reads or self.writes or self.terminal

    async def _ask(self, coro: Any, timeout: float = REQUEST_TIMEOUT_S) -> Any:
        try:
            return await asyncio.wait_for(coro, timeout)
        except TimeoutError:
            raise TimeoutError(f"the editor did not answer within {timeout:g} s") from None

    async def read_text(self, path: Path, ctx: Any) -> str:
        resp = await self._ask(self.conn.read_text_file(session_id=self.session_id, path=str(path)), _bound(ctx))
        content = getattr(resp, "content", None)
        if not isinstance(content, str):
            raise ValueError("the editor's fs/read_text_file answer has no text")
        return content

    async def write_text(self, path: Path, content: str, ctx: Any, *, append: bool = False) -> None:
        old: str | None = None
        if path.is_file():  # the editor's buffer (unsaved edits included): the diff's old text
            try:
                old = await self.read_text(path, ctx)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the file on disk, then
                old = _local_text(ctx.workspace, path)
            if append and old is None:
                raise ValueError("cannot append: the file's current text could not be read")
        if ctx.call_id:
            self.stream.old[ctx.call_id] = old
        new = (old or "") + content if append else content
        await self._ask(self.conn.write_text_file(session_id=self.session_id, path=str(path), content=new),
                        _bound(ctx))

    async def run(self, argv: list[str], env: dict[str, str], ctx: Any) -> HostRun:
        command, args, env = self._shown(argv, env)
        try:
            created = await self._ask(self.conn.create_terminal(
                session_id=self.session_id, command=command, args=args,
                env=[EnvVariable(name=k, value=v) for k, v in env.items()], cwd=str(ctx.workspace),
                output_byte_limit=OUTPUT_BYTE_LIMIT), _bound(ctx))
            tid = created.terminal_id
            if not isinstance(tid, str) or not tid:
                raise ValueError("no terminal id")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - nothing ran: the shell tool runs it locally
            raise HostNotStarted(str(exc)) from None
        if ctx.call_id:  # the editor shows the terminal live, inside the tool call
            self.stream.terminals[ctx.call_id] = tid
            self.stream.push(h.update_tool_call(ctx.call_id, content=[h.tool_terminal_ref(tid)]))
        try:
            got = await self._wait(tid, ctx.timeout_s)
            if command == LAUNCHER and got.returncode == 127 and f"{LAUNCHER}: " in got.output[:300] \
                    and "not found" in got.output[:300]:
                # the editor did not find the launcher on the PATH it was given: nothing ran, and
                # the call's result is the local run's, not that terminal's
                if ctx.call_id:
                    self.stream.terminals.pop(ctx.call_id, None)
                raise HostNotStarted(f"the editor's terminal did not find {LAUNCHER}")
            return got
        except HostNotStarted:
            raise
        except BaseException:
            await _cleanup(self._quiet(self.conn.kill_terminal(session_id=self.session_id, terminal_id=tid)))
            raise
        finally:
            await _cleanup(self._quiet(self.conn.release_terminal(session_id=self.session_id, terminal_id=tid)))

    def _shown(self, argv: list[str], env: dict[str, str]) -> tuple[str, list[str], dict[str, str]]:
        """What the editor is asked to run, and so shows as the terminal's title: `agentui-run
        '<the command>'`, a launcher that execs the whole argv (the cleaned environment, the OS
        sandbox, `bash -c <the command>`) handed over in the environment, instead of that argv.
        Without a launcher dir, or for an argv that is not a `bash -c` command, the argv as is."""
        if (self.launcher_dir is None or len(argv) < 3 or argv[-2] != "-c" or not argv[-3].endswith("/bash")
                or any(c.isspace() for c in sys.executable)):  # a shebang line cannot hold a space
            return argv[0], argv[1:], env
        try:
            where = launcher(self.launcher_dir)
        except OSError:
            return argv[0], argv[1:], env
        # found through the PATH given with the request (the launcher's name is agentui's own: an
        # editor that looks elsewhere finds nothing, and nothing runs unsandboxed)
        shown = {**env, "PATH": f"{where}{os.pathsep}{env.get('PATH', os.defpath)}",
                 RUN_ARGV: json.dumps(argv, ensure_ascii=False)}
        return LAUNCHER, [argv[-1]], shown

    async def _wait(self, tid: str, timeout_s: float) -> HostRun:
        sid = self.session_id
        timed_out = False
        note = ""
        code: int | None = None
        try:
            done = await asyncio.wait_for(self.conn.wait_for_terminal_exit(session_id=sid, terminal_id=tid), timeout_s)
            code = done.exit_code if isinstance(done.exit_code, int) else None
            if code is None:
                code = -1
                note = f"\n[ended by signal {done.signal or '?'}]"
        except TimeoutError:
            timed_out = True
            await self._quiet(self.conn.kill_terminal(session_id=sid, terminal_id=tid))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the client's terminal failed: a failed call
            await self._quiet(self.conn.kill_terminal(session_id=sid, terminal_id=tid))
            code, note = -1, f"\n[the editor's terminal failed: {str(exc)[:200]}]"
        output = ""
        with contextlib.suppress(Exception):
            got = await self._ask(self.conn.terminal_output(session_id=sid, terminal_id=tid))
            output = got.output if isinstance(got.output, str) else ""
        return HostRun(returncode=code, output=output[-OUTPUT_BYTE_LIMIT:] + note, timed_out=timed_out)

    async def _quiet(self, coro: Any) -> None:
        with contextlib.suppress(Exception):
            await self._ask(coro, CLEANUP_TIMEOUT_S)


LAUNCHER = "agentui-run"
RUN_ARGV = "AGENTUI_RUN_ARGV"
_LAUNCHER_CODE = '''import json, os, sys
# agentui's terminal launcher: runs the argv agentui handed over in AGENTUI_RUN_ARGV (the cleaned
# environment, the OS sandbox, bash -c COMMAND), and only for the command it was started with
try:
    argv = json.loads(os.environ.get("AGENTUI_RUN_ARGV", ""))
except ValueError:
    argv = None
if not (isinstance(argv, list) and len(argv) >= 3 and all(isinstance(a, str) for a in argv)
        and sys.argv[1:] == argv[-1:]):
    sys.stderr.write("agentui-run: not started by agentui for this command\\n")
    sys.exit(126)
os.execv(argv[0], argv)
'''


def launcher(directory: Path) -> Path:
    """The launcher script in `directory` (created 0700 on first use); returns the directory."""
    path = directory / LAUNCHER
    code = f"#!{sys.executable} -I\n{_LAUNCHER_CODE}"
    try:
        if path.read_text(encoding="utf-8") == code:
            return directory
    except OSError:
        pass
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = directory / f".{LAUNCHER}.{os.getpid()}"
    tmp.write_text(code, encoding="utf-8")
    tmp.chmod(0o700)
    os.replace(tmp, path)
    return directory


def _bound(ctx: Any) -> float:
    return min(REQUEST_TIMEOUT_S, float(getattr(ctx, "timeout_s", REQUEST_TIMEOUT_S) or REQUEST_TIMEOUT_S))


async def _cleanup(coro: Any) -> None:
    """Run a bounded cleanup even while being cancelled."""
    task = asyncio.ensure_future(coro)
    with contextlib.suppress(BaseException):
        await asyncio.wait_for(asyncio.shield(task), CLEANUP_TIMEOUT_S)


def _local_text(workspace: Path, path: Path) -> str | None:
    ws = Path(os.path.realpath(workspace))
    rel = fsaccess.relative_in(ws, path)
    if not rel:
        return None
    try:
        data, _size = fsaccess.read_beneath(ws, rel, 5_000_000)
    except OSError:
        return None
    return data.decode("utf-8", "replace")
