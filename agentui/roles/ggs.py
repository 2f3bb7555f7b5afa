"""R7 Goal Gradient Solver (roles-v0.8 §R7): failure → a directed replanning order.

Receives R4b's ReplanRequest / OutcomeSummary, computes D, P, Ω, L and ∇L, picks the macro-state
from the v0.8 cascade (with the Law 2 kill switch and ∇L-sign urgency modulation), and emits either
a PlanDirective to R2 or the task's one FinalResult (accept / success / abandon). It is the sole
emitter of FinalResult and the sole writer of Megrams (published to R5 on the bus).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentui.clock import iso
from agentui.contracts import (
    ActionDirective,
    DirectiveFailureClass,
    Envelope,
    FailureClass,
    FinalResult,
    MacroState,
    Megram,
    OutcomeStatus,
    OutcomeSummary,
    PlanDirective,
    ReplanRequest,
    Role,
    SubTaskOutcome,
    TaskSpec,
    TerminalDirective,
    ToolCallRecord,
    Urgency,
)
from agentui.memory import lessons
from agentui.memory.quantize import megram_params
from agentui.roles import loss as L
from agentui.roles.actions import COMMAND_TOOLS, REPEATED_PLAN, brief
from agentui.roles.base import RoleBase, RoleContext
from agentui.roles.calibration import rel_target


@dataclass
class _TaskState:
    prev: MacroState = MacroState.INIT
    L_prev: float | None = None
    worsening: int = 0
    requests: int = 0  # ReplanRequests seen (the replan count Ω charges)
    directives: int = 0  # PlanDirectives issued (FinalResult.replans)
    tried_targets: list[str] = field(default_factory=list)  # accumulates across rounds
    blocked_commands: list[str] = field(default_factory=list)  # logical failures' shell commands, too
    last_matched: dict[str, Any] = field(default_factory=dict)  # subtask intent → output
    last_directive: PlanDirective | None = None  # re-sent after a model-output failure
    output_failures: int = 0
    denial: str | None = None  # the first "the user denied …" evidence of any round: said on abandon
    request: str = ""  # TaskSpec.raw_input: code reads the task's second memory space from it
    why: dict[str, str] = field(default_factory=dict)  # "tool:target" of a dead end → what it said


def _failing(outcomes: list[SubTaskOutcome]) -> list[SubTaskOutcome]:
    return [o for o in outcomes if o.status == OutcomeStatus.FAILED]


def _steps_passed(req: ReplanRequest) -> bool:
    """Every step of the round passed its criteria: only the task criteria failed."""
    return bool(req.outcomes) and not _failing(req.outcomes)


#: a search that ran fine and found nothing: a dead end when its subtask's criterion failed
EMPTY_RESULT = re.compile(r"^\s*(no files matching|no paths match|no results|no matches)\b", re.IGNORECASE)


def failed_targets(outcomes: list[SubTaskOutcome], workspace: Path | None = None) -> list[str]:
    """`tool:target` of every failed tool call — and every empty-but-successful search — in failing
    subtasks (structured records, not text); file targets workspace-relative, as plans name them."""
    out: list[str] = []
    for o in _failing(outcomes):
        for c in o.tool_calls:
            dead_end = not c.ok or bool(EMPTY_RESULT.match(c.evidence or ""))
            if dead_end and c.target:
                target = rel_target(c.target, workspace) if workspace is not None else c.target
                key = f"{c.tool}:{target}"
                if key not in out:
                    out.append(key)
    return out


#: break_symmetry / change_approach block the failing commands of COMMAND_TOOLS, not the tool: with
#: `shell` blocked a question about local files has no tool left that can count or run anything.
#: At most this many go into one directive (each is a line of the planner's prompt).
MAX_BLOCKED_COMMANDS = 6


def dead_end_calls(outcomes: list[SubTaskOutcome]) -> list[ToolCallRecord]:
    """The calls `failed_targets` names, as records (their evidence says why they failed)."""
    return [c for o in _failing(outcomes) for c in o.tool_calls
            if c.target and (not c.ok or EMPTY_RESULT.match(c.evidence or ""))]


def _failing_calls(outcomes: list[SubTaskOutcome], failed_calls_only: bool) -> list[ToolCallRecord]:
    return [c for o in _failing(outcomes) for c in o.tool_calls if not (failed_calls_only and c.ok)]


def tools_of(outcomes: list[SubTaskOutcome], *, failed_calls_only: bool = False) -> list[str]:
    """The tools of the failing steps' calls a logical-failure directive blocks (not COMMAND_TOOLS)."""
    return sorted({c.tool for c in _failing_calls(outcomes, failed_calls_only) if c.tool not in COMMAND_TOOLS})


def commands_of(outcomes: list[SubTaskOutcome], *, failed_calls_only: bool = False) -> list[str]:
    """`shell:<command>` of the failing steps' command-tool calls: what a logical-failure directive
    blocks in place of the shell itself."""
    calls = _failing_calls(outcomes, failed_calls_only)
    keys = dict.fromkeys(f"{c.tool}:{c.target}" for c in calls if c.tool in COMMAND_TOOLS and c.target)
    return list(keys)[:MAX_BLOCKED_COMMANDS]


def denial_of(req: ReplanRequest) -> str | None:
    """The evidence of a failed criterion that says the user denied a call, if any."""
    return next((v.evidence for v in L.failed_verdicts(req.outcomes, req.task_criteria_verdicts)
                 if v.failure_class == FailureClass.ENVIRONMENTAL and "the user denied" in (v.evidence or "")), None)


def next_moves(req: ReplanRequest, targets: list[str], denial: str | None = None) -> list[str]:
    """2–3 concrete suggestions for the user on abandon (code template; v0.8 defers the LLM one).
    A call the user denied, in this round or an earlier one, comes first: it is why."""
    moves: list[str] = []
    failed = L.failed_verdicts(req.outcomes, req.task_criteria_verdicts)
    env = [v for v in failed if v.failure_class == FailureClass.ENVIRONMENTAL]
    denial = denial or denial_of(req)
    if denial is not None:
        what = denial.split(" (denied by user")[0].removeprefix("the user denied ")[:120]
        moves.append(f"You denied {what}: run the task again and approve it when asked "
                     "(or pass --yes to approve inside the sandbox), or ask for something that does not need it")
    elif env:
        ev = (env[0].evidence or env[0].criterion).strip().splitlines()[0][:160]
        moves.append(f"Fix the environment problem first: {ev}")
    if targets:
        moves.append("Check these inputs that kept failing: " + ", ".join(targets[:3]))
    logical = [v for v in failed if v.failure_class == FailureClass.LOGICAL]
    if logical:
        moves.append(f"Restate the goal more concretely; the unmet criterion was: {logical[0].criterion[:160]}")
    moves.append("Split the task into smaller steps and run them one at a time")
    moves.append("Try a stronger model for the brain tier (AGENTUI_BRAIN_MODEL)")
    return moves[:3]


def output_failure_advice(cut: str | None) -> tuple[str, list[str]]:
    """What went wrong with the model's last reply and the moves that address it: a budget
    raise only when the reply was cut at the token limit."""
    bigger = "Use a larger or better instruction-following model (AGENTUI_MODEL)"
    if cut in ("length", "runaway:budget"):
        return ("cut off at the role's token budget",
                ["Raise this role's budget in [llm.budgets]", bigger, "Retry the task"])
    if cut in ("runaway:loop", "runaway:whitespace"):
        how = "repeating itself" if cut == "runaway:loop" else "padding with whitespace"
        return (
            f"cut while {how}",
            [
                bigger,
                "If the server ignores response_format, use one that enforces the JSON schema (llama.cpp, Ollama)",
                "Retry the task",
            ],
        )
    if cut == "deadline":
        return ("not finished within the per-call deadline",
                ["Raise [llm] call_deadline_s, or use a faster (smaller) model", "Retry the task"])
    return ("not valid JSON for the reply schema",
            [bigger, "If the server ignores response_format, use one that enforces the JSON schema (llama.cpp, Ollama)",
             "Retry the task"])


class GGS(RoleBase):
    role = Role.GGS
    consumes = frozenset({"ReplanRequest", "OutcomeSummary", "TaskSpec"})
    serial = True  # one decision at a time: the per-task state is a strict sequence

    def __init__(self, ctx: RoleContext) -> None:
        super().__init__(ctx)
        self.cfg = ctx.config.ggs
        self._state: dict[str, _TaskState] = {}

    async def on_cancel(self, task_id: str) -> None:
        self._state.pop(task_id, None)

    def _megram(self, state: str, space: str, entity: str, content: str) -> Megram:
        f, sigma, k = megram_params(state)
        return Megram(id=self.ctx.ids.new("megram"), created_at=iso(self.ctx.clock.now()), space=space,
                      entity=entity, content=content[:2000], state=state, f=f, sigma=sigma, k=k)

    async def _write(self, task_id: str, megrams: list[Megram]) -> None:
        for m in megrams:
            await self.publish(Role.MEMORY, m, task_id)

    def _terminal(self, st: _TaskState, state: str, intent: str, content: str) -> list[Megram]:
        """The terminal Megram (v0.8 §6b macro-event) in the intent's space, and a copy in the space
        code reads from the request when that differs: like tasks meet even when the model words
        the intent differently."""
        from agentui.memory.tags import ENV_LOCAL
        from agentui.memory.workkind import task_spaces

        first, *more = task_spaces(intent, st.request)
        m = self._megram(state, first, ENV_LOCAL, content)
        return [m, *(m.model_copy(update={"id": self.ctx.ids.new("megram"), "space": sp}) for sp in more)]

    def accepts(self, env: Envelope) -> bool:
        # TaskSpec is read, never answered: its request gives the task's second memory space
        return env.type == "TaskSpec" or super().accepts(env)

    async def handle(self, env: Envelope) -> None:
        tid = env.task_id or ""
        st = self._state.setdefault(tid, _TaskState())
        p = env.payload
        if isinstance(p, TaskSpec):
            st.request = p.raw_input
        elif isinstance(p, OutcomeSummary):
            await self._accept(tid, st, p)
        elif isinstance(p, ReplanRequest):
            await self._replan(tid, st, p)

    async def _accept(self, tid: str, st: _TaskState, p: OutcomeSummary) -> None:
        D = L.distance(p.outcomes, p.task_criteria_verdicts)
        P = L.implausibility(L.failed_verdicts(p.outcomes, p.task_criteria_verdicts))
        Om = L.resource_cost(st.requests, p.elapsed_ms, self.cfg)
        sig = L.signals(D, P, Om, st.L_prev, self.cfg)
        final = FinalResult(task_id=tid, summary=p.summary, answer=p.answer, output=p.merged_output, loss=sig.loss(),
                            grad_l=round(sig.grad_l, 6), replans=st.directives, prev_directive=st.prev,
                            directive=TerminalDirective.ACCEPT)
        content = lessons.sop("accept", p.intent, p.outcomes, self.ctx.workspace, self._dead_ends(st))
        self._state.pop(tid, None)
        await self._write(tid, self._terminal(st, "accept", p.intent or p.summary, content))
        await self.publish(Role.USER, final, tid)

    async def _model_output(self, tid: str, st: _TaskState, req: ReplanRequest) -> None:
        """The model's replies stayed unusable after R2's tighter re-ask: no evidence about
        the approach, so no replan order built on it and no Megram. The task ends here unless
        `ggs.model_output_retries` allows re-sending the same directive. Like any round it is
        scored: prev and L_prev move on, so the next ∇L is against this round, not a stale one."""
        st.requests += 1
        D, P = 1.0, 0.0
        Om = L.resource_cost(st.requests, req.elapsed_ms, self.cfg)
        sig = L.signals(D, P, Om, st.L_prev, self.cfg)
        st.output_failures += 1
        prev = st.prev
        why, moves = output_failure_advice(req.output_cut)
        if (Om >= self.cfg.theta or st.directives >= self.cfg.max_replans
                or st.output_failures > self.cfg.model_output_retries):
            self._state.pop(tid, None)
            await self.publish(Role.USER, FinalResult(
                task_id=tid, summary=f"Abandoned: the model's replies could not be used ({why}). {req.gap_summary}",
                loss=sig.loss(), grad_l=round(sig.grad_l, 6), replans=st.directives, prev_directive=prev,
                directive=TerminalDirective.ABANDON, partial_result=dict(st.last_matched) or None,
                next_moves=moves), tid)
            return
        st.directives += 1
        rationale = (
            f"The previous reply was unusable ({why}); keep the approach, answer shorter. {req.gap_summary[:300]}"
        )
        if st.last_directive is not None:  # the same directive, blocks included
            directive = st.last_directive.model_copy(update={
                "round": st.directives, "budget_pressure": round(Om, 6), "rationale": rationale,
                "loss": sig.loss(), "grad_l": round(sig.grad_l, 6), "prev_directive": prev})
        else:
            directive = PlanDirective(
                task_id=tid, loss=sig.loss(), prev_directive=prev, directive=ActionDirective.REFINE,
                failed_criterion="a parseable reply", failure_class=DirectiveFailureClass.ENVIRONMENTAL,
                budget_pressure=round(Om, 6), grad_l=round(sig.grad_l, 6), urgency=Urgency.NORMAL,
                rationale=rationale, round=st.directives)
        st.prev = MacroState(directive.directive.value)
        st.L_prev = sig.L
        await self.publish(Role.PLANNER, directive, tid)

    async def _unverified(self, tid: str, st: _TaskState, req: ReplanRequest) -> None:
        """Every subtask matched its checked criteria, but R4b's replies stayed unusable:
        that is no evidence about the approach, so no replan that would redo checked
        work and no Megram — and nothing verified the task, so no success either. The task ends
        unverified, handing over the checked results."""
        st.requests += 1
        D = L.distance(req.outcomes, req.task_criteria_verdicts, failure=True)
        Om = L.resource_cost(st.requests, req.elapsed_ms, self.cfg)
        sig = L.signals(D, 0.0, Om, st.L_prev, self.cfg)
        why, moves = output_failure_advice(req.output_cut)
        done = {o.intent or o.subtask_id: o.output for o in req.outcomes if o.status == OutcomeStatus.MATCHED}
        n = len(req.outcomes)
        self._state.pop(tid, None)
        await self.publish(Role.USER, FinalResult(
            task_id=tid, loss=sig.loss(), grad_l=round(sig.grad_l, 6), replans=st.directives,
            prev_directive=st.prev, directive=TerminalDirective.ABANDON,
            summary=(f"Not verified: {len(done)} of {n} step(s) passed their own checks, but the final "
                     f"check could not be made — the meta-validator's replies could not be used ({why}). "
                     "The results are below; check them yourself."),
            partial_result={**st.last_matched, **done} or None,
            next_moves=["Check the results yourself", *moves][:3]), tid)

    async def _replan(self, tid: str, st: _TaskState, req: ReplanRequest) -> None:
        if req.reason == "model_output":
            await self._model_output(tid, st, req)
            return
        if req.reason == "verification_output" and all(o.status == OutcomeStatus.MATCHED for o in req.outcomes):
            await self._unverified(tid, st, req)
            return
        from agentui.memory.tags import path_entity, tool_space

        st.requests += 1
        st.denial = st.denial or denial_of(req)
        failed = L.failed_verdicts(req.outcomes, req.task_criteria_verdicts)
        D = L.distance(req.outcomes, req.task_criteria_verdicts, failure=True)
        P = L.implausibility(failed)
        Om = L.resource_cost(st.requests, req.elapsed_ms, self.cfg)
        sig = L.signals(D, P, Om, st.L_prev, self.cfg)
        # "close enough" needs every step run and the task criteria checked and met: D within δ on
        # the steps alone says nothing about the answer
        state = L.macro_state(D, P, Om, sig.grad_l, self.cfg,
                              all_ran=not L.never_ran(req.outcomes) and L.task_checked(req.task_criteria_verdicts))
        st.worsening = st.worsening + 1 if sig.grad_l > self.cfg.epsilon else 0
        law2 = st.worsening >= self.cfg.law2_kill and state != MacroState.SUCCESS
        if law2 or req.recommendation.value == "abandon" and state != MacroState.SUCCESS:
            state = MacroState.ABANDON
        urg = L.urgency(sig.grad_l, self.cfg)
        for o in req.outcomes:
            if o.status == OutcomeStatus.MATCHED:
                st.last_matched[o.intent or o.subtask_id] = o.output
        round_targets = failed_targets(req.outcomes, self.ctx.workspace)
        for c in dead_end_calls(req.outcomes):  # for the abandon lesson: why each dead end failed
            st.why.setdefault(f"{c.tool}:{rel_target(c.target, self.ctx.workspace)}", lessons.why_failed(c))
        for t in round_targets:
            if t not in st.tried_targets:
                st.tried_targets.append(t)
        prev = st.prev

        if state in (MacroState.ABANDON, MacroState.SUCCESS):
            if state == MacroState.ABANDON:
                why = ("Law 2: the loss worsened on "
                       f"{st.worsening} consecutive rounds" if law2 else
                       f"budget exhausted (Ω={sig.Omega:.2f} ≥ θ={self.cfg.theta})"
                       if sig.Omega >= self.cfg.theta else
                       "you did not confirm going ahead" if "declined: " in req.gap_summary else
                       "the planner found no plan unlike the one that failed" if REPEATED_PLAN in req.gap_summary else
                       "the validators recommended abandoning")
                partial = dict(st.last_matched) or None
                final = FinalResult(
                    task_id=tid, summary=f"Abandoned: {why}. {req.gap_summary}".strip(),
                    output=None, loss=sig.loss(), grad_l=round(sig.grad_l, 6), replans=st.directives,
                    prev_directive=prev, directive=TerminalDirective.ABANDON,
                    next_moves=next_moves(req, st.tried_targets, st.denial), partial_result=partial,
                )
            else:
                # close enough: deliver what was produced, including the nearly-passing outputs
                merged = "\n".join(str(o.output) for o in req.outcomes if o.output not in (None, "")) or None
                final = FinalResult(
                    task_id=tid,
                    summary=f"Close enough (D={sig.D:.2f} ≤ δ={self.cfg.delta}). {req.gap_summary}".strip(),
                    answer=req.answer, output=merged, loss=sig.loss(), grad_l=round(sig.grad_l, 6),
                    replans=st.directives, prev_directive=prev, directive=TerminalDirective.SUCCESS,
                )
            self._state.pop(tid, None)
            if "declined: " not in req.gap_summary:  # a "no" to going ahead says nothing about the approach
                await self._write(tid, self._terminal(st, state.value, req.intent or req.gap_summary,
                                                      self._lesson(state, req, st)))
            await self.publish(Role.USER, final, tid)
            return

        # action states → PlanDirective
        blocked_tools: list[str] = []
        blocked_targets: list[str] = []
        if state in (MacroState.BREAK_SYMMETRY, MacroState.CHANGE_APPROACH):
            only_failed = state == MacroState.CHANGE_APPROACH and urg == Urgency.LOW
            blocked_tools = tools_of(req.outcomes, failed_calls_only=only_failed)
            # like the targets of environmental failures, the commands accumulate: a planner sent
            # from command A to B must not be let back to A
            fresh = commands_of(req.outcomes, failed_calls_only=only_failed)
            st.blocked_commands = [c for c in st.blocked_commands if c not in fresh] + fresh
            blocked_targets = st.blocked_commands[-MAX_BLOCKED_COMMANDS:]
        elif state == MacroState.REFINE and urg == Urgency.LOW:
            blocked_targets = list(round_targets) or list(st.tried_targets[-1:])
        else:  # change_path, refine (normal / worsening): everything tried so far
            blocked_targets = list(dict.fromkeys([*st.tried_targets, *st.blocked_commands]))

        first_fail = failed[0] if failed else None
        classes = {v.failure_class for v in failed if v.failure_class}
        fclass = (DirectiveFailureClass(next(iter(classes)).value) if len(classes) == 1
                  else DirectiveFailureClass.MIXED)
        st.directives += 1
        st.prev = state
        st.L_prev = sig.L
        directive = PlanDirective(
            task_id=tid, loss=sig.loss(), prev_directive=prev, directive=ActionDirective(state.value),
            blocked_tools=blocked_tools, blocked_targets=blocked_targets,
            failed_criterion=first_fail.criterion if first_fail else req.gap_summary[:200],
            failure_class=fclass, budget_pressure=round(sig.Omega, 6), grad_l=round(sig.grad_l, 6),
            rationale=self._rationale(state, sig, urg, req, blocked_tools, blocked_targets),
            urgency=urg, round=st.directives, steps_passed=_steps_passed(req),
        )
        megrams = []
        seen: set[tuple[str, str]] = set()
        for c in dead_end_calls(req.outcomes):  # tags keep absolute paths: memory outlives this workspace
            if (c.tool, c.target) not in seen:
                seen.add((c.tool, c.target))
                megrams.append(self._megram(state.value, tool_space(c.tool), path_entity(c.target),
                                            lessons.micro(state.value, req.intent, c, self.ctx.workspace)))
        await self._write(tid, megrams)
        st.last_directive = directive
        await self.publish(Role.PLANNER, directive, tid)

    def _lesson(self, state: MacroState, req: ReplanRequest, st: _TaskState) -> str:
        """A terminal Megram's content: what worked (success) or what to avoid (abandon)."""
        if state == MacroState.SUCCESS:
            return lessons.sop(state.value, req.intent, req.outcomes, self.ctx.workspace, self._dead_ends(st))
        classes = sorted({v.failure_class.value for v in L.failed_verdicts(req.outcomes, req.task_criteria_verdicts)
                          if v.failure_class})
        return lessons.failure(state.value, req.intent, req.outcomes, self._dead_ends(st), self.ctx.workspace,
                               classes=classes)

    @staticmethod
    def _dead_ends(st: _TaskState) -> dict[str, str]:
        """Every target and command tried and failed across the task's rounds, with what it said."""
        return {t: st.why.get(t, "") for t in [*st.tried_targets, *st.blocked_commands]}

    def _rationale(self, state: MacroState, sig: L.Signals, urg: Urgency, req: ReplanRequest,
                   tools: list[str], targets: list[str]) -> str:
        trend = {Urgency.LOW: "improving", Urgency.HIGH: "worsening", Urgency.NORMAL: "flat"}[urg]
        head = (f"D={sig.D:.2f} P={sig.P:.2f} Ω={sig.Omega:.2f} ∇L={sig.grad_l:+.2f} ({trend}). ")
        what = {
            MacroState.BREAK_SYMMETRY: "Stuck with a logically wrong approach: use a different kind of tool.",
            MacroState.CHANGE_APPROACH: "The approach is logically wrong: switch method.",
            MacroState.CHANGE_PATH: "The approach is sound but hit an environmental wall: same kind of tool, "
                                    "different target.",
            MacroState.REFINE: "Sound approach with signal: tighten parameters and narrow the scope.",
        }[state]
        if state in (MacroState.BREAK_SYMMETRY, MacroState.CHANGE_APPROACH) and _steps_passed(req):
            # every step passed its own checks and the final check failed the result: there is no
            # failed tool to leave, so the steps must show the result the request asks for
            what = ("Every step passed its checks, but the final check rejected the result: make the steps "
                    "show what the request asks.")
        parts = [head + what]
        if tools:
            parts.append("Do not use: " + ", ".join(tools) + ".")
        if targets:
            parts.append("Do not retry: " + "; ".join(targets[:6]) + ".")
        parts.append("What failed: " + brief(req.gap_summary, 420))
        return " ".join(parts)

    async def on_error(self, env: Envelope, exc: Exception) -> None:
        """GGS is code-only; should it still fail, the task must not hang: abandon with the error."""
        tid = env.task_id or ""
        st = self._state.pop(tid, _TaskState())
        from agentui.contracts import Loss

        final = FinalResult(task_id=tid, summary=f"Abandoned: the goal gradient solver failed ({exc}).",
                            loss=Loss(D=1.0, P=0.0, Omega=0.0, L=self.cfg.alpha), replans=st.directives,
                            prev_directive=st.prev, directive=TerminalDirective.ABANDON,
                            next_moves=["Report this as a bug with the task log", "Retry the task"])
        await self.publish(Role.USER, final, tid)

