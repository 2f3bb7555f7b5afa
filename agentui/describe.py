"""One line per envelope, for people: the headless stream and the TUI's bus view share it."""

from __future__ import annotations

from typing import Any

from agentui.contracts import (
    ApprovalRecord,
    AuditEvent,
    AuditReport,
    ClarificationAnswer,
    ClarificationRequest,
    ConfirmationDecision,
    ConfirmationRequest,
    CorrectionSignal,
    DispatchManifest,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMDelta,
    LLMUsage,
    Megram,
    OutcomeSummary,
    PerceiverReply,
    PlanDirective,
    ReplanRequest,
    SubTask,
    SubTaskOutcome,
    TaskCancelled,
    TaskSpec,
    TaskStarted,
    UserInput,
    Verdict,
)

ARROWS = {"up": "↑", "down": "↓", "flat": "→", "none": "⊥"}


def grad_arrow(grad_l: float, epsilon: float = 0.1, first: bool = False) -> str:
    """↑ worsening, ↓ improving, → plateau, ⊥ no gradient yet (first round)."""
    if first:
        return ARROWS["none"]
    if grad_l > epsilon:
        return ARROWS["up"]
    if grad_l < -epsilon:
        return ARROWS["down"]
    return ARROWS["flat"]


def loss_line(prev: str, directive: str, loss: Any, grad_l: float, *, first: bool = False) -> str:
    arrow = grad_arrow(grad_l, first=first)
    return (f"{prev}→{directive} {arrow} D={loss.D:.2f} P={loss.P:.2f} "
            f"∇L={grad_l:+.2f} Ω={loss.Omega:.2f}")


def _one(text: Any, n: int = 100) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def detail(env: Envelope) -> str:  # noqa: C901 - one flat branch per payload type, each a single line of text
    p = env.payload
    if isinstance(p, TaskStarted | UserInput | PerceiverReply):
        return _one(p.text)
    if isinstance(p, TaskSpec):
        return _one(p.intent)
    if isinstance(p, SubTask):
        first = p.success_criteria[0].criterion if p.success_criteria else ""
        more = f" (+{len(p.success_criteria) - 1})" if len(p.success_criteria) > 1 else ""
        return f"#{p.sequence} {_one(p.intent, 60)} | {_one(first, 40)}{more}"
    if isinstance(p, DispatchManifest):
        if not p.subtask_ids:
            return f"no plan — {_one(p.planner_error or 'planner failed', 80)}"
        used = f"; planned with memory {', '.join(p.memory_ids)}" if p.memory_ids else ""
        return f"round {p.round}: {len(p.subtask_ids)} subtask(s), {len(p.task_criteria)} task criteria{used}"
    if isinstance(p, ExecutionResult):
        n = len(p.tool_calls)
        what = p.infeasible_reason if p.infeasible_reason else p.output
        return f"attempt {p.attempt} {p.status.value}, {n} tool call(s) — {_one(what or '', 70)}"
    if isinstance(p, CorrectionSignal):
        return f"attempt {p.attempt_number} — {_one(p.what_was_wrong, 80)}"
    if isinstance(p, SubTaskOutcome):
        if p.status.value == "matched":
            return f"matched — {_one(p.intent, 60)}"
        unmet = [v.criterion for v in p.criteria_verdicts if v.verdict == Verdict.FAIL]
        return f"failed | unmet {_one('; '.join(unmet) or p.failure_reason or '', 70)}"
    if isinstance(p, ReplanRequest):
        total = len(p.outcomes)
        failed = len(p.failed_subtasks)
        return f"{failed}/{total} failed ({p.reason}) — {_one(p.gap_summary, 70)}"
    if isinstance(p, OutcomeSummary):
        return _one(p.summary)
    if isinstance(p, PlanDirective | FinalResult):
        line = loss_line(p.prev_directive.value, p.directive.value, p.loss, p.grad_l,
                         first=p.prev_directive.value == "init")
        return line + f" — {_one(p.summary, 70)}" if isinstance(p, FinalResult) else line
    if isinstance(p, Megram):
        return f"{p.level.value} {p.space} {p.entity} {p.state} f={p.f:.2f} σ={p.sigma:+.1f}"
    if isinstance(p, ClarificationRequest):
        return f"asks: {_one(p.question)}"
    if isinstance(p, ClarificationAnswer):
        return f"answer: {_one(p.answer) or '(proceed)'}"
    if isinstance(p, ConfirmationRequest):
        return f"confirm {p.tool}: {_one(p.command, 60)} — {_one('; '.join(p.reasons), 40)}"
    if isinstance(p, ConfirmationDecision):
        return p.decision.value if p.answered_by == "user" else f"{p.decision.value} (by {p.answered_by})"
    if isinstance(p, ApprovalRecord):
        scope = f" {p.scope}" if p.scope else ""
        return f"{p.decision}{scope} by {p.by}: {p.tool} {_one(p.command, 60)}"
    if isinstance(p, TaskCancelled):
        return p.reason
    if isinstance(p, LLMUsage):
        ok = "ok" if p.ok else f"error: {_one(p.error or '', 40)}"
        return f"{p.prompt_tokens}+{p.completion_tokens} tok {p.latency_s:.2f}s {ok}"
    if isinstance(p, LLMDelta):
        return f"call {p.call}{' done' if p.done else ''}: {_one(p.text, 60)}"
    if isinstance(p, AuditEvent):
        return f"{p.severity.value} {p.kind.value}: {_one(p.message, 80)}"
    if isinstance(p, AuditReport):
        return _one(p.summary or f"{sum(p.events_by_kind.values())} event(s)")
    return type(p).__name__


def megram_brief(m: Megram, n: int = 70) -> str:
    """A lesson in one line, as a plan's memory is listed: level, space, the lesson's first words."""
    return f"{m.level.value} {m.space}: {_one(m.content, n)}"


def used_megrams(memory: Any, ids: list[str]) -> list[tuple[str, Megram | None]]:
    """Each Megram a plan used, read from the store now; None for one that is gone since (forgotten,
    or folded into a rule by the Dreamer) or when the store cannot be read."""
    out: list[tuple[str, Megram | None]] = []
    for mid in ids:
        try:
            out.append((mid, memory.get(mid) if memory is not None else None))
        except Exception:  # noqa: BLE001 - a listing never fails a task or a screen
            out.append((mid, None))
    return out


def used_lines(memory: Any, ids: list[str], n: int = 70) -> list[str]:
    """One line per Megram a plan used: its id (what `agentui memory forget` takes), then the lesson."""
    return [f"{mid} {megram_brief(m, n)}" if m is not None else f"{mid} (no longer in memory)"
            for mid, m in used_megrams(memory, ids)]


# colour per message type (rich style names; the TUI maps them onto its theme)
STYLE = {
    "UserInput": "bold", "TaskStarted": "dim", "TaskSpec": "cyan", "SubTask": "blue",
    "DispatchManifest": "blue", "ExecutionResult": "white", "CorrectionSignal": "yellow",
    "SubTaskOutcome": "green", "ReplanRequest": "magenta", "OutcomeSummary": "green",
    "PlanDirective": "bold magenta", "FinalResult": "bold green", "Megram": "dim cyan",
    "ClarificationRequest": "bold yellow", "ConfirmationRequest": "bold red", "LLMUsage": "dim", "LLMDelta": "dim",
    "AuditEvent": "red", "AuditReport": "dim red", "TaskCancelled": "bold red", "ApprovalRecord": "dim red",
}


def line(env: Envelope) -> str:
    return f"{env.sender.value}→{env.receiver.value} {env.type}: {detail(env)}"
