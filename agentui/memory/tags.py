"""Tag conventions of v0.8 §6b with Unicode-aware, stable slugs.

- micro-event (action states): ``space="tool:<name>"``, ``entity="path:<target>"``
- macro-event (terminal states): ``space="intent:<slug>"``, ``entity="env:local"``

Slugs keep letters, digits and marks of every script (CJK, Cyrillic, Devanagari…) and emoji; they
are NFKC-normalised and case-folded so the same intent typed twice lands on the same tag pair.
A slug is never empty: text with nothing to keep falls back to a short sha1 of the input.
"""

from __future__ import annotations

import hashlib
import unicodedata

ENV_LOCAL = "env:local"

_ZWJ = "\u200d"


def _keep(ch: str) -> bool:
    cat = unicodedata.category(ch)
    # L* letters, N* digits, M* combining marks (Indic scripts, variation selectors), So emoji etc.
    return cat[0] in ("L", "N", "M") or cat == "So" or ch == _ZWJ


def _slug_raw(text: str) -> str:
    norm = unicodedata.normalize("NFKC", text).casefold()
    out: list[str] = []
    dash = False
    for ch in norm:
        if _keep(ch):
            if dash and out:
                out.append("-")
            out.append(ch)
            dash = False
        else:
            dash = True
    s = "".join(out)
    return "" if not s.strip(_ZWJ) else s


def _hash(text: str) -> str:
    return "h" + hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def slug(text: str) -> str:
    """Stable, Unicode-aware slug; never empty (falls back to ``h<sha1[:10]>`` of the input)."""
    return _slug_raw(text) or _hash(text)


def tool_space(tool: str) -> str:
    return f"tool:{tool.strip() or '?'}"


def path_entity(target: str) -> str:
    return f"path:{target}"


def parse_blocked_target(blocked: str) -> tuple[str, str]:
    """``"tool:target"`` → ``(tool, target)``; the target may itself contain ':' (URLs, C:\\…).

    A string without ':' is a bare target of an unknown tool: ``("?", blocked)``.
    """
    tool, sep, target = blocked.partition(":")
    if not sep:
        return "?", blocked
    return tool.strip() or "?", target
