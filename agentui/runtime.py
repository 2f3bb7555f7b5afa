"""The runtime: wires the roles onto one bus and runs tasks (DESIGN §2).

One Runtime serves many tasks (the TUI's session) or one (`agentui run`). It owns what no role
may own: IDs and clocks, the user side of the bus (answers to ClarificationRequest and
ConfirmationRequest come from injectable handlers: a TTY prompt, a Textual modal, or a test), the
memory writer that accepts Megrams only from GGS, per-task logs and bus recordings, per-task cost
accounting, and cancellation (drop the task's late messages, cancel its handlers and tool
processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from agentui.bus import Bus, BusClosed, Tap
from agentui.clock import Clock, SystemClock, iso
from agentui.config import Config
from agentui.contracts import (
    ClarificationAnswer,
    ClarificationRequest,
    ConfirmationChoice,
    ConfirmationDecision,
    ConfirmationRequest,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMUsage,
    Megram,
    PerceiverReply,
    Role,
    TaskCancelled,
    TaskStarted,
    UserInput,
    canonical_json,
)
from agentui.ids import IdFactory, UuidIds
from agentui.paths import DataLayout
from agentui.roles.base import RoleBase, RoleContext, current_task

ClarifyHandler = Callable[[ClarificationRequest], Awaitable[str]]
ConfirmHandler = Callable[[ConfirmationRequest], Awaitable[Any]]  # a ConfirmationChoice, bool or answers.Answer


async def proceed_without_answer(_req: ClarificationRequest) -> str:
    return ""  # empty answer = proceed (v0.7 §R1)


async def deny_all(_req: ConfirmationRequest) -> ConfirmationChoice:
    return ConfirmationChoice.DENY  # non-interactive: deny


@dataclass
class TaskStats:
    started: float = 0.0
    ended: float | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    parse_repairs: int = 0
    parse_failures: int = 0  # unusable replies (invalid, cut at length, runaway cut)
    runaways_cut: int = 0
    tool_calls: int = 0
    tool_seconds: float = 0.0
    by_role: dict[str, dict[str, float]] = field(default_factory=dict)

    def add_usage(self, u: LLMUsage) -> None:
        self.llm_calls += 1
        self.prompt_tokens += u.prompt_tokens
        self.completion_tokens += u.completion_tokens
        self.parse_repairs += u.parse_repairs
        failed = int(u.failure == "output")
        cut = int(bool(u.cut and u.cut.startswith(("runaway", "deadline"))))
        self.parse_failures += failed
        self.runaways_cut += cut
        r = self.by_role.setdefault(u.role.value, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                                   "seconds": 0.0, "parse_repairs": 0, "errors": 0,
                                                   "parse_failures": 0, "runaways_cut": 0})
        r["calls"] += 1
        r["prompt_tokens"] += u.prompt_tokens
        r["completion_tokens"] += u.completion_tokens
        r["seconds"] = round(r["seconds"] + u.latency_s, 4)
        r["parse_repairs"] += u.parse_repairs
        r["errors"] += 0 if u.ok else 1
        r["parse_failures"] += failed
        r["runaways_cut"] += cut

    def as_dict(self, now: float) -> dict[str, Any]:
        end = self.ended if self.ended is not None else now
        return {
            "llm_calls": self.llm_calls, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "parse_repairs": self.parse_repairs,
            "parse_failures": self.parse_failures, "runaways_cut": self.runaways_cut,
            "by_role": {k: dict(v) for k, v in sorted(self.by_role.items())},
            "tool_calls": self.tool_calls, "tool_seconds": round(self.tool_seconds, 3),
            "wall_s": round(end - self.started, 3),
        }


@dataclass
class TaskEnd:
    task_id: str
    final: FinalResult | None = None
    reply: PerceiverReply | None = None
    cancelled: bool = False
    reason: str = ""
    # the LLM endpoint failed: {"kind", "endpoint", "model", "said", "fix", "message"}; the
    # task ended there — no replan, no Megram, not a verdict on the approach
    infra: dict[str, str] | None = None

    def as_json_doc(self) -> dict[str, Any] | None:
        if self.final is not None:
            return self.final.model_dump(mode="json")
        if self.reply is not None:
            return self.reply.model_dump(mode="json")
        return None


class Runtime:
    def __init__(
        self,
        config: Config,
        *,
        workspace: Path | str | None = None,
        data_dir: Path | str | None = None,
        clock: Clock | None = None,
        ids: IdFactory | None = None,
        pool: Any = None,
        memory: Any = None,
        tools: Any = None,
        ablation: str | None = None,
        clarify: ClarifyHandler | None = None,
        confirm: ConfirmHandler | None = None,
        record: bool = True,
        auditor: bool = True,
        close_memory: bool = True,
    ) -> None:
        self.config = config
        self.workspace = Path(workspace or config.tools.workspace or Path.cwd()).expanduser().resolve()
        self.layout = DataLayout(Path(data_dir) if data_dir else config.data_path())
        self.clock = clock or SystemClock()
        self.ids = ids or UuidIds()
        self.pool = pool
        self.memory = memory
        # False: the caller owns `memory` and keeps it open after stop() (the tree runner's one
        # store across iterations, or the TUI's); stop() then only drains it
        self.close_memory = close_memory
        self.tools = tools
        self.ablation = ablation
        self.clarify = clarify or proceed_without_answer
        self.confirm = confirm or deny_all
        self.record = record
        self.with_auditor = auditor
        self.bus: Bus | None = None
        self.roles: list[RoleBase] = []
        self.auditor: Any = None
        self._aux: list[Any] = []  # other runnables with run()/close()
        self._tasks: list[asyncio.Task[Any]] = []
        self._ends: dict[str, asyncio.Future[TaskEnd]] = {}
        self.stats: dict[str, TaskStats] = {}
        self._logs: dict[str, TextIO] = {}
        self.log_errors: dict[str, str] = {}  # task id → why its task log is incomplete (disk full)
        self.truncated: dict[str, tuple[int, int]] = {}  # task id → (chars given, chars kept)
        self._recs: dict[str, TextIO] = {}
        self._history: list[str] = []  # the session's turns: what was asked → what came of it
        self._turn: dict[str, int] = {}  # task → its index in _history
        self._tap: Tap | None = None
        self.started = False
        self.dreamer: Any = None
        self.mcp: Any = None  # agentui.mcp.McpHub when [mcp.servers] are configured
        self.problems: list[str] = []  # startup problems the front end shows (a server that failed)
        self.live: Any = None  # agentui.live.LiveText once started: the streamed roles' text

    # -- lifecycle ------------------------------------------------------------------------------
    async def start(self) -> Runtime:
        if self.started:
            return self
        from agentui.roles.agent_validator import AgentValidator
        from agentui.roles.executor import Executor
        from agentui.roles.ggs import GGS
        from agentui.roles.meta_validator import MetaValidator
        from agentui.roles.perceiver import Perceiver
        from agentui.roles.planner import Planner

        if self.tools is None:
            from agentui.tools import default_registry

            self.tools = default_registry()
        if getattr(self.tools, "approvals", False) is None:  # scoped approvals, project file
            from agentui.tools import Approvals, project_allowlist_path

            self.tools.approvals = Approvals(project_allowlist_path(self.layout.root, self.workspace), self.workspace)
        if self.config.mcp.servers and self.mcp is None:
            from agentui.mcp import McpHub  # the adapter imports the SDK; the core does not

            self.mcp = McpHub(self.config.mcp.servers, cwd=str(self.workspace))
            self.problems.extend(await self.mcp.attach(self.tools))
        if self.memory is None:
            from agentui.memory import InMemoryMemory

            self.memory = InMemoryMemory(self.clock, self.ids)
        self.bus = Bus(clock=self.clock, ids=self.ids)
        self._wire_gate()
        self.dreamer = None
        from agentui.memory import Dreamer
        from agentui.memory.dreamer import llm_distiller

        self.dreamer = Dreamer(self.memory, self.clock, llm_distiller(self.pool) if self.pool is not None else None,
                               debounce_s=self.config.memory.dreamer_debounce_s)
        self.dreamer.start_timer(self.config.memory.dreamer_interval_s)
        from agentui.live import LiveText

        self.live = LiveText(lambda role, ev, tid: self.bus.envelope(role, Role.USER, ev, task_id=tid),
                             self._publish_quiet, current_task.get, offer=self._offer_quiet)
        if self.pool is not None:
            self.pool.on_usage = self._on_usage
            self.pool.tracer = self._trace_llm
            self.pool.on_infra_failure = self._on_infra_failure
            self.pool.on_delta = self.live.watch  # the streamed roles' text, throttled onto the bus
        ctx = RoleContext(bus=self.bus, config=self.config, clock=self.clock, ids=self.ids, pool=self.pool,
                          memory=self.memory, tools=self.tools, workspace=self.workspace, trace=self._log)
        self.ctx = ctx
        # the tap first, so the task log and recording see every envelope
        self._tap = self.bus.tap("runtime")
        self._tasks.append(asyncio.create_task(self._observe(), name="runtime:observe"))
        self.roles = [Perceiver(ctx), Planner(ctx), Executor(ctx), AgentValidator(ctx), MetaValidator(ctx)]
        if self.ablation == "naive-retry":
            from agentui.roles.naive_retry import NaiveRetry

            self._aux.append(NaiveRetry(self.bus, self.config.ggs, self.clock))
        else:
            self.roles.append(GGS(ctx))
        if self.with_auditor:
            with contextlib.suppress(ImportError):
                from agentui.roles.auditor import Auditor

                self.auditor = Auditor(self.bus, self.config, clock=self.clock, ids=self.ids,
                                       audit_dir=self.layout.audit_dir)
                self._aux.append(self.auditor)
        for r in [*self.roles, *self._aux]:
            self._tasks.append(asyncio.create_task(r.run(), name=f"run:{type(r).__name__}"))
        self._user = self.bus.subscribe("user", types={"ClarificationRequest", "ConfirmationRequest",
                                                       "FinalResult", "PerceiverReply", "TaskCancelled"})
        self._tasks.append(asyncio.create_task(self._user_side(), name="runtime:user"))
        self._mem = self.bus.subscribe("memory-writer", types={"Megram"})
        self._tasks.append(asyncio.create_task(self._memory_writer(), name="runtime:memory"))
        self.started = True
        return self

    def _wire_gate(self) -> None:
        """The tool gate's outcomes go onto the bus (the Auditor logs them) and it reads the rules
        remembered in memory's `tool:<name>` spaces through memory's query API."""
        bus, memory = self.bus, self.memory
        if not hasattr(self.tools, "announce"):
            return

        async def announce(record: Any) -> None:
            with contextlib.suppress(BusClosed):
                await bus.publish(Role.SAFETY, Role.USER, record, task_id=record.task_id or None)

        async def rules(tool: str) -> list[str]:
            from agentui.memory.tags import ENV_LOCAL

            return [r.content for r in await memory.query_c(f"tool:{tool}", ENV_LOCAL)]

        self.tools.announce = announce
        self.tools.rules = rules if memory is not None else None

    async def stop(self) -> None:
        if not self.started:
            return
        for tid, fut in list(self._ends.items()):
            if not fut.done():
                await self.cancel(tid, "runtime stopped")
        assert self.bus is not None
        if self.pool is not None:
            self.pool.on_delta = None
        await self.live.aclose()
        await self.bus.close()
        for t in self._tasks:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError, Exception):
                await asyncio.wait_for(asyncio.shield(t), timeout=2)
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        if self.auditor is not None:
            with contextlib.suppress(Exception):
                await self.auditor.aclose()
        if self.mcp is not None:
            with contextlib.suppress(Exception):
                await self.mcp.aclose()
            self.mcp = None
        if self.memory is not None and self.close_memory:
            with contextlib.suppress(Exception):
                await self.memory.close()
        elif self.memory is not None:  # a shared store: stop our Dreamer, make our writes durable
            with contextlib.suppress(Exception):
                if self.dreamer is not None:
                    await self.dreamer.stop()
                await self.memory.drain()
        if self.pool is not None:
            with contextlib.suppress(Exception):
                await self.pool.aclose()
        for fh in [*self._logs.values(), *self._recs.values()]:
            with contextlib.suppress(Exception):
                fh.close()
        self._logs.clear()
        self._recs.clear()
        self.started = False

    async def __aenter__(self) -> Runtime:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- tasks ----------------------------------------------------------------------------------
    async def submit(self, text: str, *, task_id: str | None = None) -> str:
        if not self.started:
            await self.start()
        assert self.bus is not None
        tid = task_id or self.ids.new("task")
        self._ends[tid] = asyncio.get_running_loop().create_future()
        self.stats[tid] = TaskStats(started=time.monotonic())
        cap = self.config.pipeline.max_task_chars
        if len(text) > cap:  # a 100 kB paste would cost ~200k planner tokens: cut it, keep it logged
            self._log(tid, {"kind": "task_text", "text": text, "chars": len(text), "kept": cap})
            self.truncated[tid] = (len(text), cap)
            text = text[:cap]
        hist = self._history[-self.config.pipeline.history_turns:] if self.config.pipeline.history_turns else []
        self._history.append(text)
        self._turn[tid] = len(self._history) - 1
        await self.bus.publish(Role.RUNTIME, Role.USER, TaskStarted(task_id=tid, text=text,
                                                                   workspace=str(self.workspace)), task_id=tid)
        await self.bus.publish(Role.USER, Role.PERCEIVER, UserInput(task_id=tid, text=text, history=hist),
                               task_id=tid)
        return tid

    async def wait(self, task_id: str, timeout: float | None = None) -> TaskEnd:
        fut = self._ends[task_id]
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout=timeout)
        except TimeoutError:
            await self.cancel(task_id, f"timed out after {timeout:g} s")
            return await fut

    async def run_task(self, text: str, timeout: float | None = None) -> TaskEnd:
        return await self.wait(await self.submit(text), timeout)

    async def cancel(self, task_id: str, reason: str = "cancelled by user") -> None:
        assert self.bus is not None
        fut = self._ends.get(task_id)
        if fut is None or fut.done():
            return
        self.bus.drop_task(task_id)
        with contextlib.suppress(BusClosed):
            await self.bus.publish(Role.RUNTIME, Role.USER, TaskCancelled(task_id=task_id, reason=reason),
                                   task_id=task_id)
        # roles cancel their handlers on TaskCancelled; give tool processes a moment to be reaped
        await asyncio.sleep(0)
        self._finish(TaskEnd(task_id=task_id, cancelled=True, reason=reason))

    def _on_infra_failure(self, e: Any) -> None:
        """An LLM endpoint failed inside a task's handler: end that task now. Dropping the task
        first, synchronously, keeps the failing role's fallback (an empty plan, R1's pass-through)
        off the bus — so no replan, no Megram, nothing for the Auditor to call thrashing."""
        tid = current_task.get()
        fut = self._ends.get(tid or "")
        if not tid or fut is None or fut.done() or self.bus is None:
            return
        self.bus.drop_task(tid)
        info = e.as_dict() if hasattr(e, "as_dict") else {"kind": "unavailable", "message": str(e)}
        self._log(tid, {"kind": "infra_failure", **info})
        asyncio.get_running_loop().create_task(self._end_infra(tid, info))

    async def _end_infra(self, tid: str, info: dict[str, str]) -> None:
        with contextlib.suppress(BusClosed):
            await self.bus.publish(Role.RUNTIME, Role.USER, TaskCancelled(
                task_id=tid, reason=f"LLM endpoint failed: {info.get('message', '')}"[:500]), task_id=tid)
        await asyncio.sleep(0)
        self._finish(TaskEnd(task_id=tid, reason=info.get("message", ""), infra=info))

    def task_stats(self, task_id: str) -> dict[str, Any]:
        st = self.stats.get(task_id)
        return st.as_dict(time.monotonic()) if st else {}

    def _finish(self, end: TaskEnd) -> None:
        fut = self._ends.get(end.task_id)
        st = self.stats.get(end.task_id)
        if st and st.ended is None:
            st.ended = time.monotonic()
        if fut is not None and not fut.done():
            fut.set_result(end)
        if self.live is not None:
            self.live.forget(end.task_id)
        self._log(end.task_id, {"kind": "end", "cancelled": end.cancelled, "reason": end.reason,
                                "infra": end.infra, "stats": self.task_stats(end.task_id)})
        for store in (self._logs, self._recs):
            fh = store.pop(end.task_id, None)
            if fh is not None:
                fh.close()

    # -- the user side of the bus ---------------------------------------------------------------
    async def _user_side(self) -> None:
        async for env in self._user:
            p = env.payload
            if isinstance(p, ClarificationRequest) and env.receiver == Role.USER:
                asyncio.create_task(self._answer_clarification(p))
            elif isinstance(p, ConfirmationRequest) and env.receiver == Role.USER:
                asyncio.create_task(self._answer_confirmation(p))
            elif isinstance(p, FinalResult):
                self._remember_turn(p)
                self._finish(TaskEnd(task_id=p.task_id, final=p))
                self._after_final()
            elif isinstance(p, PerceiverReply):
                self._finish(TaskEnd(task_id=p.task_id, reply=p))

    def _remember_turn(self, f: FinalResult) -> None:
        """The session's turn for this task, with what came of it: a follow-up sees the answer."""
        from agentui.history import turn_line

        i = self._turn.pop(f.task_id, None)
        if i is None or i >= len(self._history):
            return
        self._history[i] = turn_line(self._history[i], f)

    @property
    def history(self) -> list[str]:
        """The session's turns so far (what was asked → what came of it), oldest first."""
        return list(self._history)

    def continue_session(self, turns: list[str]) -> None:
        """Make `turns` (a past session's, from the task logs) this session's: the next goal is
        a follow-up of them. Tasks still running keep their own turn, after them."""
        running = [(tid, self._history[i]) for tid, i in self._turn.items() if i < len(self._history)]
        self._history = [str(t) for t in turns]
        self._turn = {}
        for tid, text in running:
            self._history.append(text)
            self._turn[tid] = len(self._history) - 1

    def _after_final(self) -> None:
        if self.dreamer is not None:
            with contextlib.suppress(Exception):
                self.dreamer.schedule()

    async def _answer_clarification(self, req: ClarificationRequest) -> None:
        try:
            answer = await self.clarify(req)
        except Exception:  # noqa: BLE001 - a broken prompt = proceed
            answer = ""
        with contextlib.suppress(BusClosed):
            await self.bus.publish(Role.USER, Role.PERCEIVER, ClarificationAnswer(
                request_id=req.request_id, task_id=req.task_id, answer=answer or ""), task_id=req.task_id)

    async def _answer_confirmation(self, req: ConfirmationRequest) -> None:
        from agentui.tools.answers import Answer

        by = "user"
        try:
            choice = await self.confirm(req)
        except Exception:  # noqa: BLE001 - a broken prompt = deny
            choice, by = ConfirmationChoice.DENY, "error"
        if isinstance(choice, Answer):  # who answered (--yes, nobody …) goes to the Auditor
            choice, by = choice.choice, choice.by
        if isinstance(choice, bool):
            choice = ConfirmationChoice.APPROVE if choice else ConfirmationChoice.DENY
        try:
            choice = ConfirmationChoice(choice)
        except ValueError:
            choice = ConfirmationChoice.DENY
        scope = {"approve": "once", "always": "task"}.get(choice.value, choice.value)
        if scope not in (*req.scopes, "deny"):
            choice, scope = ConfirmationChoice.APPROVE, "once"  # a broader scope than offered counts once
        self._log(req.task_id, {"kind": "confirmation", "tool": req.tool, "command": req.command,
                                "reasons": req.reasons, "decision": "deny" if scope == "deny" else "approve",
                                "scope": None if scope == "deny" else scope, "patterns": req.patterns,
                                "escalation": req.escalation, "sandboxed": req.sandboxed, "by": by})
        with contextlib.suppress(BusClosed):
            await self.bus.publish(Role.USER, Role.SAFETY, ConfirmationDecision(
                request_id=req.request_id, task_id=req.task_id, decision=ConfirmationChoice(choice),
                answered_by=by), task_id=req.task_id)

    # -- memory: GGS is the only writer ---------------------------------------------------------
    async def _memory_writer(self) -> None:
        async for env in self._mem:
            if not isinstance(env.payload, Megram) or env.receiver != Role.MEMORY:
                continue
            if env.sender != Role.GGS:
                self._log(env.task_id, {"kind": "memory_write_refused", "sender": env.sender.value,
                                        "envelope": env.id})
                continue
            try:
                await self.memory.awrite(env.payload)
            except Exception as e:  # noqa: BLE001 - logged; the pipeline goes on
                self._log(env.task_id, {"kind": "memory_write_error", "error": str(e)[:300]})

    # -- observation: task logs, recordings, stats ----------------------------------------------
    async def _observe(self) -> None:
        assert self._tap is not None
        async for env in self._tap:
            tid = env.task_id
            if not tid:
                continue
            if isinstance(env.payload, ExecutionResult) and tid in self.stats:
                st = self.stats[tid]
                st.tool_calls += len(env.payload.tool_calls)
                st.tool_seconds += sum(c.duration_s for c in env.payload.tool_calls)
            if self.record:
                self._write_recording(tid, env)
                self._log(tid, {"kind": "envelope", "envelope": env.to_dict()})

    def _open(self, store: dict[str, TextIO], tid: str, path: Path) -> TextIO | None:
        fh = store.get(tid)
        if fh is None:
            if tid not in self._ends or self._ends[tid].done():
                return None
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fh = path.open("a", encoding="utf-8", newline="\n")
            except OSError as e:
                from agentui.paths import os_problem

                self.log_errors.setdefault(tid, os_problem(e, path))
                return None
            store[tid] = fh
        return fh

    def _write_recording(self, tid: str, env: Envelope) -> None:
        fh = self._open(self._recs, tid, self.layout.bus_recording(tid))
        if fh is not None:
            try:
                fh.write(env.to_json() + "\n")
                fh.flush()
            except OSError as e:  # disk full: the recording stops here, the run says so
                from agentui.paths import os_problem

                self.log_errors.setdefault(tid, os_problem(e, self.layout.bus_recording(tid)))
                with contextlib.suppress(OSError):
                    self._recs.pop(tid).close()

    def _log(self, tid: str | None, record: dict[str, Any]) -> None:
        if not tid or not self.record or tid in self.log_errors:
            return
        fh = self._open(self._logs, tid, self.layout.task_log(tid))
        if fh is None:
            return
        rec = {"ts": iso(self.clock.now()), **record}
        try:
            line = canonical_json(rec)
        except (TypeError, ValueError):
            line = json.dumps(rec, default=str, ensure_ascii=False, sort_keys=True)
        try:
            fh.write(line + "\n")
            fh.flush()
        except OSError as e:  # disk full: stop writing this log and say so once (run exits 1)
            from agentui.paths import os_problem

            self.log_errors.setdefault(tid, os_problem(e, self.layout.task_log(tid)))
            with contextlib.suppress(OSError):
                self._logs.pop(tid).close()

    def _trace_llm(self, rec: dict[str, Any]) -> None:
        self._log(current_task.get(), rec)

    def _on_usage(self, u: LLMUsage) -> None:
        tid = current_task.get()
        if tid and tid in self.stats:
            self.stats[tid].add_usage(u)
        if self.bus is not None and tid and not self.bus.closed:
            # usage is observable on the bus (the Auditor's parse-repair rate reads it)
            with contextlib.suppress(BusClosed, RuntimeError):
                env = self.bus.envelope(u.role, Role.RUNTIME, u, task_id=tid)
                asyncio.get_running_loop().create_task(self._publish_quiet(env))

    def _offer_quiet(self, env: Envelope) -> bool:
        try:
            return self.bus.publish_nowait(env)
        except BusClosed:
            return True  # nobody is left to tell

    async def _publish_quiet(self, env: Envelope) -> None:
        with contextlib.suppress(BusClosed):
            await self.bus.publish_envelope(env)
