"""The roles' system prompts, one file each (`<role>.md` in this folder), so a prompt change is a
one-file diff that can be reviewed and tested on its own.

A file is the prompt's text exactly as the model receives it, its final newline aside. Its last
line, when it starts with `Example`, is the role's one-line example reply; a role that must leave
the example out (a shorter re-ask) uses `rules` alone. A prompt with fields names them `$name`
(`string.Template`): filling them substitutes text and never evaluates any.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template

EXAMPLE = "Example"


@dataclass(frozen=True)
class Prompt:
    rules: str  # what the role is told
    example: str  # the one-line example reply, "" when the prompt has none

    @property
    def text(self) -> str:
        """The whole prompt: the rules, then the example on its own line."""
        return f"{self.rules}\n{self.example}" if self.example else self.rules

    def render(self, **fields: object) -> str:
        """The whole prompt with its `$name` fields filled; a missing field raises KeyError."""
        return Template(self.text).substitute({k: str(v) for k, v in fields.items()})


def parse(raw: str) -> Prompt:
    text = raw.removesuffix("\n")
    head, _, last = text.rpartition("\n")
    if head and last.startswith(EXAMPLE):
        return Prompt(rules=head, example=last)
    return Prompt(rules=text, example="")


@cache
def load(name: str) -> Prompt:
    """The prompt in `<name>.md`, read from the installed package."""
    return parse(resources.files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8"))
