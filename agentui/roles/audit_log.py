"""R6's outputs (roles-v0.6 §R6): the operator channel, the append-only audit log under
`<data>/audit/`, and the AuditReport built from the detectors' stats and events.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections import defaultdict, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentui.contracts import ApprovalRecord, AuditEvent, AuditReport, canonical_json
from agentui.ids import IdFactory

log = logging.getLogger("agentui.auditor")


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
            stats = json.loads(self.stats_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return stats if isinstance(stats, dict) else {}


def build_report(core_stats: dict[str, Any], events: list[AuditEvent], *, trigger: str, ids: IdFactory,
                 now: str, window_start: str | None) -> AuditReport:
    by_kind: dict[str, int] = defaultdict(int)
    for e in events:
        by_kind[e.kind.value] += 1
    worst = "clean" if not events else ", ".join(f"{k}×{n}" for k, n in sorted(by_kind.items()))
    summary = (f"{core_stats.get('messages_seen', 0)} messages, {core_stats.get('tasks_seen', 0)} tasks; "
               f"anomalies: {worst}")
    return AuditReport(report_id=ids.new("report"), ts=now, trigger=trigger,
                       window_start=window_start, window_end=now,
                       messages_seen=int(core_stats.get("messages_seen", 0)),
                       tasks_seen=int(core_stats.get("tasks_seen", 0)), events_by_kind=dict(by_kind),
                       events=events[-50:], stats=core_stats, summary=summary)
