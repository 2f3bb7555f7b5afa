"""File tools: `read_file` (anywhere, read-only), `write_file` (gated) and `glob` (workspace)."""

from __future__ import annotations

import asyncio
import codecs
import glob as globlib
import itertools
from pathlib import Path
from typing import Any

from agentui.contracts import ToolCallRecord
from agentui.tools import safety
from agentui.tools.registry import BaseTool, ToolContext, gate, resolve_in

MAX_READ_BYTES = 5_000_000
GLOB_MAX_RESULTS = 500
_BINARY_SNIFF = 8192


class ReadFileTool(BaseTool):
    name = "read_file"
    description = "Read a UTF-8 text file (path relative to the workspace; absolute paths allowed)."
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
            return self.fail(args, "max_chars must be positive")
        if not path.exists():
            return self.fail(args, f"no such file: {path}")
        if path.is_dir():
            return self.fail(args, f"is a directory, not a file: {path} (use glob to list it)")
        try:
            data, size = await asyncio.to_thread(_read_head, path, MAX_READ_BYTES)
        except OSError as exc:
            return self.fail(args, f"cannot read {path}: {exc.strerror or exc}")
        if b"\x00" in data[:_BINARY_SNIFF]:
            return self.fail(args, f"binary file, not text: {path} ({size} bytes)")
        try:
            text = codecs.getincrementaldecoder("utf-8")().decode(data, final=size <= len(data))
        except UnicodeDecodeError:
            return self.fail(args, f"binary file, not UTF-8 text: {path} ({size} bytes)")
        note = ""
        if max_chars is not None and len(text) > max_chars:
            note = f"\n… [truncated at {max_chars} of {len(text)}+ chars]"
            text = text[:max_chars]
        elif size > len(data):
            note = f"\n… [truncated: file is {size} bytes, read the first {len(data)}]"
        return self.ok(args, text + note)


def _read_head(path: Path, limit: int) -> tuple[bytes, int]:
    with path.open("rb") as fh:
        data = fh.read(limit)
        size = path.stat().st_size
    return data, max(size, len(data))


class WriteFileTool(BaseTool):
    name = "write_file"
    description = (
        "Write (or append) text to a file, creating parent directories. Overwriting an existing "
        "file or writing outside the workspace asks the user first."
    )
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
        assessment = safety.assess_write(path, ctx.workspace, append=append)
        denial = await gate(ctx, self.name, str(path), assessment)
        if denial:
            return self.fail(args, denial)
        if path.is_dir():
            return self.fail(args, f"is a directory: {path}")
        try:
            await asyncio.to_thread(_write, path, content, append)
        except OSError as exc:
            return self.fail(args, f"cannot write {path}: {exc.strerror or exc}")
        verb = "appended" if append else "wrote"
        return self.ok(args, f"{verb} {len(content)} chars to {path}")


def _write(path: Path, content: str, append: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a" if append else "w", encoding="utf-8") as fh:
        fh.write(content)


class GlobTool(BaseTool):
    name = "glob"
    description = "List paths matching a glob pattern relative to the workspace (** recurses)."
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"pattern": {"type": "string", "description": "e.g. src/**/*.py"}},
        "required": ["pattern"],
    }

    def target(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return args["pattern"]

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolCallRecord:
        pattern: str = args["pattern"]
        if not pattern.strip():
            return self.fail(args, "empty pattern")
        try:
            matches, more = await asyncio.wait_for(
                asyncio.to_thread(_glob, pattern, ctx.workspace), ctx.timeout_s
            )
        except TimeoutError:
            return self.fail(args, f"glob timed out after {ctx.timeout_s:g}s")
        if not matches:
            return self.ok(args, f"no paths match {pattern!r}")
        text = "\n".join(matches)
        if more:
            text += f"\n… [more than {GLOB_MAX_RESULTS} matches; narrow the pattern]"
        return self.ok(args, text)


def _glob(pattern: str, workspace: Path) -> tuple[list[str], bool]:
    expanded = str(Path(pattern).expanduser()) if pattern.startswith("~") else pattern
    # Collect a bounded number so `**` over a huge tree cannot exhaust memory.
    found = list(
        itertools.islice(globlib.iglob(expanded, root_dir=workspace, recursive=True), 20 * GLOB_MAX_RESULTS)
    )
    found.sort()
    return found[:GLOB_MAX_RESULTS], len(found) > GLOB_MAX_RESULTS
