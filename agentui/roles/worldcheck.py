"""What the workspace holds, read by code: facts for the validators' prompts and vetoes a `pass`
must survive. Nothing here recognises what a question asks or grants a pass: a validator's `fail`
stands; code may only take a `pass` away, and only on facts that hold whatever the question was.

- `facts(text, ws)`: for each workspace path a text names, whether it is there, its kind, size, line
  count and first line (never a secret's content), one line each, for the validators' prompts.
- `contradiction(text, ws)`: why a `pass` cannot stand on the files themselves: "copy A to B" with
  B missing or not byte-identical to A; a text that says to create or write paths with one of them
  missing; a JSON file it says to write that does not parse.
- `tree(ws)`, `changed(calls, ws)`: what changed in the workspace, listed before and after a task,
  and what each call wrote as the safety gate read it.
- `is_question`, `question_paths`, `read_only`, `question_changed`, `source_changed`: the files a
  request only reads, which the executor may not write and whose change vetoes a pass.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from agentui.contracts import ToolCallRecord
from agentui.roles import grounding as G
from agentui.tools.safety.paths import inside, is_secret

MAX_READ = 2_000_000  # bytes read to count lines or compare; bigger files are described by size only
MAX_FACTS = 4
MAX_TREE = 5000

_EDITS = re.compile(r"\b(append|add|edit|change|modif|replac|convert|upper|lower|sort|rename|insert|"
                    r"prepend|strip|remove|delete|then)\w*", re.I)
_CHANGES = re.compile(r"\b(?:fix|update|install|uninstall|upgrade|downgrade|patch|rewrite|overwrite|reformat|"
                      r"correct\s+(?:the|a|an|it|this|that|all|any|its|my))\b", re.I)
_COPY = re.compile(r"\b(?:copy|copies|duplicate|back\s?up)\s+(?:the\s+file\s+)?([^\s,;]+)\s+(?:in)?to\s+"
                   r"(?:the\s+file\s+|the\s+folder\s+)?([^\s,;()]+)", re.I)
#: effect verbs after which every workspace path the text names must be there
_MAKES = re.compile(r"\b(creat\w*|writ\w*|wrote|save[ds]?|saving|make|makes|made|touch\w*|mkdir|store[ds]?|"
                    r"copy|copie[ds]|generat\w*|produc\w*|append\w*|add|adds|added|put|puts)\b", re.I)
#: ...unless something may take a path away, or the text is about a path's absence
_UNMAKES = re.compile(r"\b(delet\w*|remov\w*|rm|mv|mov\w*|renam\w*|clean\w*|purg\w*|wipe\w*|trunc\w*|"
                      r"missing|absent|gone|not|no|never|nonexist\w*|without|unless|if|whether|would|could)\b|n't\b",
                      re.I)
_NOT_A_PATH = re.compile(r"^(?:e\.g|i\.e|etc|vs|www\..*|[\w-]+\.(?:com|org|net|io|dev|ai|edu|gov|co)(?:/.*)?)$", re.I)
_JSON_FILE = re.compile(r"\bjson\b", re.I)
_LINE_OF = re.compile(r"\bwhat\s+(?:is|does)\s+(?:the\s+)?(first|last)\s+line\s+(?:of|in)\b", re.I)


def _clean(p: str) -> str:
    return p.strip("\"'`“”‘’()[]{}").rstrip(".,;:!?")


def _resolve(rel: str, ws: Path) -> Path | None:
    """`rel` inside the workspace (never outside it, never a secret), else None."""
    rel = _clean(rel).removeprefix("./")
    if not rel:
        return None
    root = Path(os.path.realpath(ws))
    p = Path(os.path.realpath(root / os.path.expanduser(rel)))
    if not inside(p, root) or p == root or is_secret(p, rel):
        return None
    return p


def _read(p: Path) -> bytes | None:
    try:
        if not p.is_file() or p.stat().st_size > MAX_READ:
            return None
        return p.read_bytes()
    except OSError:
        return None


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8", "replace").splitlines()


def named(text: str, ws: Path) -> list[tuple[str, Path]]:
    """Workspace paths `text` names, in order, de-duplicated (at most MAX_FACTS)."""
    out: list[tuple[str, Path]] = []
    for m in G._PATH.finditer(text):  # absolute paths kept absolute
        raw = m.group(0).rstrip(".,;:")
        if text[max(0, m.start() - 3):m.start()].endswith(":") or _NOT_A_PATH.match(raw):
            continue  # a URL, a domain, an abbreviation
        p = _resolve(raw, ws)
        if p is not None and all(q != p for _, q in out):
            out.append((_clean(raw), p))
    return out[:MAX_FACTS]


_FOLDER_NAMED = re.compile(r"\b(?:the\s+)?([\w.-]{2,80})\s+(?:folder|directory|dir)\b", re.I)
_NOT_A_FOLDER = frozenset({"this", "that", "the", "a", "an", "current", "same", "each", "every", "any", "new",
                           "parent", "home", "working", "workspace", "project", "root", "top", "whole", "other"})


def located(text: str, ws: Path | None) -> list[str]:
    """One line per path the request names that is not where it says but has a namesake elsewhere
    in the workspace ("settings.ini is not in the top folder; the workspace has conf/settings.ini"),
    so a plan names the path that is there. Never for a request that makes or writes something: its
    path may name what it is to create."""
    if ws is None or _MAKES.search(text):
        return []
    from agentui.tools import nearby

    wanted: list[tuple[str, bool | None]] = [(rel, None) for rel, _ in named(text, ws)]
    wanted += [(m.group(1), True) for m in _FOLDER_NAMED.finditer(text)
               if m.group(1).casefold() not in _NOT_A_FOLDER and "." not in m.group(1)]
    out: list[str] = []
    for rel, want_dir in wanted:
        p = _resolve(rel, ws)
        if p is None or os.path.lexists(p) or any(line.startswith(f"{rel} ") for line in out):
            continue
        try:
            alts = nearby.elsewhere(ws, rel, want_dir=want_dir)
        except OSError:
            continue
        if alts:
            out.append(f"{rel} is not there; the workspace has {', '.join(alts)}")
    return out[:MAX_FACTS]


def facts(text: str, ws: Path | None) -> list[str]:
    """One line per named workspace path: what is there now."""
    if ws is None:
        return []
    out = []
    for rel, p in named(text, ws):
        try:
            if p.is_dir():
                out.append(f"{rel}: a directory with {sum(1 for _ in p.iterdir())} entries")
                continue
            if not p.exists():
                out.append(f"{rel}: does not exist")
                continue
            size = p.stat().st_size
        except OSError as e:
            out.append(f"{rel}: cannot be read ({e.strerror or e})")
            continue
        data = _read(p)
        if data is None:
            out.append(f"{rel}: a file of {size} bytes")
            continue
        lines = _lines(data)
        first = (lines[0][:80] if lines else "")
        n = len(lines)
        out.append(f"{rel}: a file of {size} bytes, {n} line{'' if n == 1 else 's'}"
                   + (f"; line 1: {first!r}" if first else ""))
    return out


def _copy_problem(text: str, ws: Path) -> tuple[str, str] | None:
    """"Copy A to B": B must exist and hold A's bytes (unless the text changes B afterwards)."""
    m = _COPY.search(text)
    if m is None or _EDITS.search(text[m.end():]):
        return None
    src_rel, dst_rel = _clean(m.group(1)), _clean(m.group(2))
    src, dst = _resolve(src_rel, ws), _resolve(dst_rel, ws)
    if src is None or dst is None or not src.is_file():
        return None
    if dst.is_dir() or dst_rel.endswith("/"):
        dst, dst_rel = dst / src.name, f"{dst_rel.rstrip('/')}/{src.name}"
    todo = f"copy the file itself (cp {src_rel} {dst_rel}), do not write new content"
    if not dst.exists():
        return f"{dst_rel} does not exist: {src_rel} was not copied there", todo
    a, b = _read(src), _read(dst)
    if a is None or b is None:
        return None
    if a != b:
        return (f"{dst_rel} is not a copy of {src_rel}: it holds {len(b)} bytes, {src_rel} {len(a)}, "
                "and the contents differ"), todo
    return None


def _missing_problem(text: str, ws: Path) -> tuple[str, str] | None:
    """A text that says to create or write paths, with nothing that could take one away: each path
    it names must exist afterwards."""
    if not _MAKES.search(text) or _UNMAKES.search(text):
        return None
    for rel, p in named(text, ws):
        if not os.path.lexists(p):
            return (f"{rel} does not exist in the workspace",
                    f"create {rel} (inside the workspace, at exactly that path) and check it is there")
    return None


def _json_problem(text: str, ws: Path) -> tuple[str, str] | None:
    """A text that says to make or write a .json file whose file does not parse as JSON."""
    if not _JSON_FILE.search(text) or not _MAKES.search(text):
        return None
    for rel, p in named(text, ws):
        if p.suffix.lower() != ".json" or not p.is_file():
            continue
        data = _read(p)
        if data is None:
            continue
        try:
            json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            return (
                f"{rel} is not valid JSON ({str(e)[:80]}; it starts {data[:40].decode('utf-8', 'replace')!r})",
                f"write {rel} as one JSON value (e.g. with write_file), then check it with: python3 -m json.tool {rel}",
            )
    return None


def contradiction(text: str, ws: Path | None, *, made: str | None = None) -> tuple[str, str] | None:
    """(why, what to do) when the workspace contradicts a `pass` on `text` (a criterion with its
    task or subtask), else None. Paths must exist after `made` (default `text`) says to create or
    write them: a subtask's own criterion, as its intent may describe a later step's effect."""
    if ws is None or not text:
        return None
    try:
        return (_copy_problem(text, ws) or _missing_problem(text if made is None else made, ws)
                or _json_problem(text, ws))
    except OSError:
        return None


def tree(ws: Path | None) -> dict[str, tuple[int, int, int]] | None:
    """Every path under the workspace, workspace-relative, as (size, mtime_ns, mode) — folders as
    (-1, 0, mode) — without following links; None past MAX_TREE paths or on an error. Taken before
    a task and after it, it shows every change, also those no command line names (a python
    one-liner's writes)."""
    if ws is None:
        return None
    root = os.path.realpath(ws)
    out: dict[str, tuple[int, int, int]] = {}
    try:
        for top, dirs, files in os.walk(root):
            for name in (*dirs, *files):
                st = os.lstat(os.path.join(top, name))
                rel = os.path.relpath(os.path.join(top, name), root)
                out[rel] = (-1, 0, st.st_mode) if os.path.isdir(os.path.join(top, name)) and \
                    not os.path.islink(os.path.join(top, name)) else (st.st_size, st.st_mtime_ns, st.st_mode)
                if len(out) > MAX_TREE:
                    return None
    except OSError:
        return None
    return out


def changed(calls: list[ToolCallRecord], ws: Path | None) -> list[str]:
    """Workspace paths the successful calls wrote, moved or removed (`ToolCallRecord.writes`, as
    the safety gate read each call before it ran), workspace-relative."""
    if ws is None:
        return []
    root = Path(os.path.realpath(ws))
    out: list[str] = []
    for c in calls:
        for w in c.writes if c.ok else ():
            p = _resolve(w, ws)
            if p is not None and (rel := os.path.relpath(p, root)) not in out:
                out.append(rel)
    return out


def asks_a_change(request: str) -> bool:
    """The request asks to make, edit or otherwise change something."""
    return bool(_MAKES.search(request) or _EDITS.search(request) or _CHANGES.search(request))


def is_question(request: str) -> bool:
    """The request asks for a value and to make or change nothing."""
    return not asks_a_change(request) and bool(
        G.asks_for(request) is not None or _LINE_OF.search(request)
        or re.match(r"\s*(?:what|which|who|where|how|is|are|does|do)\b.*\?\s*$", request, re.I | re.S))


def question_paths(request: str, ws: Path | None) -> list[Path]:
    """The workspace paths a question names: the task has no business writing to them. Empty for
    any request that asks to make or change something."""
    if ws is None or not is_question(request):
        return []
    return [p for _, p in named(request, ws)]


def _copy_source(request: str, ws: Path) -> list[tuple[str, Path]]:
    """"Copy A to B" → A, the file the request only reads (not when it names A as B)."""
    m = _COPY.search(request)
    if m is None or (p := _resolve(m.group(1), ws)) is None or _resolve(m.group(2), ws) == p:
        return []
    return [(_clean(m.group(1)), p)]


def read_only(request: str, ws: Path | None) -> list[Path]:
    """The workspace paths the request has no business writing: for a question, the whole workspace
    (answering changes nothing), else the source of a copy."""
    if ws is None:
        return []
    if is_question(request):
        return [*question_paths(request, ws), Path(os.path.realpath(ws))]
    return [p for _, p in _copy_source(request, ws)]


def about(p: Path, asked: list[Path]) -> bool:
    """`p` is one of `asked`, or inside one of its folders."""
    return any(p == a or (a.is_dir() and inside(p, a)) for a in asked)


def question_changed(request: str, changes: list[str], ws: Path | None) -> str | None:
    """A question whose task changed a path the question names: its answer may count what the task
    wrote."""
    asked = question_paths(request, ws) if changes else []
    if not asked or ws is None:
        return None
    for rel in changes:
        p = _resolve(rel, ws)
        if p is not None and about(p, asked):
            return f"the task changed {rel}, which the question is about: the answer may count what the task wrote"
    return None


def source_changed(request: str, changes: list[str], ws: Path | None) -> str | None:
    """A copy whose task changed its source: the copy may hold what the task wrote."""
    if ws is None or not changes:
        return None
    srcs = {p: rel for rel, p in _copy_source(request, ws)}
    for rel in changes:
        if (p := _resolve(rel, ws)) is not None and p in srcs:
            return f"the task changed {srcs[p]}, which it was only to read: the result may hold what the task wrote"
    return None
