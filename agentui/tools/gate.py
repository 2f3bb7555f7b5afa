"""The gate every tool effect passes: hard denials, approvals on record, remembered
tool rules, the user's answer — and a record of each outcome for the Auditor (R6).

Asked outcomes reach the Auditor as the ConfirmationRequest/ConfirmationDecision pair on the bus;
the others (a stored pattern, the hard deny-list, nobody to ask, a remembered rule) are published
here as an `ApprovalRecord`, so the audit log holds every approval with its scope and pattern.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from agentui.contracts import ApprovalRecord, ConfirmationChoice
from agentui.tools.approvals import Scope
from agentui.tools.context import GateRequest, Preview, ToolContext
from agentui.tools.safety import Assessment, Verdict, one_line, sanitize
from agentui.tools.safety.rules import apply_rules, parse_rule

_SCOPE_OF = {
    ConfirmationChoice.APPROVE: Scope.ONCE,
    ConfirmationChoice.TASK: Scope.TASK,
    ConfirmationChoice.ALWAYS: Scope.TASK,
    ConfirmationChoice.SESSION: Scope.SESSION,
    ConfirmationChoice.PROJECT: Scope.PROJECT,
}


async def remembered(ctx: ToolContext, tool: str, assessment: Assessment, subject: str) -> Assessment:
    """`assessment` made stricter by the rules remembered for `tool` (never less strict)."""
    if ctx.rules is None:
        return assessment
    try:
        texts = await ctx.rules(tool)
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - memory trouble must not open the gate or crash the call
        return assessment
    rules = [r for r in (parse_rule(t) for t in texts) if r is not None]
    return apply_rules(assessment, tool, subject, rules) if rules else assessment


async def gate(ctx: ToolContext, tool: str, subject: str, assessment: Assessment,
               *, escalation: bool = False, confined: bool | None = None, preview: Preview | None = None) -> str | None:
    """The one door for every effect: returns the denial error, or None to proceed.

    Hard denials refuse; remembered `never:` rules refuse and `ask:` rules ask a person; approvals
    on record (task, session, project patterns) answer without asking; everything else asks
    `ctx.confirm` (none = deny). Every decision goes to the task log and to the Auditor.
    `preview` builds what the effect would change (a file write's diff) for the question only.
    """
    assessment = await remembered(ctx, tool, assessment, subject)
    if not assessment.needs_confirmation and not escalation:
        return None
    shown = one_line(subject, 2000)
    reasons = tuple(one_line(r, 500) for r in assessment.reasons) or ("needs confirmation",)
    why = "; ".join(reasons)
    if assessment.verdict is Verdict.DENY:
        by = "memory-rule" if assessment.denied_by_rule else "hard-deny"
        await _record(ctx, tool, shown, assessment, "refused", None, by)
        return f"refused by the safety gate (hard deny-list; no approval can allow it): {why}"
    if ctx.approvals is not None and not escalation:
        scope = ctx.approvals.covering_scope(ctx.task_id, assessment)
        if scope is not None:
            await _record(ctx, tool, shown, assessment, "approved", scope, "stored")
            return None
    if ctx.confirm is None:
        await _record(ctx, tool, shown, assessment, "denied", None, "unattended")
        return f"denied: {why} (no one to confirm; non-interactive — see `agentui run --help` for --yes)"
    change = await _preview(preview)
    request = GateRequest(
        tool=tool, command=sanitize(subject), reasons=reasons, cwd=sanitize(assessment.cwd or str(ctx.workspace)),
        patterns=() if assessment.once_only else tuple(sanitize(p) for p in assessment.patterns),
        writes=tuple(sanitize(w) for w in assessment.writes), network=tuple(sanitize(n) for n in assessment.network),
        # `confined=False`: the effect happens outside our OS sandbox (an MCP server), so `--yes` never answers it
        human_only=assessment.human_only, escalation=escalation,
        sandboxed=(sandbox_active(ctx) if confined is None else confined and sandbox_active(ctx)) and not escalation,
        file_scoped=assessment.file_scoped and not assessment.once_only, change=change,
    )
    asked = time.monotonic()
    try:
        answer = await ctx.confirm(request)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a broken prompt is a denial, never a crash
        _log(ctx, tool, shown, assessment, "denied", None)
        return f"denied by user: {why} (confirmation failed: {exc})"
    finally:
        ctx.waited_s += time.monotonic() - asked
    # the Auditor records asked outcomes from the ConfirmationRequest/Decision pair on the bus
    scope = _scope(answer, request)
    if scope is None:
        _log(ctx, tool, shown, assessment, "denied", None)
        return f"denied by user: {why}"
    if ctx.approvals is not None and request.patterns:
        ctx.approvals.record(scope, ctx.task_id, request.patterns, files=request.file_scoped)
    _log(ctx, tool, shown, assessment, "approved", scope)
    return None


async def _preview(preview: Preview | None) -> object:
    """The change to show, or None: a preview that fails leaves the question as it was."""
    if preview is None:
        return None
    try:
        return await preview()
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - the question is still asked, without the diff
        return None


def _scope(answer: object, request: GateRequest) -> Scope | None:
    answer = getattr(answer, "choice", answer)  # an answers.Answer carries who gave it
    if answer is True:
        return Scope.ONCE
    if answer is False or answer is None:
        return None
    if not isinstance(answer, str):
        return None
    try:
        choice = ConfirmationChoice(answer)
    except ValueError:
        return None
    scope = _SCOPE_OF.get(choice)
    if scope is None:
        return None
    return scope if scope in request.scopes() else Scope.ONCE  # a broader answer than offered counts once


def _log(ctx: ToolContext, tool: str, subject: str, assessment: Assessment, decision: str,
         scope: Scope | None, *, automatic: bool = False) -> None:
    """The task log records every gate decision with its scope and patterns."""
    if ctx.log is None:
        return
    entry = {"kind": "approval", "tool": tool, "command": subject, "decision": decision,
             "scope": scope.value if scope else None, "patterns": list(assessment.patterns),
             "reasons": list(assessment.reasons), "automatic": automatic, "task_id": ctx.task_id,
             "subtask_id": ctx.subtask_id}
    with contextlib.suppress(Exception):  # the log is evidence, not control flow
        ctx.log(entry)


async def _record(ctx: ToolContext, tool: str, subject: str, assessment: Assessment, decision: str,
                  scope: Scope | None, by: str) -> None:
    """An outcome no question preceded: the task log, and the bus for the Auditor."""
    _log(ctx, tool, subject, assessment, decision, scope, automatic=by == "stored")
    if ctx.announce is None:
        return
    record = ApprovalRecord(
        task_id=ctx.task_id or "", subtask_id=ctx.subtask_id, tool=sanitize(tool), command=sanitize(subject),
        decision=decision, scope=scope.value if scope else None,
        patterns=[sanitize(p) for p in assessment.patterns], by=by,
        reasons=[sanitize(one_line(r, 500)) for r in assessment.reasons], cwd=sanitize(assessment.cwd),
        sandboxed=sandbox_active(ctx))
    try:
        await ctx.announce(record)
    except asyncio.CancelledError:
        raise
    except Exception:  # noqa: BLE001 - a closed bus must not turn a decision into a crash
        pass


def sandbox_active(ctx: ToolContext) -> bool:
    return bool(ctx.sandbox is not None and getattr(ctx.sandbox, "active", False) and not ctx.unconfined)
