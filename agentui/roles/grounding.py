"""Code checks that keep validators honest: a verdict is only as good as what
the tools actually returned.

- `grounded(evidence, output, tool_text)`: a `pass` on a verifiable criterion must quote something
  found (normalised substring) in the recorded tool outputs — the executor's own final text does
  not count — or the values the output reports (numbers, paths) must all appear there. A
  criterion asking for a number needs a number some tool printed, or the count of the lines a tool
  printed in full (a count read off a listing).
- `missing_value(criterion, output, tool_text)`: a criterion asking for a value (a number, a
  path, a name) cannot pass on an output that contains none.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from agentui.contracts import ToolCallRecord

_WS = re.compile(r"\s+")
_NUM = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)?(?![\w])")
_PATH = re.compile(r"(?:[\w.~-]*/[\w./-]+|[\w-]+\.[A-Za-z][\w]{0,6})")
_QUOTED = re.compile(r"[\"“'‘`]([^\"”'’`]{3,})[\"”'’`]")
_WORD = re.compile(r"[\w.-]{2,}")

_ASKS_NUMBER = re.compile(
    r"\b(how many|number|count|integer|total|sum|amount|average|mean|percentage|numeric|digits?)\b", re.I)
_ASKS_PATH = re.compile(r"\b(path|file ?name|which file|directory name|folder name)\b", re.I)
_ASKS_NAME = re.compile(r"\b(name|named|called)\b", re.I)
_COMMON = frozenset(
    "the a an is are was were be been of in on at to for from with by and or not no it its this that "
    "these those there here file files folder directory name named called which value result answer "
    "output largest smallest biggest first last one has have had contains contain given shown is "
    "reported printed found listed".split())


def norm(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed, outer quotes and punctuation stripped."""
    t = unicodedata.normalize("NFKC", text).casefold()
    return _WS.sub(" ", t).strip(" \t\n\"'`“”‘’.,;:!?()[]{}")


def tool_text(calls: Iterable[ToolCallRecord]) -> str:
    """What the tools returned (evidence and errors), normalised for matching."""
    return norm("\n".join(f"{c.evidence or ''}\n{c.error or ''}" for c in calls))


def call_heads(calls: Iterable[ToolCallRecord]) -> str:
    """Each successful call with its exit code: an effect like `rm x` prints nothing, and the call
    succeeding is the evidence."""
    return norm("\n".join(f"{c.tool} {c.target} → ok (exit {c.exit_code if c.exit_code is not None else 0})"
                           for c in calls if c.ok))


def _fragments(evidence: str) -> list[str]:
    frags = [evidence, *(m.group(1) for m in _QUOTED.finditer(evidence))]
    frags.extend(re.split(r"\n|…|\.\.\.|\s→\s|\s\|\s", evidence))
    return [f for f in (norm(x) for x in frags) if len(f) >= 3 and any(ch.isalnum() for ch in f)]


_THOUSANDS = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w,]|\.\d)")
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
_WORD_NUM = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", re.I)


def numbers(text: str, *, words: bool = False) -> list[str]:
    """The numbers `text` states: digits ("1,200" is twelve hundred, "3,5" three and a half), and
    with `words` the words zero to twenty too (an answer's "three lines")."""
    text = _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)
    out = [m.group(0).replace(",", ".") for m in _NUM.finditer(text)]
    return out + ([_NUMBER_WORDS[m.group(1).lower()] for m in _WORD_NUM.finditer(text)] if words else [])


def paths(text: str) -> list[str]:
    return [p.strip("./") or p for p in _PATH.findall(text) if any(ch.isalpha() for ch in p)]


def _has_number(n: str, hay: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(n)}(?![\w]|\.\d)", hay) is not None


def _values_found(text: str, hay: str, heads: str = "") -> bool:
    """`text` reports at least one value (number or path) and every one of them is in `hay` (a
    path may also be one a successful call named)."""
    nums, ps = numbers(text), paths(text)
    if not nums and not ps:
        return False
    return all(_has_number(n, hay) for n in nums) and all(norm(p) in hay or norm(p) in heads for p in ps)


def _listed(n: str, calls: list[ToolCallRecord]) -> bool:
    """`n` is the number of lines a successful call printed in full (a count read off a listing:
    `ls d` printed 4 names → "d has 4 entries")."""
    if not n.isdigit():
        return False
    for c in calls:
        if c.ok and c.evidence and "\n… [" not in c.evidence:
            # `ls -a` lists . and ..: they are no entries
            if sum(1 for ln in c.evidence.splitlines() if ln.strip() not in ("", ".", "..", "./", "../")) == int(n):
                return True
    return False


#: at most this many distinct numbers a tool printed are combined by `_combined`
MAX_COMBINED = 12


def _combined(n: str, calls: list[ToolCallRecord]) -> bool:
    """`n` is arithmetic on numbers a successful call printed: the sum, difference or product of two, a square,
    or the sum of them all (a model that adds two printed counts in its head is grounded; the task
    criteria's checks confirm the final value)."""
    try:
        want = float(n)
    except ValueError:
        return False
    seen: list[float] = []
    for m in numbers("\n".join(c.evidence or "" for c in calls if c.ok)):
        try:
            v = float(m)
        except ValueError:
            continue
        if v not in seen:
            seen.append(v)
        if len(seen) >= MAX_COMBINED:
            break
    if len(seen) < 2:
        return any(abs(v * v - want) < 1e-9 for v in seen)
    if abs(sum(seen) - want) < 1e-9:
        return True
    for i, a in enumerate(seen):
        if abs(a * a - want) < 1e-9:
            return True
        for b in seen[i + 1:]:
            if any(abs(x - want) < 1e-9 for x in (a + b, a - b, b - a, a * b)):
                return True
    return False


def number_found(output: str, calls: list[ToolCallRecord]) -> bool:
    """Some number in `output` is one a tool printed, the count of the lines one printed, or
    arithmetic on printed numbers (`_combined`)."""
    outs = tool_text(calls)
    return any(_has_number(n, outs) or _listed(n, calls) or _combined(n, calls) for n in numbers(output, words=True))


def grounded(evidence: str, output: Any, calls: list[ToolCallRecord], *, wants_number: bool = False,
             world: str = "") -> bool:
    """Is a `pass` backed by what the tools returned? The model's quote must be found in a tool
    output (or name a call that succeeded, or quote what code found in the workspace: `world`),
    or every value the output reports must be. When the criterion asks for a number, the output's
    number must be one a tool printed."""
    outs, heads = tool_text(calls), call_heads(calls)
    if not outs and not heads:
        return False
    heads = f"{heads}\n{norm(world)}" if world else heads
    out = "" if output is None else str(output)
    if wants_number and not number_found(out, calls):
        return False
    if any(f in outs or f in heads for f in _fragments(evidence or "")):
        return True
    return _values_found(norm(evidence or ""), outs, heads) or _values_found(norm(out), outs, heads)


def asks_for(criterion: str) -> str | None:
    """The kind of value a criterion asks for: "number", "path", "name" or None."""
    if _ASKS_NUMBER.search(criterion):
        return "number"
    if _ASKS_PATH.search(criterion):
        return "path"
    if _ASKS_NAME.search(criterion):
        return "name"
    return None


def missing_value(criterion: str, output: Any, hay: str | None = None) -> str | None:
    """Why `output` cannot meet a criterion that asks for a value, or None when it might."""
    kind = asks_for(criterion)
    out = "" if output is None else str(output)
    if kind == "number" and not numbers(out, words=True):
        return "it asks for a number and the output contains none"
    if kind == "path" and not paths(out):
        return "it asks for a path or file name and the output contains none"
    if kind == "name":
        words = [w for w in (norm(x) for x in _WORD.findall(out)) if w and w not in _COMMON]
        if not words:
            return "it asks for a name and the output names nothing"
        if hay is not None and hay and not any(w in hay for w in words):
            return "it asks for a name and nothing the output names appears in what the tools returned"
    return None
