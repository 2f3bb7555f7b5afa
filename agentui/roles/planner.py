"""R2 Planner (roles-v0.7/v0.8 §R2): interpret the intent into falsifiable task criteria, then
decompose it into the fewest subtasks; replan on GGS PlanDirectives.

Before every plan it calibrates on memory (QueryC + QueryMK for the intent's tag pair) and formats
the MUST NOT / SHOULD PREFER lines itself. A code plan validator rejects plans that use a blocked
tool, repeat a blocked target or — under break_symmetry — repeat the previous plan; it re-asks
(bounded; it stops early when a re-ask is rejected for the very problem it was told about, as a
second re-ask then rarely differs) and then hands the failure to GGS through an empty manifest,
never silence. A plan for a request that asks for a value is re-asked once when no task criterion
carries a check. IDs are assigned here by the
runtime's factory, never by the LLM.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentui.clock import iso
from agentui.contracts import (
    ActionDirective,
    ConfirmationDecision,
    ConfirmationRequest,
    Criterion,
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
from agentui.roles.actions import COMMAND_TOOLS, REPEATED_PLAN, WORKSPACE_LINE, _runnable
from agentui.roles.base import RoleBase, RoleContext
from agentui.roles.calibration import Calibration, calibrate
from agentui.roles.prompts import load
from agentui.tools import fsaccess

DECLINED = "declined: "  # planner_error prefix: the user said no; GGS abandons rather than replans


class PlanCriterion(BaseModel):
    # the reply calls the check `verify`: reply schemas list their keys in sorted order, and a model
    # that meets the check before the criterion writes the criterion's words into it
    model_config = ConfigDict(populate_by_name=True)

    criterion: str = Field(min_length=1)
    mode: Literal["verifiable", "plausible"] = "verifiable"
    check: str = Field("", max_length=200, alias="verify")


def _check_required(schema: dict[str, Any]) -> None:
    schema["required"] = sorted({*schema.get("required", []), "verify"})


# a task criterion: the reply schema asks for its `check` (a grammar-constrained model then writes
# one), though a reply without it still parses
class TaskCriterion(PlanCriterion):
    model_config = ConfigDict(populate_by_name=True, json_schema_extra=_check_required)


def _coerce_criteria(v: Any) -> Any:
    if isinstance(v, str):
        v = [v]
    if isinstance(v, list):
        return [{"criterion": x} if isinstance(x, str) else x for x in v]
    return v


class PlanStep(BaseModel):
    intent: str = Field(min_length=1)
    success_criteria: list[PlanCriterion] = Field(min_length=1)
    sequence: int = Field(default=1, ge=1, le=20)
    tools: list[str] = Field(default_factory=list)
    context: str = ""

    _c = field_validator("success_criteria", mode="before")(classmethod(lambda cls, v: _coerce_criteria(v)))


def _one_step(steps: list[PlanStep]) -> PlanStep:
    """A question's steps as one subtask (one numbered line each), so one executor carries the
    answer through them: steps that share no shell variables cannot pass a value along, and a
    separate "check" step after the answering one judges the answer on a side question."""
    criteria = list({c.criterion: c for s in steps for c in s.success_criteria}.values())[:8]
    # one step per line: the executor's first call is the first line's command (actions.suggested_call);
    # one line per step: joined, "file_search X; then check …" reads as one shell command
    intent = "\n".join(f"{i}. {' '.join(s.intent.split())}" for i, s in enumerate(steps, 1))
    return PlanStep(intent=intent, success_criteria=criteria,
                    sequence=1, tools=list(dict.fromkeys(t for s in steps for t in s.tools)),
                    context=" ".join(s.context for s in steps if s.context))


# a file name: a stem, a dot and an extension of 2–5 characters ("port.txt", not "e.g"); hidden
# ones too (".hidden_name.txt"), but not an extension alone (".txt")
_FILE_NAME = re.compile(r"(?<![\w/.~-])((?:~?/)?\.?\w[\w./-]*\.[A-Za-z][A-Za-z0-9]{1,4})\b")
# a step that checks what an earlier step did ("Check if the found file contains 'TODO' with: …")
_VERIFIES = re.compile(r"\W*(?:then\s+)?(?:verify|confirm|ensure|validate|make sure|double[- ]?check|"
                       r"check (?:if|whether|that))\b", re.IGNORECASE)


def _unasked_files(text: str, request: str, workspace: Path) -> list[str]:
    """The file names in `text` that the request does not name and the workspace does not have."""
    low = request.casefold()
    return [f for f in _FILE_NAME.findall(text) if f.casefold() not in low and not fsaccess.holds(workspace, f)]


def question_only(plan: PlanOut, request: str, workspace: Path) -> list[str]:
    """For a question (it asks for a value and to make or change nothing): drop the steps that name
    a file the request never named and the workspace does not have, the later steps that only
    check what an earlier one did, and the criteria that name such a file, when something else is
    left; a task criterion list left empty asks for the answer (keeping a dropped criterion's check
    when it names no such file). A question may change no file, so a step that writes one, or
    reads one nobody made, can only fail the answer on a side issue; the validators and the task
    criteria's checks judge the answer. Returns what was dropped."""
    dropped: list[str] = []
    first = min(s.sequence for s in plan.subtasks)
    steps = [s for s in plan.subtasks if not (_unasked_files(s.intent, request, workspace)
                                              or s.sequence > first and _VERIFIES.match(s.intent))]
    if steps and len(steps) < len(plan.subtasks):
        dropped += [s.intent for s in plan.subtasks if s not in steps]
        plan.subtasks = steps
    for s in plan.subtasks:
        kept = [c for c in s.success_criteria if not _unasked_files(c.criterion, request, workspace)]
        if kept and len(kept) < len(s.success_criteria):
            dropped += [c.criterion for c in s.success_criteria if c not in kept]
            s.success_criteria = kept
    kept = [c for c in plan.task_criteria if not _unasked_files(c.criterion, request, workspace)]
    if len(kept) < len(plan.task_criteria):
        dropped += [c.criterion for c in plan.task_criteria if c not in kept]
        # a dropped criterion's check still computes the answer unless it names such a file too
        check = next((c.check for c in plan.task_criteria if c.check and not _unasked_files(c.check, request, workspace)),
                     "")
        plan.task_criteria = kept or [TaskCriterion(criterion=f"the answer to the question is reported: {request[:200]}",
                                                    check=check)]
    return dropped


# a criterion about how a step worked, not what it found ("the content is read successfully")
_PROCESS = re.compile(r"\b(?:is|are|was|were|been|gets?)\s+(?:successfully\s+|correctly\s+)?(?:read|opened|loaded|"
                      r"parsed|extracted|stored|kept|executed|run|searched|checked|processed|accessed)\b", re.IGNORECASE)


def judged_on_the_answer(steps: list[PlanStep]) -> list[str]:
    """A question's step is judged on the value it reports, not on how it got it: where a step has
    a criterion that asks for a value (a number, a path, a name), its criteria about the process
    that ask for none ("the content is read successfully") go, as a right answer reached in one
    call would fail them. Returns what was dropped."""
    dropped: list[str] = []
    for s in steps:
        kept = [c for c in s.success_criteria
                if G.asks_for(c.criterion) is not None or not _PROCESS.search(c.criterion)]
        if len(kept) < len(s.success_criteria) and any(G.asks_for(c.criterion) for c in kept):
            dropped += [c.criterion for c in s.success_criteria if c not in kept]
            s.success_criteria = kept
    return dropped


# a placeholder in angle brackets ("<a command>"), not a redirection ("wc -l < f.txt")
_PLACEHOLDER = re.compile(r"<[A-Za-z][^<>|;&]*\s[^<>|;&]*>")


#: words of the prompt's example request; in a plan for a request without them, they were copied
EXAMPLE_WORDS = ("app.log", "error")


def _copies_example(text: str, request: str) -> bool:
    low, asked = text.casefold(), request.casefold()
    return any(re.search(rf"(?<![\w.]){re.escape(w)}(?![\w])", low) and w not in asked for w in EXAMPLE_WORDS)


def without_example(plan: PlanOut, request: str) -> list[str]:
    """Criteria, checks and steps copied from the prompt's example into a plan for another request
    go ("copied: …"); a check that is a placeholder, or prose rather than a command, goes ("check:
    …"). Returns what was dropped."""
    dropped: list[str] = []
    for crits in (plan.task_criteria, *(st.success_criteria for st in plan.subtasks)):
        for c in crits:
            c.check = " ".join(c.check.split())
            if c.check and (_PLACEHOLDER.search(c.check) or not _runnable(c.check)):
                dropped.append(f"check: {c.check}")
                c.check = ""
            elif c.check and _copies_example(c.check, request):
                dropped.append(f"copied: {c.check}")
                c.check = ""
    steps = [st for st in plan.subtasks if not _copies_example(f"{st.intent} {st.context}", request)]
    if steps and len(steps) < len(plan.subtasks):
        dropped += [f"copied: {st.intent}" for st in plan.subtasks if st not in steps]
        plan.subtasks = steps
    kept = [c for c in plan.task_criteria if not _copies_example(c.criterion, request)]
    if len(kept) < len(plan.task_criteria):
        dropped += [f"copied: {c.criterion}" for c in plan.task_criteria if c not in kept]
        plan.task_criteria = kept or [TaskCriterion(criterion=f"the result does what the request asks: {request[:200]}")]
    return dropped


COPIED_EXAMPLE = ("the plan copies the example (app.log, ERROR) instead of this request: write the task "
                  "criteria, their verify commands and the steps for THIS request")


def has_check(plan: PlanOut) -> bool:
    return any(c.check.strip() for c in plan.task_criteria)


NO_CHECK = ("no task criterion has a check: give the criterion about the answer a check, one read-only "
            "shell command that prints the value asked for by another method than the step's")


class PlanOut(BaseModel):
    task_criteria: list[TaskCriterion] = Field(min_length=1, max_length=8)
    subtasks: list[PlanStep] = Field(min_length=1, max_length=4)

    _c = field_validator("task_criteria", mode="before")(classmethod(lambda cls, v: _coerce_criteria(v)))


SYSTEM = load("planner").text  # agentui/roles/prompts/planner.md

DIRECTIVE_TEXT = {
    ActionDirective.REFINE: "REFINE: the approach is right; tighten parameters, fix the details that failed.",
    ActionDirective.CHANGE_PATH: "CHANGE_PATH: the approach is right but the environment blocked it; use the same kind of tool on a different target, path or command.",
    ActionDirective.CHANGE_APPROACH: "CHANGE_APPROACH: the method was logically wrong; use a different method.",
    ActionDirective.BREAK_SYMMETRY: "BREAK_SYMMETRY: stuck with a wrong approach; use a completely different kind of tool and a plan unlike the previous one.",
}
#: break_symmetry / change_approach after a round whose steps all passed and whose result only the
#: final check failed: no tool failed, so the order is to fix what failed, not to change tools
STEPS_PASSED_TEXT = ("{name}: every step passed its own checks, but the final check rejected the result; "
                     "fix the details that failed so the result is what the request asks.")


def directive_text(d: PlanDirective) -> str:
    """The planner's one-line order for a directive."""
    if d.steps_passed and d.directive in (ActionDirective.BREAK_SYMMETRY, ActionDirective.CHANGE_APPROACH):
        return STEPS_PASSED_TEXT.format(name=d.directive.value.upper())
    return DIRECTIVE_TEXT[d.directive]


@dataclass
class _Task:
    spec: TaskSpec
    round: int = 0
    last_plan: PlanOut | None = None
    last_blocked: set[str] = field(default_factory=set)  # the tools blocked when last_plan was made
    last_blocked_targets: set[str] = field(default_factory=set)  # … and the targets
    directive: PlanDirective | None = None
    blocked_tools: set[str] = field(default_factory=set)
    blocked_targets: list[str] = field(default_factory=list)
    memory_constraints: list[tuple[str, str, str]] = field(default_factory=list)  # (tool, target, rule)
    caution_ok: bool = False
    located: list[str] = field(default_factory=list)  # named paths found elsewhere in the workspace


def _norm(s: str) -> str:
    return re.sub(r"\W+", " ", s.casefold()).strip()


def without_duplicates(plan: PlanOut) -> int:
    """Fold each step whose intent and context repeat an earlier step's into that step (its criteria
    added to the first's); how many were folded. A repeat does the same work again when the first
    passed, and when it failed it is skipped and counted failed anyway."""
    kept: dict[tuple[str, str], PlanStep] = {}
    for st in sorted(plan.subtasks, key=lambda x: x.sequence):
        first = kept.setdefault((_norm(st.intent), _norm(st.context)), st)
        if first is not st:
            have = {_norm(c.criterion) for c in first.success_criteria}
            first.success_criteria += [c for c in st.success_criteria if _norm(c.criterion) not in have]
    folded = len(plan.subtasks) - len(kept)
    firsts = {id(k) for k in kept.values()}
    plan.subtasks = [st for st in plan.subtasks if id(st) in firsts]  # in the planner's order
    return folded


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
            st = self._tasks_state.get(p.task_id)
            if st is None:
                return
            st.round += 1
            st.directive = p
            st.blocked_tools = set(p.blocked_tools)
            # GGS's list is the one accumulated list (v0.8 triedTargets); its urgency narrowing stands
            st.blocked_targets = list(p.blocked_targets)
            await self._plan(st)

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
            request_id=rid, task_id=tid, tool="plan", command="; ".join(s.intent[:120] for s in plan.subtasks),
            reasons=[f"memory has a mixed record for tasks like this: {c[:160]}" for c in caution[:2]],
            cwd=str(self.ctx.workspace), caution=True), task_id=tid)
        try:
            decision = await fut
        finally:
            self._decisions.pop(rid, None)
        st.caution_ok = decision.decision.value in ("approve", "always", "task", "session", "project")
        self.ctx.log(tid, {"kind": "memory_caution", "go_ahead": st.caution_ok, "by": decision.answered_by})
        return st.caution_ok

    # -- planning -------------------------------------------------------------------------------
    def _tool_names(self, blocked: set[str]) -> list[str]:
        reg = self.ctx.tools
        if reg is None:
            return []
        return [s["name"] for s in reg.specs(exclude=blocked)]

    def _messages(self, st: _Task, must_not: list[str], prefer: list[str], problem: str | None,
                  *, short: bool = False) -> list[dict[str, str]]:
        spec = st.spec
        if short:  # after an unusable reply: no example, no memory advice
            prefer = []
        tools = self._tool_names(st.blocked_tools)
        lines = [WORKSPACE_LINE, f"Tools: {', '.join(tools)}"]
        if spec.history:  # a follow-up names what it refers to only through these
            lines.append("Earlier in this session:\n" + "\n".join(f"- {t[:300]}" for t in spec.history[-3:]))
        lines += [f"Request (verbatim): {spec.raw_input}", f"Intent: {spec.intent}"]
        if spec.constraints.scope:
            lines.append(f"Scope: {spec.constraints.scope}")
        if st.located:
            lines.append("Paths:\n" + "\n".join(f"- {x}" for x in st.located))
        forbidden = [*must_not, *(f"tool {t}" for t in sorted(st.blocked_tools)),
                     *(f"retrying {t}" for t in st.blocked_targets)]
        if forbidden:
            lines.append("MUST NOT:\n" + "\n".join(f"- {x}" for x in forbidden[:12]))
        if prefer:
            lines.append("SHOULD PREFER:\n" + "\n".join(f"- {x}" for x in prefer[:6]))
        if st.directive is not None:
            d = st.directive
            lines.append(f"This is replan round {st.round}. Directive: {directive_text(d)}")
            lines.append(f"Why: {d.rationale[:600]}")
            if st.last_plan is not None:
                prev = "; ".join(s.intent[:120] for s in st.last_plan.subtasks)
                lines.append(f"Previous plan: {prev}")
        if problem:
            lines.append(f"Your previous plan was rejected: {problem}. Produce a corrected plan.")
        system = SYSTEM.split("\nExample")[0] + " One subtask if you can." if short else SYSTEM
        return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]

    def validate(self, plan: PlanOut, st: _Task) -> str | None:
        """The code plan validator. Returns the problem, or None if the plan is acceptable."""
        known = set(self._tool_names(set())) if self.ctx.tools is not None else None
        for i, s in enumerate(plan.subtasks, 1):
            if known is not None:
                s.tools = [t for t in s.tools if t in known]  # unknown names mean "any tool"
            used = set(s.tools) & st.blocked_tools
            if used:
                return f"subtask {i} uses blocked tool(s) {', '.join(sorted(used))}"
            text = f"{s.intent}\n{s.context}"
            for bt in st.blocked_targets:
                _tool, _, target = bt.partition(":")
                # a blocked command named in the step is that command again; a blocked path or query
                # named in a step that may use another tool is a thing to reach another way — the
                # executor refuses the blocked call itself
                other_way = _tool not in COMMAND_TOOLS and bool(set(s.tools) - {_tool})
                if len(target) >= 3 and target in text and (not s.tools or _tool in s.tools) and not other_way:
                    return f"subtask {i} repeats the blocked target '{target}' with {_tool}"
            for _tool, target, rule in st.memory_constraints:  # v0.8 Key Invariant: memory MUST NOT
                if len(target) >= 3 and target in text and (not s.tools or _tool in s.tools):
                    return (f"subtask {i} uses {_tool} on {target!r}, which memory says must not be done "
                            f"({rule[:120]})")
        if (st.directive is not None and st.directive.directive == ActionDirective.BREAK_SYMMETRY
                and not st.directive.steps_passed and st.last_plan is not None
                and st.blocked_tools <= st.last_blocked and set(st.blocked_targets) <= st.last_blocked_targets):
            # a tool or shell command blocked since the last plan makes the same steps run another
            # way: the executor cannot use it. When every step passed and the final check failed the
            # result, the same steps run again told why (`_told_why`)
            old = {_norm(s.intent) for s in st.last_plan.subtasks}
            new = {_norm(s.intent) for s in plan.subtasks}
            if new == old:
                return REPEATED_PLAN
        return None

    @staticmethod
    def _told_why(st: _Task, plan: PlanOut) -> None:
        """After a round whose steps all passed and whose result the final check failed, steps
        repeated from the last plan carry the task criterion that failed in their context: the
        executor's attempt then differs from the one rejected."""
        d = st.directive
        if d is None or not d.steps_passed or st.last_plan is None:
            return
        old = {_norm(s.intent) for s in st.last_plan.subtasks}
        said = " ".join(d.failed_criterion.split())[:200]  # one line: a criterion cannot forge prompt lines
        why = f"The final check rejected the last result of these steps on: {said}. " \
              "Show in your output, from what the tools return, that it holds."
        for s in plan.subtasks:
            if _norm(s.intent) in old and why not in s.context:
                s.context = f"{s.context} {why}".strip()

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
            except Exception as e:  # noqa: BLE001 - an LLM failure is a planner failure GGS must see
                problem = f"planner LLM failed: {e}"
                break
            told, problem = problem, self.validate(cand, st)
            if dropped := without_example(cand, spec.raw_input):
                self.ctx.log(tid, {"kind": "plan_example_copied", "round": st.round, "dropped": dropped})
            more = _attempt < self.ctx.config.pipeline.plan_reasks
            if problem is None and more and told not in (COPIED_EXAMPLE, NO_CHECK) \
                    and any(d.startswith("copied: ") for d in dropped):
                problem = COPIED_EXAMPLE  # asked once; what is left of a plan that copies it again runs
            elif problem is None and more and told != NO_CHECK and not has_check(cand) and asks_value:
                problem = NO_CHECK  # asked once; a plan still without one runs, and R4b cannot confirm it
            self.ctx.log(tid, {"kind": "plan", "round": st.round, "plan": cand.model_dump(mode="json"),
                               "rejected": problem})
            if problem is None:
                plan = cand
                break
            if problem == told:
                break  # the re-ask changed nothing the validator checks: another one would not either
        if plan is None:
            kind = "model_output" if problem is None and output_failures else "plan"
            if kind == "model_output":
                problem = f"the model's replies were unusable ({output_failures} in a row, last: {output_cut})"
            await self.publish(Role.META_VALIDATOR, DispatchManifest(
                task_id=tid, subtask_ids=[], task_spec=spec, dispatched_at=iso(self.ctx.clock.now()),
                round=st.round, planner_error=problem or "no valid plan", planner_error_kind=kind,
                planner_output_cut=output_cut if kind == "model_output" else None), tid)
            return
        self._told_why(st, plan)
        st.last_plan, st.last_blocked, st.last_blocked_targets = plan, set(st.blocked_tools), set(st.blocked_targets)
        if not await self._caution_gate(st, plan, cal.caution):
            await self.publish(Role.META_VALIDATOR, DispatchManifest(
                task_id=tid, subtask_ids=[], task_spec=spec, dispatched_at=iso(self.ctx.clock.now()),
                round=st.round, planner_error=DECLINED + "memory advised caution and the user did not confirm"),
                tid)
            return
        if folded := without_duplicates(plan):
            self.ctx.log(tid, {"kind": "plan_duplicates", "round": st.round, "folded": folded})
        question = W.is_question(spec.raw_input)
        if question and (dropped := question_only(plan, spec.raw_input, self.ctx.workspace)):
            self.ctx.log(tid, {"kind": "plan_question_only", "round": st.round, "dropped": dropped})
        steps = sorted(plan.subtasks, key=lambda s: s.sequence)
        if question and len(steps) > 1 and len({s.sequence for s in steps}) == len(steps):
            # a chain of steps, not parallel parts (each of those carries its own answer)
            steps = [_one_step(steps)]
            self.ctx.log(tid, {"kind": "plan_merged", "round": st.round, "steps": len(plan.subtasks)})
        if question and (dropped := judged_on_the_answer(steps)):
            self.ctx.log(tid, {"kind": "plan_process_criteria", "round": st.round, "dropped": dropped})
        subtasks = []
        for s in steps:
            subtasks.append(SubTask(
                subtask_id=self.ctx.ids.new("subtask"), parent_task_id=tid, intent=s.intent[:500],
                success_criteria=[Criterion(criterion=c.criterion[:300], mode=c.mode, check=c.check[:300])
                                  for c in s.success_criteria],
                context=s.context[:1000], sequence=s.sequence, tools=list(dict.fromkeys(s.tools)),
            ))
        for s in subtasks:
            await self.publish(Role.EXECUTOR, s, tid)
        await self.publish(Role.META_VALIDATOR, DispatchManifest(
            task_id=tid, subtask_ids=[s.subtask_id for s in subtasks], task_spec=spec,
            dispatched_at=iso(self.ctx.clock.now()),
            task_criteria=[Criterion(criterion=c.criterion[:300], mode=c.mode, check=c.check[:300])
                           for c in plan.task_criteria],
            round=st.round, memory_ids=cal.megram_ids), tid)

    async def on_error(self, env: Envelope, exc: Exception) -> None:
        tid = env.task_id or ""
        st = self._tasks_state.get(tid)
        spec = st.spec if st else (env.payload if isinstance(env.payload, TaskSpec) else None)
        await self.publish(Role.META_VALIDATOR, DispatchManifest(
            task_id=tid, subtask_ids=[], task_spec=spec, dispatched_at=iso(self.ctx.clock.now()),
            round=st.round if st else 0, planner_error=f"planner error: {exc}"), tid)
