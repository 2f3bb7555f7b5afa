"""The task input's own verbs and mentions.

`/remember TEXT`, `/forget ID`, `/memory [FILTER]`, `/audit`, `/tree`, `/settings`, `/login NAME`,
`/clear`, `/help` run agentui's commands from the input box instead of becoming a goal. `@path` names a
file or folder of the workspace (`@"a name with spaces"` or `@a\\ name` when it has spaces); on
submit each one that exists is attached to the goal: a file's text (bounded) or a folder's listing
(bounded) follows the goal in the text the runtime receives. A path the safety gate treats as a
secret is never attached (its content would reach the model and the bus unasked, where `read_file`
asks a person every time); each mention that is not attached is reported with its reason. Both
complete as you type (ghost text; → or Tab accepts; a name with a space is inserted quoted).
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
    "/login": "NAME — sign in to a remote MCP server that asks for OAuth (opens the browser)",
    "/clear": "clear the bus and the result pane",
    "/help": "these commands",
}

# `@path`, `@"path with spaces"` or `@path\\ with\\ spaces`; never `bob@example.com` (no space before @)
MENTION = re.compile(r'(?<!\S)@(?:"([^"]+)"|((?:\\\s|\S)+))')
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
    hidden: int = 0  # secret files left out of a folder's listing


@dataclass
class Refused:
    path: str  # as the user wrote it
    why: str  # "no such file or folder" | "outside the workspace" | "a secret file …" | …


SECRET_WHY = "is a secret file — ask the agent to read it and approve the read"


def _secret(p: Path, workspace: Path) -> bool:
    """The gate's own judgement: a read `read_file` would hand only to a person (secrets)."""
    from agentui.tools.safety import assess_read

    return assess_read(p, workspace).human_only


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


def _listing(p: Path, workspace: Path) -> tuple[str, bool, int]:
    """A folder's entries, bounded; secret files are left out (the third value counts them)."""
    try:
        entries = sorted(p.iterdir(), key=lambda e: (not e.is_dir(), e.name))
    except OSError as e:
        return f"(cannot be listed: {e.strerror or e})", False, 0
    lines: list[str] = []
    more = hidden = 0
    for e in entries:
        if e.name in SKIP_DIRS:
            continue
        if len(lines) >= LIST_CAP:  # past the cap only counted, not looked into
            more += 1
        elif not e.is_dir() and _secret(e, workspace):
            hidden += 1
        else:
            lines.append(f"{e.name}/" if e.is_dir() else e.name)
    body = "\n".join(lines) + (f"\n… {more} more" if more else "")
    if hidden:
        body += f"\n({hidden} secret file(s) left out)"
    return body, bool(more), hidden


def mention_paths(text: str) -> list[str]:
    """Each `@path` of `text` as a path: quotes and backslash-escaped spaces undone."""
    out = []
    for m in MENTION.finditer(text):
        if m.group(1) is not None:
            out.append(m.group(1))
        else:
            out.append(re.sub(r"\\(\s)", r"\1", m.group(2).rstrip(".,;:!?)\"'")))
    return out


def mentions(text: str, workspace: Path) -> tuple[list[Attached], list[Refused]]:
    """The `@path` mentions of `text`: those attached (read and bounded), and those that are not,
    with the reason."""
    out: list[Attached] = []
    refused: list[Refused] = []
    left = TOTAL_CAP
    seen: set[Path] = set()
    ws = workspace.resolve()
    for rel in mention_paths(text):
        if not rel:
            continue
        try:
            p = (workspace / rel).resolve()
        except (OSError, ValueError):
            refused.append(Refused(rel, "cannot be resolved"))
            continue
        if not p.is_relative_to(ws):
            refused.append(Refused(rel, "is outside the workspace"))
            continue
        if not p.exists():
            refused.append(Refused(rel, "no such file or folder in the workspace"))
            continue
        if p in seen:
            continue
        if left <= 0:
            refused.append(Refused(rel, f"over the {TOTAL_CAP}-character limit for attachments"))
            continue
        if p.is_file() and _secret(p, workspace):
            refused.append(Refused(rel, SECRET_WHY))
            continue
        seen.add(p)
        hidden = 0
        if p.is_dir():
            body, cut, hidden = _listing(p, workspace)
            kind = "folder"
        else:
            body, cut = _file_text(p, min(FILE_CAP, left))
            kind = "file"
        left -= len(body)
        out.append(Attached(rel, kind, body, cut, hidden))
    return out, refused


def attachments(text: str, workspace: Path) -> list[Attached]:
    """The `@path` mentions of `text` that name something in the workspace, read and bounded."""
    return mentions(text, workspace)[0]


def goal_with_attachments(text: str, workspace: Path) -> tuple[str, list[Attached], list[Refused]]:
    """The goal as the runtime receives it: the typed text, then each attached file or folder;
    and the mentions that were not attached, with the reason."""
    att, refused = mentions(text, workspace)
    if not att:
        return text, [], refused
    parts = [text]
    for a in att:
        what = "the file" if a.kind == "file" else "the folder (its entries)"
        note = " (cut: only the start is shown)" if a.cut else ""
        parts.append(f"\n\nAttached {what} {a.path}{note}:\n```\n{a.text}\n```")
    return "".join(parts), att, refused


def attach_notice(attached: list[Attached], refused: list[Refused]) -> tuple[str, bool]:
    """What the user is told on submit, and whether it is a warning (something was not attached)."""
    lines = []
    if attached:
        lines.append("attached " + ", ".join(
            f"{a.path} ({a.kind}{', cut' if a.cut else ''}"
            f"{f', {a.hidden} secret file(s) left out' if a.hidden else ''})" for a in attached))
    lines += [f"not attached: {r.path} {r.why}" for r in refused]
    return "\n".join(lines), bool(refused) or any(a.hidden for a in attached)


def quote_completion(value: str, completed: str) -> str:
    """`completed` (the ghost text taken) with the `@path` it just finished quoted when that path
    has a space: unquoted, the space would end the mention."""
    m = re.search(r'(?:^|\s)@(\S*)$', value)
    if m is None or not completed.startswith(value[: m.start(1)]):
        return completed
    tok = completed[m.start(1):]
    if " " not in tok or tok.startswith('"'):
        return completed
    return completed[: m.start(1)] + '"' + tok + '"'


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
        m = re.search(r'(?:^|\s)@("[^"]*|\S*)$', value)
        if m is None:
            return None
        tok = m.group(1)
        partial = tok[1:] if tok.startswith('"') else tok
        done = complete_path(Path(self.workspace()), partial)
        if done is None or done == partial:
            return None
        if tok.startswith('"'):  # a quoted name is closed once it names a file
            return value[: m.start(1)] + '"' + done + ("" if done.endswith("/") else '"')
        return value[: m.start(1)] + done


def help_text() -> str:
    names = (f"{k} {v.split(' — ')[0] if ' — ' in v else ''}".strip() for k, v in COMMANDS.items())
    return "commands: " + " · ".join(names) + " · @path attaches a file or folder to the goal"
