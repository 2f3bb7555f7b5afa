"""The main screen's feed: envelopes from the bus (live or replayed) are batched onto the bus
pane, the pipeline line, the stage line and the result panel; per-task costs for the table."""

from __future__ import annotations

from typing import Any

from textual.css.query import NoMatches

from agentui.contracts import (
    DispatchManifest,
    Envelope,
    FinalResult,
    LLMDelta,
    PerceiverReply,
    PlanDirective,
    SubTaskOutcome,
    TaskCancelled,
    TaskStarted,
)
from agentui.ui.screens import MemoryScreen, plan_memory
from agentui.ui.widgets import BusView, PipelineLine, ResultPanel, StageLine

AUDIT_AFTER_TASK_S = 1.0  # the Auditor reads a burst once it settles: report after that

STAGES = {
    "UserInput": "R1 perceiving the request…",
    "TaskSpec": "R2 planning…",
    "DispatchManifest": "executing subtasks…",
    "SubTask": "dispatching…",
    "ExecutionResult": "R4a validating…",
    "CorrectionSignal": "R3 retrying after a correction…",
    "SubTaskOutcome": "R4b merging the results…",
    "ReplanRequest": "GGS computing the gradient…",
    "OutcomeSummary": "GGS closing the task…",
    "PlanDirective": "R2 replanning",
    "ClarificationRequest": "waiting for your answer…",
    "ConfirmationRequest": "waiting for your confirmation…",
}


class BusFeed:
    """Mixin for AgentApp: what the bus shows."""

    def feed_now(self) -> float:
        """The clock the stage line's timers read: the app's clock live, the recording's in a replay."""
        if self.replay_path is not None:
            return self._replay_t
        return self.clock.monotonic()

    def stage(self, text: str, *, busy: bool, rationale: str = "", clock: bool = True) -> None:
        seen = self.query_one(StageLine).seen
        if not seen or seen[-1] != text:
            seen.append(text)
        if self._in_batch:
            self._stage_pending = (text, busy, rationale)
            return
        self.query_one(StageLine).set_stage(text, busy=busy, rationale=rationale, clock=clock)

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
        else:
            self.query_one(StageLine).paint()  # the meter moved
        self.show_bus_title()
        if self._megrams_changed and isinstance(self.screen, MemoryScreen):
            self.screen.action_refresh()  # the browser follows GGS's writes

    def _apply(self, env: Envelope) -> None:  # noqa: C901 - one flat branch per payload type the feed shows
        from agentui.clock import parse_iso

        replay = self.replay_path is not None
        if replay:
            self._replay_t = parse_iso(env.ts).timestamp()
        mine = bool(env.task_id) and (env.task_id == self.current or replay)
        if isinstance(p := env.payload, LLMDelta):
            if mine:
                self._show_live(p)
            return
        if mine and env.type != "LLMUsage":
            self.task_envs.append(env)
            if len(self.task_envs) > 5000:
                del self.task_envs[:1000]
        p = env.payload
        sl = self.query_one(StageLine)
        if env.task_id:
            self._count(env)
            if mine:
                if isinstance(p, TaskStarted) and replay:
                    from agentui.ui.status import StatusBar

                    self.query_one(StatusBar).set(workspace=p.workspace)
                    self.task_envs = [env]
                    sl.start_task()
                    self.query_one(PipelineLine).reset()
                    self.query_one(PipelineLine).running()
                st = self._bus_stats.get(env.task_id)
                if st is not None:
                    sl.meter = {"calls": st.llm_calls, "in": st.prompt_tokens, "out": st.completion_tokens,
                                "tools": st.tool_calls}
                    if not self._in_batch:
                        sl.paint()
        if isinstance(p, DispatchManifest):
            self._round_subtasks, self._round_done = len(p.subtask_ids), 0
            if not self.query_one(PipelineLine).losses:
                self.query_one(PipelineLine).running(p.round)
        if isinstance(p, SubTaskOutcome):
            self._round_done += 1
            n = self._round_subtasks
            if n > 1 and self._round_done < n:  # "waiting for the others" only when there are others
                self.stage(f"subtask {self._round_done}/{n} done — waiting for the other {n - self._round_done}…",
                           busy=True)
            else:
                self.stage(STAGES["SubTaskOutcome"], busy=True)
        elif env.type in STAGES:
            if isinstance(p, PlanDirective):
                self.stage(f"R2 replanning ({p.directive.value}, round {p.round})", busy=True, rationale=p.rationale)
            elif isinstance(p, DispatchManifest) and p.subtask_ids:
                first = next((e.payload.intent for e in reversed(self.task_envs) if e.type == "SubTask"), "")
                more = f" (+{len(p.subtask_ids) - 1} more)" if len(p.subtask_ids) > 1 else ""
                self.stage(f"R3 executing: {first}{more}" if first else STAGES[env.type], busy=True)
            else:
                self.stage(STAGES[env.type], busy=True)
        after = "replay" if replay else "ready for the next goal"
        if isinstance(p, PlanDirective):
            self.query_one(PipelineLine).show(p)
        elif isinstance(p, FinalResult):
            self.query_one(PipelineLine).show(p)
            self.query_one(ResultPanel).show_final(p, self.task_stats(p.task_id),
                                                   lessons=len(plan_memory(self.task_envs)),
                                                   checks=self.task_checks(p.task_id))
            self.stage(f"{p.directive.value} — {after}", busy=False)
            self._task_done()
        elif isinstance(p, PerceiverReply):
            self.query_one(ResultPanel).show_text(p.text, self.task_stats(p.task_id))
            self.stage("answered — replay" if replay else "ready — type a goal", busy=False)
            self._task_done()
        elif isinstance(p, TaskCancelled):
            self.query_one(ResultPanel).show_text(f"cancelled: {p.reason}")
            self.query_one(PipelineLine).ended("cancelled")
            self.stage(f"cancelled — {after}", busy=False)
            self._task_done()
        elif env.type == "Megram":
            self._megrams_changed = True
        elif env.type == "AuditEvent":  # replayed recordings may carry them
            self._on_audit(p)  # type: ignore[arg-type]

    def _show_live(self, p: LLMDelta) -> None:
        """A streamed role's text so far, in the result pane until the task's result replaces it;
        the call that wrote last is the one shown (parallel calls take turns)."""
        from agentui.contracts import ROLE_LABELS

        key = (p.role.value, p.call)
        live = self._live_texts
        if p.fresh or key not in live:
            live.pop(key, None)
            while len(live) >= 8:  # the calls of a long task: keep the recent ones
                del live[next(iter(live))]
        text = live[key] = (live.get(key, "") + p.text)[-4 * ResultPanel.LIVE_CHARS:]
        self.query_one(ResultPanel).show_live(ROLE_LABELS.get(p.role, p.role.value), text,
                                              chars=p.chars, done=p.done)

    def task_checks(self, task_id: str) -> list[Any]:
        """The checks the task's log records (the commands that confirmed the answer), or []."""
        from agentui.roles.checks import logged

        layout = getattr(self, "data_layout", None)
        return logged(layout.task_log(task_id)) if layout is not None and task_id else []

    def task_stats(self, task_id: str) -> dict[str, Any]:
        """The per-role cost table: the runtime's live figures, or rebuilt from a recording."""
        if self.runtime is not None and task_id in self.runtime.stats:
            return self.runtime.task_stats(task_id)
        st = self._bus_stats.get(task_id)
        return st.as_dict(st.ended or st.started) if st else {}

    def _count(self, env: Envelope) -> None:
        """Per-task figures from the bus itself (the meter live; the cost table in a replay)."""
        from agentui.clock import parse_iso
        from agentui.contracts import ExecutionResult, LLMUsage
        from agentui.runtime import TaskStats

        assert env.task_id
        t = parse_iso(env.ts).timestamp()
        st = self._bus_stats.get(env.task_id)
        if st is None:
            st = self._bus_stats[env.task_id] = TaskStats(started=t)
            while len(self._bus_stats) > 50:  # a long session: keep the recent tasks' figures
                del self._bus_stats[next(iter(self._bus_stats))]
        st.ended = t
        p = env.payload
        if isinstance(p, LLMUsage):
            st.add_usage(p)
        elif isinstance(p, ExecutionResult):
            st.tool_calls += len(p.tool_calls)
            st.tool_seconds += sum(c.duration_s or 0.0 for c in p.tool_calls)

    def on_tool_event(self, ev: Any) -> None:
        """A tool call of the running task starts or ends (the tool registry's watcher): the stage
        line names the command while it runs, with its elapsed time, then how it ended."""
        if not ev.task_id or ev.task_id != self.current:
            return
        what = ev.target or str(ev.args.get("command") or ev.args.get("path") or "")
        what = " ".join(what.split())
        what = what if len(what) <= 60 else what[:59] + "…"
        if ev.record is None:
            self._running_call = (ev.call_id, ev.tool, what)  # an MCP server's progress names it
            self.stage(f"running {ev.tool}: {what}", busy=True)
        else:
            self._running_call = None
            r = ev.record
            how = "ok" if r.ok else f"failed{f' (exit {r.exit_code})' if r.exit_code not in (None, 0) else ''}"
            self.stage(f"R3 working — {ev.tool} {how} in {r.duration_s:.1f} s: {what}", busy=True)

    def report_audit(self) -> None:
        """An audit report of the window since the last one (what the task just did), unless the
        Auditor saw nothing new since then."""
        auditor = getattr(self.runtime, "auditor", None)
        if auditor is None:
            return
        core = getattr(auditor, "core", None)
        if core is not None and getattr(core, "messages_seen", 1) <= getattr(auditor, "_seen_at_report", 0):
            return
        try:
            auditor.report("periodic")
        except Exception:  # noqa: BLE001 - a report is a courtesy; the task's result is already shown
            return

    def _task_done(self) -> None:
        self.query_one(StageLine).end_task()
        self.current = None
        self.refresh_bindings()  # no task: the footer stops offering "Abort task"
        deferred, self._deferred_config = getattr(self, "_deferred_config", None), None
        if deferred is not None:  # settings saved while the task ran
            self.apply_config(deferred)
        if self.replay_path is None and getattr(self.runtime, "auditor", None) is not None:
            # the audit pane reports at each task's end, once the Auditor has read the last burst
            self.set_timer(AUDIT_AFTER_TASK_S, self.report_audit)
        if self.memory is not None and self.replay_path is None:
            self.refresh_memory_counts()
            self.refresh_health()  # an endpoint may have gone down during the task
