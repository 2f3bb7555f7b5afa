"""What a file write would change, as the approval shows it: the file's text now and after, and a
unified diff between them (difflib), bounded so a huge rewrite cannot flood a prompt or the bus.

Everything here only reads: the preview is built before the gate's question, from the same
workspace-relative path the write then uses (openat-style, no symlink out).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from agentui.contracts import FileDiff
from agentui.tools import fsaccess
from agentui.tools.safety import sanitize

MAX_DIFF_LINES = 200  # lines of the unified diff shown; the rest is counted in a "… N more lines" line
MAX_LINE_CHARS = 400  # one diff line, cut with "…"
MAX_TEXT_CHARS = 64_000  # the before/after texts carried whole (an ACP client renders its own diff)
MAX_READ_BYTES = 2_000_000  # a file larger than this is diffed by its size, not its text


def unified(old: str, new: str, name: str, *, new_file: bool = False,
            max_lines: int = MAX_DIFF_LINES) -> tuple[str, int, int]:
    """The unified diff of `old` → `new` (sanitized lines), cut after `max_lines` lines with a
    "… N more lines" marker; and the counts of added and removed lines."""
    lines = list(difflib.unified_diff(
        _lines(old), _lines(new), fromfile="/dev/null" if new_file else f"a/{name}",
        tofile=f"b/{name}", lineterm="", n=3))
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    shown = [_cut(sanitize(ln, keep_newlines=False)) for ln in lines[:max_lines]]
    if len(lines) > max_lines:
        shown.append(f"… {len(lines) - max_lines} more lines")
    return "\n".join(shown), added, removed


def _lines(text: str) -> list[str]:
    """Lines split at line feeds only (str.splitlines also splits at a lone carriage return, which
    would hide it); a CRLF's carriage return is the line end, not content."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"


def _decode(data: bytes) -> str | None:
    """UTF-8 text, or None for binary content (a NUL byte, or bytes that are not UTF-8)."""
    if fsaccess.looks_binary(data):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def propose(workspace: Path, rel: str, content: str, *, append: bool, secret: bool = False) -> FileDiff:
    """The change writing `content` to the workspace file `rel` (appending, or replacing it) makes.
    A secret file's text is never read into it: the request travels the bus into the task log."""
    ws = Path(os.path.realpath(workspace))
    name = sanitize(rel, keep_newlines=False)
    abs_path = str(ws / rel)
    if secret:
        verb = "appends" if append else "replaces it with"
        return FileDiff(path=name, abs_path=abs_path,
                        diff=f"(a secret file: its text is not shown; the write {verb} {len(content)} characters)")
    try:
        data, size = fsaccess.read_beneath(ws, rel, MAX_READ_BYTES)
    except FileNotFoundError:
        diff, added, removed = unified("", content, name, new_file=True)
        return FileDiff(path=name, abs_path=abs_path, diff=diff, new_file=True, new_text=_whole(content),
                        added=added, removed=removed)
    except OSError as exc:  # a directory, a FIFO, a link out: the write reports it; say so here
        return FileDiff(path=name, abs_path=abs_path, diff=f"(cannot show the change: {exc.strerror or exc})")
    if size > len(data):
        verb = "appends" if append else "replaces it with"
        return FileDiff(path=name, abs_path=abs_path,
                        diff=f"(a large file: {size} bytes; the change is not shown line by "
                             f"line — the write {verb} {len(content)} characters)")
    old = _decode(data)
    if old is None:
        verb = "appends" if append else "replaced by"
        return FileDiff(path=name, abs_path=abs_path, binary=True,
                        diff=f"(binary file, {size} bytes: not shown; {verb} {len(content)} characters of text)")
    new = old + content if append else content
    diff, added, removed = unified(old, new, name)
    if not diff:  # difflib compares lines: line ends alone do not show as a change
        diff = ("(no change: the file already holds exactly this text)" if old == new
                else "(only line ends change)")
    return FileDiff(path=name, abs_path=abs_path, diff=diff, old_text=_whole(old), new_text=_whole(new),
                    added=added, removed=removed)


def _whole(text: str) -> str | None:
    return sanitize(text) if len(text) <= MAX_TEXT_CHARS else None
