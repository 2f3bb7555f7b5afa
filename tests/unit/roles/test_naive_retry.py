"""The naive-retry ablation controller: replans with the failure text, then abandons."""

from __future__ import annotations

import asyncio

from agentui.bus import Bus
from agentui.config import GGSConfig
from agentui.contracts import (
    CriterionVerdict,
    OutcomeSummary,
    ReplanRequest,
    Role,
    SubTaskOutcome,
)
from agentui.roles.naive_retry import NaiveRetry


def failing_request(task: str = "t1") -> ReplanRequest:
    outcome = SubTaskOutcome(
        subtask_id="s1", parent_task_id=task, status="failed", intent="read settings.ini",
        failure_reason="No such file: settings.ini",
        criteria_verdicts=[CriterionVerdict(criterion="value printed", verdict="fail",
                                            failure_class="environmental", evidence="No such file")],
    )
    return ReplanRequest(task_id=task, gap_summary="1/1 subtasks failed", failed_subtasks=["s1"], outcomes=[outcome])


async def run_controller(bus: Bus, cfg: GGSConfig) -> tuple[NaiveRetry, asyncio.Task]:
    ctl = NaiveRetry(bus, cfg)
    return ctl, asyncio.create_task(ctl.run())


async def test_replans_with_failure_text_then_abandons() -> None:
    bus = Bus()
    out = bus.subscribe("out", types={"PlanDirective", "FinalResult"})
    _, task = await run_controller(bus, GGSConfig(max_replans=2))
    got = []
    for _ in range(3):
        await bus.publish(Role.META_VALIDATOR, Role.GGS, failing_request(), task_id="t1")
        got.append(await asyncio.wait_for(out.get(), 2))
    assert [e.type for e in got] == ["PlanDirective", "PlanDirective", "FinalResult"]
    first, second, final = (e.payload for e in got)
    assert first.directive.value == "refine" and first.blocked_tools == [] and first.blocked_targets == []
    assert "No such file: settings.ini" in first.rationale
    assert first.prev_directive.value == "init" and second.prev_directive.value == "refine"
    assert final.directive.value == "abandon" and final.replans == 2 and final.loss.D == 1.0
    assert got[0].receiver is Role.PLANNER and got[2].receiver is Role.USER
    task.cancel()


async def test_accept_on_outcome_summary() -> None:
    bus = Bus()
    out = bus.subscribe("out", types={"FinalResult"})
    _, task = await run_controller(bus, GGSConfig())
    await bus.publish(Role.META_VALIDATOR, Role.GGS,
                      OutcomeSummary(task_id="t2", summary="3 lines", merged_output="3"), task_id="t2")
    final = (await asyncio.wait_for(out.get(), 2)).payload
    assert final.directive.value == "accept" and final.output == "3" and final.loss.D == 0
    task.cancel()


async def test_ignores_messages_not_addressed_to_r7() -> None:
    bus = Bus()
    out = bus.subscribe("out", types={"PlanDirective", "FinalResult"})
    _, task = await run_controller(bus, GGSConfig())
    await bus.publish(Role.META_VALIDATOR, Role.PLANNER, failing_request(), task_id="t1")
    await asyncio.sleep(0.05)
    assert out.drain() == []
    task.cancel()
