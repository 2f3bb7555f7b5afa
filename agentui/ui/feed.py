"""The main screen's feed: envelopes from the bus (live or replayed) are batched onto the bus
pane, the pipeline line, the stage line and the result panel; per-task costs for the table."""

from __future__ import annotations

from typing import Any

from textual.css.query import NoMatches

from agentui.contracts import Envelope, FinalResult, PerceiverReply, PlanDirective, TaskCancelled
from agentui.ui.screens import MemoryScreen
from agentui.ui.widgets import BusView, PipelineLine, ResultPanel, StageLine

STAGES = {
    "UserInput": "R1 perceiving the request…",
    "TaskSpec": "R2 planning…",
    "DispatchManifest": "executing subtasks…",
    "SubTask": "dispatching…",
    "ExecutionResult": "R4a validating…",
    "CorrectionSignal": "R3 retrying after a correction…",
    "SubTaskOutcome": "waiting for the other subtasks…",
    "ReplanRequest": "GGS computing the gradient…",
    "OutcomeSummary": "GGS closing the task…",
    "PlanDirective": "R2 replanning",
    "ClarificationRequest": "waiting for your answer…",
    "ConfirmationRequest": "waiting for your confirmation…",
}


class BusFeed:
    """Mixin for AgentApp: what the bus shows."""

    def stage(self, text: str, *, busy: bool, rationale: str = "") -> None:
        if self._in_batch:
            self._stage_pending = (text, busy, rationale)
            return
        s = self.query_one(StageLine)
        s.rationale = rationale
        s.stage = text
        s.busy = busy
        s._paint()

    def on_envelope(self, env: Envelope) -> None:
        """Queue an envelope; the screen is updated in batches (every 100 ms) so a flood of bus
        messages never starves keystrokes (at most ten screen updates a second)."""
        self._pending.append(env)
        if self._flush_timer is None:
            self._flush_timer = self.set_timer(0.1, self._flush_bus)

    def _flush_bus(self) -> None:
        self._flush_timer = None
        batch, self._pending = self._pending, []
        if not batch:
            return
        try:
            bus = self.query_one(BusView)
        except NoMatches:  # shutting down: the main screen is already gone
            return
        bus.add_many(batch)
        # one stage repaint and one memory-browser refresh per batch, whatever its size
        self._stage_pending: tuple[str, bool, str] | None = None
        self._megrams_changed = False
        self._in_batch = True
        try:
            for env in batch:
                self._apply(env)
        finally:
            self._in_batch = False
        if self._stage_pending is not None:
            text, busy, rationale = self._stage_pending
            self.stage(text, busy=busy, rationale=rationale)
        if self._megrams_changed and isinstance(self.screen, MemoryScreen):
            self.screen.action_refresh()  # the browser follows GGS's writes

    def _apply(self, env: Envelope) -> None:
        if env.task_id and env.task_id == self.current or (self.replay_path and env.task_id):
            if env.type != "LLMUsage":
                self.task_envs.append(env)
                if len(self.task_envs) > 5000:
                    del self.task_envs[:1000]
        p = env.payload
        if self.replay_path is not None and env.task_id:
            self._count_replayed(env)
        if env.type in STAGES:
            if isinstance(p, PlanDirective):
                self.stage(f"R2 replanning ({p.directive.value}, round {p.round})", busy=True, rationale=p.rationale)
            else:
                self.stage(STAGES[env.type], busy=True)
        if isinstance(p, PlanDirective):
            self.query_one(PipelineLine).show(p)
        elif isinstance(p, FinalResult):
            self.query_one(PipelineLine).show(p)
            self.query_one(ResultPanel).show_final(p, self.task_stats(p.task_id))
            self.stage(f"{p.directive.value} — ready for the next goal", busy=False)
            self._task_done()
        elif isinstance(p, PerceiverReply):
            self.query_one(ResultPanel).show_text(p.text, self.task_stats(p.task_id))
            self.stage("ready — type a goal", busy=False)
            self._task_done()
        elif isinstance(p, TaskCancelled):
            self.query_one(ResultPanel).show_text(f"cancelled: {p.reason}")
            self.stage("cancelled — ready for the next goal", busy=False)
            self._task_done()
        elif env.type == "Megram":
            self._megrams_changed = True
        elif env.type == "AuditEvent":  # replayed recordings may carry them
            self._on_audit(p)  # type: ignore[arg-type]

    def task_stats(self, task_id: str) -> dict[str, Any]:
        """The per-role cost table: the runtime's live figures, or rebuilt from a recording."""
        if self.runtime is not None:
            return self.runtime.task_stats(task_id)
        st = self._replay_stats.get(task_id)
        return st.as_dict(st.ended or st.started) if st else {}

    def _count_replayed(self, env: Envelope) -> None:
        from agentui.clock import parse_iso
        from agentui.contracts import ExecutionResult, LLMUsage
        from agentui.runtime import TaskStats

        assert env.task_id
        t = parse_iso(env.ts).timestamp()
        st = self._replay_stats.get(env.task_id)
        if st is None:
            st = self._replay_stats[env.task_id] = TaskStats(started=t)
        st.ended = t
        p = env.payload
        if isinstance(p, LLMUsage):
            st.add_usage(p)
        elif isinstance(p, ExecutionResult):
            st.tool_calls += len(p.tool_calls)
            st.tool_seconds += sum(c.duration_s or 0.0 for c in p.tool_calls)

    def _task_done(self) -> None:
        self.current = None
        if self.memory is not None and self.replay_path is None:
            self.refresh_memory_counts()
