"""R6's detectors (roles-v0.6 §R6): pure code fed envelopes and clock ticks, so tests replay recorded
bus sequences. `ALLOWED_ROUTES` is the spec's contract tables; `AuditCore` returns new AuditEvents.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from agentui.clock import Clock, SystemClock, iso
from agentui.config import Config
from agentui.contracts import (
    AuditEvent,
    AuditKind,
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
)
from agentui.ids import IdFactory, UuidIds

R = Role
_LLM_ROLES = (R.PERCEIVER, R.PLANNER, R.EXECUTOR, R.AGENT_VALIDATOR, R.META_VALIDATOR, R.GGS, R.RUNTIME)

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
    *((r, R.USER, "LLMDelta") for r in _LLM_ROLES),
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
            out.extend(self._directive(p, t, tid, env.id))
        return out

    def _directive(self, p: PlanDirective, t: _Task, tid: str | None, env_id: str) -> list[AuditEvent]:
        """GGS's directive: a rising loss, an overrun budget, break_symmetry repeated without progress."""
        out: list[AuditEvent] = []
        g = self.cfg.ggs
        if p.grad_l > g.epsilon:
            out.append(self._event(AuditKind.CONVERGENCE_FAILURE, Severity.WARNING,
                                   f"∇L={p.grad_l:+.2f} > ε: the loss is rising", task_id=tid,
                                   evidence=[env_id], grad_l=p.grad_l, directive=p.directive.value))
        if p.loss.Omega >= g.theta:
            out.append(self._event(AuditKind.BUDGET_OVERRUN, Severity.CRITICAL,
                                   f"Ω={p.loss.Omega:.2f} ≥ θ={g.theta} but GGS did not abandon",
                                   task_id=tid, evidence=[env_id], omega=p.loss.Omega))
        prev = t.last_directive
        if p.directive.value == "break_symmetry" and prev is not None and \
                prev.directive.value == "break_symmetry" and p.loss.D >= prev.loss.D:
            t.thrash_streak += 1
            out.append(self._event(AuditKind.GGS_THRASHING, Severity.WARNING,
                                   f"break_symmetry again without D decreasing (D={p.loss.D:.2f})",
                                   task_id=tid, evidence=[env_id], streak=t.thrash_streak + 1))
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
                                           f"{len(missing)} outcome(s) missing "
                                           f"{now - t.manifest_at:.0f} s after dispatch",
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
