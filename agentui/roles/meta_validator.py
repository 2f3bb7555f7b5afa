"""R4b Meta-Validator (roles-v0.7 §R4b): fan in a round's outcomes, gate, merge, verify.

Fan-in waits for every subtask of the DispatchManifest, with a timeout: missing outcomes are a
failure, not a wait forever. The code gate runs before any LLM call: one failed outcome → a
ReplanRequest to GGS at once. With all matched, one LLM call merges the outputs and judges every
task criterion (skeptical: when in doubt, fail); a failed task criterion reaches GGS as a real
failure (D > 0). R4b's own LLM or parse failure becomes a ReplanRequest, never silence (an
unusable reply has its own reason: GGS ends the task unverified rather than redo checked work). An empty
manifest (R2 could not plan) is a failure GGS must see too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
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
    TaskSpec,
    Verdict,
)
from agentui.llm.base import LLMInfraError, LLMOutputError
from agentui.llm.schema import LENGTHS
from agentui.roles import grounding as G
from agentui.roles import worldcheck as W
from agentui.roles.actions import FIX, REPEATED_PLAN, brief
from agentui.roles.base import RoleBase, RoleContext
from agentui.roles.executor import SKIPPED

SYSTEM = (
    "You are the Meta-Validator, the skeptical final check. Merge the subtask results into the "
    "final answer for the user (merged_output: the actual answer or result, complete, in plain "
    "text) and judge each task criterion against the results. When the evidence is ambiguous, "
    "fail: a wrong result delivered to the user is worse than one more round. For a failed "
    "criterion give failure_class logical (wrong result/approach) or environmental (blocked by "
    "the environment) and the evidence. The workspace facts were checked by code after the work: "
    "a result they contradict fails.\n"
    'Example: {"merged_output": "docs has 4 .md files", "summary": "counted the .md files", '
    '"verdicts": [{"verdict": "pass", "evidence": "4"}]}'
)


class TaskVerdict(BaseModel):
    verdict: Literal["pass", "fail"]
    failure_class: Literal["logical", "environmental"] | None = None
    evidence: str = ""


class MergeOut(BaseModel):
    # typed, so llama.cpp's converter builds the grammar and `verdicts` is enforced (#13)
    merged_output: Any = Field("", json_schema_extra={"type": "string"})
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
    consumes = frozenset({"DispatchManifest", "SubTaskOutcome", "SubTask", "TaskSpec"})
    receiver_only = False

    def __init__(self, ctx: RoleContext) -> None:
        super().__init__(ctx)
        self._subtasks: dict[str, SubTask] = {}  # observed, so a missing outcome's criteria count as failed
        self._rounds: dict[str, _FanIn] = {}  # task id → the current round
        self._early: dict[str, SubTaskOutcome] = {}
        self._started: dict[str, str] = {}  # task id → first dispatched_at
        self._before: dict[str, dict[Path, bytes]] = {}  # task id → the files it names, before it ran
        self._tree: dict[str, dict[str, tuple[int, int, int]] | None] = {}  # task id → W.tree before it ran

    def accepts(self, env: Envelope) -> bool:
        if env.type in ("SubTask", "TaskSpec"):
            return True  # observed: a TaskSpec's named files are read before any plan runs (#13)
        return env.type in self.consumes and env.receiver == self.role

    async def on_cancel(self, task_id: str) -> None:
        for k in [k for k, v in self._subtasks.items() if v.parent_task_id == task_id]:
            self._subtasks.pop(k, None)
        fi = self._rounds.pop(task_id, None)
        if fi and fi.timer:
            fi.timer.cancel()
        self._started.pop(task_id, None)
        self._before.pop(task_id, None)
        self._tree.pop(task_id, None)

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
        if isinstance(p, TaskSpec):
            if tid not in self._before:
                self._before[tid] = await asyncio.to_thread(W.snapshot, p.raw_input, self.ctx.workspace)
                # the workspace listed (None past W.MAX_TREE paths): what the grants compare after
                self._tree[tid] = await asyncio.to_thread(W.tree, self.ctx.workspace)
                for held in (self._before, self._tree):  # the last 16 tasks' (a session runs many)
                    while len(held) > 16:
                        held.pop(next(iter(held)))
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
            fi = self._rounds.get(tid)
            if fi is None or p.subtask_id not in fi.manifest.subtask_ids:
                self._early[p.subtask_id] = p
                return
            fi.outcomes[p.subtask_id] = p
            await self._maybe_complete(tid, fi)

    async def _timeout(self, tid: str, fi: _FanIn) -> None:
        await asyncio.sleep(self.ctx.config.pipeline.fan_in_timeout_s)
        if fi.done or self._rounds.get(tid) is not fi:
            return
        fi.done = True
        missing = [s for s in fi.manifest.subtask_ids if s not in fi.outcomes]
        limit = self.ctx.config.pipeline.fan_in_timeout_s
        why = f"reported nothing within {limit:g} s (fan-in timeout)"
        # what never reported is not done, and nothing was verified: every missing criterion and
        # every task criterion counts as failed, so a timeout can never read as success (issue #13)
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
        output = m.planner_error_kind == "model_output"  # the model's output, not the approach (#12)
        declined = why.startswith("declined: ")  # the user said no to the plan: stop, don't replan (#13)
        # break_symmetry, and the planner repeated the failed plan even after its re-ask: another
        # round gets the same order and no new outcome, so the same plan again (5 of 5 stored
        # 1.5B runs ended in abandon anyway, 2 planner calls later) (#13)
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
            # failure (#12) — no replan order built on it, no Megram; skipped steps did not run
            cut = [o.model_output_cut for o in failed if o.model_output_cut]
            ran = [o for o in failed if o.failure_reason != SKIPPED]
            output = bool(cut) and len(cut) == len(ran)
            await self.publish(Role.GGS, ReplanRequest(
                task_id=tid, intent=self._intent(fi),
                gap_summary=f"{len(failed)}/{len(outcomes)} subtasks failed — " + " | ".join(lines)[:800],
                failed_subtasks=[o.subtask_id for o in failed], correction_count=self._corrections(outcomes),
                elapsed_ms=self._elapsed_ms(tid), outcomes=outcomes,
                reason="model_output" if output else "gate", output_cut=cut[-1] if output else None), tid)
            return
        await self._merge(tid, fi, outcomes)

    async def _merge(self, tid: str, fi: _FanIn, outcomes: list[SubTaskOutcome]) -> None:
        m = fi.manifest
        crits = m.task_criteria
        spec = m.task_spec
        results = "\n".join(f"{i}. {o.intent[:150]}\n   result: {str(o.output)[:800]}"
                            for i, o in enumerate(outcomes, 1))
        crit_lines = "\n".join(f"{i}. {c.criterion}" for i, c in enumerate(crits, 1))
        request = spec.raw_input if spec else ""
        ws = self.ctx.workspace
        world = W.facts(f"{request}\n{crit_lines}", ws)  # the world, not the executors' claims (#13)
        seen = ("\n\nWorkspace now (checked by code):\n" + "\n".join(world)) if world else ""
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": (
                f"User request (verbatim): {request}\n"
                f"Task criteria:\n{crit_lines or '(none)'}\n\nSubtask results:\n{results}{seen}\n\n"
                f"Give exactly {max(1, len(crits))} verdicts, in the order of the criteria.")},
        ]
        try:
            out = await self.ctx.llm("meta_validator").structured(messages, MergeOut)
        except LLMInfraError:
            raise  # the endpoint failed, not this role: the runtime ends the task (#12)
        except Exception as e:  # noqa: BLE001 - R4b failure → ReplanRequest, never silence
            # unusable replies say nothing about the approach (#12 item 4): GGS must not replan
            # verified work away on them, nor claim success — its own reason says so (#13)
            output = isinstance(e, LLMOutputError)
            await self.publish(Role.GGS, ReplanRequest(
                task_id=tid, intent=self._intent(fi),
                gap_summary=f"the meta-validator could not verify the result: {e}"[:600],
                correction_count=self._corrections(outcomes), elapsed_ms=self._elapsed_ms(tid),
                outcomes=outcomes, task_criteria_verdicts=self._unverified(crits, str(e)),
                reason="verification_output" if output else "meta_validator_error",
                output_cut=getattr(e, "cut", None) if output else None), tid)
            return
        verdicts = []
        # a merged answer the grammar cut at its maxLength is not the whole answer: the subtasks'
        # own outputs are (#13: the schema is enforced on llama.cpp now)
        cut = isinstance(out.merged_output, str) and len(out.merged_output) == LENGTHS["merged_output"]
        if cut:
            out.merged_output = ""
        merged_text = out.merged_output if out.merged_output not in (None, "", [], {}) else \
            " ".join(str(o.output) for o in outcomes)
        hay = G.tool_text(c for o in outcomes for c in o.tool_calls)
        granted = False  # some criterion the model failed was passed by the files themselves
        # a request for nothing but files: do the files answer it? (None: any other request) (#13)
        files_say = W.request_check(request, ws)
        changes = [p for o in outcomes for p in o.changes]
        # a counting question code can count itself: a plainly stated right count stands over R4b's
        # fail, when the task changed no file (#13); a question whose task changed the file it is
        # about cannot pass on what the task may have written
        answer = next((o.output for o in reversed(outcomes) if o.output not in (None, "")), None)
        count_ok = None if changes else W.counted(request, answer, ws)
        answered = count_ok is not None  # the answer itself checked, not only files
        asked_changed = W.question_changed(request, changes, ws) or W.source_changed(request, changes, ws)
        if count_ok is None and files_say is None and not W.collateral(changes, request, ws):
            count_ok = W.listed(request, ws)  # "the names of all .md files … into index.txt" (#13)
        if count_ok is None and files_say is None and not asked_changed:
            # "in.txt converted to upper case into out.txt", "sort the lines of names.txt … to
            # sorted.txt", when the task left the source as it was and changed nothing else — read
            # off the workspace listed before and after, so a `mkdir -p` of the result's folder or
            # a temporary file renamed into it does not count, a python one-liner's write does (#13)
            count_ok = W.converted(request, ws, self._before.get(tid), self._tree.get(tid)) \
                or W.sorted_into(request, ws, self._before.get(tid), self._tree.get(tid))
        appended = W.appended_wrong(request, ws, self._before.get(tid))
        counted_grant = False
        for i, c in enumerate(crits):
            v = out.verdicts[i] if i < len(out.verdicts) else TaskVerdict(
                verdict="fail", failure_class="logical", evidence="no verdict given (rejected by default)")
            if v.verdict == "pass":
                # a task that asks for a value cannot pass on a result holding none (issue #13)
                why = G.missing_value(c.criterion, merged_text, hay) or (
                    G.missing_value(spec.raw_input, merged_text) if spec and G.asks_for(spec.raw_input) == "number"
                    else None)
                if why:
                    v = TaskVerdict(verdict="fail", failure_class="logical", evidence=f"not met: {why}")
                elif bad := W.contradiction(f"{request}\n{c.criterion}", merged_text, ws):
                    v = TaskVerdict(verdict="fail", failure_class="logical",
                                    evidence=f"contradicted by the workspace: {bad[0]}{FIX}{bad[1]}")
                elif files_say is not None and not files_say[0]:
                    v = TaskVerdict(verdict="fail", failure_class="logical",
                                    evidence=f"contradicted by the workspace: {files_say[1]}")
                elif appended:
                    v = TaskVerdict(verdict="fail", failure_class="logical",
                                    evidence=f"contradicted by the workspace: {appended}{FIX}add the one line once, "
                                             f"with >> or write_file with append")
                elif asked_changed:
                    v = TaskVerdict(verdict="fail", failure_class="logical",
                                    evidence=f"not met: {asked_changed}{FIX}answer from the files as they are; "
                                             f"write nothing to them")
            # the request is all files code read right: its word stands over R4b's, also for a
            # criterion worded past what code parses (#13, write-hello over HTTP: "a file named
            # 'hello.txt' is created with the content 'Hello, world'" failed with hello.txt right)
            elif files_say is not None and files_say[0] and (seen_ok := W.confirmed(c.criterion, ws, request)
                                                             or files_say[1]) \
                    and not W.contradiction(f"{request}\n{c.criterion}", merged_text, ws) \
                    and not W.collateral(changes, request, ws) and not appended \
                    and W.only_named_changed(request, ws, self._tree.get(tid)):
                v = TaskVerdict(verdict="pass", evidence=seen_ok)  # the file itself says so (#13)
                granted = True
            elif count_ok:
                v = TaskVerdict(verdict="pass", evidence=count_ok)
                counted_grant = True
            if v.verdict == "pass":
                verdicts.append(CriterionVerdict(criterion=c.criterion, mode=c.mode, verdict=Verdict.PASS,
                                                 evidence=v.evidence[:500]))
            else:
                verdicts.append(CriterionVerdict(criterion=c.criterion, mode=c.mode or CriterionMode.VERIFIABLE,
                                                 verdict=Verdict.FAIL,
                                                 failure_class=FailureClass(v.failure_class or "logical"),
                                                 evidence=v.evidence[:500]))
        merged = out.merged_output
        if merged in (None, "", [], {}):
            merged = outcomes[0].output if len(outcomes) == 1 else {o.intent or o.subtask_id: o.output for o in outcomes}
        failed = [v for v in verdicts if v.verdict == Verdict.FAIL]
        if failed:
            await self.publish(Role.GGS, ReplanRequest(
                task_id=tid, intent=self._intent(fi),
                gap_summary=("task criteria not met: " + "; ".join(f"{v.criterion} ({brief(v.evidence, 240)})"
                                                                   for v in failed))[:800],
                correction_count=self._corrections(outcomes), elapsed_ms=self._elapsed_ms(tid),
                outcomes=outcomes, task_criteria_verdicts=verdicts, reason="task_criteria"), tid)
            return
        summary = out.summary or "done"
        if counted_grant:  # R4b's summary said "not met": the answer, and what code counted
            summary, merged = f"{answer} — {count_ok}", answer if answered else count_ok
        elif granted:  # the model's own summary said "not met": say what was checked instead (#13)
            summary = "Done — checked by code: " + "; ".join(v.evidence.removeprefix("checked by code: ")
                                                              for v in verdicts if v.evidence.startswith("checked by code"))
            merged = summary  # a request for files only: there is no answer value to lose
        await self.publish(Role.GGS, OutcomeSummary(
            task_id=tid, intent=self._intent(fi), summary=summary[:500], merged_output=merged,
            outcomes=outcomes, task_criteria_verdicts=verdicts, elapsed_ms=self._elapsed_ms(tid)), tid)

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
