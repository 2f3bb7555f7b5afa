"""R7 maths: the v0.8 24-cell table, transcribed row by row, plus D/P/Ω/L rules."""

from __future__ import annotations

import pytest

from agentui.config import GGSConfig
from agentui.contracts import CriterionVerdict, FailedCriterion, GapAttempt, SubTaskOutcome
from agentui.roles import loss as L

CFG = GGSConfig()
GRAD = {"< -ε": -0.5, "|·|<ε": 0.05, "> ε": 0.5}
DV = {"≤ δ": 0.2, "> δ": 0.9}
PV = {"≤ ρ": 0.3, "> ρ": 0.8}
OV = {"< θ": 0.2, "≥ θ": 0.85}

# (#, ∇L, D, P, Ω, macro-state) — v0.8 "Full 24-cell enumeration"
TABLE = [
    (1, "< -ε", "≤ δ", "≤ ρ", "< θ", "success"), (2, "< -ε", "≤ δ", "> ρ", "< θ", "success"),
    (3, "< -ε", "≤ δ", "≤ ρ", "≥ θ", "abandon"), (4, "< -ε", "≤ δ", "> ρ", "≥ θ", "abandon"),
    (5, "< -ε", "> δ", "≤ ρ", "< θ", "refine"), (6, "< -ε", "> δ", "> ρ", "< θ", "change_approach"),
    (7, "< -ε", "> δ", "≤ ρ", "≥ θ", "abandon"), (8, "< -ε", "> δ", "> ρ", "≥ θ", "abandon"),
    (9, "|·|<ε", "≤ δ", "≤ ρ", "< θ", "success"), (10, "|·|<ε", "≤ δ", "> ρ", "< θ", "success"),
    (11, "|·|<ε", "≤ δ", "≤ ρ", "≥ θ", "abandon"), (12, "|·|<ε", "≤ δ", "> ρ", "≥ θ", "abandon"),
    (13, "|·|<ε", "> δ", "≤ ρ", "< θ", "change_path"), (14, "|·|<ε", "> δ", "> ρ", "< θ", "break_symmetry"),
    (15, "|·|<ε", "> δ", "≤ ρ", "≥ θ", "abandon"), (16, "|·|<ε", "> δ", "> ρ", "≥ θ", "abandon"),
    (17, "> ε", "≤ δ", "≤ ρ", "< θ", "success"), (18, "> ε", "≤ δ", "> ρ", "< θ", "success"),
    (19, "> ε", "≤ δ", "≤ ρ", "≥ θ", "abandon"), (20, "> ε", "≤ δ", "> ρ", "≥ θ", "abandon"),
    (21, "> ε", "> δ", "≤ ρ", "< θ", "refine"), (22, "> ε", "> δ", "> ρ", "< θ", "change_approach"),
    (23, "> ε", "> δ", "≤ ρ", "≥ θ", "abandon"), (24, "> ε", "> δ", "> ρ", "≥ θ", "abandon"),
]


def test_table_is_complete_and_non_overlapping():
    cells = {(g, d, p, o) for _, g, d, p, o, _ in TABLE}
    assert len(TABLE) == 24 and len(cells) == 24
    counts: dict[str, int] = {}
    for *_, state in TABLE:
        counts[state] = counts.get(state, 0) + 1
    assert counts == {"abandon": 12, "success": 6, "break_symmetry": 1, "change_approach": 2,
                      "change_path": 1, "refine": 2}


@pytest.mark.parametrize(("n", "g", "d", "p", "o", "expected"), TABLE, ids=[f"cell{r[0]}" for r in TABLE])
def test_cell(n, g, d, p, o, expected):
    assert L.macro_state(DV[d], PV[p], OV[o], GRAD[g], CFG).value == expected


def test_boundaries_follow_the_cascade():
    assert L.macro_state(0.9, 0.9, CFG.theta, 0.0, CFG).value == "abandon"  # Ω ≥ θ
    assert L.macro_state(CFG.delta, 0.9, 0.0, 0.0, CFG).value == "success"  # D ≤ δ
    assert L.macro_state(0.9, CFG.rho, 0.0, 0.0, CFG).value == "change_path"  # P ≤ ρ
    assert L.macro_state(0.9, 0.9, 0.0, CFG.epsilon, CFG).value == "change_approach"  # |∇L| ≥ ε


def _v(c, verdict="fail", mode="verifiable", fc="logical"):
    return CriterionVerdict(criterion=c, mode=mode, verdict=verdict,
                            failure_class=fc if verdict == "fail" else None)


def _o(verdicts, traj=()):
    return SubTaskOutcome(subtask_id="s", parent_task_id="t", status="failed", criteria_verdicts=verdicts,
                          gap_trajectory=[GapAttempt(attempt=i + 1, failed_criteria=[
                              FailedCriterion(criterion=c, failure_class="logical") for c in fails])
                              for i, fails in enumerate(traj)])


def test_distance_weights_plausible_by_k_over_n():
    # plausible criterion failed on 1 of 3 attempts → 1/3; verifiable → 1; a pass → 0
    o = _o([_v("a", mode="plausible"), _v("b"), _v("c", verdict="pass")], traj=[["a", "b"], ["b"], ["b"]])
    assert L.distance([o]) == pytest.approx((1 / 3 + 1.0) / 3)


def test_task_criteria_failures_count_in_D():
    ok = SubTaskOutcome(subtask_id="s", parent_task_id="t", status="matched", criteria_verdicts=[_v("a", "pass")])
    assert L.distance([ok], [_v("merged output lists 3 files", fc="logical")], failure=True) == 0.5


def test_a_failed_or_unchecked_task_criterion_is_never_close_enough():
    # pooled D (v0.8 §R7): 3 passing step criteria + 1 failed task criterion is D = 0.25 ≤ δ, yet
    # success needs the task criteria checked and met
    ok = SubTaskOutcome(subtask_id="s", parent_task_id="t", status="matched",
                        criteria_verdicts=[_v(c, "pass") for c in "abc"])
    failed = [_v("the answer is a number")]
    d = L.distance([ok], failed, failure=True)
    assert d == 0.25 and not L.task_checked(failed)
    assert L.macro_state(d, 1.0, 0.0, 0.0, CFG, all_ran=L.task_checked(failed)).value != "success"
    not_run = [CriterionVerdict(criterion="x", verdict="fail", failure_class="logical",
                                evidence=L.NOT_RUN + "a step failed, so the result was never checked")]
    assert not L.task_checked(not_run) and not L.task_checked([])
    assert L.task_checked([_v("x", "pass")])
    # a plausible task criterion may fall short within δ; a verifiable one may not
    plausible = CriterionVerdict(criterion="y", verdict="fail", failure_class="logical", mode="plausible",
                                 evidence="vague")
    assert L.task_checked([_v("x", "pass"), plausible])


def test_never_run_criteria_count_in_D_but_not_in_P():
    ran = _o([_v("a", "pass"), _v("b", "pass"), _v("c", "pass"), _v("d", fc="environmental")])
    skipped = _o([CriterionVerdict(criterion="e", verdict="fail", failure_class="logical",
                                   evidence=L.NOT_RUN + "skipped")])
    assert L.distance([ran, skipped], failure=True) == pytest.approx(2 / 5)
    failed = L.failed_verdicts([ran, skipped])
    assert [v.criterion for v in failed] == ["d"] and L.implausibility(failed) == 0.0
    # a failed subtask with no verdicts at all still counts as one failed criterion
    bare = SubTaskOutcome(subtask_id="s2", parent_task_id="t", status="failed")
    assert L.distance([ran, bare], failure=True) == pytest.approx(2 / 5)


def test_failure_without_criteria_is_never_zero():
    assert L.distance([], [], failure=True) == 1.0
    ok = SubTaskOutcome(subtask_id="s", parent_task_id="t", status="failed", criteria_verdicts=[_v("a", "pass")])
    assert L.distance([ok], failure=True) > 0


def test_P_and_Omega_and_L():
    assert L.implausibility([_v("a"), _v("b", fc="environmental")]) == 0.5
    assert L.implausibility([]) == 0.0
    assert L.implausibility([_v("a", fc="environmental")]) == 0.0
    assert L.resource_cost(3, 0, CFG) == pytest.approx(0.6)
    assert L.resource_cost(0, CFG.time_budget_ms, CFG) == pytest.approx(0.4)
    assert L.resource_cost(9, 10**9, CFG) == 1.0
    # β_eff = β·(1 − Ω)
    assert L.total_loss(1.0, 1.0, 0.5, CFG) == pytest.approx(0.6 + 0.3 * 0.5 + 0.4 * 0.5)
    s = L.signals(1.0, 0.0, 0.2, 0.5, CFG)
    assert s.grad_l == pytest.approx(s.L - 0.5)
    assert L.signals(1.0, 0.0, 0.2, None, CFG).grad_l == 0.0


def test_urgency_modulation():
    assert L.urgency(-0.5, CFG).value == "low"
    assert L.urgency(0.0, CFG).value == "normal"
    assert L.urgency(0.5, CFG).value == "high"
