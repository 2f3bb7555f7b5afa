"""R4b Meta-Validator (roles-v0.7 §R4b): fan in a round's outcomes, gate, merge, verify.

Fan-in waits for every subtask of the DispatchManifest, with a timeout: missing outcomes are a
failure, not a wait forever. The code gate runs before any LLM call: one failed outcome → a
ReplanRequest to GGS at once, with every task criterion counted as failed and not run — a result
nobody checked is not verified. With all matched, the task criteria's checks run (read-only
commands, through the safety gate), then one LLM call merges the outputs, names the single answer
and judges every task criterion against the results and the checks (skeptical: when in doubt,
fail). Code may take a pass away — a check that failed, a value missing from the result, the
workspace contradicting it, an answer no check printed — and never grants one. R4b's own LLM or
parse failure becomes a ReplanRequest, never silence. An empty manifest (R2 could not plan) is a
failure GGS must see too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentui.clock import parse_iso
from agentui.contracts import (
    Criterion,
    CriterionMode,
    CriterionVerdict,
    DispatchManifest,
    Envelope,
    FailureClass,
    OutcomeStatus,
    OutcomeSummary,
    Recommendation,
    ReplanRequest,
    Role,
    SubTask,
    SubTaskOutcome,
    Verdict,
)
from agentui.llm.base import LLMInfraError, LLMOutputError
from agentui.llm.schema import LENGTHS
from agentui.roles import checks as C
from agentui.roles import grounding as G
from agentui.roles import worldcheck as W
from agentui.roles.actions import FIX, REPEATED_PLAN, brief
from agentui.roles.base import RoleBase, RoleContext
from agentui.roles.executor import SKIPPED
from agentui.roles.loss import NOT_RUN
from agentui.roles.prompts import load

SYSTEM = load("meta_validator").text  # agentui/roles/prompts/meta_validator.md


class TaskVerdict(BaseModel):
    verdict: Literal["pass", "fail"]
    failure_class: Literal["logical", "environmental"] | None = None
    evidence: str = ""


class MergeOut(BaseModel):
    # typed, so llama.cpp's converter builds the grammar and `verdicts` is enforced
    merged_output: Any = Field("", json_schema_extra={"type": "string"})
    answer: str = Field("", max_length=200)
    summary: str = ""
    verdicts: list[TaskVerdict] = Field(min_length=1)


@dataclass
class _FanIn:
    manifest: DispatchManifest
    outcomes: dict[str, SubTaskOutcome] = field(default_factory=dict)
    timer: asyncio.Task[None] | None = None
    done: bool = False


class MetaValidator(RoleBase):
    role = Role.META_VALIDATOR
    consumes = frozenset({"DispatchManifest", "SubTaskOutcome", "SubTask"})
    receiver_only = False

    def __init__(self, ctx: RoleContext) -> None:
        super().__init__(ctx)
        self._subtasks: dict[str, SubTask] = {}  # observed, so a missing outcome's criteria count as failed
        self._rounds: dict[str, _FanIn] = {}  # task id → the current round
        self._early: dict[str, SubTaskOutcome] = {}
        self._started: dict[str, str] = {}  # task id → first dispatched_at

    def accepts(self, env: Envelope) -> bool:
        if env.type == "SubTask":
            return True  # observed: a missing outcome's criteria count as failed
        return env.type in self.consumes and env.receiver == self.role

    async def on_cancel(self, task_id: str) -> None:
        for k in [k for k, v in self._subtasks.items() if v.parent_task_id == task_id]:
            self._subtasks.pop(k, None)
        fi = self._rounds.pop(task_id, None)
        if fi and fi.timer:
            fi.timer.cancel()
        self._started.pop(task_id, None)

    def _elapsed_ms(self, tid: str) -> int:
        start = self._started.get(tid)
        if not start:
            return 0
        return max(0, int((self.ctx.clock.now() - parse_iso(start)).total_seconds() * 1000))

    async def handle(self, env: Envelope) -> None:
        p = env.payload
        tid = env.task_id or ""
        if isinstance(p, SubTask):
            self._subtasks[p.subtask_id] = p
            return
        if isinstance(p, DispatchManifest):
            self._started.setdefault(tid, p.dispatched_at)
            old = self._rounds.pop(tid, None)
            if old and old.timer:
                old.timer.cancel()
            fi = _FanIn(p)
            self._rounds[tid] = fi
            if not p.subtask_ids:
                fi.done = True
                await self._planner_failed(tid, p)
                return
            for sid in p.subtask_ids:
                if sid in self._early:
                    fi.outcomes[sid] = self._early.pop(sid)
            fi.timer = asyncio.create_task(self._timeout(tid, fi))
            await self._maybe_complete(tid, fi)
        elif isinstance(p, SubTaskOutcome):
            cur = self._rounds.get(tid)
            if cur is None or p.subtask_id not in cur.manifest.subtask_ids:
                self._early[p.subtask_id] = p
                return
            cur.outcomes[p.subtask_id] = p
            await self._maybe_complete(tid, cur)

    async def _timeout(self, tid: str, fi: _FanIn) -> None:
        await asyncio.sleep(self.ctx.config.pipeline.fan_in_timeout_s)
        if fi.done or self._rounds.get(tid) is not fi:
            return
        fi.done = True
        missing = [s for s in fi.manifest.subtask_ids if s not in fi.outcomes]
        limit = self.ctx.config.pipeline.fan_in_timeout_s
        why = f"reported nothing within {limit:g} s (fan-in timeout)"
        # what never reported is not done, and nothing was verified: every missing criterion and
        # every task criterion counts as failed, so a timeout can never read as success
        for sid in missing:
            st = self._subtasks.get(sid)
            crits = st.success_criteria if st else []
            fi.outcomes[sid] = SubTaskOutcome(
                subtask_id=sid, parent_task_id=tid, status=OutcomeStatus.FAILED, failure_reason=why,
                intent=st.intent if st else "", sequence=st.sequence if st else 1,
                criteria_verdicts=[CriterionVerdict(criterion=c.criterion, mode=c.mode, verdict=Verdict.FAIL,
                                                    failure_class=FailureClass.ENVIRONMENTAL, evidence=why)
                                   for c in crits])
        outcomes = self._ordered(fi)
        self._forget_round(fi)
        await self.publish(Role.GGS, ReplanRequest(
            task_id=tid, intent=self._intent(fi),
            gap_summary=(f"fan-in timeout: {len(missing)} of {len(fi.manifest.subtask_ids)} subtasks "
                         f"reported nothing within {limit:g} s"),
            failed_subtasks=missing, correction_count=self._corrections(outcomes),
            elapsed_ms=self._elapsed_ms(tid), outcomes=outcomes, reason="fan_in_timeout",
            task_criteria_verdicts=self._unverified(fi.manifest.task_criteria, "fan-in timeout")), tid)

    @staticmethod
    def _unverified(crits: list[Criterion], why: str) -> list[CriterionVerdict]:
        return [CriterionVerdict(criterion=c.criterion, mode=c.mode, verdict=Verdict.FAIL,
                                 failure_class=FailureClass.ENVIRONMENTAL, evidence=f"not verified: {why}"[:300])
                for c in crits] or [CriterionVerdict(
                    criterion="the merged result is verified", verdict=Verdict.FAIL,
                    failure_class=FailureClass.ENVIRONMENTAL, evidence=why[:300])]

    @staticmethod
    def _not_checked(crits: list[Criterion]) -> list[CriterionVerdict]:
        """The task criteria of a round a failed step ended before R4b: failed, and not run (they
        weigh in D, not in P: nothing was judged)."""
        why = f"{NOT_RUN}a step failed, so the result was never checked"
        return [CriterionVerdict(criterion=c.criterion, mode=CriterionMode.VERIFIABLE, verdict=Verdict.FAIL,
                                 failure_class=FailureClass.LOGICAL, evidence=why) for c in crits] or [
            CriterionVerdict(criterion="the result is verified", verdict=Verdict.FAIL,
                             failure_class=FailureClass.LOGICAL, evidence=why)]

    def _forget_round(self, fi: _FanIn) -> None:
        for sid in fi.manifest.subtask_ids:
            self._subtasks.pop(sid, None)

    def _ordered(self, fi: _FanIn) -> list[SubTaskOutcome]:
        return [fi.outcomes[s] for s in fi.manifest.subtask_ids if s in fi.outcomes]

    @staticmethod
    def _corrections(outcomes: list[SubTaskOutcome]) -> int:
        return sum(max(0, len(o.gap_trajectory) - 1) for o in outcomes)

    @staticmethod
    def _intent(fi: _FanIn) -> str:
        return fi.manifest.task_spec.intent if fi.manifest.task_spec else ""

    async def _planner_failed(self, tid: str, m: DispatchManifest) -> None:
        why = m.planner_error or "the planner produced no subtasks"
        output = m.planner_error_kind == "model_output"  # the model's output, not the approach
        declined = why.startswith("declined: ")  # the user said no to the plan: stop, don't replan
        # break_symmetry, and the planner repeated the failed plan even after its re-ask: another
        # round gets the same order and no new outcome, so the same plan again
        stuck = REPEATED_PLAN in why
        await self.publish(Role.GGS, ReplanRequest(
            recommendation=Recommendation.ABANDON if declined or stuck else Recommendation.REPLAN,
            task_id=tid, intent=m.task_spec.intent if m.task_spec else "",
            gap_summary=f"no plan: {why}"[:600], elapsed_ms=self._elapsed_ms(tid),
            task_criteria_verdicts=[CriterionVerdict(
                criterion="a valid plan exists", verdict=Verdict.FAIL,
                failure_class=FailureClass.ENVIRONMENTAL if output or declined else FailureClass.LOGICAL,
                evidence=why[:300])],
            reason="model_output" if output else "gate",
            output_cut=m.planner_output_cut if output else None), tid)

    async def _maybe_complete(self, tid: str, fi: _FanIn) -> None:
        if fi.done or any(s not in fi.outcomes for s in fi.manifest.subtask_ids):
            return
        fi.done = True
        if fi.timer:
            fi.timer.cancel()
        self._forget_round(fi)
        outcomes = self._ordered(fi)
        failed = [o for o in outcomes if o.status == OutcomeStatus.FAILED]
        if failed:  # the code gate: no LLM call
            lines = [f"{o.intent[:80] or o.subtask_id}: {brief(o.failure_reason or 'failed', 240)}" for o in failed]
            # every step that ran failed only on the executor's unusable replies: a model-output
            # failure — no replan order built on it, no Megram; skipped steps did not run
            cut = [o.model_output_cut for o in failed if o.model_output_cut]
            ran = [o for o in failed if o.failure_reason != SKIPPED]
            output = bool(cut) and len(cut) == len(ran)
            await self.publish(Role.GGS, ReplanRequest(
                task_id=tid, intent=self._intent(fi),
                gap_summary=f"{len(failed)}/{len(outcomes)} subtasks failed — " + " | ".join(lines)[:800],
                failed_subtasks=[o.subtask_id for o in failed], correction_count=self._corrections(outcomes),
                elapsed_ms=self._elapsed_ms(tid), outcomes=outcomes,
                # the result was never checked: the task criteria count as failed, never as met
                task_criteria_verdicts=self._not_checked(fi.manifest.task_criteria),
                reason="model_output" if output else "gate", output_cut=cut[-1] if output else None), tid)
            return
        await self._merge(tid, fi, outcomes)

    async def _merge(self, tid: str, fi: _FanIn, outcomes: list[SubTaskOutcome]) -> None:
        m = fi.manifest
        spec = m.task_spec
        request = spec.raw_input if spec else ""
        # no task criterion is no pass by default: the result must still do what was asked
        crits = list(m.task_criteria) or [
            Criterion(criterion=f"the result does what the request asks: {request[:200]}")
        ]
        runs = await C.run(self.ctx, tid, crits)
        results = "\n".join(f"{i}. {o.intent[:150]}\n   result: {str(o.output)[:800]}"
                            for i, o in enumerate(outcomes, 1))
        crit_lines = "\n".join(f"{i}. {c.criterion}" for i, c in enumerate(crits, 1))
        ws = self.ctx.workspace
        world = W.facts(f"{request}\n{crit_lines}", ws)
        seen = ("\n\nWorkspace now (checked by code):\n" + "\n".join(world)) if world else ""
        checked = C.prompt_section(runs)
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": (
                f"User request (verbatim): {request}\n"
                f"Task criteria:\n{crit_lines}\n\nSubtask results:\n{results}{seen}{checked}\n\n"
                f"Give exactly {len(crits)} verdicts, in the order of the criteria.")},
        ]
        try:
            out = await self.ctx.llm("meta_validator").structured(messages, MergeOut)
        except LLMInfraError:
            raise  # the endpoint failed, not this role: the runtime ends the task
        except Exception as e:  # noqa: BLE001 - R4b failure → ReplanRequest, never silence
            # an unusable reply says nothing about the approach: GGS must not replan verified work
            # away on it, nor claim success — its own reason says so
            output = isinstance(e, LLMOutputError)
            await self.publish(Role.GGS, ReplanRequest(
                task_id=tid, intent=self._intent(fi),
                gap_summary=f"the meta-validator could not verify the result: {e}"[:600],
                correction_count=self._corrections(outcomes), elapsed_ms=self._elapsed_ms(tid),
                outcomes=outcomes, task_criteria_verdicts=self._unverified(crits, str(e)),
                reason="verification_output" if output else "meta_validator_error",
                output_cut=getattr(e, "cut", None) if output else None), tid)
            return
        # a merged result the grammar cut at its maxLength is not the whole result: the subtasks'
        # own outputs are
        if isinstance(out.merged_output, str) and len(out.merged_output) == LENGTHS["merged_output"]:
            out.merged_output = ""
        merged_text = out.merged_output if out.merged_output not in (None, "", [], {}) else \
            " ".join(str(o.output) for o in outcomes)
        calls = [c for o in outcomes for c in o.tool_calls]
        hay = G.tool_text([*calls, *(r.record for r in runs.values() if r.record is not None)])
        changes = [p for o in outcomes for p in o.changes]
        asked_changed = W.question_changed(request, changes, ws) or W.source_changed(request, changes, ws)
        # one answer, for a request that asks for a value; any other request has none
        asks_value = spec is not None and (G.asks_for(request) is not None or W.is_question(request))
        answer = (" ".join((out.answer or "").split()) or None) if asks_value else None
        verdicts = [self._vetted(c, out.verdicts[i] if i < len(out.verdicts) else None, runs.get(i),
                                 request, merged_text, hay, asked_changed)
                    for i, c in enumerate(crits)]
        if asks_value:
            verdicts.append(self._answer_verdict(answer, list(runs.values()), calls))
        merged = out.merged_output
        if merged in (None, "", [], {}):
            merged = outcomes[0].output if len(outcomes) == 1 else "\n".join(
                str(o.output) for o in outcomes if o.output not in (None, ""))
        failed = [v for v in verdicts if v.verdict == Verdict.FAIL]
        if failed:
            await self.publish(Role.GGS, ReplanRequest(
                task_id=tid, intent=self._intent(fi),
                gap_summary=("task criteria not met: " + "; ".join(f"{v.criterion} ({brief(v.evidence, 240)})"
                                                                   for v in failed))[:800],
                correction_count=self._corrections(outcomes), elapsed_ms=self._elapsed_ms(tid),
                outcomes=outcomes, task_criteria_verdicts=verdicts, reason="task_criteria", answer=answer), tid)
            return
        await self.publish(Role.GGS, OutcomeSummary(
            task_id=tid, intent=self._intent(fi), summary=(out.summary or "done")[:500], answer=answer,
            merged_output=merged, outcomes=outcomes, task_criteria_verdicts=verdicts,
            elapsed_ms=self._elapsed_ms(tid)), tid)

    def _vetted(self, c: Criterion, v: TaskVerdict | None, run: C.CheckRun | None, request: str,
                merged_text: str, hay: str, asked_changed: str | None) -> CriterionVerdict:
        """R4b's verdict on one task criterion, with a pass taken away where code knows better."""
        if v is None:
            v = TaskVerdict(verdict="fail", failure_class="logical", evidence="no verdict given (rejected by default)")
        if v.verdict == "pass":
            why = None
            if run is not None and run.failed:
                why = (f"not met: {run.evidence()}", "logical" if run.ran else "environmental")
            elif missing := G.missing_value(c.criterion, merged_text, hay) or (
                    G.missing_value(request, merged_text) if G.asks_for(request) == "number" else None):
                why = (f"not met: {missing}", "logical")
            elif bad := W.contradiction(f"{request}\n{c.criterion}", self.ctx.workspace):
                why = (f"contradicted by the workspace: {bad[0]}{FIX}{bad[1]}", "logical")
            elif asked_changed:
                why = (f"not met: {asked_changed}{FIX}answer from the files as they are; write nothing to them",
                       "logical")
            if why is not None:
                v = TaskVerdict(verdict="fail", failure_class=why[1], evidence=why[0])
        if v.verdict == "pass":
            # the check's output goes with the verdict: on the bus, in the task log, for the Auditor
            ev = " | ".join(x for x in (v.evidence, run.evidence(240) if run is not None else "") if x)
            return CriterionVerdict(criterion=c.criterion, mode=c.mode, verdict=Verdict.PASS, evidence=ev[:500])
        return CriterionVerdict(criterion=c.criterion, mode=c.mode or CriterionMode.VERIFIABLE, verdict=Verdict.FAIL,
                                failure_class=FailureClass(v.failure_class or "logical"), evidence=v.evidence[:500])

    @staticmethod
    def _answer_verdict(answer: str | None, runs: list[C.CheckRun], calls: list[Any]) -> CriterionVerdict:
        """A request for a value is answered when R4b names one answer and a check printed it."""
        crit = "a check confirms the answer"
        if not answer:
            return CriterionVerdict(criterion=crit, verdict=Verdict.FAIL, failure_class=FailureClass.LOGICAL,
                                    evidence=f"not met: no single answer was named{FIX}report the value asked for")
        if C.confirms(answer, runs):
            agreeing = next(r for r in runs if C.confirms(answer, [r]))
            how = "" if C.independent(agreeing, calls) else " (the same command the step ran)"
            return CriterionVerdict(criterion=crit, verdict=Verdict.PASS,
                                    evidence=f"{agreeing.evidence(300)}{how}")
        printed = "; ".join(r.evidence(160) for r in runs) or "no task criterion carries a check"
        return CriterionVerdict(
            criterion=crit, verdict=Verdict.FAIL, failure_class=FailureClass.LOGICAL,
            evidence=(f"not verified: no check printed the answer {answer[:80]!r} ({printed}){FIX}give a task "
                      "criterion a check: a read-only command that prints the value asked for, by another "
                      "method than the step's")[:500])

    async def on_error(self, env: Envelope, exc: Exception) -> None:
        tid = env.task_id or ""
        fi = self._rounds.get(tid)
        await self.publish(Role.GGS, ReplanRequest(
            task_id=tid, intent=self._intent(fi) if fi else "",
            gap_summary=f"meta-validator error: {exc}"[:600], elapsed_ms=self._elapsed_ms(tid),
            outcomes=self._ordered(fi) if fi else [],
            task_criteria_verdicts=[CriterionVerdict(criterion="the merged result is verified",
                                                     verdict=Verdict.FAIL, failure_class=FailureClass.ENVIRONMENTAL,
                                                     evidence=str(exc)[:300])],
            reason="meta_validator_error"), tid)
