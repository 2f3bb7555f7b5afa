"""R3 Executor pool with the dispatcher (roles-v0.6 §R3; DESIGN §3, §5).

The dispatcher collects a round's SubTasks, and when R2's DispatchManifest arrives runs them by
`sequence`: equal sequences in parallel, lower first, the outputs of sequence N injected into the
context of N+1. If a step fails, later steps are not run (they are reported as skipped).

Each subtask is one executor worker: a bounded tool-calling loop over a JSON action protocol.
Only the tools not blocked for the task are offered — the action schema's `tool` field is an enum
of them, so a blocked tool cannot even be named — and the registry refuses them anyway. Identical
calls (same tool, same canonical arguments) and calls on a blocked target are refused without
running. Tool calls are recorded by code, never by the LLM. Infeasibility is reported honestly.
After each ExecutionResult the worker waits for R4a's CorrectionSignal (try again) or the
SubTaskOutcome (done).
"""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentui.contracts import (
    ConfirmationChoice,
    ConfirmationDecision,
    ConfirmationRequest,
    CorrectionSignal,
    DispatchManifest,
    Envelope,
    ExecutionResult,
    ExecutionStatus,
    FileDiff,
    OutcomeStatus,
    PlanDirective,
    ReplanRequest,
    Role,
    SubTask,
    SubTaskOutcome,
    ToolCallRecord,
    canonical_json,
)
from agentui.llm.base import LLMInfraError, LLMOutputError
from agentui.roles import worldcheck as W
from agentui.roles.actions import (
    COMMAND_TOOLS,
    FINISH,
    INFEASIBLE,
    WORKSPACE_LINE,
    Window,
    action_model,
    as_seen,
    one_line,
    order_tools,
    required_args,
    short,
    suggested_call,
)
from agentui.roles.base import RoleBase, RoleContext
from agentui.roles.calibration import memory_constraints, rel_target, tool_rules
from agentui.roles.prompts import load

if TYPE_CHECKING:
    from agentui.tools import GateRequest

SKIPPED = "skipped: an earlier step of this plan failed"
#: the error of a call refused because the user denied it earlier in the task (R4a reads "denied by user")
DENIED_EARLIER = "denied by user earlier in this task"
REFUSED_DENIED = "REFUSED: the user denied"

SYSTEM = load("executor").text  # agentui/roles/prompts/executor.md


def _tool_line(spec: dict[str, Any]) -> str:
    props = spec.get("parameters", {}).get("properties", {})
    req = set(spec.get("parameters", {}).get("required", []))
    args = ", ".join(f"{k}{'' if k in req else '?'}" for k in props)
    return f"- {spec['name']}({args}): {spec.get('brief') or spec.get('description', '')[:80]}"


@dataclass
class _Round:
    subtasks: dict[str, SubTask] = field(default_factory=dict)


class Executor(RoleBase):
    role = Role.EXECUTOR
    consumes = frozenset({"SubTask", "DispatchManifest", "CorrectionSignal", "SubTaskOutcome",
                          "PlanDirective", "ConfirmationDecision", "ReplanRequest"})
    receiver_only = False

    def __init__(self, ctx: RoleContext) -> None:
        super().__init__(ctx)
        self._pending: dict[str, dict[str, SubTask]] = defaultdict(dict)  # task → subtasks awaiting a manifest
        # subtask → its corrections / outcome
        self._waiters: dict[str, asyncio.Queue[CorrectionSignal | SubTaskOutcome]] = {}
        self._blocked_tools: dict[str, set[str]] = defaultdict(set)
        self._blocked_targets: dict[str, set[str]] = defaultdict(set)
        self._denied: dict[str, set[str]] = defaultdict(set)  # task → `tool:target` the user said no to
        self._read_only: dict[str, list[Path]] = {}  # task → what it only reads: a question's files, a copy's source
        self._questions: set[str] = set()  # tasks whose request asks a question and changes nothing
        self._located: dict[str, list[str]] = {}  # task → where the paths it names are, when elsewhere
        self._decisions: dict[str, asyncio.Future[ConfirmationDecision]] = {}
        self._running: dict[str, asyncio.Task[Any]] = {}  # subtask → the dispatch running it

    async def on_cancel(self, task_id: str) -> None:
        self._pending.pop(task_id, None)
        self._blocked_tools.pop(task_id, None)
        self._blocked_targets.pop(task_id, None)
        self._denied.pop(task_id, None)
        self._read_only.pop(task_id, None)
        self._questions.discard(task_id)
        self._located.pop(task_id, None)
        if self.ctx.tools is not None and getattr(self.ctx.tools, "approvals", None) is not None:
            self.ctx.tools.approvals.forget_task(task_id)
        for rid, fut in list(self._decisions.items()):
            if rid.startswith(task_id) and not fut.done():
                fut.cancel()

    def accepts(self, env: Envelope) -> bool:
        return env.type in self.consumes

    async def handle(self, env: Envelope) -> None:
        p = env.payload
        tid = env.task_id or ""
        if isinstance(p, SubTask) and env.receiver == Role.EXECUTOR:
            self._pending[tid][p.subtask_id] = p
            self._waiters.setdefault(p.subtask_id, asyncio.Queue())
        elif isinstance(p, DispatchManifest):
            if p.task_spec is not None and tid not in self._located:  # once per task, not per round
                self._read_only[tid] = W.read_only(p.task_spec.raw_input, self.ctx.workspace)
                if W.is_question(p.task_spec.raw_input):
                    self._questions.add(tid)
                self._located[tid] = await asyncio.to_thread(W.located, p.task_spec.raw_input, self.ctx.workspace)
            subs = [self._pending[tid].pop(s) for s in p.subtask_ids if s in self._pending[tid]]
            if subs:
                me = asyncio.current_task()
                for s in subs:
                    if me is not None:
                        self._running[s.subtask_id] = me
                try:
                    await self._dispatch(tid, subs)
                finally:
                    for s in subs:
                        self._running.pop(s.subtask_id, None)
        elif isinstance(p, ReplanRequest):
            if p.reason == "fan_in_timeout":
                self._stop_stragglers(tid, p.failed_subtasks)
        elif isinstance(p, CorrectionSignal | SubTaskOutcome):
            q = self._waiters.get(p.subtask_id)
            if q is not None:
                q.put_nowait(p)
        elif isinstance(p, PlanDirective):
            self._blocked_tools[tid] = set(p.blocked_tools)
            self._blocked_targets[tid] = set(p.blocked_targets)  # GGS's list is the accumulated one
        elif isinstance(p, ConfirmationDecision):
            fut = self._decisions.pop(p.request_id, None)
            if fut and not fut.done():
                fut.set_result(p)

    def _stop_stragglers(self, tid: str, missing: list[str]) -> None:
        """R4b gave up on these subtasks (fan-in timeout): the round is over, so its dispatch stops —
        the in-flight LLM stream closes (the server stops generating) and a tool process is killed,
        instead of holding the endpoint until its idle timeout."""
        stopped = {id(t): t for sid in missing if (t := self._running.get(sid)) is not None and not t.done()}
        for t in stopped.values():
            t.cancel()
        if stopped:
            self.ctx.log(tid, {"kind": "stragglers_cancelled", "subtasks": missing})

    # -- dispatcher -----------------------------------------------------------------------------
    async def _dispatch(self, tid: str, subs: list[SubTask]) -> None:
        groups: dict[int, list[SubTask]] = defaultdict(list)
        for s in subs:
            groups[s.sequence].append(s)
        earlier: list[tuple[SubTask, Any]] = []
        failed = False
        for seq in sorted(groups):
            group = groups[seq]
            if failed:
                for s in group:
                    await self.publish(Role.AGENT_VALIDATOR, ExecutionResult(
                        subtask_id=s.subtask_id, status=ExecutionStatus.FAILED, infeasible_reason=SKIPPED), tid)
                    self._waiters.pop(s.subtask_id, None)
                continue
            outcomes = await asyncio.gather(*(self._work(tid, s, earlier) for s in group))
            for s, o in zip(group, outcomes, strict=True):
                earlier.append((s, o.output))
                failed = failed or o.status == OutcomeStatus.FAILED

    async def _work(self, tid: str, st: SubTask, earlier: list[tuple[SubTask, Any]]) -> SubTaskOutcome:
        q = self._waiters.setdefault(st.subtask_id, asyncio.Queue())
        correction: CorrectionSignal | None = None
        attempt = 1
        try:
            while True:
                result = await self.execute(tid, st, attempt, correction, earlier)
                await self.publish(Role.AGENT_VALIDATOR, result, tid)
                got = await q.get()
                if isinstance(got, SubTaskOutcome):
                    return got
                correction = got
                attempt += 1
        finally:
            self._waiters.pop(st.subtask_id, None)

    # -- one attempt: the tool loop -------------------------------------------------------------
    async def _task_text(self, tid: str, st: SubTask, attempt: int, correction: CorrectionSignal | None,
                         earlier: list[tuple[SubTask, Any]], offered: list[dict[str, Any]],
                         blocked_targets: set[str]) -> str:
        """The executor's first user message: the tools, the subtask and what is known around it."""
        names = [s["name"] for s in offered]
        lines = [WORKSPACE_LINE, "Tools:", *(_tool_line(s) for s in offered),
                 f"Subtask: {st.intent}", "Success criteria:",
                 *(f"- {c.criterion}" for c in st.success_criteria)]
        if st.context:
            lines.append(f"Context: {st.context}")
        if located := self._located.get(tid):  # a named path that is elsewhere: say where it is
            lines.append("Paths:\n" + "\n".join(f"- {x}" for x in located))
        if earlier:
            lines.append("Results of earlier steps:")
            lines.extend(f"- {s.intent[:100]}: {short(str(o), 300)}" for s, o in earlier)
        # a blocked shell command is refused when tried, not named here: a small model tends to run
        # the one command a prompt line names, even one it is told not to
        told = sorted(t for t in blocked_targets if t.partition(":")[0] not in COMMAND_TOOLS)
        if told:
            lines.append("Do not retry these (they failed before): " + "; ".join(told[:8]))
        rules = await tool_rules(self.ctx.memory, names)
        if rules:  # what the user remembered for these tools (`agentui memory remember --space tool:<name>`)
            lines.append("Remembered rules:\n" + "\n".join(f"- {r}" for r in rules[:6]))
        if correction is not None:
            lines.append(f"Attempt {attempt}. The previous attempt failed: {correction.what_was_wrong[:500]}")
            lines.append(f"What to do: {correction.what_to_do[:300]}")
        first = suggested_call(st.intent, names)
        if first:
            lines.append(f"Start with: {first}")
        return "\n".join(lines)

    async def execute(self, tid: str, st: SubTask, attempt: int, correction: CorrectionSignal | None,
                      earlier: list[tuple[SubTask, Any]]) -> ExecutionResult:
        from agentui.tools import ToolContext

        reg = self.ctx.tools
        blocked = self._blocked_tools.get(tid, set())
        offered = [s for s in reg.specs(exclude=blocked)] if reg is not None else []
        if st.tools:  # only the subtask's tools (the plan names them), the intent's command first
            narrowed = [s for s in offered if s["name"] in st.tools]
            offered = narrowed or offered
        offered = order_tools(offered, st.intent)
        names = [s["name"] for s in offered]
        Action = action_model(names, required_args(offered))
        blocked_targets = self._blocked_targets.get(tid, set())
        task = await self._task_text(tid, st, attempt, correction, earlier, offered, blocked_targets)
        never = await self._memory_targets(tid, self.ctx.memory)
        # the rolling window keeps each call near the ≤ 1,500-token budget
        win = Window(SYSTEM, task)
        dups = 0
        calls: list[ToolCallRecord] = []
        seen: dict[tuple[str, str], ToolCallRecord] = {}
        cfg = self.ctx.config
        ctx = ToolContext(
            workspace=self.ctx.workspace, task_id=tid, subtask_id=st.subtask_id,
            confirm=self._confirm_fn(tid, st.subtask_id), timeout_s=cfg.tools.timeout_s,
            output_cap_chars=cfg.tools.output_cap_chars,
            log=lambda rec: self.ctx.log(tid, {"kind": "tool", "subtask_id": st.subtask_id, **rec}),
            blocked_tools=frozenset(blocked),
        )
        llm = self.ctx.llm("executor")
        for _step in range(cfg.pipeline.executor_max_steps):
            try:
                act = await llm.structured(win.messages(), Action)
            except LLMInfraError:
                raise  # the endpoint failed, not this role: the runtime ends the task
            except LLMOutputError as e:  # still unusable after the re-ask: the model's output, not the approach
                self.ctx.log(tid, {"kind": "executor_output_failure", "subtask_id": st.subtask_id,
                                   "cut": e.cut, "error": str(e)[:300]})
                return ExecutionResult(subtask_id=st.subtask_id, attempt=attempt, status=ExecutionStatus.FAILED,
                                       output=None, tool_calls=calls, model_output_cut=e.cut or "schema",
                                       infeasible_reason=f"the executor's replies were unusable ({e.cut or 'schema'})")
            except Exception as e:  # noqa: BLE001 - the executor's LLM failing is an honest failure
                return ExecutionResult(subtask_id=st.subtask_id, attempt=attempt, status=ExecutionStatus.FAILED,
                                       output=None, tool_calls=calls,
                                       infeasible_reason=f"executor LLM unavailable: {e}"[:500])
            sent = act.model_dump_json()
            if act.tool == FINISH:
                output = act.output.strip()
                if not output and calls:
                    last_ok = [c for c in calls if c.ok]
                    output = last_ok[-1].evidence if last_ok else ""
                return ExecutionResult(subtask_id=st.subtask_id, attempt=attempt,
                                       status=ExecutionStatus.COMPLETED, output=output, tool_calls=calls)
            if act.tool == INFEASIBLE:
                return ExecutionResult(subtask_id=st.subtask_id, attempt=attempt, status=ExecutionStatus.FAILED,
                                       output=act.output, tool_calls=calls,
                                       infeasible_reason=act.output.strip() or "reported infeasible")
            key = (act.tool, canonical_json(act.args))
            if key in seen:
                prev = seen[key]
                dups += 1
                if act.output.strip() or dups >= 2:
                    # the answer beside a repeated call, or a second repeat: finish rather than spend
                    # the step budget re-running what is known; R4a judges the result
                    ok = [c for c in calls if c.ok]
                    return ExecutionResult(subtask_id=st.subtask_id, attempt=attempt,
                                           status=ExecutionStatus.COMPLETED, tool_calls=calls,
                                           output=act.output.strip() or (ok[-1].evidence if ok else ""))
                win.step(sent, (
                    "REFUSED: you already made this exact call; its result was:\n"
                    f"{short(prev.evidence or prev.error or '', 600)}\nYou have what you need: reply now with "
                    '{"tool": "finish", "output": "<the answer, taken from that result>"}.'),
                    f"{act.tool} repeated → REFUSED: you already made this exact call")
                continue
            target = rel_target(self._target(act.tool, act.args, ctx), self.ctx.workspace)
            if (refusal := self._refusal(tid, act.tool, act.args, target, blocked_targets, never)) is not None:
                win.step(sent, refusal, one_line(refusal, 120))
                refused = ToolCallRecord(tool=act.tool, args=act.args, target=target or "", ok=False,
                                         error=refusal, evidence=refusal)
                if refusal.startswith(REFUSED_DENIED):
                    # recorded, so R4a sees the denial in this attempt too: it is why nothing was done,
                    # and it is the environment's wall, not a wrong approach
                    calls.append(refused.model_copy(update={"error": f"{DENIED_EARLIER} (not asked again)"}))
                seen[key] = refused  # the same refused call again is a repeat
                continue
            rec = await reg.call(act.tool, act.args, ctx)
            if not rec.ok and (rec.error or "").startswith("denied by user") and target:
                self._denied[tid].add(f"{act.tool}:{target}")
            calls.append(rec)
            seen[key] = rec
            # the model sees workspace paths relative, as its prompt names them; the task log keeps all
            error = as_seen(rec.error or "", self.ctx.workspace)
            evidence = as_seen(rec.evidence or "", self.ctx.workspace)
            head = f"RESULT ok (exit {rec.exit_code})" if rec.ok else f"ERROR (exit {rec.exit_code}): {error}"
            win.step(sent, f"{head}\n{evidence}", f"{act.tool} {(target or rec.target)[:60]!r} → " + (
                f"ok: {one_line(evidence) or '(no output)'}" if rec.ok else f"ERROR: {one_line(error)}"))
        last = calls[-1] if calls else None
        return ExecutionResult(
            subtask_id=st.subtask_id, attempt=attempt, status=ExecutionStatus.FAILED,
            output=(last.evidence if last else None), tool_calls=calls,
            infeasible_reason=f"ran out of steps ({cfg.pipeline.executor_max_steps}) before finishing",
        )

    def _refusal(self, tid: str, tool: str, args: dict[str, Any], target: str | None,
                 blocked_targets: set[str], never: dict[str, str]) -> str | None:
        """Why this call is refused before it runs, or None: the user said no to it earlier in the
        task, it failed before, memory forbids it, or it writes what the request only reads."""
        key = f"{tool}:{target}"
        if target and key in self._denied.get(tid, ()):  # a "no" holds for the whole task: never ask twice
            return (f"{REFUSED_DENIED} {tool} on '{target}' earlier in this task. "
                    "Do not try it again; finish or report infeasible if nothing else can do it.")
        if target and key in blocked_targets:
            return f"REFUSED: {tool} on '{target}' is blocked for this task (it failed before). Use a different target."
        if target and key in never:
            return (f"REFUSED: memory says {tool} on '{target}' must not be done ({never[key]}). "
                    "Use a different target or tool.")
        if (touched := self._writes_read_only(tid, tool, args)) is not None:
            answer = ('Answer it from what the tools showed: {"tool": "finish", "output": '
                      '"<the answer, taken from the results>"}.')
            if tid in self._questions and not os.path.lexists(self.ctx.workspace / touched):
                # a new file: "only reads" would not stop a write of a file the question never had
                return f"REFUSED: the request asks a question and changes no file; do not write {touched}. {answer}"
            return (f"REFUSED: the request only reads {touched}; do not change it. " + (
                f"It asks a question. {answer}" if tid in self._questions else
                "Work from it as it is (read it, count it, search it, sort it with sort) and "
                "write only the file the request asks for, if any."))
        return None

    def _writes_read_only(self, tid: str, tool: str, args: dict[str, Any]) -> str | None:
        """The path the request only reads (a question's files, a copy's source) that this call would
        write (as the gate reads the call before it runs), else None: a question never needs the
        files it names, or anything else, written."""
        asked = self._read_only.get(tid)
        if not asked:
            return None
        from agentui.tools import safety

        ws = self.ctx.workspace
        try:
            if tool == "write_file" and isinstance(args.get("path"), str):
                writes = safety.assess_write(Path(args["path"]), ws, append=bool(args.get("append"))).writes
            elif tool == "shell" and isinstance(args.get("command"), str):
                writes = safety.assess(args["command"], ws).writes
            else:
                return None
        except Exception:  # noqa: BLE001 - a command the gate cannot read: the gate itself decides
            return None
        root = Path(os.path.realpath(ws))
        for w in writes:
            p = Path(os.path.realpath(root / w))
            if W.about(p, asked):
                return os.path.relpath(p, root)
        return None

    async def _memory_targets(self, tid: str, mem: Any) -> dict[str, str]:
        """`tool:target` → rule, for memory's consolidated Constraints (the executor's gate)."""
        if mem is None:
            return {}
        try:
            return {f"{t}:{g}": rule[:120] for t, g, rule in await memory_constraints(mem, self.ctx.workspace)}
        except Exception as e:  # noqa: BLE001 - memory trouble must not stop a subtask
            self.ctx.log(tid, {"kind": "memory_error", "error": str(e)[:300]})
            return {}

    def _target(self, name: str, args: dict[str, Any], ctx: Any) -> str:
        tool = self.ctx.tools.get(name) if self.ctx.tools is not None else None
        fn = getattr(tool, "target", None)
        if fn is None:
            return ""
        try:
            return str(fn(args, ctx))
        except Exception:  # noqa: BLE001 - bad args are the registry's to report
            return ""

    def _confirm_fn(self, tid: str, subtask_id: str) -> Callable[[GateRequest], Awaitable[ConfirmationChoice]]:
        # approvals (task/session/project patterns) are the tool gate's; this only asks the user
        async def confirm(req: GateRequest) -> ConfirmationChoice:
            rid = f"{tid}:{self.ctx.ids.new('req')}"
            fut: asyncio.Future[ConfirmationDecision] = asyncio.get_running_loop().create_future()
            self._decisions[rid] = fut
            await self.bus.publish(Role.SAFETY, Role.USER, ConfirmationRequest(
                request_id=rid, task_id=tid, subtask_id=subtask_id, tool=req.tool, command=req.command,
                reasons=list(req.reasons) or ["needs confirmation"], cwd=req.cwd or str(self.ctx.workspace),
                patterns=list(req.patterns), scopes=[s.value for s in req.scopes()], writes=list(req.writes),
                network=list(req.network), human_only=req.human_only, sandboxed=req.sandboxed,
                escalation=req.escalation, change=_file_diff(getattr(req, "change", None))), task_id=tid)
            try:
                decision = await fut
            finally:
                self._decisions.pop(rid, None)
            return ConfirmationChoice(decision.decision)

        return confirm


def _file_diff(change: Any) -> FileDiff | None:
    """A file write's proposed change (tools.diffs.propose builds it) as the request carries it."""
    return change if isinstance(change, FileDiff) else None
