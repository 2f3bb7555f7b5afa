"""Places where bash itself evaluates text as code, found in the raw source (fail closed).

bash expands command substitutions inside array subscripts and arithmetic wherever it evaluates
them: `test -v 'x[$(cmd)]'`, `$(( x ))` when x holds `a[$(cmd)]`, `${s:off}`, `${a[i]}`, `${!x}`,
`${x@P}`, `(( … ))`, `[[ … -eq … ]]`, `let`, `declare -i`, `printf -v`, `read`/`mapfile` targets,
`trap`, `PROMPT_COMMAND`. A value the command put into a variable (an assignment, `read`, a loop)
can therefore run code long after the gate saw it as data. The rule: arithmetic and subscripts
are safe only when they hold numeric literals and operators; any name, `$`, backtick or nested
subscript in them is code, and the command asks.
"""

from __future__ import annotations

import re

# Numeric literals, blanks and arithmetic operators: nothing bash could look up or run.
_LITERAL_ARITH = re.compile(r"[\s\d+\-*/%<>=!&|^~?:,()]*")
# A subscript bash does not evaluate as code: a number, `@` or `*`.
_PLAIN_SUBSCRIPT = re.compile(r"\s*(-?\d+|@|\*)\s*")
_NAME = re.compile(r"([A-Za-z_]\w*|\d+|[@*#?$!-])")
# `${x@Q}` and friends only quote or change case; `@P` expands the value as a prompt (runs `$(…)`).
_SAFE_TRANSFORMS = set("QEULuaAKk")

# Builtins whose operands bash evaluates as arithmetic or as variable names (with subscripts).
ARITH_BUILTINS = {"let", "declare", "typeset", "local", "export", "readonly", "printf", "read", "mapfile",
                  "readarray", "trap", "wait", "getopts", "unset", "shift", "return", "break", "continue"}
_ARITH_TESTS = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"}
# A variable name `test -v`/`[ -v ]` may check without evaluating anything.
PLAIN_VAR = re.compile(r"[A-Za-z_]\w*(\[\s*-?\d+\s*\])?")


def _matching(raw: str, start: int, opening: str, closing: str) -> int:
    """Index just past the `closing` that balances the `opening` at `start` (or len(raw))."""
    depth, i = 0, start
    while i < len(raw):
        if raw.startswith(opening, i):
            depth += 1
            i += len(opening)
            continue
        if raw.startswith(closing, i):
            depth -= 1
            i += len(closing)
            if depth == 0:
                return i
            continue
        if raw[i] == "\\":
            i += 1
        i += 1
    return len(raw)


def parameter_problem(inner: str) -> str | None:
    """Why `${inner}` makes bash evaluate text as code, or None."""
    text = inner
    if text.startswith("#") and len(text) > 1:
        text = text[1:]
    if text.startswith("!"):
        rest = text[1:]
        m = re.fullmatch(r"[A-Za-z_]\w*([@*]|\[[@*]\])", rest)
        if m:  # `${!prefix*}` lists names, `${!arr[@]}` lists keys: nothing is evaluated
            return None
        return f"${{{inner}}} expands a variable named by another one (its subscript is evaluated as code)"
    m = _NAME.match(text)
    if not m:
        return f"${{{inner}}} is a parameter expansion the gate does not know"
    rest = text[m.end():]
    if rest.startswith("["):
        end = rest.find("]")
        sub = rest[1:end] if end > 0 else rest[1:]
        if end < 0 or not _PLAIN_SUBSCRIPT.fullmatch(sub):
            return f"${{{inner}}}: bash evaluates the subscript [{sub}] as arithmetic (code)"
        rest = rest[end + 1:]
    if rest.startswith("@"):
        if len(rest) != 2 or rest[1] not in _SAFE_TRANSFORMS:
            return f"${{{inner}}}: the @{rest[1:]} transformation expands the value again (prompt expansion runs code)"
        return None
    if rest.startswith(":") and rest[1:2] not in ("-", "=", "?", "+"):
        if not re.fullmatch(r"[\s\d\-()]*(:[\s\d\-()]*)?", rest[1:]):
            return f"${{{inner}}}: bash evaluates the offset and length as arithmetic (code)"
    return None


def _arith_problem(content: str, what: str) -> str | None:
    if _LITERAL_ARITH.fullmatch(content):
        return None
    return (f"{what} evaluates names, subscripts or substitutions as code: "
            f"{content.strip()[:60]}")


#: expansions bash evaluates inside a word: (start, opening, closing, what judges the text inside)
_EXPANSIONS = (
    ("$((", "((", "))", lambda inner: _arith_problem(inner, "$(( … ))")),
    ("$[", "[", "]", lambda inner: _arith_problem(inner, "$[ … ]")),
    ("${", "{", "}", parameter_problem),
)


def evaluated_text(raw: str) -> list[str]:
    """Every place in `raw` (bash source) where bash evaluates text as code the gate cannot follow.

    Single-quoted text is literal and skipped; everything else, double quotes included, is live.
    Unbalanced or unusual forms are reported rather than skipped (fail closed).
    """
    found: list[str] = []
    i, quote = 0, ""
    while i < len(raw):
        ch = raw[i]
        if quote == "'":
            if ch == "'":
                quote = ""
            i += 1
            continue
        if quote == "$'":  # $'…' is literal text in which a backslash escapes the next character (\')
            if ch == "\\":
                i += 2
                continue
            if ch == "'":
                quote = ""
            i += 1
            continue
        if ch == "\\":
            i += 2
            continue
        if ch == "'" and quote != '"':
            quote = "'"
        elif ch == "$" and raw.startswith("$'", i) and quote != '"':
            quote = "$'"
            i += 2
            continue
        elif ch == '"':
            quote = "" if quote == '"' else '"'
        elif expansion := next((e for e in _EXPANSIONS if raw.startswith(e[0], i)), None):
            start, opening, closing, judge = expansion
            end = _matching(raw, i + 1, opening, closing)
            if problem := judge(raw[i + len(start):end - len(closing)]):
                found.append(problem)
            i += len(start)
            continue
        elif quote == "" and raw.startswith("((", i) and (i == 0 or raw[i - 1] != "$"):
            end = _matching(raw, i, "((", "))")
            problem = _arith_problem(raw[i + 2:end - 2], "(( … ))")
            found.append(problem or "(( … )) is an arithmetic command")
            i += 2
            continue
        elif quote == "" and raw.startswith("[[", i) and (i == 0 or raw[i - 1] in " \t\n;&|(!"):
            end = raw.find("]]", i)
            body = raw[i + 2:end if end > 0 else len(raw)]
            if re.search(r"(^|\s)-(v|R|eq|ne|lt|le|gt|ge)(\s|$)", body) or "[" in body:
                found.append(f"[[ … ]] evaluates arithmetic operands and subscripts as code: {body.strip()[:60]}")
        i += 1
    return list(dict.fromkeys(found))


def builtin_problem(name: str, texts: list[str]) -> str | None:
    """Why this builtin call makes bash evaluate one of its operands as code, or None."""
    if name in ("test", "["):
        for i, t in enumerate(texts[:-1]):
            if t in ("-v", "-R") and not PLAIN_VAR.fullmatch(texts[i + 1]):
                return f"{name} {t} evaluates the subscript of {texts[i + 1]!r} as code"
        # `test` reads -eq operands as plain integers (bash's `[[ ]]` evaluates them as arithmetic): a
        # `$n` is fine, but an operand that looks like a subscript or a substitution is refused all the same
        for i, t in enumerate(texts):
            if t in _ARITH_TESTS:
                for near in texts[max(i - 1, 0):i] + texts[i + 1:i + 2]:
                    if re.search(r"\[|\$\(|`", near):
                        return f"{name} {t}: the operand {near!r} could carry code (a subscript or substitution)"
    if name == "wait" and any(t.startswith("-") and "p" in t[1:] for t in texts):
        return "wait -p assigns a variable named by its operand (a subscript there runs code)"
    return None
