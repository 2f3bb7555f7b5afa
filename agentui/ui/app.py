"""The Textual app: the role pipeline runs inside as background workers on the app's event loop.

Main screen: task input, bus stream, pipeline line, stage spinner with GGS's rationale, audit
feed, result panel; header with model, endpoint, memory counts and data dir. Other screens:
Megram browser (Ctrl+O), task detail (Ctrl+D), audit reports (Ctrl+R), help (F1). R1's questions
and the safety gate's confirmations are modals the pipeline awaits without freezing the UI.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.markup import escape
from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Static

from agentui.clock import Clock, SystemClock
from agentui.config import Config
from agentui.contracts import (
    AuditEvent,
    AuditReport,
    ClarificationRequest,
    ConfirmationChoice,
    ConfirmationRequest,
    Envelope,
    FinalResult,
    PerceiverReply,
    PlanDirective,
    TaskCancelled,
)
from agentui.ids import IdFactory, UuidIds
from agentui.paths import DataLayout
from agentui.ui.modals import ClarifyModal, ConfirmModal, PayloadModal, YesNoModal, steady_cursors
from agentui.ui.screens import AuditScreen, HelpScreen, MemoryScreen, TaskDetailScreen
from agentui.ui.themes import load_themes
from agentui.ui.widgets import AuditFeed, BusView, PipelineLine, ResultPanel, StageLine, TaskInput

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


class AgentApp(App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "agentui"
    BINDINGS = [
        Binding("escape", "abort", "Abort task", show=True),
        Binding("ctrl+c", "ctrl_c", "Abort / quit", priority=True, show=False),
        Binding("ctrl+q", "quit_app", "Quit", priority=True),
        Binding("ctrl+o", "memory", "Memory", priority=True),
        Binding("ctrl+d", "task_detail", "Task detail", priority=True),
        Binding("ctrl+r", "audit", "Audit", priority=True),
        Binding("ctrl+f", "filter", "Filter bus", priority=True),
        Binding("ctrl+l", "open_message", "Pick a message", priority=True),
        Binding("ctrl+t", "next_theme", "Theme", priority=True),
        Binding("ctrl+y", "retry_llm", "Retry LLM", show=False, priority=True),
        Binding("f1", "help", "Help", priority=True),
        Binding("question_mark", "help", "Help", show=False),
    ]

    def __init__(self, config: Config, *, data_dir: Path | None = None, workspace: Path | None = None,
                 clock: Clock | None = None, ids: IdFactory | None = None, replay: Path | None = None,
                 speed: float = 1.0, animate: bool = True, pool: Any = None, memory: Any = None,
                 preflight: bool = True) -> None:
        super().__init__()
        self.config = config
        self.data_layout = DataLayout(Path(data_dir) if data_dir else config.data_path())
        self.workspace = Path(workspace or config.tools.workspace or Path.cwd()).resolve()
        self.clock = clock or SystemClock()
        self.ids = ids or UuidIds()
        self.replay_path = replay
        self.speed = speed
        self.spinner_animated = animate
        self._pool = pool
        self.memory = memory
        self.do_preflight = preflight
        self.runtime: Any = None
        self.dreamer: Any = None
        self.llm_error: str | None = None
        self.current: str | None = None
        self.task_envs: list[Envelope] = []
        self.audit_history: list[AuditEvent | AuditReport] = []
        self._quit_armed = 0.0
        self._pending: list[Envelope] = []
        self._flush_timer: Any = None
        self.theme_names: list[str] = []
        self._in_batch = False
        self._replay_stats: dict[str, Any] = {}  # task id → TaskStats rebuilt from a recording

    # -- layout ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        yield Static("", id="onboarding")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Input(placeholder="filter the bus: role, type or text", id="bus-filter", classes="hidden")
                yield BusView(limit=self.config.ui.bus_history, id="bus")
            with Vertical(id="right"):
                yield Static("[b]audit[/b]", classes="panel-title")
                yield AuditFeed(id="audit")
                yield Static("[b]result[/b]", classes="panel-title")
                yield ResultPanel("[dim]no result yet[/dim]", id="result")
        yield PipelineLine(id="pipeline")
        yield StageLine(animate=self.spinner_animated, id="stage")
        yield TaskInput(id="task")
        yield Footer()

    async def on_mount(self) -> None:
        themes, problems = load_themes()
        for t in themes:
            self.register_theme(t)
        self.theme_names = [t.name for t in themes]
        wanted = self.config.ui.theme
        name = wanted if wanted in self.theme_names else f"agentui-{wanted}"
        if name in self.theme_names:
            self.theme = name
        elif self.theme_names:
            self.theme = self.theme_names[0]
        for p in problems:
            self.notify(f"{p} — using the default theme", severity="warning", timeout=8)
        if not self.spinner_animated:
            self.animation_level = "none"
            steady_cursors(self)
        self.query_one(TaskInput).focus()
        if self.replay_path is not None:
            speed = f"×{self.speed:g}" if self.speed else "instant"
            self.title = f"agentui — replay of {self.replay_path.name} ({speed}, no model needed)"
            self.query_one("#onboarding", Static).display = False
            if self.memory is None:
                with contextlib.suppress(Exception):
                    await self._open_memory()  # browsing memory works during a replay too
            if self.memory is not None:
                self.refresh_memory_counts()
            self.run_replay()
        else:
            # imports (httpx, numpy, plyvel), the memory open and the runtime wait for the first
            # paint: the screen is up ~0.1–0.2 s sooner
            self.call_after_refresh(self.setup_runtime)

    async def _open_memory(self) -> None:
        """Open the LevelDB memory in a worker thread (numpy + plyvel imports and the DB open take
        100–200 ms that the first screen should not wait for)."""
        if self.memory is not None:
            return

        def open_it() -> Any:
            from agentui.memory import open_memory

            self.data_layout.ensure()
            return open_memory(self.data_layout.memory_db, self.clock, self.ids)

        try:
            self.memory = await asyncio.to_thread(open_it)
        except Exception as e:
            from agentui.memory import MemoryInUse, open_memory

            if not isinstance(e, MemoryInUse):
                raise
            self.notify(f"{e}; using a temporary memory", severity="warning", timeout=10)
            self.memory = open_memory(None, self.clock, self.ids)

    # -- runtime --------------------------------------------------------------------------------
    @work(exclusive=True, group="setup")
    async def setup_runtime(self) -> None:
        from agentui.llm import LLMError, LLMPool
        from agentui.runtime import Runtime

        onboarding = self.query_one("#onboarding", Static)
        await self._open_memory()
        pool = self._pool
        self.llm_error = None
        if pool is None:
            try:
                pool = LLMPool(self.config)
            except LLMError as e:
                self.llm_error = str(e)
        if pool is not None and self.do_preflight and self._pool is None:
            self.stage("checking the LLM endpoint…", busy=True)
            results = await pool.preflight(timeout_s=10.0, completion=False)
            bad = [r for r in results if not r.ok]
            if bad:
                self.llm_error = "; ".join(f"{r.url}: {r.error}" for r in bad)
                await pool.aclose()
                pool = None
        if self.llm_error:
            onboarding.update(
                f"[b red]No LLM available.[/b red] {escape(self.llm_error)}\n"
                "Set it and press [b]Ctrl+Y[/b] to retry. Memory (Ctrl+O) and audit (Ctrl+R) still work.")
            onboarding.display = True
            self.stage("no LLM — see above", busy=False)
        else:
            onboarding.display = False
        self.runtime = Runtime(self.config, workspace=self.workspace, data_dir=self.data_layout.root, clock=self.clock,
                               ids=self.ids, pool=pool, memory=self.memory, clarify=self._clarify,
                               confirm=self._confirm)
        await self.runtime.start()
        self.dreamer = self.runtime.dreamer
        if self.runtime.auditor is not None:
            self.runtime.auditor.channel.listen(self._on_audit)
        self._header(pool)
        if not self.llm_error:
            self.stage("ready — type a goal", busy=False)
        self.consume(self.runtime.bus.tap("ui"))

    def _header(self, pool: Any) -> None:
        model = "no LLM"
        if pool is not None:
            eps = pool.endpoints()
            model = ", ".join(sorted({f"{b.model or '?'} @ {b.url}" for b in eps}))
        self.title = f"agentui — {model}"
        self.refresh_memory_counts()

    @work(group="memcount")
    async def refresh_memory_counts(self) -> None:
        try:
            st = await asyncio.to_thread(self.memory.stats)
            lv = st["by_level"]
            mem = f"M{lv['M']} K{lv['K']} C{lv['C']} T{lv['T']}"
        except Exception:  # noqa: BLE001
            mem = "memory ?"
        self.sub_title = f"{mem} · {self.data_layout.root}"

    @work(group="consume")
    async def consume(self, tap: Any) -> None:
        async for env in tap:
            self.on_envelope(env)

    async def _clarify(self, req: ClarificationRequest) -> str:
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.push_screen(ClarifyModal(req), lambda v: fut.done() or fut.set_result(v or ""))
        return await fut

    async def _confirm(self, req: ConfirmationRequest) -> ConfirmationChoice:
        fut: asyncio.Future[ConfirmationChoice] = asyncio.get_running_loop().create_future()
        self.push_screen(ConfirmModal(req),
                         lambda v: fut.done() or fut.set_result(v or ConfirmationChoice.DENY))
        return await fut

    def _on_audit(self, item: AuditEvent | AuditReport) -> None:
        self.audit_history.append(item)
        self.query_one(AuditFeed).add(item)

    # -- what the bus shows ---------------------------------------------------------------------
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

    # -- input and actions ----------------------------------------------------------------------
    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "bus-filter":
            self.query_one(BusView).set_filter(event.value)
            self.query_one(TaskInput).focus()
            return
        if event.input.id != "task":
            return
        text = event.value.strip()
        if not text:
            return
        ti = self.query_one(TaskInput)
        if self.replay_path is not None:
            self.notify("this is a replay; run `agentui` to give goals", severity="warning")
            return
        if self.runtime is None or self.llm_error:
            self.notify(self.llm_error or "still starting…", severity="error", timeout=8)
            return
        if self.current is not None:
            self.notify("a task is running — Escape aborts it", severity="warning")
            return
        ti.remember(text)
        ti.value = ""
        self.task_envs = []
        self.query_one(PipelineLine).reset()
        self.query_one(ResultPanel).update("[dim]working…[/dim]")
        self.current = await self.runtime.submit(text)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "bus-filter":
            self.query_one(BusView).set_filter(event.value)

    def on_bus_view_opened(self, event: BusView.Opened) -> None:
        self.push_screen(PayloadModal(event.env))

    def action_open_message(self) -> None:
        """Focus the bus stream (↑/↓ pick a line, Enter opens it); again opens the picked line."""
        bus = self.query_one(BusView)
        if bus.has_focus:
            bus.action_open()
        else:
            bus.focus()
            if bus.rows:
                self.notify("↑/↓ pick a line · Enter opens its payload · Esc back to the task input", timeout=4)

    async def action_abort(self) -> None:
        f = self.query_one("#bus-filter", Input)
        if f.has_focus:
            f.add_class("hidden")
            self.query_one(TaskInput).focus()
            return
        if self.current and self.runtime:
            await self.runtime.cancel(self.current, "aborted from the UI")
        elif not self.query_one(TaskInput).has_focus:
            self.query_one(TaskInput).focus()

    async def action_ctrl_c(self) -> None:
        if self.current and self.runtime:
            await self.runtime.cancel(self.current, "aborted from the UI (Ctrl+C)")
            return
        now = time.monotonic()
        if now - self._quit_armed < 3:
            await self.action_quit_app()
            return
        self._quit_armed = now
        self.notify("Press Ctrl+C again to quit", timeout=3)

    async def action_quit_app(self) -> None:
        if self.current:
            def done(yes: bool | None) -> None:
                if yes:
                    self.run_worker(self._stop_and_exit())

            self.push_screen(YesNoModal("A task is running. Abort it and quit?"), done)
            return
        await self._stop_and_exit()

    async def _stop_and_exit(self) -> None:
        if self.runtime is not None:
            with contextlib.suppress(Exception):
                await self.runtime.stop()
        elif self.memory is not None:
            with contextlib.suppress(Exception):
                await self.memory.close()
        self.exit(0)

    def action_memory(self) -> None:
        if isinstance(self.screen, MemoryScreen):
            return
        if self.memory is None:
            self.notify("the memory is still opening — try again in a moment", severity="warning")
            return
        self.push_screen(MemoryScreen(self.memory, self.clock))

    def action_task_detail(self) -> None:
        if isinstance(self.screen, TaskDetailScreen):
            return
        self.push_screen(TaskDetailScreen(list(self.task_envs)))

    def action_audit(self) -> None:
        from agentui.roles.auditor import AuditLog

        if isinstance(self.screen, AuditScreen):
            return
        stored = AuditLog(self.data_layout.audit_dir).reports()
        self.push_screen(AuditScreen(list(self.audit_history), stored))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen())

    def action_filter(self) -> None:
        f = self.query_one("#bus-filter", Input)
        f.remove_class("hidden")
        f.focus()

    def action_next_theme(self) -> None:
        if not self.theme_names:
            return
        i = self.theme_names.index(self.theme) if self.theme in self.theme_names else -1
        self.theme = self.theme_names[(i + 1) % len(self.theme_names)]
        self.notify(f"theme: {self.theme}", timeout=2)

    def set_theme(self, name: str) -> None:
        if name in self.theme_names:
            self.theme = name
            self.notify(f"theme: {name}", timeout=2)

    def action_retry_llm(self) -> None:
        if self.llm_error:
            if self.runtime is not None:
                rt, self.runtime = self.runtime, None
                self.run_worker(rt.stop())
            self.memory = None
            self.run_worker(self._reopen())

    async def _reopen(self) -> None:
        await asyncio.sleep(0.2)
        from agentui.config import load_config

        with contextlib.suppress(Exception):
            self.config = load_config().config
        self.setup_runtime()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Abort task", "Cancel the running task", self.action_abort)
        yield SystemCommand("Memory browser", "Browse, filter, remember, forget Megrams", self.action_memory)
        yield SystemCommand("Task detail", "Subtasks, verdicts, gap trajectory, rounds", self.action_task_detail)
        yield SystemCommand("Audit reports", "The Auditor's reports and events", self.action_audit)
        yield SystemCommand("Open a message", "Pick a recent bus message and see its payload",
                            self.action_open_message)
        yield SystemCommand("Filter bus", "Show only matching bus lines", self.action_filter)
        yield SystemCommand("Next theme", "Switch between the themes in themes/", self.action_next_theme)
        for name in self.theme_names:
            yield SystemCommand(f"Theme: {name}", "Use this theme from themes/", lambda n=name: self.set_theme(n))
        yield SystemCommand("Retry LLM", "Re-read the config and check the endpoint again", self.action_retry_llm)
        yield SystemCommand("Help", "Keys and what they do", self.action_help)

    # -- replay ---------------------------------------------------------------------------------
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
        self.stage(f"replay finished: {n} messages", busy=False)
