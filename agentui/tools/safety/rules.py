"""Remembered tool rules the gate enforces: `tool:<name>` memory spaces.

A rule the gate can read is one line of the form

    never: <program> [words…]       refuse every matching command (like the hard deny-list)
    ask: <program> [words…]         ask a person every time (`always ask:` is the same); no
                                    stored approval and no --yes answers it

For the shell a rule matches a simple command (also one inside `bash -c`, `xargs`, `find -exec`,
pipelines and substitutions) whose program's file name is the rule's first word and whose
arguments hold the rule's other words in the same order (each may use shell globs: `*`, `?`,
`[…]`). `never: git push` matches `git push`, `git push origin main`, `/usr/bin/git push -f`;
`never: rm -rf` matches `rm -rf build` but not `rm -r -f build` (plain `rm` asks anyway). For any
other tool the words form one glob over what its prompt shows (`never: *.lock` for write_file).

Rules only ever make the gate stricter. Text in any other form is advice for the executor's
prompt only; `agentui memory remember` says which one a rule is.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from agentui.tools.safety import Assessment

_FORM = re.compile(r"\s*(never|always\s+ask|ask)\s*:\s*(.+?)\s*$", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class GateRule:
    action: Literal["never", "ask"]
    words: tuple[str, ...]
    text: str  # the rule as remembered (shown in the reason)

    @property
    def pattern(self) -> str:
        return " ".join(self.words)


def parse_rule(text: str) -> GateRule | None:
    """The rule in `text`, or None when the gate cannot interpret it (free text: executor only)."""
    if "\n" in text.strip():
        return None
    m = _FORM.fullmatch(text)
    if m is None:
        return None
    body = m.group(2).strip().strip("`").strip()
    try:
        words = tuple(shlex.split(body))
    except ValueError:
        return None
    if not words or not words[0] or words[0].startswith("-"):
        return None
    action: Literal["never", "ask"] = "never" if m.group(1).lower() == "never" else "ask"
    return GateRule(action, words, " ".join(text.split()))


def matches_command(rule: GateRule, command: Sequence[str]) -> bool:
    """Does a simple command (program basename, args…) fall under `rule`?"""
    if not command or not fnmatch.fnmatchcase(command[0], rule.words[0]):
        return False
    want = list(rule.words[1:])
    for arg in command[1:]:
        if want and fnmatch.fnmatchcase(arg, want[0]):
            want.pop(0)
    return not want


def matches_subject(rule: GateRule, subject: str) -> bool:
    """A non-shell tool: the rule's words as one glob over what the prompt shows."""
    return fnmatch.fnmatchcase(subject, rule.pattern)


def apply_rules(assessment: Assessment, tool: str, subject: str, rules: Sequence[GateRule]) -> Assessment:
    """`assessment` (a safety.Assessment) with the matching rules applied; never less strict."""
    from agentui.tools.safety import Verdict

    if assessment.verdict is Verdict.DENY or not rules:
        return assessment
    if tool == "shell":
        hit = [r for r in rules if any(matches_command(r, c) for c in assessment.commands)]
    else:
        hit = [r for r in rules if matches_subject(r, subject)]
    never = [r for r in hit if r.action == "never"]
    if never:
        return dataclasses.replace(
            assessment, verdict=Verdict.DENY, denied_by_rule=True,
            reasons=tuple(f"a remembered rule for {tool} says {r.text!r}" for r in never))
    asks = [r for r in hit if r.action == "ask"]
    if not asks and tool == "shell" and assessment.verdict is Verdict.ASK:
        # the walk could not follow everything (eval, a name known at run time …): a command naming
        # a ruled program then needs a person, not --yes or a stored pattern
        words = set(re.findall(r"[\w.+-]+", subject))
        asks = [r for r in rules if r.words[0] in words and not _followed(r, assessment.commands)]
        if asks:
            reasons = tuple(f"mentions {r.words[0]}, which a remembered rule covers ({r.text!r}), in a form the gate "
                            "cannot follow" for r in asks)
            return dataclasses.replace(assessment, reasons=assessment.reasons + reasons, human_only=True,
                                       once_only=True)
        return assessment
    if not asks:
        return assessment
    reasons = tuple(f"a remembered rule for {tool} says {r.text!r}" for r in asks)
    base = assessment.reasons if assessment.verdict is Verdict.ASK else ()
    return dataclasses.replace(assessment, verdict=Verdict.ASK, reasons=base + reasons, human_only=True,
                               once_only=True)


def _followed(rule: GateRule, commands: Sequence[Sequence[str]]) -> bool:
    """Did the walk see every command of the rule's program with arguments it can compare?"""
    mine = [c for c in commands if fnmatch.fnmatchcase(c[0], rule.words[0])]
    return bool(mine) and not any(_DYNAMIC.search(a) for c in mine for a in c[1:])


_DYNAMIC = re.compile(r"[$`]")


def describe(rule: GateRule | None, tool: str) -> str:
    """One line for `agentui memory remember`: what the gate does with this text."""
    if rule is None:
        return ("note: the safety gate cannot read this rule, so only the executor's prompt shows it; "
                "for the gate to enforce one write `never: <program> [words]` or `ask: <program> [words]`")
    what = "refuses" if rule.action == "never" else "asks a person before"
    target = f"every {tool} command matching `{rule.pattern}`" if tool == "shell" else \
        f"every {tool} call matching `{rule.pattern}`"
    return f"the safety gate {what} {target}"
