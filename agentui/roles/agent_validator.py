"""R4a Agent-Validator (roles-v0.6 §R4a): close the gap between an ExecutionResult and its
subtask's criteria through the fast correction loop.

Per-criterion verdicts come from one LLM call over the evidence (the output and the code-recorded
tool calls); aggregation is code (one fail = failed). Failure classes are checked against the
evidence: when the attempt's LAST call failed with an environmental signature (missing file,
permission, network, timeout, denied by the user, command not found) the failure is environmental
whatever the model said; otherwise the model's class stands. A pass must be grounded in what the
tools returned (grounding.py). Empty or failed results are never accepted, and they need no LLM
call; neither does a call the user denied that nothing later made good. Within the
correction budget a CorrectionSignal goes back to R3; then the SubTaskOutcome goes to R4b with the
gap trajectory of every attempt. A corrected attempt that repeats the failed one verbatim (the same
tool calls with the same results and the same answer) brings no new evidence: it keeps the failed
verdicts without another LLM call and spends no more of the correction budget (a small model
given the same correction tends to send the same calls again). A criterion's check (checks.py)
runs before the LLM call; its output is evidence, grounds a pass, and a failed check takes a pass
away. Code never turns a fail into a pass.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentui.contracts import (
    CorrectionSignal,
    Criterion,
    CriterionMode,
    CriterionVerdict,
    Envelope,
    ExecutionResult,
    ExecutionStatus,
    FailedCriterion,
    FailureClass,
    GapAttempt,
    OutcomeStatus,
    ReplanRequest,
    Role,
    SubTask,
    SubTaskOutcome,
    ToolCallRecord,
    Verdict,
)
from agentui.llm.base import LLMInfraError
from agentui.roles import checks as C
from agentui.roles import grounding as G
from agentui.roles import worldcheck as W
from agentui.roles.actions import FIX, brief
from agentui.roles.base import RoleBase, RoleContext
from agentui.roles.calibration import rel_target
from agentui.roles.executor import SKIPPED
from agentui.roles.loss import NOT_RUN
from agentui.roles.prompts import load

ENV_PATTERNS = re.compile(
    r"no such file|not found|does not exist|permission denied|operation not permitted|"
    r"denied by user|is blocked for this task|timed out|timeout|network|unreachable|offline|"
    r"connection refused|could not resolve|read-only file system|no space left|"
    r"only available on macos|not available|llm unavailable|disk quota|resource busy",
    re.IGNORECASE,
)

SYSTEM = load("agent_validator").text  # agentui/roles/prompts/agent_validator.md


class CriterionJudgement(BaseModel):
    criterion: str = ""  # echoed by the model; verdicts are matched by it, then by order
    verdict: Literal["pass", "fail"]
    failure_class: Literal["logical", "environmental"] | None = None
    evidence: str = ""
    what_to_do: str = ""


class Judgement(BaseModel):
    verdicts: list[CriterionJudgement] = Field(min_length=1)


def environmental_evidence(calls: list[ToolCallRecord], extra: str = "") -> str | None:
    """The first environmental signature among failed tool calls (or `extra`), else None."""
    for c in calls:
        if not c.ok:
            text = f"{c.error or ''}\n{c.evidence[-500:] if c.evidence else ''}"
            m = ENV_PATTERNS.search(text)
            if m:
                return f"{c.tool} {c.target!r}: {(c.error or c.evidence).strip()[:300]}"
    if extra and ENV_PATTERNS.search(extra):
        return extra.strip()[:300]
    return None


def match_verdicts(criteria: list[str], verdicts: list[CriterionJudgement]) -> list[CriterionJudgement | None]:
    """Each criterion's verdict: the one that names it (normalised text), else the next unclaimed
    one in order (v0.6 §R4a; small models reorder or skip)."""
    out: list[CriterionJudgement | None] = [None] * len(criteria)
    used: set[int] = set()
    keys = [G.norm(c) for c in criteria]
    for i, k in enumerate(keys):
        for j, v in enumerate(verdicts):
            if j not in used and v.criterion and G.norm(v.criterion) == k:
                out[i] = v
                used.add(j)
                break
    free = [j for j, v in enumerate(verdicts) if j not in used and not (v.criterion and G.norm(v.criterion) in keys)]
    for i in range(len(criteria)):
        if out[i] is None and free:
            out[i] = verdicts[free.pop(0)]
    return out


def unresolved_denial(calls: list[ToolCallRecord]) -> ToolCallRecord | None:
    """The first call the user denied that no later successful call with the same tool and target
    made good, else None."""
    for i, c in enumerate(calls):
        if c.ok or not (c.error or "").startswith("denied by user"):
            continue
        if not any(d.ok and d.tool == c.tool and d.target == c.target for d in calls[i + 1:]):
            return c
    return None


def _evidence_text(r: ExecutionResult, budget: int = 2400) -> str:
    parts = [f"Status: {r.status.value}"]
    if r.infeasible_reason:
        parts.append(f"Reported: {r.infeasible_reason}")
    parts.append(f"Output: {str(r.output)[:900] if r.output is not None else '(none)'}")
    for c in r.tool_calls[-4:]:
        state = "ok" if c.ok else f"FAILED: {c.error}"
        ev = c.evidence if len(c.evidence) <= 500 else c.evidence[:250] + " … " + c.evidence[-250:]
        parts.append(f"Tool {c.tool} {c.target[:160]!r} → {state}\n{ev}")
    text = "\n".join(parts)
    return text[:budget]


REPEATED = "the corrected attempt repeated the failed one verbatim (same calls, same results); "

@dataclass
class _Sub:
    subtask: SubTask
    trajectory: list[GapAttempt] = field(default_factory=list)
    failed_attempt: tuple[str, list[CriterionVerdict]] | None = None  # the last failed attempt: signature, verdicts
    calls: list[ToolCallRecord] = field(default_factory=list)  # earlier attempts' calls, for grounding
    tree: dict[str, tuple[int, int, int]] | None = None  # the workspace when the last attempt was judged


def grounding_calls(earlier: list[ToolCallRecord], current: list[ToolCallRecord]) -> list[ToolCallRecord]:
    """The calls whose outputs may ground a pass of this attempt: its own, and those of the
    subtask's earlier attempts from their last workspace change on (as the gate read each call)
    when this attempt changed nothing — what they printed still describes the files."""
    if any(c.ok and c.writes for c in current):
        return current
    last = max((i for i, c in enumerate(earlier) if c.ok and c.writes), default=0)
    return [*earlier[last:], *current]


def _signature(r: ExecutionResult) -> str:
    """What an attempt did and got, as code recorded it: equal signatures mean equal evidence. A
    failed attempt's own words are no evidence (it is never accepted): the same failed calls
    reported infeasible in other words are a repeat."""
    calls = [[c.tool, c.args, c.ok, c.exit_code, c.evidence, c.error] for c in r.tool_calls]
    said = [str(r.output), r.infeasible_reason] if r.status != ExecutionStatus.FAILED else []
    return json.dumps([r.status.value, *said, calls], sort_keys=True, default=str)


def _checked_pass(c: Criterion, v: CriterionJudgement, output: object, calls: list[ToolCallRecord],
                  world: list[str] | None = None) -> CriterionJudgement:
    """A model's `pass`, kept only if code can ground it: a criterion asking for a value
    needs one in the output; a verifiable one needs evidence found in what the tools returned (or
    in the workspace facts code gathered)."""
    why = G.missing_value(c.criterion, output, G.tool_text(calls))
    if why is not None:
        return CriterionJudgement(verdict="fail", failure_class="logical", evidence=f"not met: {why}",
                                  what_to_do="report the actual value the tools showed in the output")
    wants_number = G.asks_for(c.criterion) == "number"
    if c.mode == CriterionMode.VERIFIABLE and wants_number and not G.number_found(str(output or ""), calls):
        nums = ", ".join(G.numbers(str(output or ""), words=True)[:3])
        return CriterionJudgement(
            verdict="fail", failure_class="logical",
            evidence=f"not grounded: the number in the answer ({nums}) is not one a tool printed or counted",
            what_to_do="run a tool that prints the number (e.g. wc -l, grep -c) and report what it printed")
    if c.mode == CriterionMode.VERIFIABLE and not G.grounded(v.evidence, output, calls, wants_number=wants_number,
                                                             world="\n".join(world or [])):
        quoted = (v.evidence or "").strip()[:120]
        return CriterionJudgement(
            verdict="fail", failure_class="logical",
            evidence=(f"not grounded: {quoted!r} is too short to be found reliably in a tool output"
                      if quoted and len(G.norm(quoted)) < 3 else
                      f"not grounded: {quoted!r} is not in any tool output" if quoted else
                      "not grounded: no tool output shows it"),
            what_to_do="run a tool whose output shows the result, and report exactly what it printed")
    return v


class AgentValidator(RoleBase):
    role = Role.AGENT_VALIDATOR
    consumes = frozenset({"SubTask", "ExecutionResult", "ReplanRequest"})
    receiver_only = False

    def __init__(self, ctx: RoleContext) -> None:
        super().__init__(ctx)
        self._subs: dict[str, _Sub] = {}
        self._judging: dict[str, asyncio.Task[Any]] = {}  # subtask → its running validation
        # task → the paths any successful call of any attempt, in any round, changed; the last 64
        self._changes: dict[str, list[str]] = {}

    def accepts(self, env: Envelope) -> bool:
        if env.type == "SubTask":
            return True
        if env.type == "ReplanRequest":  # R4b → R7: a fan-in timeout names the stragglers
            return getattr(env.payload, "reason", None) == "fan_in_timeout"
        return env.type == "ExecutionResult" and env.receiver == Role.AGENT_VALIDATOR

    async def on_cancel(self, task_id: str) -> None:
        for k in [k for k, v in self._subs.items() if v.subtask.parent_task_id == task_id]:
            self._subs.pop(k, None)
        self._changes.pop(task_id, None)

    async def handle(self, env: Envelope) -> None:
        p = env.payload
        if isinstance(p, SubTask):
            self._subs[p.subtask_id] = _Sub(p)
        elif isinstance(p, ExecutionResult):
            me = asyncio.current_task()
            if me is not None:
                self._judging[p.subtask_id] = me
            try:
                await self._validate(env.task_id or "", p)
            finally:
                if self._judging.get(p.subtask_id) is me:
                    self._judging.pop(p.subtask_id, None)
        elif isinstance(p, ReplanRequest):
            # R4b gave up on these subtasks: stop judging them, closing the validator's LLM stream
            # so the endpoint is free for the next round
            for sid in p.failed_subtasks:
                self._subs.pop(sid, None)
                t = self._judging.pop(sid, None)
                if t is not None and not t.done():
                    t.cancel()

    async def judge(self, st: SubTask, r: ExecutionResult, changes: list[str] | None = None,
                    earlier: list[ToolCallRecord] | None = None) -> list[CriterionVerdict]:
        """Verdicts for one attempt; `changes`: the paths every attempt so far changed (default: this
        one's); `earlier`: the calls of the subtask's earlier attempts, whose outputs also ground a pass
        when no call since changed the workspace (the caller passes them only when the workspace is
        as it was when the last of them was judged): an answer a tool printed in attempt 1 is still
        grounded in attempt 3 when nothing changed in between."""
        crits = st.success_criteria
        if changes is None:
            changes = W.changed(r.tool_calls, self.ctx.workspace)
        # the class comes from the last call (a recovered early failure says nothing about why the
        # answer is wrong) and the executor's own reason; then the model's class
        env_ev = environmental_evidence(r.tool_calls[-1:], r.infeasible_reason or "")
        empty = r.output is None or (isinstance(r.output, str) and not r.output.strip())
        if r.model_output_cut:  # the model's output failed, not the approach: say so, ask shorter
            ev = (f"the executor's replies were unusable ({r.model_output_cut}) | what to do: answer with one "
                  f"short JSON action, nothing else")
            return [CriterionVerdict(criterion=c.criterion, mode=c.mode, verdict=Verdict.FAIL,
                                     failure_class=FailureClass.ENVIRONMENTAL, evidence=ev) for c in crits]
        if r.status == ExecutionStatus.FAILED or (empty and not any(c.ok for c in r.tool_calls)):
            why = r.infeasible_reason or ("empty result" if empty else "execution failed")
            fc = FailureClass.ENVIRONMENTAL if env_ev else FailureClass.LOGICAL
            return [CriterionVerdict(criterion=c.criterion, mode=c.mode, verdict=Verdict.FAIL,
                                     failure_class=fc, evidence=(env_ev or why)[:500]) for c in crits]
        denied = unresolved_denial(r.tool_calls)
        if denied is not None:
            # the user said no to the effecting call and nothing later did it: whatever the output
            # claims, the subtask is not done, and the wall is the environment
            ev = (f"the user denied {denied.tool} {rel_target(denied.target, self.ctx.workspace)[:160]!r} "
                  f"({denied.error}); nothing later did it")
            return [CriterionVerdict(criterion=c.criterion, mode=c.mode, verdict=Verdict.FAIL,
                                     failure_class=FailureClass.ENVIRONMENTAL, evidence=ev[:500]) for c in crits]
        crit_lines = "\n".join(f"{i}. {c.criterion}" for i, c in enumerate(crits, 1))
        ws = self.ctx.workspace
        # the workspace as code finds it after the step, and the criteria's own checks: the world,
        # not the executor's claims
        world = W.facts(f"{st.intent}\n{crit_lines}", ws)
        runs = await C.run(self.ctx, st.parent_task_id, crits, subtask_id=st.subtask_id)
        seen = ("\n\nWorkspace now (checked by code after the step):\n" + "\n".join(world)) if world else ""
        seen += C.prompt_section(runs)
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": (
                f"Subtask: {st.intent}\nCriteria:\n{crit_lines}\n\nEvidence:\n{_evidence_text(r)}{seen}\n\n"
                f"Give exactly {len(crits)} verdicts, in the order of the criteria.")},
        ]
        try:
            j = await self.ctx.llm("agent_validator").structured(messages, Judgement)
        except LLMInfraError:
            raise  # the endpoint failed, not this role: the runtime ends the task
        except Exception as e:  # noqa: BLE001 - cannot validate → not accepted, and said why
            return [CriterionVerdict(criterion=c.criterion, mode=c.mode, verdict=Verdict.FAIL,
                                     failure_class=FailureClass.ENVIRONMENTAL,
                                     evidence=f"validator unavailable: {e}"[:500]) for c in crits]
        out = []
        checked = [run.record for run in runs.values() if run.record is not None and run.ran]
        ground = [*grounding_calls(earlier or [], r.tool_calls), *checked]
        for i, (c, v) in enumerate(zip(crits, match_verdicts([c.criterion for c in crits], j.verdicts), strict=True)):
            if v is None:
                v = CriterionJudgement(verdict="fail", failure_class="logical",
                                       evidence="the validator gave no verdict for this criterion")
            run = runs.get(i)
            if v.verdict == "pass" and run is not None and run.failed:
                v = CriterionJudgement(verdict="fail", failure_class="logical" if run.ran else "environmental",
                                       evidence=f"not met: {run.evidence()}",
                                       what_to_do="make the result what the check looks for")
            if v.verdict == "pass":
                v = _checked_pass(c, v, r.output, ground, world)
            if v.verdict == "pass" and (bad := W.contradiction(f"{c.criterion}\n{st.intent}", ws, made=c.criterion)):
                v = CriterionJudgement(verdict="fail", failure_class="logical",
                                       evidence=f"contradicted by the workspace: {bad[0]}", what_to_do=bad[1])
            if v.verdict == "pass":
                ev = " | ".join(x for x in (v.evidence, run.evidence(240) if run is not None else "") if x)
                out.append(CriterionVerdict(criterion=c.criterion, mode=c.mode, verdict=Verdict.PASS,
                                            evidence=ev[:500]))
                continue
            fc = FailureClass.ENVIRONMENTAL if env_ev else FailureClass(v.failure_class or "logical")
            ev = v.evidence or env_ev or ""
            if v.what_to_do:
                ev = f"{ev}{FIX}{v.what_to_do}" if ev else f"what to do: {v.what_to_do}"
            out.append(CriterionVerdict(criterion=c.criterion, mode=c.mode, verdict=Verdict.FAIL,
                                        failure_class=fc, evidence=ev[:500]))
        return out

    async def _validate(self, tid: str, r: ExecutionResult) -> None:
        sub = self._subs.get(r.subtask_id)
        if sub is None:
            return
        st = sub.subtask
        if r.infeasible_reason == SKIPPED:
            # a step that never ran is not done: its criteria count as failed in D
            self._subs.pop(r.subtask_id, None)
            await self.publish(Role.META_VALIDATOR, SubTaskOutcome(
                subtask_id=st.subtask_id, parent_task_id=tid, status=OutcomeStatus.FAILED,
                failure_reason=SKIPPED, intent=st.intent, sequence=st.sequence,
                criteria_verdicts=[CriterionVerdict(
                    criterion=c.criterion, mode=c.mode, verdict=Verdict.FAIL, failure_class=FailureClass.LOGICAL,
                    evidence=NOT_RUN + SKIPPED) for c in st.success_criteria]), tid)
            return
        changes = self._changes.setdefault(tid, [])
        while len(self._changes) > 64:
            self._changes.pop(next(iter(self._changes)))
        for path in W.changed(r.tool_calls, self.ctx.workspace):
            if path not in changes:
                changes.append(path)
        sig = _signature(r)
        repeat = sub.failed_attempt is not None and sub.failed_attempt[0] == sig
        # earlier attempts' outputs count only over a workspace as it was when they were judged:
        # listed, not read off command lines (a python one-liner's write shows in no command line)
        tree = await asyncio.to_thread(W.tree, self.ctx.workspace) if sub.calls else None
        same = tree is not None and tree == sub.tree
        verdicts = list(sub.failed_attempt[1]) if repeat and sub.failed_attempt else \
            await self.judge(st, r, changes, sub.calls if same else [])
        sub.calls = [*sub.calls, *r.tool_calls][-40:]
        failed = [v for v in verdicts if v.verdict == Verdict.FAIL]
        if failed:
            sub.failed_attempt = (sig, verdicts)
        sub.trajectory.append(GapAttempt(attempt=r.attempt, failed_criteria=[
            FailedCriterion(criterion=v.criterion, failure_class=v.failure_class) for v in failed]))
        if failed and not repeat and r.attempt <= self.ctx.config.pipeline.correction_budget:
            # a corrected attempt follows: the workspace as judged now (judging changes nothing)
            sub.tree = tree if tree is not None else await asyncio.to_thread(W.tree, self.ctx.workspace)
            f = failed[0]
            what = f.evidence.split(FIX)
            await self.publish(Role.EXECUTOR, CorrectionSignal(
                subtask_id=st.subtask_id, attempt_number=r.attempt, failed_criterion=f.criterion,
                failure_class=f.failure_class, what_was_wrong=(what[0] or f"criterion not met: {f.criterion}")[:500],
                what_to_do=(what[1] if len(what) > 1 else "meet the failed criterion; change what you did")[:300],
            ), tid)
            return
        self._subs.pop(r.subtask_id, None)
        await self.publish(Role.META_VALIDATOR, SubTaskOutcome(
            subtask_id=st.subtask_id, parent_task_id=tid,
            status=OutcomeStatus.FAILED if failed else OutcomeStatus.MATCHED,
            output=r.output,
            failure_reason=((REPEATED if repeat else "")
                            + "; ".join(f"{v.criterion}: {brief(v.evidence, 240)}" for v in failed))[:600]
            if failed else None,
            criteria_verdicts=verdicts, gap_trajectory=list(sub.trajectory), tool_calls=r.tool_calls,
            intent=st.intent, sequence=st.sequence, model_output_cut=r.model_output_cut if failed else None,
            changes=list(changes)), tid)

    async def on_error(self, env: Envelope, exc: Exception) -> None:
        r = env.payload
        if not isinstance(r, ExecutionResult):
            return
        sub = self._subs.pop(r.subtask_id, None)
        if sub is None:
            return
        st = sub.subtask
        await self.publish(Role.META_VALIDATOR, SubTaskOutcome(
            subtask_id=st.subtask_id, parent_task_id=st.parent_task_id, status=OutcomeStatus.FAILED,
            output=r.output, failure_reason=f"agent-validator error: {exc}"[:500],
            criteria_verdicts=[CriterionVerdict(criterion=c.criterion, mode=c.mode, verdict=Verdict.FAIL,
                                                failure_class=FailureClass.ENVIRONMENTAL,
                                                evidence=f"validator error: {exc}"[:300])
                               for c in st.success_criteria],
            gap_trajectory=list(sub.trajectory), tool_calls=r.tool_calls, intent=st.intent,
            sequence=st.sequence), env.task_id)
