"""The task input's own verbs and mentions.

`/remember TEXT`, `/forget ID`, `/memory [FILTER]`, `/audit`, `/tree`, `/settings`, `/clear`,
`/help` run agentui's commands from the input box instead of becoming a goal. `@path` names a
file or folder of the workspace; on submit each one that exists is attached to the goal: a file's
text (bounded) or a folder's listing (bounded) follows the goal in the text the runtime receives.
Both complete as you type (ghost text; → or Tab accepts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from textual.suggester import Suggester

COMMANDS: dict[str, str] = {
    "/remember": "TEXT — a rule every plan reads (C level, space user)",
    "/forget": "ID — delete one Megram (its id or a prefix)",
    "/memory": "[FILTER] — the Megram browser",
    "/audit": "the Auditor's reports",
    "/tree": "the goal tree",
    "/settings": "endpoint, models, theme, workspace",
    "/clear": "clear the bus and the result pane",
    "/help": "these commands",
}

MENTION = re.compile(r"(?<!\S)@(\S+)")
FILE_CAP = 4000  # characters of one attached file
TOTAL_CAP = 12000  # characters of everything attached to one goal
LIST_CAP = 60  # entries of one attached folder's listing
SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}


@dataclass
class Attached:
    path: str  # as the user wrote it (relative to the workspace)
    kind: str  # "file" | "folder"
    text: str  # what follows the goal
    cut: bool = False


def inside(workspace: Path, rel: str) -> Path | None:
    """`rel` resolved in the workspace, or None when it is not there or leaves the workspace."""
    try:
        p = (workspace / rel).resolve()
        p.relative_to(workspace.resolve())
    except (OSError, ValueError):
        return None
    return p if p.exists() else None


def _file_text(p: Path, cap: int) -> tuple[str, bool]:
    try:
        raw = p.read_bytes()[: cap * 4 + 1]
    except OSError as e:
        return f"(cannot be read: {e.strerror or e})", False
    if b"\0" in raw[:2048]:
        return f"(a binary file, {p.stat().st_size} bytes)", False
    text = raw.decode("utf-8", "replace")
    return (text[:cap], True) if len(text) > cap else (text, False)


def _listing(p: Path, workspace: Path) -> tuple[str, bool]:
    try:
        entries = sorted(p.iterdir(), key=lambda e: (not e.is_dir(), e.name))
    except OSError as e:
        return f"(cannot be listed: {e.strerror or e})", False
    lines = [f"{e.name}/" if e.is_dir() else e.name for e in entries if e.name not in SKIP_DIRS]
    cut = len(lines) > LIST_CAP
    return "\n".join(lines[:LIST_CAP]) + (f"\n… {len(lines) - LIST_CAP} more" if cut else ""), cut


def attachments(text: str, workspace: Path) -> list[Attached]:
    """The `@path` mentions of `text` that name something in the workspace, read and bounded."""
    out: list[Attached] = []
    left = TOTAL_CAP
    seen: set[Path] = set()
    for m in MENTION.finditer(text):
        rel = m.group(1).rstrip(".,;:!?)\"'")
        p = inside(workspace, rel)
        if p is None or p in seen or left <= 0:
            continue
        seen.add(p)
        if p.is_dir():
            body, cut = _listing(p, workspace)
            kind = "folder"
        else:
            body, cut = _file_text(p, min(FILE_CAP, left))
            kind = "file"
        left -= len(body)
        out.append(Attached(rel, kind, body, cut))
    return out


def goal_with_attachments(text: str, workspace: Path) -> tuple[str, list[Attached]]:
    """The goal as the runtime receives it: the typed text, then each attached file or folder."""
    att = attachments(text, workspace)
    if not att:
        return text, []
    parts = [text]
    for a in att:
        what = "the file" if a.kind == "file" else "the folder (its entries)"
        note = " (cut: only the start is shown)" if a.cut else ""
        parts.append(f"\n\nAttached {what} {a.path}{note}:\n```\n{a.text}\n```")
    return "".join(parts), att


def complete_path(workspace: Path, partial: str, limit: int = 200) -> str | None:
    """The first workspace path that starts with `partial` (folders end with "/")."""
    head, _, stem = partial.rpartition("/")
    base = inside(workspace, head or ".")
    if base is None or not base.is_dir():
        return None
    try:
        names = sorted(base.iterdir(), key=lambda e: (e.name.startswith("."), not e.is_dir(), e.name))[:limit]
    except OSError:
        return None
    for e in names:
        if e.name in SKIP_DIRS or not e.name.startswith(stem) or (e.name.startswith(".") and not stem.startswith(".")):
            continue
        return f"{head + '/' if head else ''}{e.name}{'/' if e.is_dir() else ''}"
    return None


class InputSuggester(Suggester):
    """Ghost-text completion for the task input: `/` commands, and the `@path` being typed."""

    def __init__(self, workspace: callable) -> None:  # type: ignore[valid-type]
        super().__init__(use_cache=False, case_sensitive=True)
        self.workspace = workspace  # a callable: the workspace can change in Settings

    async def get_suggestion(self, value: str) -> str | None:
        if value.startswith("/") and " " not in value:
            for name in COMMANDS:
                if name.startswith(value) and name != value:
                    return name
            return None
        m = re.search(r"(?:^|\s)@(\S*)$", value)
        if m is None:
            return None
        done = complete_path(Path(self.workspace()), m.group(1))
        if done is None or done == m.group(1):
            return None
        return value[: m.start(1)] + done


def help_text() -> str:
    names = (f"{k} {v.split(' — ')[0] if ' — ' in v else ''}".strip() for k, v in COMMANDS.items())
    return "commands: " + " · ".join(names) + " · @path attaches a file or folder to the goal"
