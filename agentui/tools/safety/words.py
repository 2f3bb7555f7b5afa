"""Parsing: bashlex trees, and each word reduced to what the gate can know about it statically."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import bashlex

MAX_SOURCE_CHARS = 100_000
_ARITHMETIC = re.compile(r"\$\(\([^()$`]*\)\)")
_TIME_PREFIX = re.compile(r"^(\s*)time(\s+-p)?\s+")


def parse(source: str) -> list[Any] | None:
    """bashlex trees, or None. Retries without arithmetic/`time` (bashlex cannot parse them)."""
    attempts = [source]
    simplified = _TIME_PREFIX.sub(r"\1", _ARITHMETIC.sub("0", source))
    if simplified != source:
        attempts.append(simplified)
    for text in attempts:
        try:
            trees: list[Any] = bashlex.parse(text)
            return trees
        except Exception:  # bashlex raises ParsingError, NotImplementedError, IndexError …
            continue
    return None


@dataclass
class Word:
    """One shell word: its text after quote removal and what is unknowable about it."""

    text: str
    static: bool = True  # no $var, $(…), `…` whose value we cannot know
    glob: bool = False  # unquoted * ? [
    brace: bool = False  # unquoted {a,b}
    procsub: bool = False  # the whole word is <(…) or >(…)


def unquoted_specials(raw: str) -> tuple[bool, bool, bool]:
    """(glob, brace, dollar) characters outside quotes in the raw source of a word."""
    glob = brace = dollar = False
    i, quote = 0, ""
    while i < len(raw):
        ch = raw[i]
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif ch == "\\":
            i += 1
        elif quote == '"':
            if ch == '"':
                quote = ""
            elif ch in "$`":
                dollar = True
        elif ch in "'\"":
            quote = ch
        elif ch in "*?[":
            glob = True
        elif ch == "{" and re.match(r"\{[^{}]*(,|\.\.)[^{}]*\}", raw[i:]):
            brace = True
        elif ch in "$`":
            dollar = True
        i += 1
    return glob, brace, dollar


def word(node: Any, source: str, cwd: str | None, home: str) -> Word:
    text = node.word
    raw = source[node.pos[0] : node.pos[1]] if hasattr(node, "pos") else text
    glob, brace, _dollar = unquoted_specials(raw)
    static = True
    parts = getattr(node, "parts", None) or []
    procsub = len(parts) == 1 and parts[0].kind == "processsubstitution" and parts[0].pos == node.pos
    for part in parts:
        if part.kind == "parameter":
            if part.value == "HOME" or (part.value == "PWD" and cwd is not None):
                continue
            static = False
        elif part.kind in ("commandsubstitution", "processsubstitution"):
            static = False
        elif part.kind == "tilde" and part.value != "~":
            static = False  # ~+ ~- ~user: another directory than $HOME
    if static and "$" in text:
        text = re.sub(r"\$\{HOME\}|\$HOME\b", home, text)
        if cwd is not None:
            text = re.sub(r"\$\{PWD\}|\$PWD\b", cwd, text)
    if static and (text == "~" or text.startswith("~/")) and raw.startswith("~"):
        text = home + text[1:]
    return Word(text, static and not procsub, glob, brace, procsub)


def expand_braces(text: str, limit: int = 64) -> list[str] | None:
    """`a{b,c}d` → [abd, acd]; nested or ranged braces → None (unknown)."""
    m = re.search(r"\{([^{}]*)\}", text)
    if not m:
        return [text]
    if "," not in m.group(1):
        return None
    out: list[str] = []
    for alt in m.group(1).split(","):
        more = expand_braces(text[: m.start()] + alt + text[m.end() :], limit)
        if more is None:
            return None
        out.extend(more)
        if len(out) > limit:
            return None
    return out


def is_system_program(path: str, bin_dirs: tuple[str, ...]) -> bool:
    return os.path.dirname(path) in bin_dirs


def iter_nodes(node: Any) -> Iterator[Any]:
    """Every node under `node` (depth first)."""
    yield node
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or []:
            if hasattr(child, "kind"):
                yield from iter_nodes(child)
    for attr in ("command", "output", "heredoc"):
        child = getattr(node, attr, None)
        if child is not None and hasattr(child, "kind"):
            yield from iter_nodes(child)


def program_names(node: Any) -> set[str]:
    """Basenames of every command word run anywhere under `node`."""
    names: set[str] = set()
    for n in iter_nodes(node):
        if n.kind == "command":
            first = next((p for p in n.parts if p.kind == "word"), None)
            if first is not None:
                names.add(os.path.basename(first.word))
    return names
