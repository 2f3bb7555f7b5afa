"""File tools: `read_file`, `write_file` and `glob`, each behind the gate.

A write the gate asks about shows its change first: a unified diff of the file now and after.

Inside the workspace, reads and writes go through `fsaccess` (openat-style, no symlink out, no
check-then-open race). Outside it, a read asks (secret paths ask a human every time) and a write
is refused.
"""

from __future__ import annotations

import asyncio
import codecs
import glob as globlib
import itertools
import os
import re
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agentui.contracts import FileDiff, ToolCallRecord
from agentui.tools import diffs, fsaccess, nearby, safety
from agentui.tools.registry import BaseTool, ToolContext, gate, resolve_in, shown

MAX_READ_BYTES = 5_000_000
GLOB_MAX_RESULTS = 500


class ReadFileTool(BaseTool):
    name = "read_file"
    description = ("Read a UTF-8 text file (path relative to the workspace). Paths outside the workspace "
                   "ask the user; secret files (keys, .env, ~/.ssh) always ask.")
    brief = "read a text file"
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "max_chars": {"type": "integer", "description": "return at most this many characters"},
        },
        "required": ["path"],
    }

    def target(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return str(resolve_in(ctx.workspace, args["path"]))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        path = resolve_in(ctx.workspace, args["path"])
        max_chars = args.get("max_chars")
        if max_chars is not None and max_chars <= 0:
            max_chars = None  # small models send 0 for "no limit"
        ws = Path(os.path.realpath(ctx.workspace))
        rel = fsaccess.relative_in(ws, path) or fsaccess.relative_in(ctx.workspace, path)
        real = Path(os.path.realpath(path))
        name = shown(ctx.workspace, path)  # as the model should name it
        if not real.exists():
            near = await asyncio.to_thread(nearby.hint, ctx.workspace, [args["path"]], want_dir=False)
            return self.fail(args, f"no such file: {name}{near}")
        if real.is_dir():
            return self.fail(args, f"is a directory, not a file: {name} (use glob to list it)")
        # a symlink inside the workspace that leads out is judged by where it leads
        subject = path if rel is not None and safety.paths.inside(real, ws) else real
        denial = await gate(ctx, self.name, str(subject), safety.assess_read(subject, ws))
        if denial:
            return self.fail(args, denial)
        if (text := await _host_read(ctx, ws, rel, real)) is not None:  # the editor's buffer
            return self.ok(args, _limit(text, max_chars))
        try:
            if rel is not None and safety.paths.inside(real, ws):
                data, size = await asyncio.to_thread(fsaccess.read_beneath, ws, rel, MAX_READ_BYTES)
            else:
                data, size = await asyncio.to_thread(_read_outside, real, MAX_READ_BYTES)
        except fsaccess.EscapesWorkspace as exc:
            return self.fail(args, f"cannot read {name}: {exc.strerror} (it changed while being read)")
        except OSError as exc:
            return self.fail(args, f"cannot read {name}: {exc.strerror or exc}")
        if fsaccess.looks_binary(data):
            return self.fail(args, f"binary file, not text: {name} ({size} bytes)")
        try:
            text = codecs.getincrementaldecoder("utf-8")().decode(data, final=size <= len(data))
        except UnicodeDecodeError:
            return self.fail(args, f"binary file, not UTF-8 text: {name} ({size} bytes)")
        note = ""
        if max_chars is not None and len(text) > max_chars:
            note = f"\n… [truncated at {max_chars} of {len(text)}+ chars]"
            text = text[:max_chars]
        elif size > len(data):
            note = f"\n… [truncated: file is {size} bytes, read the first {len(data)}]"
        return self.ok(args, text + note)


def _direct(ws: Path, rel: str | None, path: Path) -> bool:
    """`path` is the workspace file `rel` itself: inside, and no symlink on the way."""
    return rel is not None and rel != "." and os.path.realpath(path) == os.path.normpath(ws / rel)


async def _host_read(ctx: ToolContext, ws: Path, rel: str | None, real: Path) -> str | None:
    """A workspace file read through the host (an ACP client's fs/read_text_file), after the gate;
    None: read it locally (no host, a path through a link, or the host failed)."""
    host = ctx.host
    if host is None or not getattr(host, "reads", False) or not _direct(ws, rel, real):
        return None
    try:
        text: str = await host.read_text(real, ctx)
        return text[:MAX_READ_BYTES]
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - the local read below is the same read, already approved
        return None


def _limit(text: str, max_chars: int | None) -> str:
    if max_chars is not None and len(text) > max_chars:
        return text[:max_chars] + f"\n… [truncated at {max_chars} of {len(text)} chars]"
    return text


def _read_outside(real: Path, limit: int) -> tuple[bytes, int]:
    """An approved read outside the workspace: the resolved path, opened without following a link."""
    fd = os.open(str(real), os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit)
        size = os.fstat(fh.fileno()).st_size
    return data, max(size, len(data))


def _as_lines(ws: Path, rel: str, content: str, append: bool) -> str:
    """`content` ended with a line end when it is text of several lines, or a line appended after
    whole lines: small models leave the last line end out of a JSON string, and `sort`, `wc -l` and
    `cmp` then differ."""
    if not content or content.endswith("\n"):
        return content
    if "\n" in content:
        return content + ("\r\n" if "\r\n" in content else "\n")  # the line ends the text already uses
    if not append:
        return content
    try:
        fd = fsaccess.open_beneath(ws, rel, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return content  # a new file, or one the write itself will report on
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
            return content
        end = os.pread(fd, 2, max(0, st.st_size - 2))
        return content + ("\r\n" if end == b"\r\n" else "\n") if end.endswith(b"\n") else content
    except OSError:
        return content
    finally:
        os.close(fd)


class WriteFileTool(BaseTool):
    name = "write_file"
    description = (
        "Write (or append) text to a file inside the workspace, creating parent directories; text of "
        "several lines, or a line appended after whole lines, ends with a line end. "
        "Overwriting an existing file asks the user first; writing outside the workspace is refused."
    )
    brief = "write (or append) text to a file, creating its folders"
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "content": {"type": "string"},
            "append": {"type": "boolean"},
        },
        "required": ["path", "content"],
    }

    def target(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return str(resolve_in(ctx.workspace, args["path"]))

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        path = resolve_in(ctx.workspace, args["path"])
        content: str = args["content"]
        append = bool(args.get("append", False))
        ws = Path(os.path.realpath(ctx.workspace))
        rel = fsaccess.relative_in(ws, path) or fsaccess.relative_in(ctx.workspace, path)
        assessment = safety.assess_write(path, ws, append=append)
        if rel is None or rel == ".":
            assessment = safety.Assessment(safety.Verdict.DENY, (f"writes outside the workspace: {path}",))
        preview: Callable[[], Awaitable[FileDiff]] | None = None
        if rel is not None and rel != ".":
            inside = rel

            async def preview() -> FileDiff:  # the diff the question shows: built only when it asks
                lined = await asyncio.to_thread(_as_lines, ws, inside, content, append)
                return await asyncio.to_thread(diffs.propose, ws, inside, lined, append=append,
                                               secret=assessment.human_only)

        denial = await gate(ctx, self.name, str(path), assessment, preview=preview)
        if denial or rel is None:  # a path outside the workspace is denied above
            return self.fail(args, denial or f"writes outside the workspace: {path}")
        content = await asyncio.to_thread(_as_lines, ws, rel, content, append)
        host = ctx.host
        if host is not None and getattr(host, "writes", False) and _direct(ws, rel, ws / rel) \
                and (ws / rel).parent.is_dir() and not (ws / rel).is_dir():
            # through the editor (an ACP client's fs/write_text_file), so it sees the change
            try:
                await host.write_text(ws / rel, content, ctx, append=append)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - one clear line; never written twice
                return self.fail(
                    args, f"cannot write {shown(ctx.workspace, path)}: the editor refused: {str(exc)[:200]}"
                )
            return self.ok(
                args,
                f"{'appended' if append else 'wrote'} {len(content)} chars to {shown(ctx.workspace, path)}",
                writes=[str(rel)],
            )
        try:
            await asyncio.to_thread(fsaccess.write_beneath, ws, rel, content, append=append)
        except fsaccess.EscapesWorkspace as exc:
            return self.fail(args, f"refused: {exc.strerror} ({shown(ctx.workspace, path)})")
        except IsADirectoryError:
            return self.fail(args, f"is a directory: {shown(ctx.workspace, path)}")
        except OSError as exc:
            return self.fail(args, f"cannot write {shown(ctx.workspace, path)}: {exc.strerror or exc}")
        verb = "appended" if append else "wrote"
        return self.ok(args, f"{verb} {len(content)} chars to {shown(ctx.workspace, path)}", writes=[str(rel)])


class GlobTool(BaseTool):
    name = "glob"
    description = ("List paths matching a glob pattern relative to the workspace (** recurses); "
                   "patterns outside the workspace ask the user.")
    brief = "list the paths matching a glob pattern (** recurses)"
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"pattern": {"type": "string", "description": "e.g. src/**/*.py"}},
        "required": ["pattern"],
    }

    def target(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return str(args["pattern"])

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        pattern: str = args["pattern"]
        if not pattern.strip():
            return self.fail(args, "empty pattern")
        expanded = os.path.expanduser(pattern) if pattern.startswith("~") else pattern
        base = expanded.split("*")[0].split("?")[0].split("[")[0]
        denial = await gate(ctx, self.name, pattern, safety.assess_read(
            Path(base or "."), ctx.workspace, tool="glob") if (os.path.isabs(expanded) or ".." in expanded)
            else safety.SAFE)
        if denial:
            return self.fail(args, denial)
        try:
            matches, more = await asyncio.wait_for(
                asyncio.to_thread(_glob, expanded, ctx.workspace), ctx.timeout_s
            )
        except TimeoutError:
            return self.fail(args, f"glob timed out after {ctx.timeout_s:g}s")
        # judged by what it found: a name behind a symlink out, or a secret's name, asks
        ws = Path(os.path.realpath(ctx.workspace))
        real = [Path(os.path.realpath(os.path.join(ws, m))) for m in matches]
        secret = next((str(r) for r, m in zip(real, matches, strict=True) if safety.paths.is_secret(r, m)), None)
        outside = next((str(r) for r in real if not safety.paths.inside(r, ws)), None)
        if secret or outside:
            why = (
                f"glob lists secret files: {secret}" if secret else f"glob lists paths outside the workspace: {outside}"
            )
            denial = await gate(ctx, self.name, pattern, safety.Assessment(
                safety.Verdict.ASK, (why,), once_only=True, human_only=bool(secret), cwd=str(ws)))
            if denial:
                return self.fail(args, denial)
        if not matches:
            near = await asyncio.to_thread(nearby.hint, ctx.workspace, nearby.glob_roots(expanded))
            if not near and re.fullmatch(r"[\w .:-]{2,80}", pattern):  # a word, not a pattern: text sought?
                return self.ok(args, await asyncio.to_thread(
                    nearby.content_hint, ctx.workspace, ws, pattern, f"no paths match {pattern!r}"))
            return self.ok(args, f"no paths match {pattern!r}{near}")
        text = "\n".join(shown(ctx.workspace, m) for m in matches)
        if more:
            text += f"\n… [more than {GLOB_MAX_RESULTS} matches; narrow the pattern]"
        return self.ok(args, text)


def _glob(pattern: str, workspace: Path) -> tuple[list[str], bool]:
    # Collect a bounded number so `**` over a huge tree cannot exhaust memory.
    found = list(
        itertools.islice(globlib.iglob(pattern, root_dir=workspace, recursive=True), 20 * GLOB_MAX_RESULTS)
    )
    found.sort()
    return found[:GLOB_MAX_RESULTS], len(found) > GLOB_MAX_RESULTS
