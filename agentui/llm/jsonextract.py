"""Getting one JSON value out of what a model actually says.

Models wrap JSON in `<think>` blocks, Markdown fences and prose, emit two objects back to back, or
stop mid-value. `extract_json` returns the first balanced, parseable value and says whether it had
to repair anything; everything else is a :class:`JSONExtractError` with a reason a re-ask can quote.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


class JSONExtractError(ValueError):
    """No JSON value could be recovered; `truncated` when a value started but never closed."""

    def __init__(self, message: str, *, truncated: bool = False) -> None:
        super().__init__(message)
        self.truncated = truncated


@dataclass(frozen=True)
class Extracted:
    value: Any
    repaired: bool  # anything beyond `json.loads(text.strip())` was needed


def strip_think(text: str) -> str:
    """Drop `<think>…</think>` blocks; with only a closing tag, keep what follows it; with an
    unclosed opening tag, drop from it to the end unless JSON follows the reasoning."""
    out = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(out))
    if closes:
        out = out[closes[-1].end():]
    m = _THINK_OPEN.search(out)
    if m:
        head, tail = out[: m.start()], out[m.end():]
        out = head if head.strip() else tail
    return out


def _scan_balanced(s: str, start: int) -> int | None:
    """Index just past the value opening at `start`, or None if it never closes."""
    depth = 0
    in_str = False
    esc = False
    for i in range(start, len(s)):
        c = s[i]
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
            if depth < 0:
                return None
    return None


def _loads(fragment: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(fragment)
    except (ValueError, RecursionError):
        pass
    fixed = _TRAILING_COMMA.sub(r"\1", fragment)
    if fixed != fragment:
        try:
            return True, json.loads(fixed)
        except (ValueError, RecursionError):
            pass
    return False, None


def _first_balanced(s: str, openers: str) -> tuple[bool, Any, bool]:
    """(found, value, truncated) for the first parseable balanced value in `s`."""
    i = 0
    n = len(s)
    truncated = False
    while i < n:
        starts = [p for p in (s.find(o, i) for o in openers) if p != -1]
        if not starts:
            break
        start = min(starts)
        end = _scan_balanced(s, start)
        if end is None:
            truncated = True
            # An unclosed outer value: anything nested inside it is a fragment, not an answer.
            break
        ok, value = _loads(s[start:end])
        if ok:
            return True, value, False
        i = start + 1
    return False, None, truncated


def extract_json(text: str, *, want: str = "any") -> Extracted:
    """The first JSON value in `text`. `want` = "object", "array" or "any"."""
    if not isinstance(text, str):
        raise JSONExtractError(f"reply is not text ({type(text).__name__})")
    stripped = text.strip()
    if stripped:
        ok, value = (False, None)
        try:
            value = json.loads(stripped)
            ok = True
        except (ValueError, RecursionError):
            pass
        if ok and _matches(value, want):
            return Extracted(value, repaired=False)
    openers = {"object": "{", "array": "["}.get(want, "{[")
    body = strip_think(text)
    candidates = [m.group(2) for m in _FENCE.finditer(body)]
    candidates.append(body)
    truncated = False
    for cand in candidates:
        found, value, trunc = _first_balanced(cand, openers)
        truncated = truncated or trunc
        if found and _matches(value, want):
            return Extracted(value, repaired=True)
    if not body.strip():
        raise JSONExtractError("reply is empty (after removing any <think> block)")
    if truncated:
        raise JSONExtractError("reply was cut off before the JSON value closed", truncated=True)
    kind = {"object": "JSON object", "array": "JSON array"}.get(want, "JSON value")
    raise JSONExtractError(f"no {kind} found in the reply")


def _matches(value: Any, want: str) -> bool:
    if want == "object":
        return isinstance(value, dict)
    if want == "array":
        return isinstance(value, list)
    return True
