"""Honest prompts: what a confirmation shows is exactly what runs, with no terminal tricks.

ANSI/OSC escape sequences, C0/C1 control characters, bidi overrides and zero-width characters are
replaced by a visible escape (`\\x1b`, `\\u202e`), so `rm -f x\\x1b[2K\\rls -la` cannot pose as `ls -la`.
"""

from __future__ import annotations

import re

# Characters that reorder, hide or join text on screen (Trojan Source, CVE-2021-42574).
_INVISIBLE = {0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2028, 0x2029, 0x2060, 0xFEFF, 0x00AD}
_INVISIBLE |= set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def sanitize(text: str, *, keep_newlines: bool = True) -> str:
    """Every control, escape and invisible character made visible; newlines kept (or shown)."""
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch == "\n":
            out.append("\n" if keep_newlines else "\\n")
        elif ch == "\t":
            out.append("\t")
        elif _CONTROL.match(ch) or code in _INVISIBLE:
            out.append(_escape(ch))
        else:
            out.append(ch)
    return "".join(out)


def one_line(text: str, limit: int = 400) -> str:
    shown = sanitize(text, keep_newlines=False)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
