"""Law 2 does not override `success` (docs/design-decisions.md): GGS on a real bus, given the same
worsening loss twice — once in a round whose criteria are met within δ, once in a round whose task
criterion never ran — ends the first `success` and abandons the second by Law 2."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentui.bus import Bus
from agentui.config import Config
from agentui.contracts import (
    CriterionMode,
    CriterionVerdict,
    FailureClass,
    OutcomeStatus,
    Recommendation,
    ReplanRequest,
    Role,
    SubTaskOutcome,
    Verdict,
)
from agentui.roles.base import RoleContext
from agentui.roles.ggs import GGS
from agentui.roles.loss import NOT_RUN


def _v(verdict: str, failure: FailureClass | None = None, evidence: str = "",
       mode: CriterionMode = CriterionMode.VERIFIABLE) -> CriterionVerdict:
    return CriterionVerdict(criterion=f"c {verdict} {evidence}", verdict=Verdict(verdict), failure_class=failure,
                            evidence=evidence, mode=mode)


def _request(steps: list[CriterionVerdict], task: list[CriterionVerdict],
             recommendation: Recommendation = Recommendation.REPLAN) -> ReplanRequest:
    status = OutcomeStatus.FAILED if any(v.verdict == Verdict.FAIL for v in steps) else OutcomeStatus.MATCHED
    return ReplanRequest(task_id="t", intent="count files in a folder", gap_summary="a criterion failed",
                         outcomes=[SubTaskOutcome(subtask_id="s1", parent_task_id="t", status=status,
                                                  criteria_verdicts=steps, output="4", intent="count")],
                         task_criteria_verdicts=task, recommendation=recommendation, reason="task_criteria")


#: round 1: D = 2/5 = 0.4 > δ, nothing logical: L = 0.6·0.4 + 0.4·Ω(0.2) = 0.32
FIRST = _request([_v("pass"), _v("pass"), _v("pass"), _v("fail", FailureClass.ENVIRONMENTAL, "blocked")],
                 [_v("fail", FailureClass.ENVIRONMENTAL, "blocked")])
STEPS = [_v("pass"), _v("pass"), _v("pass"), _v("fail", FailureClass.LOGICAL, "off by one")]
#: round 2: D = 1/5 = 0.2 ≤ δ, the task criterion checked and met, P = 1:
#: L = 0.12 + 0.3·(1 − 0.4)·1 + 0.4·0.4 = 0.46, worse than round 1 by more than ε
MET = _request(STEPS, [_v("pass")])
#: round 2 with the task criterion never run: not close enough, and L = 0.58 is worse again
NOT_CHECKED = _request(STEPS, [_v("fail", FailureClass.ENVIRONMENTAL, f"{NOT_RUN}a step failed")])


async def _decisions(tmp_path: Path, *rounds: ReplanRequest) -> list[Any]:
    """What GGS publishes for each round (a PlanDirective or the FinalResult), Law 2 after one
    worsening round."""
    bus = Bus()
    ggs = GGS(RoleContext(bus=bus, config=Config.model_validate({"ggs": {"law2_kill": 1}}), workspace=tmp_path))
    out = bus.subscribe("test", types={"PlanDirective", "FinalResult"})
    runner = asyncio.create_task(ggs.run())
    got = []
    try:
        for req in rounds:
            await bus.publish(Role.META_VALIDATOR, Role.GGS, req, task_id="t")
            got.append((await asyncio.wait_for(out.get(), 10)).payload)
    finally:
        ggs.close()
        runner.cancel()
    return got


async def test_a_worsening_round_that_is_close_enough_ends_success_not_abandon(tmp_path: Path) -> None:
    first, final = await _decisions(tmp_path, FIRST, MET)
    assert first.directive.value == "change_path"
    assert final.directive.value == "success" and final.grad_l > 0.1  # the loss rose by more than ε
    assert final.summary.startswith("Close enough")


async def test_the_same_worsening_round_not_close_enough_is_abandoned_by_law2(tmp_path: Path) -> None:
    _first, final = await _decisions(tmp_path, FIRST, NOT_CHECKED)
    assert final.directive.value == "abandon" and "Law 2" in final.summary and final.grad_l > 0.1


async def test_the_validators_abandon_recommendation_does_not_override_success_either(tmp_path: Path) -> None:
    met = MET.model_copy(update={"recommendation": Recommendation.ABANDON})
    _first, final = await _decisions(tmp_path, FIRST, met)
    assert final.directive.value == "success"
