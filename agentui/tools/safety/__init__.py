"""The tool safety gate (DESIGN §5): fail closed.

A shell command runs unasked only when every simple command in it is on the allow-list of
read-only programs with known-safe flags, every path it names resolves inside the workspace (or a
read-only system location) and nothing feeds code to an interpreter. Everything else asks; the hard
deny-list (writes outside the workspace, `rm` of $HOME or /, `kill -1`, download-and-execute,
reading secret paths) refuses whatever the answer.

Entry points: `assess` (shell), `assess_write`/`assess_read`/`assess_glob` (file tools),
`assess_call` (any other tool, e.g. MCP: asks unless allow-listed, arguments shown).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from agentui.tools.safety import paths as _paths
from agentui.tools.safety.display import one_line, sanitize
from agentui.tools.safety.walk import Need, Walker, pattern_for


class Verdict(StrEnum):
    SAFE = "safe"  # runs unasked
    ASK = "ask"  # needs a yes (TTY prompt, TUI modal, an approval on record, --yes within the sandbox)
    DENY = "deny"  # hard deny-list: nothing overrides


@dataclass(frozen=True)
class Assessment:
    """The gate's verdict and everything a prompt must show."""

    verdict: Verdict
    reasons: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()  # what "always for this project" would store (program + subcommand)
    once_only: bool = False  # some reason has no pattern: only a one-time yes fits
    human_only: bool = False  # secrets: never approved by --yes or a stored approval
    writes: tuple[str, ...] = ()
    network: tuple[str, ...] = ()
    cwd: str = ""
    commands: tuple[tuple[str, ...], ...] = ()  # every simple command the walk saw (program basename, args…)
    denied_by_rule: bool = False  # DENY comes from a remembered `never:` rule, not the hard deny-list
    # the one pattern names one file (`write_file notes.txt`): an approval of it stands for the task
    # or the session, never the project file, and covers later writes to that file only
    file_scoped: bool = False

    @property
    def needs_confirmation(self) -> bool:
        return self.verdict is not Verdict.SAFE

    @property
    def denied(self) -> bool:
        return self.verdict is Verdict.DENY


SAFE = Assessment(Verdict.SAFE)


def _from_needs(needs: list[Need], denials: list[str], *, writes: Sequence[str] = (), network: Sequence[str] = (),
                cwd: str = "", human_only: bool = False,
                commands: tuple[tuple[str, ...], ...] = ()) -> Assessment:
    if denials:
        return Assessment(Verdict.DENY, tuple(dict.fromkeys(denials)), writes=tuple(dict.fromkeys(writes)),
                          network=tuple(dict.fromkeys(network)), cwd=cwd, commands=commands)
    if not needs and not network:
        return Assessment(Verdict.SAFE, writes=tuple(dict.fromkeys(writes)), cwd=cwd, commands=commands)
    reasons = [n.reason for n in needs]
    human_only = human_only or any(n.human for n in needs)
    if network and not any("network" in r for r in reasons):
        reasons.append("contacts the network: " + ", ".join(dict.fromkeys(network)))
    patterns = tuple(dict.fromkeys(n.pattern for n in needs if n.pattern))
    once_only = any(n.pattern is None for n in needs) or not patterns or human_only
    return Assessment(Verdict.ASK, tuple(dict.fromkeys(reasons)), patterns, once_only, human_only,
                      tuple(dict.fromkeys(writes)), tuple(dict.fromkeys(network)), cwd, commands)


def assess(command: str, workspace: Path) -> Assessment:
    """Assess one shell command line run with `/bin/bash -c` in `workspace`."""
    ws = Path(os.path.realpath(workspace))
    walker = Walker(ws, command)
    walker.run()
    return _from_needs(walker.needs, walker.denials, writes=walker.writes, network=walker.network, cwd=str(ws),
                       commands=tuple(dict.fromkeys(walker.commands)))


def assess_write(path: Path, workspace: Path, *, append: bool = False) -> Assessment:
    """write_file: outside the workspace is denied; overwriting a file or a code place asks."""
    ws = Path(os.path.realpath(workspace))
    target = _paths.resolve(str(path), ws)
    shown = _paths.show(target, ws)
    if not _paths.inside(target, ws) or target == ws:
        return Assessment(Verdict.DENY, (f"writes outside the workspace: {target}",), cwd=str(ws))
    if _paths.is_secret(target, str(path)):
        return Assessment(Verdict.ASK, (f"writes a secret file: {shown}",), once_only=True, human_only=True,
                          writes=(shown,), cwd=str(ws))
    if _paths.is_code_place(target, ws):
        return Assessment(Verdict.ASK, (f"writes {shown} (code there runs later)",), once_only=True,
                          writes=(shown,), cwd=str(ws))
    if target.is_dir():
        return Assessment(Verdict.ASK, (f"target is a directory: {shown}",), once_only=True, cwd=str(ws))
    if not append and target.is_file():
        # "for this session" may cover later writes to this very file; a name that shows differently
        # from what it is (control characters) gets no pattern, so no approval can stand for another
        plain = sanitize(shown, keep_newlines=False) == shown
        return Assessment(Verdict.ASK, (f"overwrites an existing file: {shown}",),
                          patterns=(f"write_file {shown}",) if plain else (), once_only=not plain,
                          writes=(shown,), cwd=str(ws), file_scoped=plain)
    return Assessment(Verdict.SAFE, writes=(shown,), cwd=str(ws))


def assess_read(path: Path, workspace: Path, *, tool: str = "read_file") -> Assessment:
    """read_file: secrets always ask a human; outside the workspace asks; inside runs."""
    ws = Path(os.path.realpath(workspace))
    target = _paths.resolve(str(path), ws)
    if _paths.is_secret(target, str(path), ws):
        return Assessment(Verdict.ASK, (f"{tool} reads a secret path: {target} (its content goes to the LLM)",),
                          once_only=True, human_only=True, cwd=str(ws))
    if _paths.inside(target, ws):
        return Assessment(Verdict.SAFE, cwd=str(ws))
    if tool != "read_file" and _paths.holds_secrets(target):  # a search/glob over ~ lists ~/.ssh too
        return Assessment(Verdict.ASK, (f"{tool} looks inside a place holding secrets: {target}",),
                          once_only=True, human_only=True, cwd=str(ws))
    return Assessment(Verdict.ASK, (f"{tool} reads outside the workspace: {target}",),
                      patterns=(f"{tool} {target.parent}",), cwd=str(ws))


def assess_call(tool: str, args: dict[str, Any], *, allow_listed: bool = False,
                network: tuple[str, ...] = (), reason: str = "") -> Assessment:
    """Any non-shell tool (MCP, web_search): asks with its exact arguments unless allow-listed.

    The pattern an approval stores is the tool name (`mcp:github.create_issue`), so "always for this
    project" lets that tool run without asking again; its arguments are shown every time it asks.
    """
    if allow_listed:
        return SAFE
    shown = one_line(json.dumps(args, ensure_ascii=False, sort_keys=True, default=str), 600)
    why = reason or f"{tool} is not on the allow-list"
    return Assessment(Verdict.ASK, (f"{why}; arguments: {shown}",), patterns=(tool,),
                      network=tuple(network))


__all__ = [
    "SAFE",
    "Assessment",
    "Need",
    "Verdict",
    "assess",
    "assess_call",
    "assess_read",
    "assess_write",
    "one_line",
    "pattern_for",
    "sanitize",
]

