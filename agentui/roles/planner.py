"""R2 Planner (roles-v0.7/v0.8 §R2): interpret the intent into falsifiable task criteria, then
decompose it into the fewest subtasks; replan on GGS PlanDirectives.

Before every plan it calibrates on memory (QueryC + QueryMK for the intent's tag pair) and formats
the MUST NOT / SHOULD PREFER lines itself. The code plan validator (plan_validator.py) rejects plans
that use a blocked tool, repeat a blocked target or — under break_symmetry — repeat the previous
plan; the planner re-asks (bounded; it stops early when a re-ask is rejected for the very problem it
was told about, as a second re-ask then rarely differs) and then hands the failure to GGS through an
empty manifest, never silence. A plan for a request that asks for a value is re-asked once when no
task criterion carries a check. The plan that runs is the normaliser's (plan_normaliser.py). IDs are
assigned here by the runtime's factory, never by the LLM.

The prompt is built in plan_prompt.py, the reply schema is plan_schema.py; the names other modules
use are importable from here too.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from agentui.clock import iso
from agentui.contracts import (
    ConfirmationDecision,
    ConfirmationRequest,
    Criterion,
    CriterionMode,
    DispatchManifest,
    Envelope,
    PlanDirective,
    Role,
    SubTask,
    TaskSpec,
)
from agentui.llm.base import LLMInfraError, LLMOutputError
from agentui.roles import grounding as G
from agentui.roles import worldcheck as W
from agentui.roles.base import RoleBase, RoleContext
from agentui.roles.calibration import Calibration, calibrate
from agentui.roles.plan_normaliser import (
    judged_on_the_answer,
    one_step,
    question_only,
    steps_to_run,
    told_why,
    without_duplicates,
    without_example,
)
from agentui.roles.plan_prompt import (
    DIRECTIVE_TEXT,
    EXAMPLE_WORDS,
    STEPS_PASSED_TEXT,
    SYSTEM,
    directive_text,
    plan_messages,
)
from agentui.roles.plan_schema import PlanCriterion, PlanOut, PlanState, PlanStep, TaskCriterion
from agentui.roles.plan_validator import COPIED_EXAMPLE, NO_CHECK, has_check, plan_problem, reask

__all__ = [
    "COPIED_EXAMPLE", "DECLINED", "DIRECTIVE_TEXT", "EXAMPLE_WORDS", "NO_CHECK",
    "STEPS_PASSED_TEXT", "SYSTEM", "PlanCriterion", "PlanOut", "PlanState", "PlanStep", "Planner",
    "TaskCriterion", "directive_text", "has_check", "judged_on_the_answer", "one_step",
    "question_only", "without_duplicates", "without_example",
]

DECLINED = "declined: "  # planner_error prefix: the user said no; GGS abandons rather than replans

_Task = PlanState  # the name the planner's tests use for its per-task state


def _criterion(c: PlanCriterion) -> Criterion:
    """A plan's criterion as the bus carries it, bounded."""
    return Criterion(criterion=c.criterion[:300], mode=CriterionMode(c.mode), check=c.check[:300])


class Planner(RoleBase):
    role = Role.PLANNER
    consumes = frozenset({"TaskSpec", "PlanDirective", "ConfirmationDecision"})
    serial = False

    def __init__(self, ctx: RoleContext) -> None:
        super().__init__(ctx)
        self._tasks_state: dict[str, _Task] = {}
        self._decisions: dict[str, asyncio.Future[ConfirmationDecision]] = {}

    def accepts(self, env: Envelope) -> bool:
        if env.type == "ConfirmationDecision":
            return (env.payload.request_id in self._decisions)  # type: ignore[attr-defined]
        return super().accepts(env)

    async def on_cancel(self, task_id: str) -> None:
        self._tasks_state.pop(task_id, None)
        for rid, fut in list(self._decisions.items()):
            if rid.startswith(f"{task_id}:") and not fut.done():
                fut.cancel()

    async def handle(self, env: Envelope) -> None:
        p = env.payload
        if isinstance(p, ConfirmationDecision):
            fut = self._decisions.get(p.request_id)
            if fut is not None and not fut.done():
                fut.set_result(p)
            return
        if isinstance(p, TaskSpec):
            st = _Task(spec=p)
            st.located = await asyncio.to_thread(W.located, p.raw_input, self.ctx.workspace)
            self._tasks_state[p.task_id] = st
            await self._plan(st)
        elif isinstance(p, PlanDirective):
            known = self._tasks_state.get(p.task_id)
            if known is None:
                return
            known.round += 1
            known.directive = p
            known.blocked_tools = set(p.blocked_tools)
            # GGS's list is the one accumulated list (v0.8 triedTargets); its urgency narrowing
            # stands
            known.blocked_targets = list(p.blocked_targets)
            await self._plan(known)

    # -- memory calibration (v0.8 §R2; calibration.py) ----------------------------------------
    async def calibrate(self, spec: TaskSpec) -> Calibration:
        """MUST NOT / SHOULD PREFER lines, caution, and memory's structured constraints."""
        mem = self.ctx.memory
        if mem is None:
            return Calibration()
        try:
            cal, record = await calibrate(mem, spec.intent, self.ctx.workspace, spec.raw_input)
            self.ctx.log(spec.task_id, record)
            return cal
        except Exception as e:  # noqa: BLE001 - memory trouble must not stop planning
            self.ctx.log(spec.task_id, {"kind": "memory_calibration_error", "error": str(e)[:300]})
            return Calibration()

    async def _caution_gate(self, st: _Task, plan: PlanOut, caution: list[str]) -> bool:
        """Memory's Caution (v0.8 §R2: proceed with a confirmation gate): ask once per task. The
        question is a pause, not the safety gate: --yes or an unattended tree run answers it (the
        task log says who), and going ahead approves none of the plan's commands."""
        if not caution or st.caution_ok:
            return True
        tid = st.spec.task_id
        rid = f"{tid}:{self.ctx.ids.new('req')}"
        fut: asyncio.Future[ConfirmationDecision] = asyncio.get_running_loop().create_future()
        self._decisions[rid] = fut
        await self.bus.publish(Role.SAFETY, Role.USER, ConfirmationRequest(
            request_id=rid, task_id=tid, tool="plan",
            command="; ".join(s.intent[:120] for s in plan.subtasks),
            reasons=[f"memory has a mixed record for tasks like this: {c[:160]}"
                     for c in caution[:2]],
            cwd=str(self.ctx.workspace), caution=True), task_id=tid)
        try:
            decision = await fut
        finally:
            self._decisions.pop(rid, None)
        st.caution_ok = decision.decision.value in ("approve", "always", "task", "session",
                                                    "project")
        self.ctx.log(tid, {"kind": "memory_caution", "go_ahead": st.caution_ok,
                           "by": decision.answered_by})
        return st.caution_ok

    # -- planning -------------------------------------------------------------------------------
    def _tool_names(self, blocked: set[str]) -> list[str]:
        reg = self.ctx.tools
        if reg is None:
            return []
        return [s["name"] for s in reg.specs(exclude=blocked)]

    def _messages(self, st: _Task, must_not: list[str], prefer: list[str], problem: str | None,
                  *, short: bool = False) -> list[dict[str, str]]:
        tools = self._tool_names(st.blocked_tools)
        return plan_messages(st, tools, must_not, prefer, problem, short=short)

    def validate(self, plan: PlanOut, st: _Task) -> str | None:
        """The code plan validator. Returns the problem, or None if the plan is acceptable."""
        known = set(self._tool_names(set())) if self.ctx.tools is not None else None
        return plan_problem(plan, st, known)

    @staticmethod
    def _told_why(st: _Task, plan: PlanOut) -> None:
        told_why(st, plan)

    async def _plan(self, st: _Task) -> None:
        spec = st.spec
        tid = spec.task_id
        cal = await self.calibrate(spec)
        must_not, prefer = cal.must_not, cal.prefer
        st.memory_constraints = cal.constraints
        problem: str | None = None
        plan: PlanOut | None = None
        output_failures = 0
        output_cut: str | None = None
        llm = self.ctx.llm("planner")
        asks_value = G.asks_for(spec.raw_input) is not None or W.is_question(spec.raw_input)
        for _attempt in range(self.ctx.config.pipeline.plan_reasks + 1):
            try:
                tools = self._tool_names(st.blocked_tools)  # the grammar allows only real tools
                # a cut reply is re-asked under the same directive with a tighter budget and this
                # shorter prompt
                cand = await llm.structured(
                    self._messages(st, must_not, prefer, problem), PlanOut,
                    enums={"tools": tools} if tools else None,
                    retry_messages=self._messages(st, must_not, prefer, problem, short=True))
            except LLMInfraError:
                raise  # the endpoint failed, not the plan: the runtime ends the task
            except LLMOutputError as e:
                # still unusable after the re-ask: the model's output failed, not the approach
                output_failures += 1
                output_cut = e.cut
                problem = None
                self.ctx.log(tid, {"kind": "plan_output_failure", "round": st.round, "cut": e.cut,
                                   "error": str(e)[:300]})
                break
            # an LLM failure is a planner failure GGS must see
            except Exception as e:  # noqa: BLE001
                problem = f"planner LLM failed: {e}"
                break
            told, problem = problem, self.validate(cand, st)
            if dropped := without_example(cand, spec.raw_input):
                self.ctx.log(tid, {"kind": "plan_example_copied", "round": st.round,
                                   "dropped": dropped})
            problem = reask(problem, told, cand, dropped, asks_value=asks_value,
                            more=_attempt < self.ctx.config.pipeline.plan_reasks)
            self.ctx.log(tid, {"kind": "plan", "round": st.round,
                               "plan": cand.model_dump(mode="json"), "rejected": problem})
            if problem is None:
                plan = cand
                break
            if problem == told:
                # the re-ask changed nothing the validator checks: another one would not either
                break
        if plan is None:
            unusable = problem is None and output_failures > 0
            kind: Literal["plan", "model_output"] = "model_output" if unusable else "plan"
            if kind == "model_output":
                problem = (f"the model's replies were unusable ({output_failures} in a row, "
                           f"last: {output_cut})")
            await self.publish(Role.META_VALIDATOR, DispatchManifest(
                task_id=tid, subtask_ids=[], task_spec=spec,
                dispatched_at=iso(self.ctx.clock.now()),
                round=st.round, planner_error=problem or "no valid plan", planner_error_kind=kind,
                planner_output_cut=output_cut if kind == "model_output" else None), tid)
            return
        self._told_why(st, plan)
        st.last_plan = plan
        st.last_blocked, st.last_blocked_targets = set(st.blocked_tools), set(st.blocked_targets)
        if not await self._caution_gate(st, plan, cal.caution):
            await self.publish(Role.META_VALIDATOR, DispatchManifest(
                task_id=tid, subtask_ids=[], task_spec=spec,
                dispatched_at=iso(self.ctx.clock.now()), round=st.round,
                planner_error=DECLINED + "memory advised caution and the user did not confirm"),
                tid)
            return
        steps, changes = steps_to_run(plan, spec.raw_input, self.ctx.workspace,
                                      question=W.is_question(spec.raw_input))
        for change, detail in changes:
            self.ctx.log(tid, {"kind": change, "round": st.round, **detail})
        subtasks = [SubTask(
            subtask_id=self.ctx.ids.new("subtask"), parent_task_id=tid, intent=step.intent[:500],
            success_criteria=[_criterion(c) for c in step.success_criteria],
            context=step.context[:1000], sequence=step.sequence,
            tools=list(dict.fromkeys(step.tools)),
        ) for step in steps]
        for sub in subtasks:
            await self.publish(Role.EXECUTOR, sub, tid)
        await self.publish(Role.META_VALIDATOR, DispatchManifest(
            task_id=tid, subtask_ids=[sub.subtask_id for sub in subtasks], task_spec=spec,
            dispatched_at=iso(self.ctx.clock.now()),
            task_criteria=[_criterion(c) for c in plan.task_criteria],
            round=st.round, memory_ids=cal.megram_ids), tid)

    async def on_error(self, env: Envelope, exc: Exception) -> None:
        tid = env.task_id or ""
        st = self._tasks_state.get(tid)
        spec = st.spec if st else (env.payload if isinstance(env.payload, TaskSpec) else None)
        await self.publish(Role.META_VALIDATOR, DispatchManifest(
            task_id=tid, subtask_ids=[], task_spec=spec, dispatched_at=iso(self.ctx.clock.now()),
            round=st.round if st else 0, planner_error=f"planner error: {exc}"), tid)
