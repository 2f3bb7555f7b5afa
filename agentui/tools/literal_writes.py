"""What a shell command writes to a file, when the command line alone says it exactly.

The approval for a file write shows its diff; a shell command gets one only when its whole line is
one of the forms below, whose output bash fixes without running anything:

- `cat > FILE <<'EOF'` … `EOF` (or `<<"EOF"`, `<<EOF` with no `$`, backquote or backslash in the
  text, `cat <<'EOF' > FILE`, `>>` to append): the lines in between;
- `echo WORD…  > FILE` (no option; words plain or quoted, with nothing bash would expand): the
  words joined by spaces, and a newline;
- `printf 'TEXT' > FILE` (one single-quoted format with no `%`, escapes `\\n`, `\\t`, `\\\\` only).

Anything else — a pipe, a second command, a variable, an option, `<<-` — gets no preview, never a
guess: a diff that differs from what then lands would be worse than none. Nothing here runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PLAIN = r"[A-Za-z0-9._/+:=@%,-]+"  # an unquoted word bash leaves as it is (no glob, no expansion)
_SQ = r"'[^']*'"  # single quotes: literal
_DQ = r'"[^"$`\\!]*"'  # double quotes with nothing that expands or escapes
_WORD = rf"(?:{_PLAIN}|{_SQ}|{_DQ})+"
_TARGET = rf"(?P<op>>>?)\s*(?P<file>{_PLAIN}|{_SQ}|{_DQ})"
_DELIM = r"(?P<q>['\"]?)(?P<delim>[A-Za-z_][A-Za-z0-9_]*)(?P=q)"

_CAT_FIRST = re.compile(rf"\s*cat\s+{_TARGET}\s*<<\s*{_DELIM}[ \t]*\n")  # cat > f <<'EOF'
_CAT_LAST = re.compile(rf"\s*cat\s+<<\s*{_DELIM}\s*{_TARGET}[ \t]*\n")  # cat <<'EOF' > f
_ECHO = re.compile(rf"\s*echo(?P<words>(?:\s+{_WORD})*)\s*{_TARGET}\s*")
_PRINTF = re.compile(rf"\s*printf\s+(?P<fmt>{_SQ})\s*{_TARGET}\s*")


@dataclass(frozen=True)
class LiteralWrite:
    path: str  # as written on the command line (relative to the command's directory, or absolute)
    content: str
    append: bool


def _unquote(word: str) -> str:
    """A word of the forms above, quotes removed (`'a b'c"d"` → `a bcd`)."""
    return "".join(a or b or c for a, b, c in re.findall(r"'([^']*)'|\"([^\"]*)\"|([^'\"]+)", word))


def literal_write(command: str) -> LiteralWrite | None:
    """The file the command line writes and exactly what it writes, or None when that is not
    certain without running it."""
    m = _CAT_FIRST.match(command) or _CAT_LAST.match(command)
    if m:
        delim, quoted, op, target = m.group("delim"), bool(m.group("q")), m.group("op"), m.group("file")
        rest = command[m.end():]
        lines = rest.split("\n")
        if delim not in lines:
            return None
        end = lines.index(delim)
        if any(ln.strip() for ln in lines[end + 1:]):
            return None  # more commands after the here-document
        body = lines[:end]
        text = "".join(ln + "\n" for ln in body)
        if not quoted and re.search(r"[$`\\]", text):
            return None  # an unquoted delimiter expands the text
        return LiteralWrite(_unquote(target), text, op == ">>")
    m = _ECHO.fullmatch(command)
    if m:
        words = re.findall(_WORD, m.group("words") or "")
        if words and _unquote(words[0]).startswith("-"):
            return None  # an option (-n, -e) changes the output
        text = " ".join(_unquote(w) for w in words) + "\n"
        return LiteralWrite(_unquote(m.group("file")), text, m.group("op") == ">>")
    m = _PRINTF.fullmatch(command)
    if m:
        printed = _printf_text(m.group("fmt")[1:-1])
        if printed is None:
            return None
        return LiteralWrite(_unquote(m.group("file")), printed, m.group("op") == ">>")
    return None


def _printf_text(fmt: str) -> str | None:
    """What `printf FMT` prints for a format with no `%` and only the escapes \\n, \\t, \\\\; else None."""
    out, i = [], 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "%":
            return None
        if ch == "\\":
            nxt = fmt[i + 1:i + 2]
            if nxt not in ("n", "t", "\\"):
                return None
            out.append({"n": "\n", "t": "\t", "\\": "\\"}[nxt])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)
