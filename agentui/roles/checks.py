"""Criteria as checks: a criterion may carry a read-only shell command whose output shows whether it
holds. The validators run a criterion's check before they judge, and what it printed is evidence
beside the executor's own result.

A check runs through the tool registry like any tool call, so the safety gate and the OS sandbox
judge it and the Auditor sees it on the bus; nobody is asked about a check: one the gate would ask
about does not run, and its criterion fails as environmental ("the check could not run"), never
passes. A check that exits non-zero and prints nothing fails its criterion. A check never grants a
pass: the validator still judges, and code may only take a pass away.

`confirms(answer, runs)` is the veto for a request that asks for a value: the single answer must be
what some check printed, by a command other than the ones the executor ran to get it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentui.contracts import Criterion, ToolCallRecord
from agentui.roles import grounding as G
from agentui.roles.actions import as_seen

#: at most this many checks run for one judgement; each is one short command
MAX_CHECKS = 4
CHECK_TIMEOUT_S = 30.0
CHECK_OUTPUT_CHARS = 1500


@dataclass(frozen=True)
class CheckRun:
    """One criterion's check as it ran (or could not)."""

    criterion: str
    command: str
    ran: bool  # the gate let it run and it finished
    exit_code: int | None
    output: str
    error: str = ""
    record: ToolCallRecord | None = None

    @property
    def failed(self) -> bool:
        """It could not run, or it exited non-zero and printed nothing."""
        return not self.ran or (self.exit_code not in (0, None) and not self.output.strip())

    def evidence(self, width: int = 400) -> str:
        """One line for a validator's prompt and a verdict's evidence."""
        if not self.ran:
            return f"check `{self.command}` could not run: {self.error}"[:width]
        out = " ".join(self.output.split()) or "(no output)"
        return f"check `{self.command}` → exit {self.exit_code}: {out}"[:width]


def commands(criteria: Sequence[Criterion]) -> list[tuple[int, str]]:
    """(index, command) of the criteria that carry a check, at most MAX_CHECKS, each once."""
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    for i, c in enumerate(criteria):
        cmd = " ".join((c.check or "").split())
        if cmd and cmd not in seen:
            seen.add(cmd)
            out.append((i, cmd))
    return out[:MAX_CHECKS]


async def run(ctx: Any, task_id: str, criteria: Sequence[Criterion], *, subtask_id: str | None = None
              ) -> dict[int, CheckRun]:
    """Run the criteria's checks through the tool registry; criterion index → its run."""
    from agentui.tools import ToolContext

    todo = commands(criteria)
    reg = getattr(ctx, "tools", None)
    if not todo:
        return {}
    runs: dict[int, CheckRun] = {}
    if reg is None or reg.get("shell") is None:
        for i, cmd in todo:
            runs[i] = CheckRun(criteria[i].criterion, cmd, False, None, "", "no shell tool to run it with")
        return runs
    cfg = ctx.config
    tctx = ToolContext(
        workspace=ctx.workspace, task_id=task_id, subtask_id=subtask_id, confirm=None,
        timeout_s=min(float(cfg.tools.timeout_s), CHECK_TIMEOUT_S), output_cap_chars=CHECK_OUTPUT_CHARS,
        log=lambda rec: ctx.log(task_id, {"kind": "check", "subtask_id": subtask_id, **rec}))
    for i, cmd in todo:
        rec = await reg.call("shell", {"command": cmd}, tctx)
        ran = not _refused(rec)
        runs[i] = CheckRun(criteria[i].criterion, cmd, ran, rec.exit_code if ran else None,
                           as_seen(rec.evidence or "", ctx.workspace) if ran else "",
                           "" if ran else (rec.error or "refused"), rec)
        ctx.log(task_id, {"kind": "check_result", "subtask_id": subtask_id, "criterion": criteria[i].criterion,
                          "command": cmd, "ran": ran, "exit_code": runs[i].exit_code,
                          "output": runs[i].output[:500], "error": runs[i].error[:300]})
    return runs


def logged(path: Any, limit: int = MAX_CHECKS) -> list[CheckRun]:
    """The checks a task log records (`check_result` lines), the latest run of each command, in
    the order they first ran; [] when the log cannot be read."""
    import json

    runs: dict[str, CheckRun] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for raw in fh:
                if '"check_result"' not in raw:
                    continue
                try:
                    d = json.loads(raw)
                except ValueError:
                    continue
                if d.get("kind") != "check_result" or not d.get("command"):
                    continue
                cmd = str(d["command"])
                runs[cmd] = CheckRun(str(d.get("criterion") or ""), cmd, bool(d.get("ran")), d.get("exit_code"),
                                     str(d.get("output") or ""), str(d.get("error") or ""))
    except OSError:
        return []
    return list(runs.values())[:limit]


def prompt_section(runs: dict[int, CheckRun]) -> str:
    """What the checks printed, as a validator's prompt shows it ('' when none ran)."""
    if not runs:
        return ""
    return "\n\nChecks run by code now:\n" + "\n".join(f"{i + 1}. {run.evidence()}" for i, run in sorted(runs.items()))


def _refused(rec: ToolCallRecord) -> bool:
    """The gate or the registry refused the call, or it timed out: it did not run to the end."""
    return rec.exit_code is None or (rec.error or "").startswith("timed out")


def numbers(text: str) -> list[float]:
    """The numbers in `text` (grounding's reading: "1,200" is twelve hundred), as floats."""
    out = []
    for n in G.numbers(text):
        try:
            out.append(float(n))
        except ValueError:
            continue
    return out


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w./-]+", " ", text.casefold()).split())


def independent(run: CheckRun, calls: Iterable[ToolCallRecord]) -> bool:
    """The check is not one of the commands the executor ran: it can confirm their result."""
    mine = _norm(run.command)
    return all(_norm(str(c.args.get("command", ""))) != mine for c in calls if c.tool == "shell")


def confirms(answer: str, runs: Iterable[CheckRun]) -> bool:
    """Some check that ran printed the answer: its last number (compared as a number), else the
    answer's text, or the check's whole one-line output inside a short answer."""
    text = (answer or "").strip()
    if not text:
        return False
    nums = numbers(text)
    for r in runs:
        if not r.ran or not r.output.strip():
            continue
        if nums:
            if any(abs(n - nums[-1]) < 1e-9 for n in numbers(r.output)):
                return True
            continue
        out, ans = _norm(r.output), _norm(text)
        if ans and (ans in out or (len(out) >= 2 and "\n" not in r.output.strip() and out in ans)):
            return True
    return False
