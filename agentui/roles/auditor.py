"""R6 Auditor (roles-v0.6 §R6; v0.7/v0.8 additions): a lateral observer nobody can silence.

It reads a read-only bus tap — it has no way to publish to roles, and no role can configure it
(only the operator's config and commands reach it). Detectors are pure code in
:class:`AuditCore` (fed envelopes and clock ticks, so tests replay recorded bus sequences). The
:class:`Auditor` runs the core on the tap, appends every AuditEvent to an append-only JSONL log,
persists windowed statistics so `agentui audit` reports after a restart, emits periodic
AuditReports (skipped when idle) and pushes events and reports to the human operator channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentui.bus import Bus
from agentui.clock import Clock, SystemClock, iso
from agentui.config import Config
from agentui.contracts import (
    ApprovalRecord,
    AuditEvent,
    AuditKind,
    AuditReport,
    DispatchManifest,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMUsage,
    PlanDirective,
    ReplanRequest,
    Role,
    Severity,
    SubTask,
    SubTaskOutcome,
    canonical_json,
)
from agentui.ids import IdFactory, UuidIds
from agentui.roles.audit_approvals import ApprovalTracker

log = logging.getLogger("agentui.auditor")

R = Role
_LLM_ROLES = (R.PERCEIVER, R.PLANNER, R.EXECUTOR, R.AGENT_VALIDATOR, R.META_VALIDATOR, R.GGS, R.RUNTIME)
_GATE_TYPES = frozenset({"ApprovalRecord", "ConfirmationRequest", "ConfirmationDecision"})
AUDIT_SLICE = 256  # envelopes audited between yields to the event loop (~1 ms of detector work)

#: (sender, receiver, type) triples the spec's contract tables allow
ALLOWED_ROUTES: frozenset[tuple[Role, Role, str]] = frozenset({
    (R.RUNTIME, R.USER, "TaskStarted"),
    (R.RUNTIME, R.USER, "TaskCancelled"),
    (R.USER, R.PERCEIVER, "UserInput"),
    (R.USER, R.PERCEIVER, "ClarificationAnswer"),
    (R.PERCEIVER, R.USER, "ClarificationRequest"),
    (R.PERCEIVER, R.USER, "PerceiverReply"),
    (R.PERCEIVER, R.PLANNER, "TaskSpec"),
    (R.PLANNER, R.EXECUTOR, "SubTask"),
    (R.PLANNER, R.META_VALIDATOR, "DispatchManifest"),
    (R.EXECUTOR, R.AGENT_VALIDATOR, "ExecutionResult"),
    (R.AGENT_VALIDATOR, R.EXECUTOR, "CorrectionSignal"),
    (R.AGENT_VALIDATOR, R.META_VALIDATOR, "SubTaskOutcome"),
    (R.META_VALIDATOR, R.GGS, "ReplanRequest"),
    (R.META_VALIDATOR, R.GGS, "OutcomeSummary"),
    (R.GGS, R.PLANNER, "PlanDirective"),
    (R.GGS, R.USER, "FinalResult"),
    (R.GGS, R.MEMORY, "Megram"),
    (R.SAFETY, R.USER, "ConfirmationRequest"),
    (R.USER, R.SAFETY, "ConfirmationDecision"),
    (R.SAFETY, R.USER, "ApprovalRecord"),
    *((r, R.RUNTIME, "LLMUsage") for r in _LLM_ROLES),
})


class _Window:
    """The last `size` 0/1 samples with a running sum (O(1) per sample)."""

    __slots__ = ("size", "q", "total")

    def __init__(self, size: int) -> None:
        self.size = size
        self.q: deque[int] = deque()
        self.total = 0

    def append(self, x: int) -> None:
        self.q.append(x)
        self.total += x
        if len(self.q) > self.size:
            self.total -= self.q.popleft()

    @property
    def n(self) -> int:
        return len(self.q)

    @property
    def rate(self) -> float:
        return self.total / len(self.q) if self.q else 0.0


@dataclass
class _Task:
    last_seen: float = 0.0
    first_seen: float = 0.0
    finals: list[str] = field(default_factory=list)
    manifest: DispatchManifest | None = None
    manifest_at: float = 0.0
    manifest_env: str = ""
    outcomes: set[str] = field(default_factory=set)
    fan_in_reported: bool = False
    corrections: list[int] = field(default_factory=list)
    last_directive: PlanDirective | None = None
    thrash_streak: int = 0
    stalled_reported: bool = False
    done: bool = False


class AuditCore:
    """The detectors. `observe(env, now)` and `tick(now)` return the new AuditEvents."""

    def __init__(self, config: Config, clock: Clock | None = None, ids: IdFactory | None = None) -> None:
        self.cfg = config
        self.clock = clock or SystemClock()
        self.ids = ids or UuidIds()
        self.tasks: dict[str, _Task] = {}
        self.subtask_ids: dict[str, str] = {}  # subtask id → envelope id that introduced it
        self.messages_seen = 0
        self.by_type: dict[str, int] = defaultdict(int)
        w = config.audit.window
        self.repairs: dict[str, _Window] = defaultdict(lambda: _Window(w))
        self.tool_results: dict[str, _Window] = defaultdict(lambda: _Window(w))
        self._rate_alarm: set[str] = set()  # (kind:key) currently over threshold → report once per crossing

    # -- helpers -----------------------------------------------------------------------------
    def _event(self, kind: AuditKind, severity: Severity, message: str, *, task_id: str | None,
               evidence: list[str], **details: Any) -> AuditEvent:
        return AuditEvent(event_id=self.ids.new("audit"), ts=iso(self.clock.now()), kind=kind,
                          severity=severity, task_id=task_id, message=message, evidence=evidence,
                          details=details)

    def stats(self) -> dict[str, Any]:
        rep = {k: round(v.rate, 4) for k, v in sorted(self.repairs.items()) if v.n}
        tools = {k: round(v.rate, 4) for k, v in sorted(self.tool_results.items()) if v.n}
        return {"messages_seen": self.messages_seen, "tasks_seen": len(self.tasks),
                "by_type": dict(sorted(self.by_type.items())), "parse_repair_rate": rep,
                "tool_error_rate": tools}

    # -- per envelope ----------------------------------------------------------------------------
    def observe(self, env: Envelope, now: float) -> list[AuditEvent]:
        self.messages_seen += 1
        self.by_type[env.type] += 1
        out: list[AuditEvent] = []
        tid = env.task_id
        t: _Task | None = None
        if tid:
            t = self.tasks.get(tid)
            if t is None:
                t = self.tasks[tid] = _Task(first_seen=now)
            t.last_seen = now
        if (env.sender, env.receiver, env.type) not in ALLOWED_ROUTES:
            out.append(self._event(
                AuditKind.BOUNDARY_VIOLATION, Severity.CRITICAL,
                f"{env.sender.value}→{env.receiver.value} {env.type} is not an allowed route",
                task_id=tid, evidence=[env.id], sender=env.sender.value, receiver=env.receiver.value,
                type=env.type))
        p = env.payload
        if isinstance(p, FinalResult) and t is not None:
            t.finals.append(env.id)
            t.done = True
            if len(t.finals) > 1:
                out.append(self._event(AuditKind.BOUNDARY_VIOLATION, Severity.CRITICAL,
                                       "a second FinalResult for the same task", task_id=tid,
                                       evidence=list(t.finals)))
        elif type(p).__name__ in ("PerceiverReply", "TaskCancelled") and t is not None:
            t.done = True
        elif isinstance(p, SubTask):
            first = self.subtask_ids.get(p.subtask_id)
            if first is not None:
                out.append(self._event(AuditKind.DUPLICATE_SUBTASK_ID, Severity.CRITICAL,
                                       f"subtask id {p.subtask_id} was issued twice", task_id=tid,
                                       evidence=[first, env.id]))
            else:
                self.subtask_ids[p.subtask_id] = env.id
        elif isinstance(p, DispatchManifest) and t is not None:
            t.manifest, t.manifest_at, t.manifest_env = p, now, env.id
            t.outcomes, t.fan_in_reported = set(), False
        elif isinstance(p, SubTaskOutcome) and t is not None:
            t.outcomes.add(p.subtask_id)
        elif isinstance(p, ExecutionResult):
            limit = self.cfg.pipeline.correction_budget + 1
            if p.attempt > limit:
                out.append(self._event(AuditKind.EXCESSIVE_RETRIES, Severity.WARNING,
                                       f"subtask {p.subtask_id} on attempt {p.attempt} (budget {limit})",
                                       task_id=tid, evidence=[env.id], attempt=p.attempt))
            for c in p.tool_calls:
                q = self.tool_results[c.tool]
                q.append(0 if c.ok else 1)
                out.extend(self._rate(AuditKind.TOOL_ERROR_RATE, c.tool, q, self.cfg.audit.tool_error_rate,
                                      tid, env.id, "tool error rate"))
        elif isinstance(p, LLMUsage):
            q = self.repairs[p.role.value]
            q.append(1 if p.parse_repairs else 0)
            out.extend(self._rate(AuditKind.PARSE_REPAIR_RATE, p.role.value, q,
                                  self.cfg.audit.parse_repair_rate, tid, env.id, "LLM parse-repair rate"))
        elif isinstance(p, ReplanRequest) and t is not None:
            t.corrections.append(p.correction_count)
            if len(t.corrections) >= 2 and t.corrections[-1] > t.corrections[-2]:
                out.append(self._event(AuditKind.DRIFT, Severity.WARNING,
                                       f"corrections grew across rounds: {t.corrections}", task_id=tid,
                                       evidence=[env.id], corrections=list(t.corrections)))
        elif isinstance(p, PlanDirective) and t is not None:
            g = self.cfg.ggs
            if p.grad_l > g.epsilon:
                out.append(self._event(AuditKind.CONVERGENCE_FAILURE, Severity.WARNING,
                                       f"∇L={p.grad_l:+.2f} > ε: the loss is rising", task_id=tid,
                                       evidence=[env.id], grad_l=p.grad_l, directive=p.directive.value))
            if p.loss.Omega >= g.theta:
                out.append(self._event(AuditKind.BUDGET_OVERRUN, Severity.CRITICAL,
                                       f"Ω={p.loss.Omega:.2f} ≥ θ={g.theta} but GGS did not abandon",
                                       task_id=tid, evidence=[env.id], omega=p.loss.Omega))
            prev = t.last_directive
            if p.directive.value == "break_symmetry" and prev is not None and \
                    prev.directive.value == "break_symmetry" and p.loss.D >= prev.loss.D:
                t.thrash_streak += 1
                out.append(self._event(AuditKind.GGS_THRASHING, Severity.WARNING,
                                       f"break_symmetry again without D decreasing (D={p.loss.D:.2f})",
                                       task_id=tid, evidence=[env.id], streak=t.thrash_streak + 1))
            elif p.directive.value != "break_symmetry":
                t.thrash_streak = 0
            t.last_directive = p
        return out

    def _rate(self, kind: AuditKind, key: str, q: _Window, limit: float, tid: str | None,
              env_id: str, what: str) -> list[AuditEvent]:
        n = q.n
        if n < min(4, q.size):
            return []
        rate = q.rate
        alarm = f"{kind.value}:{key}"
        if rate > limit and alarm not in self._rate_alarm:
            self._rate_alarm.add(alarm)
            return [self._event(kind, Severity.WARNING, f"{what} for {key} is {rate:.0%} over the last {n}",
                                task_id=tid, evidence=[env_id], key=key, rate=round(rate, 4), window=n)]
        if rate <= limit:
            self._rate_alarm.discard(alarm)
        return []

    # -- time-based -------------------------------------------------------------------------------
    def tick(self, now: float) -> list[AuditEvent]:
        out = []
        fan_in = self.cfg.pipeline.fan_in_timeout_s
        stall = self.cfg.audit.stall_timeout_s
        for tid, t in self.tasks.items():
            if t.done:
                continue
            m = t.manifest
            if m and m.subtask_ids and not t.fan_in_reported and now - t.manifest_at > fan_in:
                missing = [s for s in m.subtask_ids if s not in t.outcomes]
                if missing:
                    t.fan_in_reported = True
                    out.append(self._event(AuditKind.FAN_IN_INCOMPLETE, Severity.WARNING,
                                           f"{len(missing)} outcome(s) missing {now - t.manifest_at:.0f} s after dispatch",
                                           task_id=tid, evidence=[t.manifest_env], missing=missing))
            if not t.stalled_reported and now - t.last_seen > stall:
                t.stalled_reported = True
                out.append(self._event(AuditKind.STALLED_TASK, Severity.CRITICAL,
                                       f"no message for {now - t.last_seen:.0f} s and no FinalResult",
                                       task_id=tid, evidence=[]))
        return out

    def forget_finished(self, keep: int = 200) -> None:
        done = [k for k, t in self.tasks.items() if t.done]
        for k in done[:-keep] if len(done) > keep else []:
            self.tasks.pop(k, None)


class OperatorChannel:
    """The human operator's feed: AuditEvents and AuditReports, never routed to any role."""

    def __init__(self, maxlen: int = 500) -> None:
        self.history: deque[AuditEvent | AuditReport] = deque(maxlen=maxlen)
        self._listeners: list[Callable[[AuditEvent | AuditReport], None]] = []

    def listen(self, fn: Callable[[AuditEvent | AuditReport], None]) -> Callable[[], None]:
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def push(self, item: AuditEvent | AuditReport) -> None:
        self.history.append(item)
        for fn in list(self._listeners):
            try:
                fn(item)
            except Exception:  # noqa: BLE001 - a broken listener must not silence the auditor
                log.exception("operator listener failed")


class AuditLog:
    """Append-only JSONL under `<data>/audit/`: events.jsonl, reports.jsonl, stats.json."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def events_path(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def reports_path(self) -> Path:
        return self.root / "reports.jsonl"

    @property
    def stats_path(self) -> Path:
        return self.root / "stats.json"

    @property
    def approvals_path(self) -> Path:
        return self.root / "approvals.jsonl"

    def _append(self, path: Path, line: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8", newline="\n") as fh:
            fh.write(line + "\n")

    def append_event(self, e: AuditEvent) -> None:
        self._append(self.events_path, e.to_json())

    def append_report(self, r: AuditReport) -> None:
        self._append(self.reports_path, r.to_json())

    def append_approval(self, a: ApprovalRecord) -> None:
        self._append(self.approvals_path, a.to_json())

    def approvals(self) -> list[ApprovalRecord]:
        out = []
        if self.approvals_path.is_file():
            for line in self.approvals_path.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError):
                    out.append(ApprovalRecord.model_validate_json(line))
        return out

    def save_stats(self, stats: dict[str, Any]) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.stats_path.with_suffix(".tmp")
        tmp.write_text(canonical_json(stats) + "\n", encoding="utf-8")
        tmp.replace(self.stats_path)

    def events(self) -> list[AuditEvent]:
        out = []
        if self.events_path.is_file():
            for line in self.events_path.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError):
                    out.append(AuditEvent.model_validate_json(line))
        return out

    def reports(self) -> list[AuditReport]:
        out = []
        if self.reports_path.is_file():
            for line in self.reports_path.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError):
                    out.append(AuditReport.model_validate_json(line))
        return out

    def stats(self) -> dict[str, Any]:
        try:
            return json.loads(self.stats_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}


def build_report(core_stats: dict[str, Any], events: list[AuditEvent], *, trigger: str, ids: IdFactory,
                 now: str, window_start: str | None) -> AuditReport:
    by_kind: dict[str, int] = defaultdict(int)
    for e in events:
        by_kind[e.kind.value] += 1
    worst = "clean" if not events else ", ".join(f"{k}×{n}" for k, n in sorted(by_kind.items()))
    summary = (f"{core_stats.get('messages_seen', 0)} messages, {core_stats.get('tasks_seen', 0)} tasks; "
               f"anomalies: {worst}")
    return AuditReport(report_id=ids.new("report"), ts=now, trigger=trigger,  # type: ignore[arg-type]
                       window_start=window_start, window_end=now,
                       messages_seen=int(core_stats.get("messages_seen", 0)),
                       tasks_seen=int(core_stats.get("tasks_seen", 0)), events_by_kind=dict(by_kind),
                       events=events[-50:], stats=core_stats, summary=summary)


class Auditor:
    """The running R6: tap → detectors → log + operator channel; periodic reports."""

    def __init__(self, bus: Bus, config: Config, *, clock: Clock | None = None, ids: IdFactory | None = None,
                 audit_dir: Path | None = None, channel: OperatorChannel | None = None,
                 tick_s: float = 1.0) -> None:
        self.config = config
        self.clock = clock or SystemClock()
        self.ids = ids or UuidIds()
        self.core = AuditCore(config, self.clock, self.ids)
        self.tap = bus.tap("auditor")
        self.log = AuditLog(audit_dir) if audit_dir else None
        self.channel = channel or OperatorChannel()
        self.tick_s = tick_s
        # envelopes buffered before the auditor stops deferring to a burst: most of the tap, so a
        # burst shorter than the tap costs the publishers nothing; memory stays bounded by the tap
        self.high_water = max(1, self.tap.capacity - 4096)
        self.settle_s = 0.002  # a burst has settled when nothing arrived for this long
        self.max_defer_s = 0.5  # ... and the roles' queues are empty, or this long has passed
        self.events: list[AuditEvent] = []
        self.approvals = ApprovalTracker()  # every safety-gate outcome, scope and pattern (#14)
        self.approval_records: deque[ApprovalRecord] = deque(maxlen=1000)
        self._since_report: list[AuditEvent] = []
        self._window_start = iso(self.clock.now())
        self._seen_at_report = 0
        self._last_report = self.clock.monotonic()
        self._ticker: asyncio.Task[None] | None = None

    def _emit(self, events: list[AuditEvent]) -> None:
        for e in events:
            self.events.append(e)
            self._since_report.append(e)
            if self.log:
                try:
                    self.log.append_event(e)
                except OSError as err:  # disk full: one line, not a traceback (#15)
                    log.warning("audit log write failed: %s", err)
            self.channel.push(e)

    def _approval(self, record: ApprovalRecord) -> None:
        self.approval_records.append(record)
        if self.log:
            try:
                self.log.append_approval(record)
            except OSError as err:  # disk full: one line, not a traceback (#15)
                log.warning("audit log write failed: %s", err)

    async def run(self) -> None:
        self._ticker = asyncio.create_task(self._tick_loop())
        try:
            while True:
                try:
                    first = await self.tap.get()
                except StopAsyncIteration:
                    break
                # Defer to the roles: while a burst is still being published (the tap keeps
                # growing) let the publishers run, and audit the burst once it settles. The tap's
                # bound caps the delay: at the high-water mark the auditor works at once.
                deadline = self.clock.monotonic() + self.max_defer_s
                while True:
                    pending = self.tap.pending
                    if pending >= self.high_water:
                        break
                    await asyncio.sleep(self.settle_s)
                    if self.tap.pending == pending and (
                        self.tap.bus_backlog() == 0 or self.clock.monotonic() >= deadline
                    ):
                        break
                now = self.clock.monotonic()
                observe, approval = self.core.observe, self.approvals.observe
                batch = [first, *self.tap.drain()]  # one wake-up per burst
                for i in range(0, len(batch), AUDIT_SLICE):
                    if i:  # a big backlog must not hold the event loop (roles, UI) for long
                        await asyncio.sleep(0)
                    for env in batch[i : i + AUDIT_SLICE]:
                        ev = observe(env, now)
                        if ev:
                            self._emit(ev)
                        if env.type in _GATE_TYPES and (rec := approval(env)) is not None:
                            self._approval(rec)
        finally:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            self._persist()

    async def _tick_loop(self) -> None:
        while True:
            await asyncio.sleep(self.tick_s)
            now = self.clock.monotonic()
            self._emit(self.core.tick(now))
            self.core.forget_finished()
            interval = self.config.audit.report_interval_s
            if interval and now - self._last_report >= interval:
                self._last_report = now
                if self.core.messages_seen > self._seen_at_report:  # skipped when idle
                    self.report("periodic")
                self._persist()

    def report(self, trigger: str = "on_demand") -> AuditReport:
        now = iso(self.clock.now())
        r = build_report(self.core.stats(), self._since_report if trigger == "periodic" else self.events,
                         trigger=trigger, ids=self.ids, now=now, window_start=self._window_start)
        if trigger == "periodic":
            self._since_report = []
            self._window_start = now
        self._seen_at_report = self.core.messages_seen
        if self.log:
            with contextlib.suppress(OSError):
                self.log.append_report(r)
        self.channel.push(r)
        return r

    def _persist(self, *, finished: bool = False) -> None:
        """Save windowed stats; on close, add this run to the totals (`agentui audit` reads them)."""
        if not self.log:
            return
        prev = self.log.stats()
        st = self.core.stats()
        totals = dict(prev.get("totals", {}))
        runs = int(prev.get("runs", 0))
        if finished:
            runs += 1
            for key in ("messages_seen", "tasks_seen"):
                totals[key] = int(totals.get(key, 0)) + st[key]
        with contextlib.suppress(OSError):
            self.log.save_stats({"runs": runs, "totals": totals, "last_run": st,
                                 "updated": iso(self.clock.now())})

    async def aclose(self) -> None:
        self.tap.close()
        if self._ticker:
            self._ticker.cancel()
        self._persist(finished=True)
