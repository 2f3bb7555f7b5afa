"""Where a path that does not exist may be instead.

A tool that fails on a missing path says where a file or folder of that name is in the workspace,
like a shell's "did you mean": `cat settings.ini` fails, and the error adds that
`conf/settings.ini` exists. Small models otherwise retry the same path until the step budget is
spent. The search is
bounded (entries visited, names returned) and never leaves the workspace or follows a symlink;
a secret's path (a `.env`, a key) is never named: listing one asks the user first.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from agentui.tools import fsaccess
from agentui.tools.safety.paths import is_secret

#: folders not worth searching for a user's file
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache"})
#: folders that hold keys and credentials wherever they are: never searched, never named
PRIVATE_DIRS = frozenset({".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".password-store", "gcloud",
                          "keyrings", ".config"})
MAX_VISITED = 20_000
MAX_FOUND = 3

# "cat: a.txt: No such file or directory", "ls: cannot access 'reports': No such …",
# "tail: cannot open 'x' for reading: No such …", "python3: can't open file '/w/s.py': [Errno 2] No such …"
_MISSING = re.compile(r"(?:['‘]([^'’\n]{1,300})['’](?: for reading)?|\"([^\"\n]{1,300})\"|([^\s:'‘’\"]{1,300})): "
                      r"(?:\[Errno 2\] )?No such file or directory")


def missing_names(output: str) -> list[str]:
    """The paths a command's error output says do not exist, in order, without repeats."""
    names: list[str] = []
    for m in _MISSING.finditer(output or ""):
        name = m.group(1) or m.group(2) or m.group(3)
        if name and name not in names:
            names.append(name)
    return names


def elsewhere(workspace: Path, name: str, *, want_dir: bool | None = None) -> list[str]:
    """Workspace-relative paths of entries named like `name`'s last part (folders first when
    `want_dir`), at most MAX_FOUND, after visiting at most MAX_VISITED entries."""
    base = os.path.basename(name.rstrip("/"))
    if not base or base in (".", ".."):
        return []
    ws = Path(os.path.realpath(workspace))
    found: list[str] = []
    visited = 0
    for root, dirs, files in os.walk(ws):
        here = Path(root)
        dirs[:] = _searchable(here, dirs)
        for entry, is_dir in [*((d, True) for d in dirs), *((f, False) for f in sorted(files))]:
            visited += 1
            if entry == base and (want_dir is None or want_dir == is_dir) and _nameable(here / entry, ws):
                found.append(str((here / entry).relative_to(ws)))
        if len(found) >= MAX_FOUND or visited >= MAX_VISITED:
            break
    return found[:MAX_FOUND]


MAX_READ_FILES = 2_000
MAX_FILE_BYTES = 1_000_000


def holding(workspace: Path, root: Path, text: str, *, fold: bool = True) -> list[str]:
    """Workspace-relative paths of text files under `root` whose content contains `text` (letter
    case aside when no file holds it as written and `fold`), at most MAX_FOUND, after reading at most
    MAX_READ_FILES files of at most MAX_FILE_BYTES each; secrets, binary files, key stores, links and
    anything but a regular file are never read. A name search for a word the files hold in their
    text is a common slip of small models."""
    ws = Path(os.path.realpath(workspace))
    needle = text.encode("utf-8", "replace")
    if not needle.strip():
        return []
    exact: list[str] = []
    folded: list[str] = []
    read = 0
    for here_s, dirs, files in os.walk(os.path.realpath(root)):
        here = Path(here_s)
        dirs[:] = _searchable(here, dirs)
        for f in sorted(files):
            p = here / f
            if not _nameable(p, ws):
                continue
            try:
                st = p.lstat()  # a link is never read (it may lead to a secret), nor a FIFO (it blocks)
                if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
                    continue
                data = p.read_bytes()
            except OSError:
                continue
            read += 1
            if fsaccess.looks_binary(data):
                continue
            rel = str(p.relative_to(ws)) if p.is_relative_to(ws) else str(p)  # a search root outside
            if needle in data:
                exact.append(rel)
            elif fold and needle.lower() in data.lower():
                folded.append(rel)
            if len(exact) >= MAX_FOUND or read >= MAX_READ_FILES:
                break
        if len(exact) >= MAX_FOUND or read >= MAX_READ_FILES:
            break
    return (exact or folded)[:MAX_FOUND]


def content_hint(workspace: Path, root: Path, text: str, nothing: str, *, fold: bool = True) -> str:
    """What a name search that found nothing returns: `nothing`, or, when some files hold the query
    as text, their names one per line first, as a search result reads, then `nothing` as a note
    (a note first is read as "nothing found")."""
    try:
        found = holding(workspace, root, text, fold=fold)
    except OSError:
        return nothing
    if not found:
        return nothing
    where = os.path.relpath(os.path.realpath(root), os.path.realpath(workspace))
    # a command that runs as written: a placeholder in it would be run verbatim
    grep = f"grep -rl{'i' if fold else ''} {_quoted(_printable(text))} {shlex.quote(_printable(where))}"
    return "\n".join(map(_printable, found)) + (
        f"\n({nothing} by name; the files above hold {_printable(text)!r} in their text. "
        f"To search text yourself use shell: {grep})")


def found_no_name(workspace: Path, command: str) -> str:
    """What `find <dir> -name '*W*'` that printed nothing returns, when no name under `<dir>` matches
    and files there hold W in their text: their names first, then the note `content_hint` gives,
    else "" (a name search for a word the files hold in their text finds nothing, and a small model
    answers from that nothing). Only a lone `find` (piped into a filter at
    most, no redirection) with one -name (letter case kept) or -iname inside the workspace."""
    try:
        words = shlex.split(command)
    except ValueError:
        return ""
    ends = [i for i, w in enumerate(words) if w in ("|", "||", "&&", ";", "&")]
    if ends and (words[ends[0]] != "|" or len(ends) > 1):
        return ""
    if any(("<" in w or ">" in w) and not w.startswith("2>") for w in words):
        return ""  # `> list.txt` hides what find printed
    words = words[:ends[0]] if ends else words
    names = [i for i, w in enumerate(words) if w in ("-name", "-iname")]
    if not words or os.path.basename(words[0]) != "find" or len(names) != 1 or names[0] + 1 >= len(words):
        return ""
    first = next((i for i, w in enumerate(words[1:], 1) if w[:1] in ("-", "(", "!")), len(words))
    dirs = words[1:first] or ["."]  # find's paths come before its first expression word
    pattern, any_case = words[names[0] + 1], words[names[0]] == "-iname"
    word = "" if "[" in pattern else re.sub(r"[*?]", "", pattern).strip()
    ws = Path(os.path.realpath(workspace))
    root = Path(os.path.realpath(ws / os.path.expanduser(dirs[0])))
    if len(dirs) != 1 or not word or not root.is_relative_to(ws) or not root.is_dir():
        return ""
    if _name_matches(root, pattern, any_case):
        return ""  # a filter, -printf or -maxdepth hid a name that does match: "no files match" would lie
    nothing = f"no files match {_printable(pattern)!r}"
    got = content_hint(ws, root, word, nothing, fold=any_case)
    return "" if got == nothing else got + "\n"


def _name_matches(root: Path, pattern: str, any_case: bool) -> bool:
    """Some file or folder under `root` (or `root` itself) is named like `pattern`, as find's -name
    (-iname) reads it; True when the walk is cut short, to say nothing rather than something false."""
    match: Callable[[str], bool] = (lambda n: fnmatch.fnmatch(n.lower(), pattern.lower())) if any_case else \
        (lambda n: fnmatch.fnmatchcase(n, pattern))
    if match(root.name):
        return True
    visited = 0
    for _here, dirs, files in os.walk(root):
        visited += len(dirs) + len(files)
        if visited > MAX_VISITED or any(map(match, dirs)) or any(map(match, files)):
            return True
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
    return False


def _quoted(word: str) -> str:
    """`word` in single quotes for a shell, whatever it holds ('it'"'"'s $(id)' stays text)."""
    return "'" + word.replace("'", "'\"'\"'") + "'"


def _searchable(here: Path, dirs: list[str]) -> list[str]:
    """The folders under `here` worth walking into: no tool caches, no key stores, no virtualenv
    (known by its pyvenv.cfg, whatever its name)."""
    return sorted(d for d in dirs if d not in SKIP_DIRS and d.lower() not in PRIVATE_DIRS
                  and not (here / d / "pyvenv.cfg").exists())


def _nameable(path: Path, ws: Path) -> bool:
    """Not a secret (the gate's list, any letter case), not a link that leads out."""
    return not is_secret(path) and (not path.is_symlink() or Path(os.path.realpath(path)).is_relative_to(ws))


def _printable(text: str) -> str:
    """A name as one line: a file name cannot forge lines of a tool result."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def hint(workspace: Path, names: Iterable[str], *, want_dir: bool | None = None) -> str:
    """" (a.txt is not there; the workspace has conf/a.txt)" for the first named path that does not
    exist and has a namesake elsewhere in the workspace, else ""."""
    for name in names:
        p = Path(os.path.expanduser(name))
        full = p if p.is_absolute() else Path(workspace) / p
        if os.path.lexists(full):
            continue
        try:
            alts = [a for a in elsewhere(workspace, name, want_dir=want_dir) if a != os.path.normpath(name)]
        except OSError:
            return ""
        if alts:
            return f" ({_printable(name)} is not there; the workspace has {', '.join(map(_printable, alts))})"
    return ""


def missing_folder(workspace: Path, output: str, writes: Iterable[str]) -> str:
    """" (the folder out does not exist: mkdir -p creates it …)" for the first path a command was
    to write, named in its "No such file" error, whose folder is missing in the workspace, else "":
    without it a small model repeats the same write on "No such file"."""
    if "No such file or directory" not in (output or ""):
        return ""
    ws = Path(os.path.realpath(workspace))
    for w in writes:
        rel = os.path.normpath(w)
        if os.path.isabs(rel):
            rel = os.path.relpath(rel, ws)
        if rel.startswith("..") or "/" not in rel or (w not in output and rel not in output):
            continue
        parent = os.path.dirname(rel)
        if not os.path.lexists(ws / parent):
            return (f" (the folder {_printable(parent)} does not exist: mkdir -p creates it with any missing parent "
                    f"folders and skips folders that exist, e.g. mkdir -p {shlex.quote(_printable(parent))})")
    return ""


#: GNU find: "missing argument to `-exec'"; BSD find: "-exec: no terminating ";" or "+""
_EXEC_UNENDED = re.compile(r"missing argument to .-(exec|execdir|ok|okdir)\b|-(exec|execdir|ok|okdir): no terminating")
# the words between -exec and its {}: quoted text may hold ; + | & ("grep -lE 'TODO|FIXME' {}")
_EXEC_ARGS = r"(?:'[^']*'|\"[^\"]*\"|[^;+|&'\"])*?"
_EXEC_OPEN = re.compile(rf"(-(?:exec|execdir)\s(?:{_EXEC_ARGS}\s)?\{{\}})(?=\s*(?:$|[|&)>]|\d>))")


#: what is left of `\\;` at the end of a command once a JSON grammar had its way: `{} \\`, `{} ",`
_EXEC_MANGLED = re.compile(rf"(-(?:exec|execdir)\s(?:{_EXEC_ARGS}\s)?\{{\}})\s*[\\\\\"',]+\s*$")


def _parses(command: str) -> bool:
    try:
        shlex.split(command)
    except ValueError:  # an unbalanced quote, a trailing backslash
        return False
    return True


def end_exec(command: str) -> str:
    """`command` with ` +` after the `{}` of a find -exec that has no end (`\\;` or `+`), or whose
    end a JSON grammar mangled into a stray backslash or quote (`{} \\`, `{} ",`),
    else as it is."""
    if _EXEC_MANGLED.search(command) and not _parses(command):  # `sh -c "grep x {}"` parses: kept
        return _EXEC_MANGLED.sub(lambda m: f"{m.group(1)} +", command, count=1)
    return _EXEC_OPEN.sub(lambda m: f"{m.group(1)} +", command, count=1)


def unended_exec(command: str, output: str, *, exit_ok: bool = False) -> str:
    """" (find's -exec needs an end: …)" when find says an -exec has no end, else "". A JSON
    string cannot hold `\\;` unescaped, so a grammar-constrained planner writes
    `find . -type f -exec grep -l 'TODO' {}` without it. The example is
    the command with ` +` after the `{}` that ends it, when the command shows where that is.
    `exit_ok`: the command exited 0 (`find … {} | sort`): only a command that holds such an -exec."""
    mangled = "unexpected EOF while looking for matching" in (output or "") and _EXEC_MANGLED.search(command)
    if not (_EXEC_UNENDED.search(output or "") or mangled):
        return ""
    fixed = end_exec(command)
    if exit_ok and fixed == command:  # the error text was printed, not find's
        return ""
    example = f", e.g. {_printable(fixed)}" if fixed != command and len(fixed) <= 2000 else ""
    return f" (find's -exec needs an end: put \\; or + after the {{}}{example})"


def glob_roots(pattern: str) -> list[str]:
    """The literal folder a glob pattern starts from ("reports" for "reports/*.pdf"), or the pattern
    itself when it has no wildcard; [] when it starts with one."""
    literal = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
    if literal == pattern:
        return [pattern]
    head = literal.rsplit("/", 1)[0] if "/" in literal else ""
    return [head] if head else []
