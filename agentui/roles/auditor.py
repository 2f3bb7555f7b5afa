"""R6 Auditor (roles-v0.6 §R6; v0.7/v0.8 additions): a lateral observer nobody can silence.

It reads a read-only bus tap — it has no way to publish to roles, and no role can configure it
(only the operator's config and commands reach it). Detectors are pure code in
:class:`AuditCore` (audit_core.py, fed envelopes and clock ticks, so tests replay recorded bus
sequences). The :class:`Auditor` runs the core on the tap, appends every AuditEvent to an
append-only JSONL log (audit_log.py), persists windowed statistics so `agentui audit` reports after
a restart, emits periodic AuditReports (skipped when idle) and pushes events and reports to the
human operator channel.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from agentui.bus import Bus
from agentui.clock import Clock, SystemClock, iso
from agentui.config import Config
from agentui.contracts import ApprovalRecord, AuditEvent, AuditReport
from agentui.ids import IdFactory, UuidIds
from agentui.roles.audit_approvals import ApprovalTracker
from agentui.roles.audit_core import ALLOWED_ROUTES, AuditCore
from agentui.roles.audit_log import AuditLog, OperatorChannel, build_report

log = logging.getLogger("agentui.auditor")
T = TypeVar("T", AuditEvent, ApprovalRecord)

_GATE_TYPES = frozenset({"ApprovalRecord", "ConfirmationRequest", "ConfirmationDecision"})
AUDIT_SLICE = 256  # envelopes audited between yields to the event loop (~1 ms of detector work)

__all__ = ["ALLOWED_ROUTES", "AUDIT_SLICE", "AuditCore", "AuditLog", "Auditor", "OperatorChannel", "build_report"]


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
        self.approvals = ApprovalTracker()  # every safety-gate outcome, scope and pattern
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
            self._write(AuditLog.append_event, e)
            self.channel.push(e)

    def _approval(self, record: ApprovalRecord) -> None:
        self.approval_records.append(record)
        self._write(AuditLog.append_approval, record)

    def _write(self, append: Callable[[AuditLog, T], None], record: T) -> None:
        """One record into the audit log, when there is one."""
        if self.log:
            try:
                append(self.log, record)
            except OSError as err:  # disk full: one line, not a traceback
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
