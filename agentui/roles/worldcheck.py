"""Validators judge the world, not the executor's claims (#13): what the workspace holds after a
step, read by code, as evidence for R4a/R4b and as checks a `pass` must be consistent with.

- `facts(text, ws)`: for each workspace path a criterion or task names — exists or not, kind,
  size, line count, first line (never a secret's content) — one line each, for the prompts.
- `contradiction(text, output, ws)`: why a `pass` cannot stand, from the files themselves:
  "copy A to B" with B missing or not byte-identical to A; "create / write X" with X missing
  (unless something in the text may take a path away); a count that excludes part of a file
  ("not counting the header", "excluding blank lines") answered with the file's whole line count;
  "how many lines does F have" (nothing filtered or edited) answered without F's line count;
  a "which file / what path" question answered only with workspace paths that do not exist;
  "the names of all .md files … into F" with F not listing exactly those files (sorted when asked);
  "add a line saying 'X' at the end of F" with F's last line not X, or F holding nothing but X
  when the task says to keep the existing lines; "sort the lines of A … into B" with B not A's
  lines sorted; "how many lines contain the word W (in any case)" answered with the count of W
  inside other words or in one case only; "the total of the C column in F.csv" answered with a
  number that is not that column's sum; "how many files are in the D folder" (hidden files, folders
  in or out as the question says, either when it does not) and "how many distinct extensions"
  answered with a number no reading of the question gives; a listing of names that holds paths;
  "A converted to upper/lower case into B" with B not A converted; "how many words are in F" with
  a count that is not F's; "what is the first/last line of F" answered without it.
  None when code cannot tell — these checks only ever take a pass away.
- `confirmed(criterion, ws)`: the one check that grants: a criterion that is nothing but "F
  (exists and) contains [exactly] 'T'" (or "the content of F is 'T'"), with F a workspace file that
  does hold T (exactly: nothing else but surrounding whitespace); or nothing but "these paths are
  created / exist" (files empty when it says so), with every one of them there as what it is
  called. A validator's `fail` on such a criterion is overruled by the file itself (#13: the 1.5B
  validator failed "hello.txt exists and contains the text 'Hello, world'" three times with
  hello.txt holding exactly that). `request_check` does the same for a whole request that asks
  for nothing but files; `collateral` keeps code's word out when the task changed other paths.
- `counted(request, answer, ws)`: the grant for a one-count question code can count itself (words,
  lines, matching lines or rows of a file, a CSV column's total, a file's numbers summed, a folder's
  files or distinct extensions when every open reading agrees), answered plainly with that count;
  `listed` for "the names of all .md files … into F" with F listing exactly them;
  `question_changed`: a question whose task wrote to the file it asks about.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentui.contracts import ToolCallRecord
from agentui.roles import grounding as G
from agentui.tools.safety.paths import inside, is_secret

MAX_READ = 2_000_000  # bytes read to count lines or compare; bigger files are described by size only
MAX_FACTS = 4
_EDITS = re.compile(r"\b(append|add|edit|change|modif|replac|convert|upper|lower|sort|rename|insert|"
                    r"prepend|strip|remove|delete|then)\w*", re.I)
# other asks to change something, in the imperative ("Also fix the typo", "Install cowsay too"; not
# "is installed", "was updated", "Is it correct?": an outside tester, #13)
_CHANGES = re.compile(r"\b(?:fix|update|install|uninstall|upgrade|downgrade|patch|rewrite|overwrite|reformat|"
                      r"correct\s+(?:the|a|an|it|this|that|all|any|its|my))\b", re.I)
_COPY = re.compile(r"\b(?:copy|copies|duplicate|back\s?up)\s+(?:the\s+file\s+)?([^\s,;]+)\s+(?:in)?to\s+"
                   r"(?:the\s+file\s+|the\s+folder\s+)?([^\s,;()]+)", re.I)
_EXCLUDES = re.compile(r"\b(?:not\s+counting|without\s+counting|excluding|except(?:\s+for)?|other\s+than|"
                       r"apart\s+from|ignoring|leaving\s+out|minus)\s+(?:the\s+|any\s+|all\s+)?([\w-]+(?:\s+[\w-]+)?)",
                       re.I)
_NON_BLANK = re.compile(r"\bnon-?\s?(empty|blank)\b", re.I)
#: effect verbs after which every workspace path the text names must be there (#13)
_MAKES = re.compile(r"\b(creat\w*|writ\w*|wrote|save[ds]?|saving|make|makes|made|touch\w*|mkdir|store[ds]?|"
                    r"copy|copie[ds]|generat\w*|produc\w*|append\w*|add|adds|added|put|puts)\b", re.I)
#: ...unless something may take a path away, or the text is about a path's absence
_UNMAKES = re.compile(r"\b(delet\w*|remov\w*|rm|mv|mov\w*|renam\w*|clean\w*|purg\w*|wipe\w*|trunc\w*|"
                      r"missing|absent|gone|not|no|never|nonexist\w*|without|unless|if|whether|would|could)\b|n't\b",
                      re.I)
_NOT_A_PATH = re.compile(r"^(?:e\.g|i\.e|etc|vs|www\..*|[\w-]+\.(?:com|org|net|io|dev|ai|edu|gov|co)(?:/.*)?)$", re.I)
_WHOLE_COUNT = re.compile(r"\b(lines?|rows?|records?|entries|entry)\b", re.I)


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
    in the workspace ("settings.ini is not in the top folder; the workspace has conf/settings.ini"):
    the 1.5B planner wrote `cat settings.ini` into three plans running while the error named
    conf/settings.ini (#13, the wall-* tasks). Never for a request that makes or writes something:
    its path may name what it is to create."""
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
    m = _COPY.search(text)
    if m is None or _EDITS.search(text[m.end():]):
        return None  # no copy, or the copy is changed afterwards: code cannot tell what B should hold
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


def _excluded(kind: str, lines: list[str], rel: str) -> tuple[int, str] | None:
    """How many lines of the file the excluded `kind` covers, and a command that counts the rest
    (small models follow a named command better than a description of one, #13), or None when
    code cannot tell."""
    k = kind.lower()
    if re.match(r"(header|heading|title|first\s+line|column\s+names?)", k):
        return (1 if lines else 0), f"tail -n +2 {rel} | wc -l"
    if re.match(r"(blank|empty)", k):
        return sum(1 for ln in lines if not ln.strip()), f"grep -cv '^[[:space:]]*$' {rel}"
    if re.match(r"comment", k):
        return sum(1 for ln in lines if ln.lstrip().startswith(("#", "//"))), \
            f"grep -cv '^[[:space:]]*\\(#\\|//\\)' {rel}"
    return None


def _one_file(text: str, ws: Path) -> tuple[str, bytes] | None:
    """The one workspace file `text` names, and its bytes (None: none, several, or unreadable)."""
    files = [(rel, p) for rel, p in named(text, ws) if p.is_file()]
    if len(files) != 1:
        return None
    data = _read(files[0][1])
    return None if data is None else (files[0][0], data)


def _excluded_count(text: str, ws: Path) -> tuple[int, int, str, str, str] | None:
    """"How many data rows, not counting the header, are in data.csv?": (the count with that part
    left out, the whole line count, the file, the kind left out, a command that counts the rest);
    None when code cannot tell."""
    m = _EXCLUDES.search(text) or _NON_BLANK.search(text)
    if m is None or G.asks_for(text) != "number" or not _WHOLE_COUNT.search(text):
        return None
    one = _one_file(text, ws)
    if one is None:
        return None
    rel, data = one
    lines = _lines(data)
    ex = _excluded(m.group(1), lines, rel)  # "non-empty": group(1) is "empty", the kind left out
    if not ex or not ex[0]:
        return None  # unknown kind, or nothing to exclude: the whole count may be right
    kind = m.group(1).lower() if m.re is _EXCLUDES else f"{m.group(1).lower()} lines"
    return len(lines) - ex[0], len(lines), rel, kind, ex[1]


def _count_problem(text: str, output: str, ws: Path) -> tuple[str, str] | None:
    got = _excluded_count(text, ws)
    if got is None:
        return None
    rest, whole, rel, kind, how = got
    nums = set(G.numbers(output))
    if str(whole) in nums and str(rest) not in nums:
        return (f"{rel} has {whole} lines in all and the task excludes {kind} ({whole - rest} of those lines): "
                f"{whole} counts what it leaves out"), \
            f"count {rel} again leaving out {kind} (e.g. {how}), and report that number"
    return None


_COLUMN_SUM = re.compile(r"\b(?:total|sum|add\s+up)\b(?:[^.?!\n]{0,60}?\s)?[\"'`]?(?P<col>[\w.-][\w .-]{0,59}?)[\"'`]?"
                         r"\s+(?:column|field)\b", re.I)


def _number_problem(output: str, right: set[float], why: str, todo: str) -> tuple[str, str] | None:
    """The answer states numbers and none of them is one code counted: (why, todo); else None."""
    # digits only: "forty-nine" would read as "nine" (number words stop at twenty)
    nums = [float(n) for n in G.numbers(output) if re.fullmatch(r"-?\d+(?:\.\d+)?", n)]
    if not nums or any(abs(n - r) < 1e-9 for n in nums for r in right):
        return None
    return why, todo


def _column_sum(text: str, ws: Path) -> tuple[float, str, int, str, str] | None:
    """"The total of the score column in scores.csv": (the column's sum with the header left out,
    the file, the column's index, its name, the separator); None when code cannot tell which column
    or the values are not all numbers."""
    m = _COLUMN_SUM.search(text)
    if m is None or G.asks_for(text) != "number":
        return None
    files = [(rel, p) for rel, p in named(text, ws) if p.suffix.lower() in (".csv", ".tsv") and p.is_file()]
    if len(files) != 1 or (data := _read(files[0][1])) is None:
        return None
    rel, p = files[0]
    lines = _lines(data)
    if lines:
        lines[0] = lines[0].lstrip("\ufeff")
    delim = "\t" if p.suffix.lower() == ".tsv" else ";" if lines and ";" in lines[0] and "," not in lines[0] else ","
    rows = [r for r in csv.reader(lines, delimiter=delim) if r]
    if len(rows) < 2:
        return None
    head = [h.strip().lower() for h in rows[0]]
    words = m.group("col").strip().lower().split()
    # "add up the values in the amount column": the column is the longest tail of words that is one
    cols = [c for c in (" ".join(words[k:]) for k in range(len(words))) if head.count(c) == 1]
    if not cols:
        return None  # no such column, or two: code cannot tell which
    i = head.index(cols[0])
    try:
        values = [float(r[i]) for r in rows[1:] if len(r) > i and r[i].strip()]
    except ValueError:
        return None  # not all numbers: code cannot tell what the total means
    return sum(values), rel, i, cols[0], "\\t" if delim == "\t" else delim


def _column_sum_problem(text: str, output: str, ws: Path) -> tuple[str, str] | None:
    """"The total of the score column in scores.csv" answered with a number that is not the sum of
    that column's values (header left out): the 1.5B model summed column 3 instead of 2."""
    got = _column_sum(text, ws)
    if got is None:
        return None
    total, rel, i, col, sep = got
    return _number_problem(output, {total},
                           f"the {col} column of {rel} (column {i + 1}) does not sum to what the answer says",
                           f"sum column {i + 1} of {rel} without its header (e.g. awk -F'{sep}' "
                           f"'NR>1 {{s+=${i + 1}}} END {{print s}}' {rel}) and report that number")


def _numbers_sum_problem(text: str, output: str, ws: Path) -> tuple[str, str] | None:
    """"What is the sum of the numbers in numbers.txt?" answered with numbers none of which is
    their sum (751f0f9: the 1.5B model answered 153, the size of the file it wrote; R4b passed it)."""
    if G.asks_for(text) != "number" or (got := _file_numbers(text, ws)) is None:
        return None
    total, rel = got
    return _number_problem(output, {total}, f"the numbers in {rel} sum to {total:g}, not to what the answer says",
                           f"sum them (e.g. paste -sd+ {rel} | bc) and report that number")


_JSON_FILE = re.compile(r"\bjson\b", re.I)


def _json_problem(text: str, ws: Path) -> tuple[str, str] | None:
    """A request to make or write a JSON file F.json whose F.json does not parse as JSON (751f0f9:
    a later step wrote "{: person.json has been created …" over the right object; R4b passed it)."""
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
            return (f"{rel} is not valid JSON ({str(e)[:80]}; it starts {data[:40].decode('utf-8', 'replace')!r})",
                    f"write {rel} as one JSON value (e.g. with write_file), then check it with: python3 -m json.tool {rel}")
    return None


_THIS_FOLDER = re.compile(r"\b(?:in|inside|within|of|among)\s+(?:the\s+files\s+in\s+)?(?:this|the\s+current)\s+"
                          r"(?:folder|directory)\b|\bhere\b", re.I)
#: ways to name a folder, tried in order; the first that names a workspace folder wins
_FOLDER_NAMES = (
    re.compile(r"[\"'`“‘](?P<d>[^\"'`”’\n]{1,80})[\"'`”’]\s+(?:folder|directory|dir)\b", re.I),
    re.compile(r"\b(?P<d>[\w./-]{1,80})\s+(?:folder|directory|dir)\b", re.I),
    re.compile(r"\b(?:folder|directory)\s+[\"'`]?(?P<d>[\w./-]{1,80}?)[\"'`]?(?=[\s,;?!]|\.?$|\.\s)", re.I),
    re.compile(r"\b(?:files?|entries|items)\s+(?:are\s+)?(?:directly\s+)?(?:in|inside|under|within|from)\s+"
               r"(?P<d>[\w./-]{1,80}?)/?(?=[\s,;?!]|\.?$|\.\s)", re.I),
)
_HIDDEN_IN = re.compile(r"\b(?:hidden(?:\s+(?:files|ones))?\s+(?:included|too|as\s+well)|(?:including|incl\.?|with|counting)"
                        r"\s+(?:the\s+)?hidden|dot-?files\s+included)\b", re.I)
_HIDDEN_OUT = re.compile(r"\b(?:not\s+(?:counting\s+)?(?:the\s+)?hidden|excluding\s+(?:the\s+)?hidden|without\s+"
                         r"(?:the\s+)?hidden|visible|non-?hidden)\b", re.I)
_FILES_ONLY = re.compile(r"\b(?:(?:not|without|excluding)\s+(?:counting\s+|including\s+)?(?:the\s+|any\s+)?"
                         r"(?:folders|directories|sub-?folders|sub-?directories|dirs)|files\s+only|only\s+(?:the\s+)?files|"
                         r"regular\s+files)\b", re.I)
_HOW_MANY_FILES = re.compile(r"\b(?:how\s+many\s+(?:(?:visible|regular|plain|normal)\s+)?(?:files|entries|items)|"
                             r"count\s+(?:the\s+|all\s+(?:the\s+)?)?(?:files|entries|items))\b", re.I)
_DISTINCT_EXT = re.compile(r"\b(?:distinct|different|unique)\s+(?:file\s+)?(?:extensions|suffixes|file\s+types)\b", re.I)


def _folder(text: str, ws: Path) -> Path | None:
    """The workspace folder a question is about: the one it names, or the workspace for "this
    folder" / "here"; None when it names none that exists."""
    root = Path(os.path.realpath(ws))
    for pat in _FOLDER_NAMES:
        for m in pat.finditer(text):
            name = m.group("d").strip().rstrip("/")
            if not name or name.lower() in ("this", "the", "current", "a", "that", "each", "every"):
                continue
            p = _resolve(name, ws)
            if p is not None and p.is_dir() and inside(Path(os.path.realpath(p)), root):
                return Path(os.path.realpath(p))
    return root if _THIS_FOLDER.search(text) else None


def _entries(folder: Path, recursive: bool) -> list[Path]:
    if not recursive:
        return list(folder.iterdir())
    out: list[Path] = []
    for d, dirs, files in os.walk(folder):
        out.extend(Path(d) / n for n in (*dirs, *files))
        if len(out) > 20_000:
            break
    return out


def _recursive(text: str) -> bool:
    """The question counts into subfolders ("including subfolders", "recursively"), not "directly"."""
    return bool(_RECURSIVE.search(text)) and not re.search(r"\bdirectly\b", text, re.I)


def _hidden_readings(text: str) -> list[bool]:
    """Whether hidden entries count, in every reading the question leaves open ("not counting
    hidden", "visible": out; "hidden files included": in; silent: both)."""
    return [False] if _HIDDEN_OUT.search(text) else [True] if _HIDDEN_IN.search(text) else [True, False]


def _shown_in(folder: Path) -> Callable[[Path, bool], bool]:
    """Is an entry below `folder` counted, hidden ones in or out? (Hidden: the entry or a folder on
    its way down.)"""
    def shown(e: Path, hidden_in: bool) -> bool:
        return hidden_in or not any(part.startswith(".") for part in e.relative_to(folder).parts)
    return shown


def _folder_count(text: str, ws: Path) -> tuple[set[float], str, bool] | None:
    """"How many files (not folders) are directly inside the data folder, hidden files included?":
    every count a reading of the question gives (hidden in or out, folders in or out, links as `ls`
    or as `find -type f` counts them, as far as the question leaves them open), the folder, and
    whether the count goes down into subfolders."""
    m = _HOW_MANY_FILES.search(text)
    if m is None or G.asks_for(text) != "number" or _DISTINCT_EXT.search(text):
        return None  # "how many .md files", "how many python files": not this check's business
    folder = _folder(text, ws)
    if folder is None:
        return None
    recursive = _recursive(text)
    every = _entries(folder, recursive)  # _folder gives the real path
    hidden = _hidden_readings(text)
    files_only = [True] if _FILES_ONLY.search(text) else [True, False]
    shown = _shown_in(folder)
    # a link to a file counts as a file for `ls`, not for `find -type f`: both readings stand
    right = {float(sum(1 for e in every if shown(e, h) and (not f or (e.is_file() and not (ln and e.is_symlink())))))
             for h in hidden for f in files_only for ln in (False, True)}
    return right, os.path.relpath(folder, os.path.realpath(ws)), recursive


def _folder_count_problem(text: str, output: str, ws: Path) -> tuple[str, str] | None:
    """A folder's file count answered with a number no reading of the question gives."""
    got = _folder_count(text, ws)
    if got is None:
        return None
    right, rel, recursive = got
    how = f"find {rel} {'' if recursive else '-maxdepth 1 '}-type f | wc -l"
    return _number_problem(output, right, f"{rel} does not hold as many as the answer says (code counted them)",
                           f"count them with a command that matches the question exactly (e.g. {how}) "
                           f"and report that number")


def _extensions(text: str, ws: Path) -> set[float] | None:
    """"How many distinct file extensions are there among the files in this folder?": every count a
    reading gives (letter case, .tar.gz as one or as .gz, no extension as one more or not)."""
    if not _DISTINCT_EXT.search(text) or G.asks_for(text) != "number":
        return None
    folder = _folder(text, ws)  # "here" and "this folder" are the workspace
    if folder is None:
        return None
    files = [e for e in _entries(folder, bool(_RECURSIVE.search(text))) if e.is_file()]
    exts = {e.suffix for e in files if e.suffix}
    whole = {"".join(e.suffixes) for e in files if e.suffixes}  # is a.tar.gz's extension .gz or .tar.gz?
    right = {float(len(exts)), float(len({x.lower() for x in exts})), float(len(whole))}
    if any(not e.suffix for e in files):  # does "no extension" count as one? code cannot tell: both
        right |= {r + 1 for r in right}
    return right


def _extension_problem(text: str, output: str, ws: Path) -> tuple[str, str] | None:
    """Distinct extensions answered with a number that is not their count (the 1.5B model counted
    the files)."""
    right = _extensions(text, ws)
    if right is None:
        return None
    return _number_problem(output, right, "the answer's number is not the count of distinct extensions "
                                          "(code counted them)",
                           "list the extensions and count the distinct ones (e.g. ls | sed -n 's/.*\\.//p' | "
                           "sort -u | wc -l) and report that number")


_LINE_COUNT = re.compile(r"\b(how\s+many\s+lines|number\s+of\s+lines|line\s+count|count\s+(?:the\s+)?lines)\b", re.I)
_FILTERED = re.compile(r"\b(contain\w*|match\w*|with|without|start\w*|end\w*|begin\w*|that|which|where|having|"
                       r"includ\w*|mention\w*|uniq\w*|distinct|duplicat\w*|longer|shorter|more|less|than|each|per|"
                       r"every|total|sum|combined|together|words?|char\w*|before|after|was|were|had)\b", re.I)


def _line_count_problem(text: str, output: str, ws: Path) -> tuple[str, str] | None:
    """"How many lines does F have?" (nothing filtered, nothing edited) answered with numbers none
    of which is F's line count (#13, an outside tester: `echo "a.txt has 7 lines"` then "7")."""
    if not _LINE_COUNT.search(text) or _FILTERED.search(text) or _EXCLUDES.search(text) \
            or _NON_BLANK.search(text) or _EDITS.search(text):
        return None
    # "a.txt has 5 lines (b.txt has 3)": the number said of lines is the answer, not any number
    said = [n for m in re.finditer(r"([\w,.]+)\s+lines?\b", output, re.I) for n in G.numbers(m.group(1), words=True)]
    nums = set(said or G.numbers(output, words=True))
    one = _one_file(text, ws) if nums else None
    if one is None:
        return None
    rel, data = one
    lines = _lines(data)
    counts = {str(len(lines)), str(data.count(b"\n")), str(sum(1 for ln in lines if ln.strip()))}
    if nums & counts:
        return None
    return (f"{rel} has {len(lines)} lines, and the answer says {', '.join(sorted(nums)[:3])}",
            f"count with wc -l < {rel} and report the number it prints")


_LISTING = re.compile(r"\bnames?\s+of\s+(?:all|every|each)\s+(?:the\s+)?\*?(\.[A-Za-z0-9]{1,8})\s+files?\b", re.I)
_RECURSIVE = re.compile(r"\b(recursiv\w*|sub-?folders?|sub-?director\w*|nested|below|beneath|tree|anywhere)\b", re.I)
_QUOTE = re.compile(r"[\"“'‘`]([^\"”'’`\n]{1,200})[\"”'’`]")
_APPEND = re.compile(r"\b(append\w*|add\w*\s+(?:a\s+|one\s+|the\s+)?(?:new\s+)?line)\b", re.I)
_AT_END = re.compile(r"\b(at\s+the\s+end|to\s+the\s+end|as\s+the\s+last\s+line|append\w*)\b", re.I)
_KEEP = re.compile(r"\b(keep\w*|preserv\w*|existing|leave\w*\s+the\s+rest)\b", re.I)


def _target(text: str, ws: Path) -> tuple[str, Path] | None:
    """The one file the text names that exists (or should): the file the check is about."""
    files = [(rel, p) for rel, p in named(text, ws) if not p.is_dir()]
    return files[0] if len(files) == 1 else None


def _listing_problem(text: str, ws: Path) -> tuple[str, str] | None:
    """"Write the names of all .md files in this folder (sorted, one per line) into F": F must list
    exactly the folder's files with that extension (F itself aside), in order when asked sorted."""
    m = _LISTING.search(text)
    if m is None or _RECURSIVE.search(text) or not _MAKES.search(text) or _UNMAKES.search(text):
        return None
    ext = m.group(1).lower()
    target = _target(text.replace(m.group(0), " "), ws)
    if target is None:
        return None
    rel, out = target
    data = _read(out)
    if data is None:
        return None  # missing: the missing-path rule speaks; too big: code cannot tell
    root = Path(os.path.realpath(ws))
    folder = _folder(text.replace(rel, " "), ws) or (
        out.parent if out.parent != root and inside(out.parent, root) else root)
    want = sorted(p.name for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ext and p != out)
    # one per line, or comma-separated, or as a bulleted / numbered list: the names are what count
    got = [re.sub(r"^(?:[-*•]|\d+[.)])\s+", "", g.strip()).removeprefix("./")
           for ln in _lines(data) for g in (ln.split(",") if "," in ln else [ln]) if g.strip()]
    todo = f"write exactly the {ext} file names ({', '.join(want) or 'none'}) into {rel}, one per line"
    if any("/" in g for g in got):  # the 1.5B wrote `ls /abs/ws/*.md > index.txt`: paths, not names
        return f"{rel} lists paths ({next(g for g in got if '/' in g)[:80]}), not file names", todo
    if set(got) != set(want) or len(got) != len(want):
        extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
        what = "; ".join(x for x in (f"it lists {', '.join(extra)} that is not a {ext} file here" if extra else "",
                                     f"it leaves out {', '.join(missing)}" if missing else "",
                                     "it repeats names" if not extra and not missing else "") if x)
        return f"{rel} does not list the {ext} files of the folder: {what}", todo
    if re.search(r"\bsorted\b|\balphabetical", text, re.I) and got != sorted(got) and got != sorted(got, key=str.lower):
        return f"{rel} lists the {ext} files but not sorted: {', '.join(got)}", todo
    if re.search(r"\bone\s+(?:per|a)\s+line\b|\beach\s+on\s+its\s+own\s+line\b", text, re.I) and data.strip() \
            and not data.endswith(b"\n"):
        # the 1.5B model wrote "alpha.md\nmid.md\nzeta.md": wc -l counts 2 lines (#13)
        ends = data.count(b"\n")
        return f"the last line of {rel} has no line end (wc -l counts {ends} lines)", \
            todo + " (end the last line with a newline too)"
    return None


def _append_of(text: str, ws: Path) -> tuple[str, str, Path] | None:
    """"Add a line saying 'done' at the end of F": (the line, F as named, F's path), else None."""
    if not _APPEND.search(text) or _UNMAKES.search(text):
        return None
    # the request and its criterion often quote the same line twice: one line, not two (#13)
    quoted = sorted({q.strip() for q in _QUOTE.findall(text) if q.strip() and not _resolve_named(q, ws)})
    if len(quoted) != 1 or (target := _target(text.replace(quoted[0], " "), ws)) is None:
        return None
    return quoted[0], target[0], target[1]


def _append_problem(text: str, ws: Path) -> tuple[str, str] | None:
    """"Add a line saying 'done' at the end of F, keeping the existing lines": F's last line must be
    that text, and F must not hold only that text (the existing lines overwritten)."""
    got = _append_of(text, ws)
    if got is None:
        return None
    line, rel, f = got
    data = _read(f)
    if data is None:
        return None
    lines = [ln.strip() for ln in _lines(data) if ln.strip()]
    todo = f"append the line with >> (e.g. echo '{line}' >> {rel}); never overwrite {rel} with >"
    # the line as written, not glued to what was there ("betadone": the file had no final newline)
    alone = re.compile(rf"(?<![\w-]){re.escape(line)}(?![\w-])") if re.fullmatch(r"\w(?:.*\w)?", line) else \
        re.compile(re.escape(line))
    if not lines or not alone.search(lines[-1]):
        if _AT_END.search(text):
            last = lines[-1][:80] if lines else "nothing"
            return f"the last line of {rel} is {last!r}, not {line!r}", todo
        if not any(line in ln for ln in lines):
            return f"{rel} has no line {line!r}", todo
    if _KEEP.search(text) and lines and all(ln == line for ln in lines):
        return f"{rel} holds only {line!r}: the lines it had before are gone", todo
    if _AT_END.search(text) and lines and not data.endswith(b"\n") and line in lines[-1]:
        # the 1.5B model wrote "\ndone" at the end: the next line added would join it
        return f"the new last line of {rel} has no line end (the file does not end with a newline)", todo
    return None


MAX_SNAPSHOT_BYTES = 256 * 1024


def snapshot(request: str, ws: Path | None) -> dict[Path, bytes]:
    """The files `request` names as they are before the task runs (regular files of at most
    MAX_SNAPSHOT_BYTES, at most MAX_FACTS): what an append is checked against afterwards."""
    out: dict[Path, bytes] = {}
    for _rel, p in named(request, ws) if ws is not None else []:
        try:
            if p.is_file() and not p.is_symlink() and p.stat().st_size <= MAX_SNAPSHOT_BYTES:
                out[p] = p.read_bytes()
        except OSError:
            continue
    return out


def appended_wrong(request: str, ws: Path | None, before: dict[Path, bytes] | None) -> str | None:
    """"Add a line saying 'X' at the end of F": why F is not its text from before the task plus that
    one line, else None (751f0f9: the 1.5B executor appended "done" twice — in two steps — and both
    validators passed it; code that never saw F before could not tell)."""
    if ws is None or not before or not _AT_END.search(request) or (got := _append_of(request, ws)) is None \
            or got[2] not in before:
        return None
    line, rel, f = got
    old, now = before[f], _read(f)
    if now is None:
        return None
    sep = b"" if not old or old.endswith(b"\n") else b"\n"
    want = old + sep + line.encode() + b"\n"
    if now in (want, want.replace(b"\n", b"\r\n")):
        return None
    tail = now[len(old):] if now.startswith(old) else None
    return (f"{rel} is not its text from before the task plus one line {line!r}: "
            + (f"the task added {tail[:80].decode('utf-8', 'replace')!r}" if tail is not None
               else "the lines it had before were changed"))


_SORT = re.compile(r"\bsort\w*\s+(?:the\s+)?(?:lines\s+(?:of|in)\s+)?(?:the\s+file\s+)?([^\s,;]+)"
                   r".{0,80}?\b(?:to|into|in|as)\s+(?:a\s+(?:new\s+)?file\s+(?:called\s+|named\s+)?|the\s+file\s+)?"
                   r"([^\s,;()]+)", re.I | re.S)
_WORD_COUNT = re.compile(r"\bhow\s+many\s+lines\b.{0,80}?\bcontain\w*\s+(?:the\s+word\s+)?[\"“'‘`]?([\w-]+)[\"”'’`]?",
                         re.I | re.S)
_ANY_CASE = re.compile(r"\b(any\s+(?:letter\s+)?case|case[- ]insensitiv\w*|ignoring\s+case|upper\s*-?\s*or\s+lower)",
                       re.I)


def _sort_problem(text: str, ws: Path) -> tuple[str, str] | None:
    """"Sort the lines of A … write the result to B": B must hold A's lines sorted (either case
    rule; reversed when asked). Only with nothing in the text that changes the lines otherwise."""
    m = _SORT.search(text)
    if m is None or re.search(r"\b(uniq\w*|unique|dedup\w*|numeric\w*|by\s+\w+|column|field|key|"
                              r"length|random|shuffl\w*|filter\w*|only|except|without|remove\w*)\b", text, re.I):
        return None
    src_rel, dst_rel = _clean(m.group(1)), _clean(m.group(2))
    src, dst = _resolve(src_rel, ws), _resolve(dst_rel, ws)
    if src is None or dst is None or src == dst or not src.is_file() or not dst.is_file():
        return None  # a missing result is the missing-path rule's to report
    a, b = _read(src), _read(dst)
    if a is None or b is None:
        return None
    lines, got = _lines(a), _lines(b)
    reverse = bool(re.search(r"\b(revers\w*|descending|z\s*to\s*a)\b", text, re.I))
    options = [sorted(lines, reverse=reverse), sorted(lines, key=str.casefold, reverse=reverse)]
    if got in options or [g for g in got if g.strip()] in [[x for x in o if x.strip()] for o in options]:
        return None
    return (f"{dst_rel} does not hold the lines of {src_rel} sorted: it has {len(got)} lines, "
            f"{src_rel} {len(lines)}"), f"sort {src_rel} into {dst_rel} (sort {src_rel} > {dst_rel})"


_CASE = re.compile(r"\b(?:(upper|lower)(?:\s*-?\s*case[ds]?|case)|(capital)\s+letters|(capitali[sz]\w*))\b", re.I)


def _case_pair(text: str, ws: Path) -> tuple[str, Path, str, Path, str] | None:
    """"Write the contents of in.txt converted to upper case into a new file out.txt": (the
    source, the result, "upper" or "lower"), when the text names exactly those two files, the
    source first, and asks nothing else of the result."""
    m = _CASE.search(text)
    if m is None or m.group(3) or re.search(r"\b(then|also|append\w*|add\w*|sort\w*|first|only|each|every)\b",
                                              text, re.I):
        return None
    files = named(text, ws)
    if len(files) != 2:
        return None
    (src_rel, src), (dst_rel, dst) = files
    if src == dst or not src.is_file():
        return None
    return src_rel, src, dst_rel, dst, "lower" if (m.group(1) or "").lower() == "lower" else "upper"


def _case_problem(text: str, ws: Path) -> tuple[str, str] | None:
    """The result of an upper/lower-case conversion that does not hold the source converted (the
    1.5B executor converted in.txt into out.txt, then wrote its own sentence over out.txt)."""
    got = _case_pair(text, ws)
    if got is None:
        return None
    src_rel, src, dst_rel, dst, how = got
    a, b = _read(src), _read(dst)
    if a is None or b is None:
        return None  # a missing result is the missing-path rule's to report
    want = a.decode("utf-8", "replace")
    want = want.upper() if how == "upper" else want.lower()
    have = b.decode("utf-8", "replace")
    if have.strip() == want.strip():
        return None
    first = (_lines(b) or [""])[0][:80]
    tr = "'[:lower:]' '[:upper:]'" if how == "upper" else "'[:upper:]' '[:lower:]'"
    return (f"{dst_rel} does not hold {src_rel} in {how} case (its line 1: {first!r})",
            f"convert with tr {tr} < {src_rel} > {dst_rel} and write nothing else to {dst_rel}")


MAX_TREE = 5000


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


def _derived(src_rel: str, src: Path, dst_rel: str, dst: Path, ws: Path, before: dict[Path, bytes],
             tree_before: dict[str, tuple[int, int, int]]) -> tuple[bytes, str] | None:
    """(the source's bytes from before the task, the result's text) when B was made from A and
    nothing else: A as it was (and not empty), no link standing in either named path, and no path
    changed but B and the folders it went into (`tree` before and after)."""
    root = Path(os.path.realpath(ws))
    if any(Path(os.path.abspath(root / _clean(rel).removeprefix("./"))) != p
           for rel, p in ((src_rel, src), (dst_rel, dst))):
        return None  # a link in the way: the named file is not the one read
    old, have = before.get(src), _read(dst)
    if not (old or b"").strip() or have is None or _read(src) != old:
        return None
    if not _only_changed(ws, tree_before, [dst]):
        return None
    return old, have.decode("utf-8", "replace")


def converted(request: str, ws: Path | None, before: dict[Path, bytes] | None,
              tree_before: dict[str, tuple[int, int, int]] | None) -> str | None:
    """Evidence read by code when the request asks nothing but "write A converted to upper (lower)
    case into B" and B holds A's text from before the task so converted, only trailing white space
    aside (see `_derived` for what else must hold): the 1.5B meta-validator failed out.txt holding
    'MAKE ME LOUD' for in.txt's 'make me loud', both shown to it (#13, uppercase over HTTP)."""
    if ws is None or not before or tree_before is None or request.count("?") \
            or _ASKS_MORE.search(request.strip()) or re.search(r"\band\b", request, re.I):
        return None
    try:
        got = _case_pair(request, ws)
        if got is None or (made := _derived(got[0], got[1], got[2], got[3], ws, before, tree_before)) is None:
            return None
        src_rel, _src, dst_rel, _dst, how = got
        want = made[0].decode("utf-8", "replace")
        want = want.upper() if how == "upper" else want.lower()
        if made[1].rstrip() != want.rstrip():
            return None
    except OSError:
        return None
    return f"checked by code: {dst_rel} holds {src_rel} in {how} case"


# the whole request is one sort of one file into another ("Sort the lines of names.txt
# alphabetically and write the result to sorted.txt."), nothing before or after it
_SORT_ONLY = re.compile(
    r"^\s*sort\s+(?:the\s+lines\s+(?:of|in)\s+)?(?:the\s+file\s+)?(?P<src>[^\s,;]+?)\s*"
    r"(?:alphabetically|in\s+alphabetical\s+order)?\s*,?\s*(?:and\s+(?:write|save|put|store)\s+"
    r"(?:the\s+result|them|the\s+sorted\s+lines|it)\s+)?(?:to|into)\s+(?:a\s+(?:new\s+)?file\s+"
    r"(?:called\s+|named\s+)?|the\s+file\s+)?(?P<dst>[^\s,;()]+?)\s*\.?\s*$", re.I)


def sorted_into(request: str, ws: Path | None, before: dict[Path, bytes] | None,
                tree_before: dict[str, tuple[int, int, int]] | None) -> str | None:
    """Evidence read by code when the whole request is "sort the lines of A (alphabetically) and
    write the result to B" and B holds A's lines from before the task sorted (either letter-case
    rule), only a last line end aside (see `_derived` for what else must hold): the 1.5B
    meta-validator failed sorted.txt holding alice, bob, mallory, trent (#13, sort-names)."""
    if ws is None or not before or tree_before is None or "?" in request or not (m := _SORT_ONLY.match(request)):
        return None
    try:
        src_rel, dst_rel = _clean(m.group("src")), _clean(m.group("dst"))
        src, dst = _resolve(src_rel, ws), _resolve(dst_rel, ws)
        if src is None or dst is None or src == dst or \
                (made := _derived(src_rel, src, dst_rel, dst, ws, before, tree_before)) is None:
            return None
        lines = _lines(made[0])
        text = made[1].removesuffix("\n")  # one last line end, not blank lines after it
        got = text.split("\n") if text else []
        if got not in (sorted(lines), sorted(lines, key=str.casefold)):
            return None
    except OSError:
        return None
    return f"checked by code: {dst_rel} holds the lines of {src_rel} sorted"


def only_named_changed(request: str, ws: Path | None, tree_before: dict[str, tuple[int, int, int]] | None) -> bool:
    """No path but those `request` names (and the folders they are in) changed since `tree_before`
    was listed; True when there is no listing to compare (a workspace past MAX_TREE paths: the
    gate-read changes are all code has then)."""
    if ws is None or tree_before is None:
        return True
    got = _only_changed(ws, tree_before, [p for _rel, p in named(request, ws)] + [n.path for n in _made(request, ws) or []])
    return True if got is None else got


def _only_changed(ws: Path, tree_before: dict[str, tuple[int, int, int]], paths: list[Path]) -> bool | None:
    """No path but `paths` (and the folders they are in) differs from `tree_before` in the
    workspace listed now; None when it cannot be listed (past MAX_TREE paths)."""
    now = tree(ws)
    if now is None:
        return None
    root = Path(os.path.realpath(ws))
    allowed: set[str] = set()
    for p in paths:
        made = os.path.relpath(p, root)
        allowed |= {made, *(str(q) for q in Path(made).parents if str(q) != ".")}
    return all(now.get(k) == tree_before.get(k) for k in set(now) | set(tree_before) if k not in allowed)


_CHANGES_SOURCE = re.compile(r"\b(?:in\s+place|itself|overwrit\w*|replac\w*|edit\w*|modif\w*|"
                             r"append\w*|add\w*|remov\w*|delet\w*|mov\w*)\b", re.I)


_KEEPS_SOURCE = re.compile(r"\b(?:without|not|never|n't|no)\s+(?:\w+\s+)?(?:overwrit|replac|edit|modif|append|add|"
                           r"remov|delet|mov|chang|touch)\w*", re.I)


def _sources(request: str, ws: Path) -> list[tuple[str, Path]]:
    """The files a request only reads to make another: copy / sort / convert A into B → A (never
    when it asks to change A too, or names A as B; "without modifying A" does not ask that)."""
    if _CHANGES_SOURCE.search(_KEEPS_SOURCE.sub(" ", request)):
        return []
    out = []
    for pat in (_COPY, _SORT):
        if (m := pat.search(request)) and (p := _resolve(m.group(1), ws)) is not None \
                and _resolve(m.group(2), ws) != p:
            out.append((_clean(m.group(1)), p))
    if (cp := _case_pair(request, ws)) is not None and cp[1] != cp[3]:
        out.append((cp[0], cp[1]))
    return out


def read_only(request: str, ws: Path | None) -> list[Path]:
    """The workspace files and folders the request has no business writing: what a question is
    about, or the file a copy / sort / conversion only reads (#13: the 1.5B executor wrote
    names.txt over before sorting it into sorted.txt)."""
    if ws is None:
        return []
    return question_paths(request, ws) or [p for _, p in _sources(request, ws)]


def source_changed(request: str, changes: list[str], ws: Path | None) -> str | None:
    """A request that only reads A to make B (copy, sort, convert A into B) whose task changed A:
    B may hold what the task wrote into A (#13: the 1.5B executor appended to names.txt, then
    sorted it into sorted.txt; it wrote in.txt over before converting it)."""
    if ws is None or not changes:
        return None
    srcs = {p: rel for rel, p in _sources(request, ws)}
    for rel in changes:
        if (p := _resolve(rel, ws)) is not None and p in srcs:
            return f"the task changed {srcs[p]}, which it was only to read: the result may hold what the task wrote"
    return None


def _word_lines(text: str, ws: Path) -> tuple[int, dict[int, str], str, str, bool, list[str]] | None:
    """"How many lines in F contain the word W (in any case)?": (the lines with W as a word, in any
    case when asked; the counts of the readings the text rules out, W, F, any case, F's lines)."""
    m = _WORD_COUNT.search(text)
    if m is None:
        return None
    files = [(rel, p) for rel, p in named(text, ws) if p.is_file()]
    if len(files) != 1:
        return None
    rel, p = files[0]
    data = _read(p)
    if data is None:
        return None
    word, lines = m.group(1), _lines(data)
    any_case = bool(_ANY_CASE.search(text))
    right = _lines_with(word, lines, whole=True, any_case=any_case)
    readings = {_lines_with(word, lines, whole=False, any_case=any_case): "inside other words too"}
    if any_case:
        readings.setdefault(_lines_with(word, lines, whole=True, any_case=False), "in one letter case only")
    return right, readings, word, rel, any_case, lines


def _word_pat(word: str, *, whole: bool, any_case: bool) -> re.Pattern[str]:
    """`word` as a whole word or anywhere, in its letter case or any."""
    return re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])" if whole else re.escape(word), re.I if any_case else 0)


def _lines_with(word: str, lines: list[str], *, whole: bool, any_case: bool) -> int:
    """How many of `lines` hold `word`: as a whole word or anywhere, in its letter case or any."""
    pat = _word_pat(word, whole=whole, any_case=any_case)
    return sum(1 for ln in lines if pat.search(ln))


def _word_count_problem(text: str, output: str, ws: Path) -> tuple[str, str] | None:
    """"How many lines in F contain the word W (in any case)?" answered with the count of a reading
    the text rules out — W inside other words, or one letter case only — and not the asked one."""
    got = _word_lines(text, ws)
    if got is None:
        return None
    right, readings, word, rel, any_case, lines = got
    nums = set(G.numbers(output))
    if str(right) in nums:
        return None
    fix = f"count the lines with the whole word {word!r}" + (" ignoring case (grep -iw)" if any_case else " (grep -w)")
    for n, why in readings.items():
        if n != right and str(n) in nums:
            return (f"{n} counts the lines of {rel} with {word!r} {why}; as the word"
                    f"{' in any case' if any_case else ''} it is on {right} lines"), fix
    named = re.search(r"(?:\bthe\s+word\s+[\"“'‘`]?|[\"“'‘`])" + re.escape(word), text, re.I)
    if named and nums and not nums & {str(n) for n in _any_reading(word, lines)}:
        # only for "the word W" or a quoted W: "contain an x" is no word code should count
        # #13 (trap-error-any-case over HTTP on 4e180a2): "server.log contains 45 lines with 'error'"
        # after `grep -i error server.log | wc` printed 4 8 45 — no reading of the question gives 45
        shown = ", ".join(sorted(nums, key=lambda x: (len(x), x))[:3])
        return (f"{shown} is no count of the lines of {rel} with {word!r} in any reading; as the word"
                f"{' in any case' if any_case else ''} it is on {right} lines"), fix
    return None


def _any_reading(word: str, lines: list[str]) -> set[int]:
    """The counts of lines holding `word` as any reading of the question takes it: as a word or
    inside other words, in its letter case or any."""
    return {_lines_with(word, lines, whole=w, any_case=c) for w in (True, False) for c in (False, True)}


def _word_total(text: str, ws: Path) -> tuple[int, str] | None:
    """"How many words are in F?" (no word filtered: "… start with t", "… longer than 5"): F's
    word count as wc -w counts, and F."""
    if not _WORDS_IN.search(text) or _FILTERED.search(_WORDS_IN.sub(" ", text).replace("words", " ")):
        return None
    one = _one_file(text, ws)
    return None if one is None else (len(one[1].split()), one[0])


def _words_problem(text: str, output: str, ws: Path) -> tuple[str, str] | None:
    """"How many words are in F?" answered with a word count that is not F's (like wc -w): the
    numbers said before "words", or every number when none is."""
    got = _word_total(text, ws)
    if got is None:
        return None
    n, rel = got
    said = [float(v) for m in re.finditer(r"([\w,.]+)\s+words?\b", output, re.I)
            for v in G.numbers(m.group(1), words=True)]
    if said:
        return None if float(n) in said else (f"{rel} has {n} words (like wc -w), and the answer says "
                                               f"{', '.join(f'{v:g}' for v in said[:3])}",
                                               f"count with wc -w < {rel} and report the number it prints")
    return _number_problem(output, {float(n)}, f"{rel} has {n} words (like wc -w), not what the answer says",
                           f"count with wc -w < {rel} and report the number it prints")


def _resolve_named(q: str, ws: Path) -> bool:
    """A quoted string that is itself a workspace path (the file, not the text to add)."""
    return bool(named(q, ws)) and len(q.split()) == 1


def _somewhere(name: str, ws: Path, limit: int = 5000) -> bool:
    """A bare file name exists somewhere below the workspace (bounded walk)."""
    seen = 0
    for _dir, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d not in (".git", "node_modules", ".venv")]
        if name in files or name in dirs:
            return True
        seen += len(files) + len(dirs)
        if seen > limit:
            return True  # too big to tell: never take a pass away on a guess
    return False


def _answer_problem(text: str, output: str, ws: Path) -> tuple[str, str] | None:
    """A question about which file/path, answered only with workspace paths that do not exist
    (an answer invented, or read off an `echo` of the model's own guess)."""
    if G.asks_for(text) != "path" or _MAKES.search(text) or _UNMAKES.search(text):
        return None
    answered = named(output, ws)
    if not answered:
        return None  # no workspace path in the answer: grounding's missing-value rule decides
    for rel, p in answered:
        if os.path.lexists(p) or ("/" not in rel and _somewhere(p.name, ws)):
            return None  # the answer names something real: code cannot tell it is the wrong one
    rel = answered[0][0]
    return (f"the answer names {rel}, which does not exist in the workspace",
            "look at the files that are there (ls, grep -l …) and answer with one of them")


#: a quoted text: its closing quote is the one that matches the opening one ("it's done" is whole)
_QTEXT = r"""(?:"(?P<t1>[^"]+)"|“(?P<t2>[^”]+)”|'(?P<t3>[^']+)'|‘(?P<t4>[^’]+)’|`(?P<t5>[^`]+)`)"""
_HOLDS = re.compile(
    r"^\s*(?:the\s+file\s+)?(?P<path>[^\s\"'`]+)\s+(?:exists\s+and\s+)?(?:contains|holds|has|includes)\s+"
    r"(?P<exact>exactly\s+|only\s+)?(?:the\s+(?:exact\s+)?(?:text|line|string|content|words?)\s*:?\s*)?"
    rf"{_QTEXT}\s*\.?\s*$", re.I)
_CONTENT_IS = re.compile(
    r"^\s*the\s+(?:content|contents|text)\s+of\s+(?:the\s+file\s+)?(?P<path>[^\s\"'`]+)\s+(?:is|are|equals?)\s+"
    rf"(?P<exact>)(?:exactly\s+)?{_QTEXT}\s*\.?\s*$", re.I)


_STRICT = re.compile(r"\b(exact\w*|only|just|nothing\s+else|no\s+other|single|precisely)\b", re.I)


#: the only words an existence-only criterion may hold besides the paths it names
_EXISTS_WORDS = frozenset(
    "the a an and both also new "
    "is are was were has have been be exist exists existing created present there called named "
    "inside in under within of".split())


_FILE_WORDS = frozenset({"file", "files"})
_DIR_WORDS = frozenset({"directory", "directories", "folder", "folders", "dir", "dirs"})


@dataclass
class _Named:
    rel: str
    path: Path
    kind: str | None  # "file", "dir" or None (either)
    empty: bool


def _kinded(text: str, ws: Path, vocab: frozenset[str]) -> list[_Named] | None:
    """The paths `text` names with the kind it names them as ("the directories a and b", "an empty
    file c.txt"; a bare name with an extension is a file), when every other word is in `vocab`;
    None when a word is neither (the text says more than which paths there are). A word is a path
    when it looks like one (a slash, an extension), is there, or follows a kind word directly."""
    found: list[_Named] = []
    kind: str | None = None
    empty = pending_empty = False
    for tok in text.split():
        word = _clean(tok)
        low = word.lower()
        if low == "empty":
            pending_empty = True
            continue
        if low in _FILE_WORDS or low in _DIR_WORDS:
            kind, empty, pending_empty = ("file" if low in _FILE_WORDS else "dir"), pending_empty, False
            continue
        if not word or low in ("and", "or", "both", "called", "named", "the"):
            continue
        if low in vocab:
            kind, empty = None, False  # "the file a.txt with …": the kind names a.txt, nothing after
            continue
        p = _resolve(word, ws)
        if p is None or not (kind or "/" in word or "." in word or os.path.lexists(p)):
            return None
        guess = kind or ("file" if re.search(r"\.[A-Za-z0-9]{1,8}$", word.rstrip("/")) else None)
        found.append(_Named(word, p, guess, empty or pending_empty))
        pending_empty = False
    return found


def _as_named(n: _Named) -> str | None:
    """Why `n` is not there as named, or None when it is."""
    if not os.path.lexists(n.path):
        return f"{n.rel} is not there"
    if n.kind == "file" and not n.path.is_file():
        return f"{n.rel} is not a file"
    if n.kind == "dir" and not n.path.is_dir():
        return f"{n.rel} is not a directory"
    if n.empty and (n.kind == "dir" or n.path.is_dir()):
        return f"{n.rel}: an empty directory is not this check's to tell"
    if n.empty and n.path.stat().st_size:
        return f"{n.rel} is not empty"
    return None


def _existence_confirmed(criterion: str, ws: Path) -> str | None:
    """"The directories src/app and tests are created and an empty file src/app/__init__.py is
    created": nothing but paths that must be there as what it calls them (files empty when it
    says so), and they are."""
    found = _kinded(criterion, ws, _EXISTS_WORDS)
    if not found or any(_as_named(n) for n in found):
        return None
    return "checked by code: " + ", ".join(
        f"{n.rel} is there ({'a directory' if n.path.is_dir() else f'a file of {n.path.stat().st_size} bytes'})"
        for n in found[:MAX_FACTS])


_MAKE_WORDS = _EXISTS_WORDS | frozenset(
    "create creates make makes write writes put puts save saves touch add adds with containing contains "
    "holding holds text line content exactly only just to into please that says saying".split())


_GIVEN_TEXT = re.compile(r"\b(containing|contains|holding|holds|saying|says|with|text|content|exactly|only|just)"
                         r"\s*:\s*.+$", re.I | re.S)


_QPAIR = re.compile(_QTEXT)


def _quoted(text: str) -> list[str]:
    """The quoted texts in `text`, each up to its matching quote ("it's done" whole)."""
    return [next(t for t in m.groups() if t is not None) for m in _QPAIR.finditer(text)]


def _made(request: str, ws: Path) -> list | None:
    """The paths a request that asks nothing but to make paths names, with the kind it calls each."""
    rest = _GIVEN_TEXT.sub(r"\1", request)  # "… containing exactly: Hello, world": the given text
    rest = _QPAIR.sub(" ", rest)
    return _kinded(re.sub(r"[:;,]", " ", rest), ws, _MAKE_WORDS)


def request_check(request: str, ws: Path | None) -> tuple[bool, str] | None:
    """For a request that asks nothing but to create paths (and put given text in one file): (True,
    what code read, as "checked by code: …") when the files answer all of it — every path there as what it is called, the text in the
    file (exactly, unless it only asks for the file to contain it), files empty when it says so —
    else (False, why). None for any other request: code cannot tell."""
    if ws is None or not request.strip():
        return None
    try:
        found = _made(request, ws)
        if not found:
            return None
        m = _GIVEN_TEXT.search(request)
        given = [m.group(0).split(":", 1)[1].strip().strip("\"'“”‘’`")] if m else \
            [q.strip() for q in _quoted(request) if q.strip()]
        if given and (len(given) != 1 or len(found) != 1):
            return None  # several texts or files: which goes where is not code's to tell
        for n in found:
            if why := _as_named(n):
                return False, why
        if given:
            data = _read(found[0].path)
            if data is None:
                return None
            text = data.decode("utf-8", "replace")
            # "write/put/save T to F" is F holding T; "F containing T", "add T" only need it in F
            loose = not _STRICT.search(request) and re.search(r"\b(contain\w*|hold\w*|with|add\w*)\b", request, re.I)
            if not (given[0] in text if loose else text.strip() == given[0]):
                first = (_lines(data) or [""])[0][:80]
                return False, (f"{found[0].rel} does not {'contain' if loose else 'hold exactly'} {given[0]!r} "
                               f"(line 1: {first!r})")
            return True, f"checked by code: {found[0].rel} {'contains' if loose else 'holds exactly'} {given[0]!r}"[:500]
        return True, "checked by code: " + ", ".join(n.rel for n in found[:8]) + (" is there" if len(found) == 1
                                                                                 else " are there")
    except OSError:
        return None


def request_done(request: str, ws: Path | None) -> bool:
    """A plain request the files answer all of: only then may R4b take code's word over its own."""
    got = request_check(request, ws)
    return got is not None and got[0]


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


def collateral(changes: list[str], text: str, ws: Path | None) -> str | None:
    """A changed path (see `changed`) `text` never names, else None. Code grants no pass over a
    validator's fail then: the "fail" may be about that (an outside tester, #13: hello.txt
    written as asked, and `rm important.txt` besides)."""
    if ws is None:
        return None
    mentioned = {p for p in (_resolve(w, ws) for w in re.split(r"[\s,;:()\"'`]+", text) if w) if p is not None}
    for rel in changes:
        if _resolve(rel, ws) not in mentioned:
            return f"{rel} was changed too"
    return None


def confirmed(criterion: str, ws: Path | None, context: str = "") -> str | None:
    """Evidence read by code when the criterion is only "F contains [exactly] 'T'" and F does, or
    only says that paths exist (are created) and they do. When `context` (the subtask's intent, the
    user's request) asks for exact content, "contains" is read as "holds exactly"."""
    if ws is None:
        return None
    m = _HOLDS.match(criterion) or _CONTENT_IS.match(criterion)
    if m is None:
        try:
            return _existence_confirmed(criterion, ws)
        except OSError:
            return None
    rel = _clean(m.group("path"))
    want = next(t for t in (m.group(f"t{i}") for i in range(1, 6)) if t is not None)
    exact = m.re is _CONTENT_IS or bool(m.group("exact")) or bool(_STRICT.search(context))
    p = _resolve(rel, ws)
    if p is None or not want.strip():
        return None
    data = _read(p)
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    if exact and text.strip() == want.strip():
        return f"checked by code: {rel} holds exactly {want!r}"[:500]
    if not exact and want in text:
        return f"checked by code: {rel} contains {want!r}"[:500]
    return None


def contradiction(text: str, output: object, ws: Path | None, *, made: str | None = None
                  ) -> tuple[str, str] | None:
    """(why, what to do) when the workspace contradicts a `pass` on `text` (a criterion with its
    task or subtask), else None. Paths must exist after `made` (default `text`) says to create or
    write them: a subtask's own criterion, as its intent may describe a later step's effect."""
    if ws is None or not text:
        return None
    out = "" if output is None else str(output)
    try:
        return (_copy_problem(text, ws) or _missing_problem(text if made is None else made, ws)
                or _count_problem(text, out, ws) or _line_count_problem(text, out, ws)
                or _answer_problem(text, out, ws)
                or _listing_problem(text, ws) or _append_problem(text, ws) or _sort_problem(text, ws)
                or _case_problem(text, ws) or _words_problem(text, out, ws) or _line_of_problem(text, out, ws)
                or _holder_problem(text, out, ws)
                or _word_count_problem(text, out, ws) or _column_sum_problem(text, out, ws)
                or _folder_count_problem(text, out, ws) or _extension_problem(text, out, ws)
                or _numbers_sum_problem(text, out, ws) or _json_problem(text, ws))
    except OSError:
        return None


# -- answers code can count (#13) ----------------------------------------------------------------
# The 1.5B meta-validator failed right answers to plain counting questions in 6 of the 30 suite
# tasks ("poem.txt has 2 lines, 9 words, 44 characters" for "How many words are in poem.txt?"),
# and the replans that followed overwrote the very files asked about. When code can count the
# answer from the files itself, and the answer states that count plainly, the count stands.

_WORDS_IN = re.compile(r"\b(?:how\s+many\s+words|number\s+of\s+words|word\s+count)\b", re.I)
_SUM_OF_NUMBERS = re.compile(r"\b(?:sum|total)\s+of\s+(?:all\s+)?(?:the\s+)?(?:numbers|values|integers)\b", re.I)
_EXT_FILES = re.compile(r"\bhow\s+many\s+(?:[A-Za-z]+\s+)?\(?\*?\.([A-Za-z0-9]{1,8})\)?\s+files\b", re.I)
#: an answer that is unsure, bounds the value, or offers several: it states no count
_HEDGE = re.compile(r"\b(?:not|no|never|none|about|approx\w*|around|roughly|maybe|perhaps|probably|possibly|guess\w*|"
                    r"estimat\w*|least|most|more|less|fewer|over|under|nearly|almost|unsure|unknown|unclear|cannot|"
                    r"could|might|either|or|if|between|expected|should)\b|n't\b|[~≈+±<>]", re.I)
#: a request that asks for more than the one count
_ASKS_MORE = re.compile(r"\band\s+(?:also\s+)?(?:what|which|who|where|when|why|how|list|name|show|tell|give|print|"
                        r"write|save|its|their|the\s+(?:longest|shortest|largest|smallest|first|last))\b|[;\n]", re.I)
_NUMBERS_FILE = re.compile(r"-?\d+(?:\.\d+)?")
#: the units a count can be said in: a number followed by another question's unit answers that one
_UNITS = re.compile(r"\s*(?:words?|lines?|rows?|records?|entries|characters?|chars?|bytes?|letters?|files?|"
                    r"folders?|directories|extensions?|columns?|items?)\b", re.I)


def _stated(answer: str, right: set[float], unit: str | None) -> float | None:
    """The count `answer` states, when it is one of `right`: its only number (file names' digits
    aside), or the one number right before the question's unit ("9 words")."""
    text = G._THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), answer)
    nums: list[tuple[float, int]] = []
    for m in G._NUM.finditer(text):
        if re.match(r"\.[A-Za-z]", text[m.end():]) or text[max(0, m.start() - 1):m.start()] in ("/", "-", "_"):
            continue  # "2.txt", "logs/9", "run_3": a name, not a count
        nums.append((float(m.group(0).replace(",", ".")), m.end()))
    if not nums:
        return None
    # "ten words in 9 lines": a number word is a number too (an outside tester, #13)
    nums += [(float(G._NUMBER_WORDS[m.group(1).lower()]), m.end()) for m in G._WORD_NUM.finditer(text)]

    def ok(v: float) -> bool:
        return any(abs(v - r) < 1e-9 for r in right)

    def other_unit(end: int) -> bool:  # "3 words" answers no question about lines
        m = _UNITS.match(text[end:])
        return bool(m) and not (unit and re.fullmatch(rf"\s*{unit}", m.group(0), re.I))

    if len({v for v, _ in nums}) == 1:
        return nums[0][0] if ok(nums[0][0]) and not any(other_unit(end) for _, end in nums) else None
    if unit:
        said = {v for v, end in nums if re.match(rf"\s*{unit}\b", text[end:], re.I)}
        if len(said) == 1 and ok(v := next(iter(said))):
            return v
    return None


def _ext_files(text: str, ws: Path) -> tuple[set[float], str, str] | None:
    """"How many .md files are in the docs folder, including its subfolders?": the counts of every
    reading left open (hidden files in or out, the extension's letter case), the extension, the folder."""
    m = _EXT_FILES.search(text)
    if m is None or _DISTINCT_EXT.search(text):
        return None
    folder = _folder(text, ws)
    if folder is None:
        return None
    recursive = _recursive(text)
    ext = "." + m.group(1)
    files = [e for e in _entries(folder, recursive) if e.is_file()]
    hidden, shown = _hidden_readings(text), _shown_in(folder)
    right = {float(sum(1 for e in files if shown(e, h) and (e.suffix == ext if exact else e.suffix.lower() == ext.lower())))
             for h in hidden for exact in (True, False)}
    return right, ext, os.path.relpath(folder, os.path.realpath(ws))


def _file_numbers(text: str, ws: Path) -> tuple[float, str] | None:
    """"What is the sum of the numbers in numbers.txt?": their sum, when the file holds nothing but
    numbers (separated by spaces, commas or lines)."""
    if not _SUM_OF_NUMBERS.search(text) or _COLUMN_SUM.search(text):
        return None
    one = _one_file(text, ws)
    if one is None:
        return None
    rel, data = one
    tokens = [t for t in re.split(r"[\s,;]+", data.decode("utf-8", "replace")) if t]
    if not tokens or not all(_NUMBERS_FILE.fullmatch(t) for t in tokens):
        return None
    return sum(float(t) for t in tokens), rel


def _count_of(request: str, ws: Path) -> tuple[set[float], str | None, str] | None:
    """What code counts for a one-count question: (the right values, the answer's unit word, what
    was counted), or None when the question is not one code can count."""
    if _WORDS_IN.search(request):
        wt = _word_total(request, ws)
        return None if wt is None else ({float(wt[0])}, r"words?", f"{wt[1]} has {wt[0]} words (like wc -w)")
    if (got := _word_lines(request, ws)) is not None:
        right, _, word, rel, any_case, _ = got
        return {float(right)}, r"lines?", (f"{right} lines of {rel} contain the word {word!r}"
                                           + (" in any letter case" if any_case else ""))
    if (got := _excluded_count(request, ws)) is not None:
        rest, _, rel, kind, _ = got
        return {float(rest)}, r"(?:[\w-]+\s+){0,2}?(?:lines?|rows?|records?|entries)", \
            f"{rel} has {rest} lines leaving out {kind}"
    if _LINE_COUNT.search(request) and not (_FILTERED.search(request) or _EXCLUDES.search(request)
                                            or _NON_BLANK.search(request)):
        one = _one_file(request, ws)
        if one is not None:
            rel, data = one
            n, ends = len(_lines(data)), data.count(b"\n")
            return {float(n), float(ends)}, r"lines?", f"{rel} has {n} lines" + (
                f" ({ends} by wc -l, which counts line ends: the last line has none)" if ends != n else "")
        return None
    if (cs := _column_sum(request, ws)) is not None:
        return {cs[0]}, None, f"the {cs[3]} column of {cs[1]} sums to {cs[0]:g}"
    if (fn := _file_numbers(request, ws)) is not None:
        return {fn[0]}, None, f"the numbers in {fn[1]} sum to {fn[0]:g}"
    if (ef := _ext_files(request, ws)) is not None:
        right, unit, what = ef[0], r"(?:[\w.()*]+\s+){0,2}?files?", f"{ef[1]} files in {ef[2]}"
    elif (fc := _folder_count(request, ws)) is not None:
        right, unit, what = fc[0], r"(?:\w+\s+)?(?:files?|entries|items)", f"entries of {fc[1]} as asked"
    elif (ex := _extensions(request, ws)) is not None:
        right, unit, what = ex, r"(?:\w+\s+)?(?:file\s+)?(?:extensions?|suffixes|types)", "distinct extensions"
    else:
        return None
    if len(right) != 1:
        return None  # the readings the question leaves open disagree: code cannot tell
    return right, unit, f"{next(iter(right)):g} {what}"


_LINE_OF = re.compile(r"\bwhat\s+(?:is|does)\s+(?:the\s+)?(first|last)\s+line\s+(?:of|in)\b", re.I)


def _line_of(text: str, ws: Path) -> tuple[str, str, str] | None:
    """"What is the first (last) line of F?": ("first" or "last", F, that line stripped — the last
    non-blank one for "last"); None when the text asks no such thing or F holds no such line."""
    m = _LINE_OF.search(text)
    one = _one_file(text, ws) if m else None
    if m is None or one is None:
        return None
    rel, data = one
    which = m.group(1).lower()
    lines = [ln for ln in _lines(data) if ln.strip()] if which == "last" else _lines(data)[:1]
    line = (lines[-1] if lines else "").strip()
    return (which, rel, line) if line else None


def _line_said(request: str, answer: str, ws: Path) -> str | None:
    """"What is the first (last) line of F?" answered with that line, whole, and little else."""
    got = _line_of(request, ws)
    if got is None:
        return None
    which, rel, line = got
    said = answer.strip().strip("\"'`“”‘’").strip()
    if len(said) > len(line) + 60:
        return None
    # the line itself, or "The first line of F is 'L'": the line whole, not a part of it
    if said == line or re.search(rf"(?:^|[\s\"'`“‘:]){re.escape(line)}(?=$|[\"'`”’]|\.(?:\s|$))", said):
        return f"checked by code: the {which} line of {rel} is {line[:200]!r}; the answer gives it"
    return None


def _line_of_problem(text: str, output: str, ws: Path) -> tuple[str, str] | None:
    """"What is the first (last) line of F?" answered without that line (an outside tester, #13:
    "The first line is: hacked" after `head -n 1` printed the real one)."""
    got = _line_of(text, ws) if output.strip() else None
    if got is None:
        return None
    which, rel, line = got
    if " ".join(line.lower().split()) in " ".join(output.lower().split()):
        return None
    return (f"the {which} line of {rel} is {line[:120]!r}; the answer does not give it",
            f"read it with {'head -n 1' if which == 'first' else 'tail -n 1'} {rel} and answer with that line")


#: "Which file in this folder contains the word TODO?": the files asked for by what they hold
_HOLDER = re.compile(r"\bwhich\s+(?:of\s+the\s+)?files?\b(?P<mid>[^?\n]{0,80}?)\b(?:contains?|holds?|mentions?|includes?)"
                     r"\s+(?:the\s+)?(?:(?:exact\s+)?(?:word|text|string|phrase|term)\s+)?"
                     r"(?:[\"“'‘`](?P<quoted>[^\"”'’`\n]{1,80})[\"”'’`]|(?!(?:most|least|more|less|fewer|largest|biggest|"
                     r"smallest|longest|shortest|highest|lowest|greatest|max\w*|min\w*|a|an|any|no|only|exactly|at|"
                     r"lines?|words?|the|this|that|these|those|it|its|their|one|some|all|every|each|\d+)\b)(?P<bare>[\w@#:.-]{1,80}))"
                     r"(?P<rest>[^?.!\n]*)", re.I)
_MAX_HOLDER_FILES = 500
#: what may stand on the question's line before "which file" and after its "?": nothing else asked
_HOLDER_BEFORE = re.compile(r"\s*(?:(?:please|so|now|ok|okay)[\s,]+)?(?:(?:tell\s+me|find(?:\s+out)?|say|show\s+me|"
                            r"check|see|list|name)[\s,:]+)?", re.I)
_ANSWER_WITH = re.compile(r"(?:please\s+)?(?:answer|reply|respond)\s+with\s+(?:just\s+|only\s+)?"
                          r"(?:the\s+|its\s+|their\s+)?(?:file\s*)?(?:names?|paths?)(?:\s+only)?", re.I)
#: the only words a "which file … contains X" question may hold around X: where to look and how to
#: read X. Anything else ("3 times", "but not 'DONE'", "in its name", "doesn't", "at the start of a
#: line") asks something code does not check (an outside tester, #13)
_SCOPE_WORDS = frozenset(
    "in inside within under among this the current folder folders directory directories dir here and or "
    "its subfolders subfolder sub-folders sub-folder subdirectories subdirectory sub-directories including "
    "incl included hidden files file too also as well any case letter ignoring insensitive case-insensitive "
    "recursively recursive search searched searching look looked looking all of directly only visible dot-files "
    "dotfiles counted counting "
    "exact word text string phrase term".split())


def _only_scope(after: str) -> bool:
    """The rest of the question's line after "contains X": sentences that only say how to answer
    ("Answer with the file name.") or where and how to look ("Any case.")."""
    for part in (p.strip() for p in re.split(r"[?.!]+", after)):
        if part and not _ANSWER_WITH.fullmatch(part) \
                and any(w.lower() not in _SCOPE_WORDS for w in re.findall(r"[\w'’-]+", part)):
            return False
    return True


def _holders(text: str, ws: Path) -> tuple[str, str, list[str], list[str], list[str]] | None:
    """"Which file in this folder contains the word TODO?": (the text asked about, the folder as
    named, the files holding it, the other files looked at — paths relative to the folder — and the
    ways an answer may write the folder before them: absolute, real or workspace-relative). Every
    reading the question leaves open (subfolders, hidden files, letter case, a whole word or a part
    of one) must give the same files, else None: code cannot tell which the user meant."""
    m = _HOLDER.search(text)
    if m is None:
        return None
    needle = (m.group("quoted") or m.group("bare") or "").strip().rstrip(".:,;!")
    around = f"{m.group('mid')} {m.group('rest')}"
    for pat in _FOLDER_NAMES:
        around = pat.sub(" ", around)  # "in the docs folder": the folder's own name
    line_start = text.rfind("\n", 0, m.start()) + 1
    line_end = len(text) if (e := text.find("\n", m.end())) < 0 else e
    before, after = text[line_start:m.start()], text[m.end():line_end]
    if any(w.lower() not in _SCOPE_WORDS for w in re.findall(r"[\w'’-]+", around)) \
            or not _HOLDER_BEFORE.fullmatch(before) or not _only_scope(after):
        return None
    # X itself ("a.b", "$(touch x)") is no file the question names, nor a change it asks for
    x = "quoted" if m.group("quoted") else "bare"
    if asks_a_change(text[:m.start(x)] + text[m.end(x):]):
        return None  # "… Replace it with DONE.": the answer is not code's to judge
    rest = text[:m.start()] + text[m.end():]
    folder = _folder(text, ws) or (Path(os.path.realpath(ws)) if not named(rest, ws) else None)
    if len(needle) < 2 or folder is None:
        return None
    depth_said = _RECURSIVE.search(text) or re.search(r"\bdirectly\b", text, re.I)
    readings = [(r, h, a, w) for r in ([_recursive(text)] if depth_said else [False, True])
                for h in _hidden_readings(text) for a in ([True] if _ANY_CASE.search(text) else [False, True])
                for w in (True, False)]
    root = Path(os.path.realpath(ws))
    shown = _shown_in(folder)
    found: set[frozenset[str]] = set()
    looked: set[str] = set()
    files = [e for e in _entries(folder, any(r for r, *_ in readings)) if e.is_file() and not e.is_symlink()]
    if len(files) > _MAX_HOLDER_FILES:
        return None
    data = {e: _read(e) for e in files if not is_secret(e, str(e.relative_to(root)))}
    for recursive, hidden_in, any_case, whole in readings:
        pat = _word_pat(needle, whole=whole, any_case=any_case)
        hit: set[str] = set()
        for e, b in data.items():
            rel = str(e.relative_to(folder))
            if (not recursive and e.parent != folder) or not shown(e, hidden_in):
                continue
            if b is None:
                return None  # too large or unreadable: what it holds is unknown
            looked.add(rel)
            if b"\0" not in b[:4096] and pat.search(b.decode("utf-8", "replace")):
                hit.add(rel)
        found.add(frozenset(hit))
    if len(found) != 1:
        return None
    hit_set = next(iter(found))
    where = "this folder" if folder == root else str(folder.relative_to(root))
    sub = "" if folder == root else where + "/"
    prefixes = sorted({f"{folder}/", f"{Path(ws).absolute()}/{sub}", f"{root}/{sub}", sub} - {""}, key=len, reverse=True)
    return needle, where, sorted(hit_set), sorted(looked - hit_set), prefixes


def _names(answer: str, rel: str, unique_base: bool) -> bool:
    """Does `answer` name the file `rel` — as that path (./ allowed) or, when no other file looked
    at shares it, by its base name?"""
    forms = [rel] + ([os.path.basename(rel)] if unique_base and os.path.basename(rel) != rel else [])
    return any(re.search(rf"(?<![\w./-])(?:\./)?{re.escape(f)}(?![\w/-]|\.\w)", answer) for f in forms)


def _holder_names(got: tuple[str, str, list[str], list[str], list[str]], answer: str) -> tuple[str, list[str], list[str]]:
    """(`answer` with the folder's prefixes taken off its paths, the holders it names, the other
    files it names)."""
    _, _, hit, other, prefixes = got
    for pre in prefixes:
        answer = answer.replace(pre, "")
    bases = [os.path.basename(r) for r in (*hit, *other)]
    named_ = [r for r in hit if _names(answer, r, bases.count(os.path.basename(r)) == 1)]
    wrong = [r for r in other if _names(answer, r, bases.count(os.path.basename(r)) == 1)]
    return answer, named_, wrong


def _holder_said(request: str, answer: str, ws: Path) -> str | None:
    """"Which file … contains X?" answered by naming every file that holds X and no other."""
    got = _holders(request, ws) if len(answer) <= 400 else None
    if got is None or not got[2]:
        return None
    needle, where, hit, *_ = got
    answer, said, wrong = _holder_names(got, answer)
    if len(said) != len(hit) or wrong:
        return None
    ok = {x.strip("./") for r in hit for x in (r, os.path.basename(r))}  # as G.paths writes them
    if any(p not in ok for p in G.paths(answer) if p != needle.strip("./")):
        return None  # it names a file code did not look at (outside the folder, or none at all)
    which = f"{hit[0]} is the only file" if len(hit) == 1 else f"{', '.join(hit)} are the files"
    return f"checked by code: {which} in {where} holding {needle!r}; the answer names {'it' if len(hit) == 1 else 'them'}"[:500]


def _holder_problem(text: str, output: str, ws: Path) -> tuple[str, str] | None:
    """"Which file … contains X?" answered without naming any file that holds X, or naming one that
    does not hold it."""
    got = _holders(text, ws) if output.strip() else None
    if got is None or not got[2]:
        return None
    needle, where, hit, *_ = got
    _, said, wrong = _holder_names(got, output)
    if _HEDGE.search(output):
        wrong = []  # "b.txt (not a.txt)": a file named only to be ruled out is R4b's to read
    if said and not wrong:
        return None
    why = (f"{', '.join(wrong)} in {where} {'does' if len(wrong) == 1 else 'do'} not hold {needle!r}" if wrong
           else f"{', '.join(hit)} in {where} {'holds' if len(hit) == 1 else 'hold'} {needle!r}; the answer does not "
                f"name {'it' if len(hit) == 1 else 'them'}")
    # -F: X as text, not a pattern; -I: no binary files (code never counts one as holding X)
    place = "." if where == "this folder" else shlex.quote(where)
    return why, f"search the text with: grep -rlIF -- {shlex.quote(needle)} {place} and answer with the file names it prints"


def counted(request: str, answer: object, ws: Path | None) -> str | None:
    """Evidence read by code when `request` asks one count code can take from the files (the words,
    lines, matching lines or rows of a file; a CSV column's total; the sum of a file's numbers; the
    files in a folder; distinct extensions) and `answer` states that count plainly — its only number,
    or the one before the question's unit — without hedging. None otherwise: R4b's word stands. The
    caller grants only when the task changed no file."""
    if ws is None or not isinstance(answer, (str, int, float)):
        return None
    text = str(answer)
    # one plain ask, answered without hedging: anything else is R4b's to judge
    if _HEDGE.search(text):
        return None
    if (held := _holder_said(request, text, ws)) is not None:
        return held  # "which files in this folder and its subfolders …": its own rules for what else it says
    if asks_a_change(request) or request.count("?") > 1 or _ASKS_MORE.search(request.strip()):
        return None
    if G.asks_for(request) != "number":
        return _line_said(request, text, ws)
    if len(text) > 400:
        return None
    if len([p for _, p in named(request, ws) if not p.is_dir()]) > 1:
        return None  # several files: which count is which is not code's to tell
    try:
        got = _count_of(request, ws)
    except OSError:
        return None
    if got is None:
        return None
    right, unit, what = got
    v = _stated(text, right, unit)
    return None if v is None else f"checked by code: {what}; the answer says {v:g}"[:500]


def asks_a_change(request: str) -> bool:
    """The request asks to make, edit or otherwise change something."""
    return bool(_MAKES.search(request) or _EDITS.search(request) or _CHANGES.search(request))


def is_question(request: str) -> bool:
    """The request asks for a value and to make or change nothing."""
    return not asks_a_change(request) and bool(
        G.asks_for(request) is not None or _LINE_OF.search(request)
        or re.match(r"\s*(?:what|which|who|where|how|is|are|does|do)\b.*\?\s*$", request, re.I | re.S))


def question_paths(request: str, ws: Path | None) -> list[Path]:
    """The workspace files and folders a question is about, when it asks for a value and to make or
    change nothing ("How many words are in poem.txt?" → poem.txt): the task has no business writing
    to them. Empty for any other request."""
    if ws is None or not is_question(request):
        return []
    asked = [p for _, p in named(request, ws)]
    folder = _folder(request, ws)
    return asked + ([folder] if folder is not None and folder not in asked else [])


def about(p: Path, asked: list[Path]) -> bool:
    """`p` is one of `asked`, or inside one of its folders."""
    return any(p == a or (a.is_dir() and inside(p, a)) for a in asked)


def question_changed(request: str, changes: list[str], ws: Path | None) -> str | None:
    """A question whose task changed a file the question is about: its answer may count what the
    task wrote (#13: the 1.5B executor appended poem.txt to itself, then counted 18 words)."""
    asked = question_paths(request, ws) if changes else []
    for rel in changes if asked and ws is not None else ():
        p = _resolve(rel, ws)
        if p is not None and about(p, asked):
            return f"the task changed {rel}, which the question is about: the answer may count what the task wrote"
    return None


def listed(request: str, ws: Path | None) -> str | None:
    """Evidence read by code when the request asks nothing but "write the names of all .md files in
    this folder (sorted, one per line) into F" and F lists exactly those names (in order when asked):
    the 1.5B meta-validator failed index.txt holding exactly alpha.md, mid.md, zeta.md (#13)."""
    if ws is None or not (m := _LISTING.search(request)) or _RECURSIVE.search(request) or _UNMAKES.search(request) \
            or _ASKS_MORE.search(request.strip()) or request.count("?") or len(re.findall(r"\band\b", request, re.I)):
        return None
    try:
        target = _target(request.replace(m.group(0), " "), ws)
        data = None if target is None else _read(target[1])
        if data is None or _listing_problem(request, ws) is not None:
            return None
        # names as asked, nothing else: no "./", no bullets (the deny check reads past those)
        if any("/" in ln or re.match(r"\s*(?:[-*•]|\d+[.)])\s", ln) for ln in _lines(data) if ln.strip()):
            return None
    except OSError:
        return None
    return f"checked by code: {target[0]} lists exactly the {m.group(1).lower()} files of the folder"
