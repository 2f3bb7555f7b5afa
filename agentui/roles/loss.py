"""R7's maths as pure functions (roles-v0.8 §R7): D, P, Ω, L, ∇L and the macro-state cascade.

Kept free of the bus so the 24-cell table and the weighting rules are tested directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentui.config import GGSConfig
from agentui.contracts import (
    CriterionMode,
    CriterionVerdict,
    FailureClass,
    Loss,
    MacroState,
    OutcomeStatus,
    SubTaskOutcome,
    Urgency,
    Verdict,
)


@dataclass(frozen=True)
class Signals:
    D: float
    P: float
    Omega: float
    L: float
    grad_l: float

    def loss(self) -> Loss:
        return Loss(D=round(self.D, 6), P=round(self.P, 6), Omega=round(self.Omega, 6), L=round(self.L, 6))


def criterion_weight(v: CriterionVerdict, outcome: SubTaskOutcome | None) -> float:
    """Contribution of one failed criterion to D's numerator.

    verifiable → 1.0; plausible → k/N: the share of the subtask's attempts on which this criterion
    failed (gap_trajectory). Without a trajectory a plausible failure counts fully.
    """
    if v.verdict != Verdict.FAIL:
        return 0.0
    if v.mode == CriterionMode.VERIFIABLE or outcome is None or not outcome.gap_trajectory:
        return 1.0
    n = len(outcome.gap_trajectory)
    k = sum(1 for a in outcome.gap_trajectory if any(f.criterion == v.criterion for f in a.failed_criteria))
    return max(k, 1) / n  # it failed on the final verdict, so at least once


#: evidence prefix of a criterion that was never tried (its step was skipped after an earlier one
#: failed): it counts in D — work that never ran is not done — but says nothing about P
NOT_RUN = "not run: "


def not_run(v: CriterionVerdict) -> bool:
    return v.verdict == Verdict.FAIL and v.evidence.startswith(NOT_RUN)


def never_ran(outcomes: Iterable[SubTaskOutcome]) -> bool:
    """Did some step of the plan never run (skipped after an earlier failure, never reported)?"""
    return any(
        o.status == OutcomeStatus.FAILED and (not o.criteria_verdicts or all(not_run(v) for v in o.criteria_verdicts))
        for o in outcomes
    )


def task_checked(task_verdicts: Sequence[CriterionVerdict]) -> bool:
    """The task criteria were judged and every verifiable one holds: none missing, none not run."""
    return bool(task_verdicts) and all(
        v.verdict == Verdict.PASS or (v.mode == CriterionMode.PLAUSIBLE and not not_run(v)) for v in task_verdicts)


def _share(pairs: Iterable[tuple[CriterionVerdict, SubTaskOutcome | None]]) -> tuple[float, int]:
    num, total = 0.0, 0
    for v, o in pairs:
        total += 1
        num += criterion_weight(v, o)
    return num, total


def distance(outcomes: Sequence[SubTaskOutcome], task_verdicts: Sequence[CriterionVerdict] = (),
             *, failure: bool = False) -> float:
    """D = Σ weighted failures / Σ criteria over the steps' and the task's criteria (v0.8 §R7).

    Task criteria nobody checked (a step failed first, a fan-in timeout, an unusable R4b reply) come
    as failed verdicts, so they weigh in D; `success` additionally needs them checked and met
    (`task_checked`), so a failed task criterion is never diluted into "close enough" by passing
    step criteria. A failed subtask that carries no verdicts (skipped, never reported) counts as one
    failed criterion. A failure signal with no criteria at all (planner produced nothing) is D = 1.0."""
    pairs = [(v, o) for o in outcomes for v in o.criteria_verdicts]
    num, total = _share(pairs)
    for o in outcomes:
        if o.status == OutcomeStatus.FAILED and not o.criteria_verdicts:
            num, total = num + 1.0, total + 1
    t_num, t_total = _share((v, None) for v in task_verdicts)
    num, total = num + t_num, total + t_total
    if total == 0:
        return 1.0 if failure else 0.0
    d = num / total
    if failure and d == 0.0:
        # a failure the verdicts do not show (e.g. a subtask failed without a failed criterion):
        # count it as one failed criterion rather than reaching GGS as D = 0 (DESIGN §3)
        d = 1.0 / (total + 1)
    return min(1.0, d)


def failed_verdicts(outcomes: Iterable[SubTaskOutcome], task_verdicts: Iterable[CriterionVerdict] = ()
                    ) -> list[CriterionVerdict]:
    """Failed criteria that were actually tried (never-run ones say nothing about P or the class)."""
    out = [v for o in outcomes for v in o.criteria_verdicts if v.verdict == Verdict.FAIL]
    out.extend(v for v in task_verdicts if v.verdict == Verdict.FAIL)
    return [v for v in out if not not_run(v)]


def implausibility(failed: Sequence[CriterionVerdict]) -> float:
    """P = logical / (logical + environmental) over failed criteria; 0 with no failures."""
    logical = sum(1 for v in failed if v.failure_class == FailureClass.LOGICAL)
    env = sum(1 for v in failed if v.failure_class == FailureClass.ENVIRONMENTAL)
    return logical / (logical + env) if logical + env else 0.0


def resource_cost(replan_count: int, elapsed_ms: int, cfg: GGSConfig) -> float:
    """Ω = w₁·(replans / maxReplans) + w₂·(elapsed / time budget), clamped to [0, 1]."""
    om = cfg.w1 * (replan_count / cfg.max_replans) + cfg.w2 * (elapsed_ms / cfg.time_budget_ms)
    return max(0.0, min(1.0, om))


def total_loss(D: float, P: float, Omega: float, cfg: GGSConfig) -> float:
    """L = α·D + β·(1 − Ω)·P + λ·Ω."""
    return cfg.alpha * D + cfg.beta * (1.0 - Omega) * P + cfg.lam * Omega


def signals(D: float, P: float, Omega: float, L_prev: float | None, cfg: GGSConfig) -> Signals:
    L = total_loss(D, P, Omega, cfg)
    grad = 0.0 if L_prev is None else L - L_prev
    return Signals(D=D, P=P, Omega=Omega, L=L, grad_l=grad)


def macro_state(D: float, P: float, Omega: float, grad_l: float, cfg: GGSConfig, *, all_ran: bool = True
                ) -> MacroState:
    """The v0.8 diagnostic cascade: Ω, then D, then (|∇L|, P). `success` ("close enough") needs
    every step of the plan to have run: a step that never ran is not a gap within δ."""
    if Omega >= cfg.theta:
        return MacroState.ABANDON
    if D <= cfg.delta and all_ran:
        return MacroState.SUCCESS
    signal = abs(grad_l) >= cfg.epsilon
    logical = P > cfg.rho
    if logical:
        return MacroState.CHANGE_APPROACH if signal else MacroState.BREAK_SYMMETRY
    return MacroState.REFINE if signal else MacroState.CHANGE_PATH


def urgency(grad_l: float, cfg: GGSConfig) -> Urgency:
    """∇L sign as a modulator (v0.8): improving → low, worsening → high."""
    if grad_l < -cfg.epsilon:
        return Urgency.LOW
    if grad_l > cfg.epsilon:
        return Urgency.HIGH
    return Urgency.NORMAL
