"""What a Megram says (v0.8 §6b content; DESIGN §5b): a lesson a planner can act on.

GGS writes these texts. Each one names the kind of work it came from (R1's intent phrase, never the
request) and says what to do or avoid in tools, commands and targets:

- a Best Practice SOP (accept / success): the plan's shape (steps and their tools), the calls
  that worked and, when earlier rounds hit dead ends, the calls to use them instead of;
- a failure (abandon): the calls that failed, with the first line of their error, and the targets
  tried across rounds;
- a micro-event (action states, ``tool:`` / ``path:``): one failed call and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

MAX_CALLS = 3  # calls named in one lesson
_CALL = 120  # characters of one command or target
_WHY = 100  # characters of one error line


def _one_line(text: str, n: int) -> str:
    line = next((x.strip() for x in (text or "").splitlines() if x.strip()), "")
    return line[:n] + ("…" if len(line) > n else "")


def _target(target: str, workspace: Path | None) -> str:
    if workspace is not None and target:
        from agentui.roles.calibration import rel_target

        target = rel_target(target, workspace)
    return _one_line(target, _CALL)


def call_text(tool: str, target: str, workspace: Path | None = None) -> str:
    """``shell `wc -l notes.txt``` — a call as a planner names it."""
    t = _target(target, workspace)
    return f"{tool} `{t}`" if t else tool


def why_failed(call: Any) -> str:
    """The first line of what a failed call said (its output — a command's stderr says more than
    "exit code 1" — else its error)."""
    return _one_line(call.evidence or call.error or "", _WHY) or (
        f"exit {call.exit_code}" if call.exit_code not in (None, 0) else "no result")


def sop(state: str, kind: str, outcomes: list[Any], workspace: Path | None = None,
        dead_ends: dict[str, str] | None = None) -> str:
    """accept / success: the plan shape and the calls that worked, then the dead ends of earlier
    rounds ("tool:target" → why) they replaced."""
    steps = sorted(outcomes, key=lambda o: o.sequence)
    shape = " → ".join("+".join(dict.fromkeys(c.tool for c in o.tool_calls if c.ok)) or "answer from context"
                       for o in steps)
    worked = list(dict.fromkeys(call_text(c.tool, c.target, workspace)
                                for o in steps for c in o.tool_calls if c.ok))
    text = f'worked ({state}) for "{kind}": {len(steps)} step(s) [{shape or "no steps"}]'
    if worked:
        text += "; calls that worked: " + "; ".join(worked[:MAX_CALLS])
    instead = []
    for t, why in (dead_ends or {}).items():
        tool, _, target = t.partition(":")
        instead.append(f"{call_text(tool, target, workspace)} ({why or 'no usable result'})")
    if instead:
        text += "; instead of: " + "; ".join(instead[:MAX_CALLS])
    return text


def failure(state: str, kind: str, outcomes: list[Any], tried: dict[str, str], workspace: Path | None = None,
            *, classes: list[str] | None = None) -> str:
    """abandon: the calls that failed and why, then the other targets tried across rounds
    (`tried`: "tool:target" → why it failed, when known)."""
    failed = [c for o in outcomes for c in o.tool_calls if not c.ok]
    named: dict[str, str] = {}
    for c in failed:
        named.setdefault(call_text(c.tool, c.target, workspace), why_failed(c))
    avoid = [f"{k} ({v})" for k, v in list(named.items())[:MAX_CALLS]]
    for t, why in tried.items():  # "tool:target" of every round, failed or empty
        tool, _, target = t.partition(":")
        shown = call_text(tool, target, workspace)
        if shown not in named and len(avoid) < MAX_CALLS + 2:
            avoid.append(f"{shown} ({why or 'no usable result'})")
    text = f'failed ({state}) for "{kind}": '
    if avoid:
        return text + "avoid " + "; ".join(avoid)
    ran = [c for o in outcomes for c in o.tool_calls]
    how = "+".join(dict.fromkeys(c.tool for c in ran)) or "no tool call"
    what = " / ".join(classes or []) or "unverified"
    return text + f"no call failed, but the result was judged wrong ({what}) after {how}; plan a different method"


def micro(state: str, kind: str, call: Any, workspace: Path | None = None) -> str:
    """change_path / refine / change_approach / break_symmetry: one failed call (a tool:/path: Megram)."""
    return f'{state}: {call_text(call.tool, call.target, workspace)} failed ({why_failed(call)}) while doing "{kind}"'
