"""What the walk carries between simple commands: reasons to ask, the shell state, approval patterns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agentui.tools.safety.patterns import pattern_for
from agentui.tools.safety.words import Word

__all__ = ["Need", "State", "pattern_for", "strip_option"]


@dataclass(frozen=True)
class Need:
    """One reason to ask; `pattern` is what an approval broader than once may store (None: once only)."""

    reason: str
    pattern: str | None = None
    human: bool = False  # a person must answer (a secret): never --yes, never a stored approval


class State:
    """The shell state the walk follows: the possible working directories (None: unknowable)."""

    def __init__(self, cwds: tuple[Path, ...] | None, loop_vars: dict[str, Word] | None = None) -> None:
        self.cwds = cwds
        self.loop_vars: dict[str, Word] = dict(loop_vars or {})  # `for f in *.txt`: $f is one of *.txt

    def copy(self) -> State:
        return State(self.cwds, self.loop_vars)


def strip_option(text: str) -> str:
    """`of=x` / `--output=x` / `-ox` → x."""
    if text.startswith("of="):
        return text[3:]
    if text.startswith("--") and "=" in text:
        return text.split("=", 1)[1]
    if re.fullmatch(r"-[A-Za-z].+", text):
        return text[2:]
    return text
