"""Replaying a bus recording in the TUI: envelopes at their recorded pace (or instantly), the
Auditor's detectors over them, no model needed."""

from __future__ import annotations

import asyncio

from textual import work

from agentui.contracts import AuditEvent, Envelope


class Replayer:
    """Mixin for AgentApp: `agentui ui --replay FILE`."""

    @work(exclusive=True, group="replay")
    async def run_replay(self) -> None:
        from agentui.clock import parse_iso

        path = self.replay_path
        assert path is not None
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as e:
            self.notify(f"cannot read {path}: {e}", severity="error")
            return
        from agentui.roles.auditor import AuditCore

        # the Auditor replays too: its detectors over the recorded envelopes, unless the
        # recording already carries its AuditEvents
        auditor = None if any('"AuditEvent"' in raw for raw in lines) else AuditCore(self.config, self.clock, self.ids)
        found: list[AuditEvent] = []
        prev = None
        n = 0
        for i, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                env = Envelope.from_json(raw)
            except Exception as e:  # noqa: BLE001 - a bad line is reported, the replay goes on
                self.notify(f"line {i}: {e}", severity="warning")
                continue
            ts = parse_iso(env.ts)
            if prev is not None and self.speed > 0:
                await asyncio.sleep(min(1.5, max(0.0, (ts - prev).total_seconds()) / self.speed))
            prev = ts
            self.on_envelope(env)
            if auditor is not None:
                for ev in auditor.observe(env, ts.timestamp()):
                    found.append(ev)
                    self._on_audit(ev)
            n += 1
        if auditor is not None and prev is not None:
            from agentui.clock import iso
            from agentui.roles.auditor import build_report

            self._on_audit(build_report(auditor.stats(), found, trigger="on_demand", ids=self.ids,
                                        now=iso(prev), window_start=None))
        self._flush_bus()  # the last batch first: its stage text must not overwrite the summary
        self.stage(f"replay finished: {n} messages · Ctrl+G lists past tasks", busy=False)
