"""Ablation baseline for `agentui bench --ablation naive-retry`.

It takes R7's seat on the bus — same inputs (ReplanRequest, OutcomeSummary), same outputs
(PlanDirective to R2, FinalResult to the user) — but has no gradient controller: every failure is
answered with "replan, here is what failed" (directive `refine`, nothing blocked) until the replan
budget is spent, then abandon. No loss-driven macro-state, no blocked tools or targets, no Law 2,
no time term, no Megrams. Comparing it with GGS on the same suite measures what GGS is worth.
"""

from __future__ import annotations

import asyncio
import contextlib

from agentui.bus import Bus
from agentui.clock import Clock, SystemClock
from agentui.config import GGSConfig
from agentui.contracts import (
    ActionDirective,
    DirectiveFailureClass,
    Envelope,
    FinalResult,
    Loss,
    MacroState,
    OutcomeStatus,
    OutcomeSummary,
    PlanDirective,
    ReplanRequest,
    Role,
    TerminalDirective,
    Verdict,
)


def _distance(req: ReplanRequest) -> float:
    """Share of failed criteria (plain count, no k/N weighting); never 0 for a failure signal."""
    verdicts = [v for o in req.outcomes for v in o.criteria_verdicts] + list(req.task_criteria_verdicts)
    failed = sum(1 for v in verdicts if v.verdict == Verdict.FAIL)
    if not verdicts or failed == 0:
        return 1.0
    return failed / len(verdicts)


def _failure_text(req: ReplanRequest, limit: int = 600) -> str:
    lines = [req.gap_summary]
    for o in req.outcomes:
        if o.status == OutcomeStatus.FAILED:
            lines.append(f"- {o.intent or o.subtask_id}: {o.failure_reason or 'failed'}")
    for v in req.task_criteria_verdicts:
        if v.verdict == Verdict.FAIL:
            lines.append(f"- task criterion not met: {v.criterion}")
    text = "\n".join(lines)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class NaiveRetry:
    """Replan with the failure text until `max_replans`, then abandon."""

    def __init__(self, bus: Bus, cfg: GGSConfig, clock: Clock | None = None, ids: object | None = None) -> None:
        self.bus = bus
        self.cfg = cfg
        self.clock = clock or SystemClock()
        self._replans: dict[str, int] = {}
        self._prev: dict[str, MacroState] = {}
        self._sub = bus.subscribe("naive_retry", types={"ReplanRequest", "OutcomeSummary"}, receiver=Role.GGS)
        self._cancel = bus.subscribe("naive_retry:cancel", types={"TaskCancelled"})

    async def run(self) -> None:
        async def cancels() -> None:
            async for env in self._cancel:
                self._forget(env.task_id or "")

        watcher = asyncio.create_task(cancels())
        try:
            async for env in self._sub:
                await self.handle(env)
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher

    def _forget(self, task_id: str) -> None:
        self._replans.pop(task_id, None)
        self._prev.pop(task_id, None)

    async def handle(self, env: Envelope) -> None:
        task_id = env.task_id or ""
        replans = self._replans.get(task_id, 0)
        prev = self._prev.get(task_id, MacroState.INIT)
        p = env.payload
        if isinstance(p, OutcomeSummary):
            final = FinalResult(task_id=task_id, summary=p.summary, output=p.merged_output,
                                loss=Loss(D=0.0, P=0.0, Omega=0.0, L=0.0), replans=replans,
                                prev_directive=prev, directive=TerminalDirective.ACCEPT)
            self._forget(task_id)
            await self.bus.publish(Role.GGS, Role.USER, final, task_id=task_id)
            return
        if not isinstance(p, ReplanRequest):
            return
        d = _distance(p)
        loss = Loss(D=d, P=0.0, Omega=0.0, L=round(self.cfg.alpha * d, 6))
        if replans >= self.cfg.max_replans:
            partial = [o.output for o in p.outcomes if o.status == OutcomeStatus.MATCHED]
            final = FinalResult(task_id=task_id, summary="Gave up after retries. " + _failure_text(p),
                                output=None, loss=loss, replans=replans, prev_directive=prev,
                                directive=TerminalDirective.ABANDON, partial_result=partial or None)
            self._forget(task_id)
            await self.bus.publish(Role.GGS, Role.USER, final, task_id=task_id)
            return
        self._replans[task_id] = replans + 1
        self._prev[task_id] = MacroState.REFINE
        directive = PlanDirective(task_id=task_id, loss=loss, prev_directive=prev,
                                  directive=ActionDirective.REFINE, failure_class=DirectiveFailureClass.MIXED,
                                  rationale="Naive retry: replan. What failed:\n" + _failure_text(p),
                                  round=replans + 1)
        await self.bus.publish(Role.GGS, Role.PLANNER, directive, task_id=task_id)
