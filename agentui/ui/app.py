"""The Textual app: the role pipeline runs inside as background workers on the app's event loop.

Main screen: task input, bus stream, pipeline line, stage spinner with GGS's rationale, audit
feed, result panel; header with model, endpoint, memory counts and data dir. Other screens:
Megram browser (Ctrl+O), task detail (Ctrl+D), audit reports (Ctrl+R), help (F1). R1's questions
and the safety gate's confirmations are modals the pipeline awaits without freezing the UI.
The bus feed (feed.py), the key actions (actions.py) and replay (replay.py) are mixins.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from agentui.clock import Clock, SystemClock
from agentui.config import Config
from agentui.contracts import (
    AuditEvent,
    AuditReport,
    ClarificationRequest,
    ConfirmationChoice,
    ConfirmationRequest,
    Envelope,
)
from agentui.ids import IdFactory, UuidIds
from agentui.paths import DataLayout
from agentui.ui.actions import Actions
from agentui.ui.commands import InputSuggester
from agentui.ui.feed import BusFeed
from agentui.ui.glossary import FIRST_RUN_HINT
from agentui.ui.markup import escape
from agentui.ui.modals import ClarifyModal, ConfirmModal, steady_cursors
from agentui.ui.replay import Replayer
from agentui.ui.status import StatusBar
from agentui.ui.themes import load_themes
from agentui.ui.widgets import (
    AuditFeed,
    BusView,
    PipelineLine,
    ResultBox,
    ResultPanel,
    StageLine,
    TaskInput,
)

# the main screen's own keys; any screen above it hides them (Esc back first): its footer then
# shows its own keys plus Quit, Help, Settings and the palette within 80 columns
MAIN_SCREEN_ONLY = frozenset({"memory", "audit", "copy_answer", "history"})


class AgentApp(Actions, BusFeed, Replayer, App[int]):
    CSS_PATH = "app.tcss"
    # the endpoint check's window: past it a server that answers but has not completed is "slow"
    # and waited for (never a wall); tests shorten it
    check_window_s = 10.0
    # below 100 columns the screen gets `-narrow`: side panes collapse (app.tcss)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    # below 22 rows the screen gets `-short`: hint, onboarding and input shrink (app.tcss)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (22, "-tall")]
    TITLE = "agentui"
    BINDINGS = [
        # the footer shows these at 80 columns; the rest are in Help (F1) and the palette (Ctrl+P)
        Binding("escape", "abort", "Abort task", id="abort"),
        # Esc with no task to abort: closes the bus filter or returns to the input, unlisted
        Binding("escape", "escape_key", "Back to the input", show=False),
        Binding("f1", "help", "Help", priority=True, id="help"),
        Binding("ctrl+o", "memory", "Memory", priority=True, id="memory"),
        Binding("ctrl+r", "audit", "Audit", priority=True, id="audit"),
        Binding("ctrl+y", "copy_answer", "Copy", priority=True, id="copy-answer"),
        Binding("ctrl+g", "history", "History", priority=True, id="history"),
        Binding("ctrl+s", "settings", "Settings", priority=True, id="settings"),
        Binding("ctrl+d", "task_detail", "Task detail", priority=True, id="task-detail", show=False),
        Binding("ctrl+f", "filter", "Filter bus", priority=True, id="filter", show=False),
        Binding("ctrl+l", "open_message", "Pick a bus message", priority=True, id="open-message", show=False),
        Binding("ctrl+t", "next_theme", "Next theme", priority=True, id="theme", show=False),
        Binding("ctrl+q", "quit_app", "Quit", priority=True, id="quit"),
        Binding("f2", "goal_tree", "Goal tree", priority=True, show=False),  # agentui/ui/tree.py
        Binding("question_mark", "help", "Help", show=False),
    ]

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None,
               markup: bool = False) -> None:
        """Never markup: notifications carry paths, errors and user text ("[llm]" must survive)."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def __init__(self, config: Config, *, data_dir: Path | None = None, workspace: Path | None = None,
                 clock: Clock | None = None, ids: IdFactory | None = None, replay: Path | None = None,
                 speed: float = 1.0, animate: bool = True, pool: Any = None, memory: Any = None,
                 preflight: bool = True, config_file: Path | None = None) -> None:
        super().__init__()
        self.config = config
        self.config_file = config_file
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
        self._pending: list[Envelope] = []
        self._flush_timer: Any = None
        self.theme_names: list[str] = []
        self._in_batch = False
        self._bus_stats: dict[str, Any] = {}  # task id → TaskStats counted from the bus
        self._replay_t = 0.0  # the recording's clock (seconds) during a replay
        self._round_subtasks = 0  # subtasks in the current round, and how many have reported
        self._round_done = 0
        self._live_texts: dict[tuple[str, int], str] = {}  # (role, call) → its text so far, this task
        self.llm_waiting: str | None = None  # "waiting for the model (…, N s)" while a slow check runs
        self._queued_goal: str | None = None  # typed while the endpoint was checked: runs once it answers
        # the session's turns of a runtime being replaced (Settings saved, the endpoint checked
        # again): the next runtime takes them over, so a follow-up still sees the earlier answers
        self._carried_turns: list[str] = []
        self._mcp_ready: asyncio.Future[None] | None = None  # the MCP servers starting in the background
        self._mcp_goal: str | None = None  # given while they start: runs once they have
        self._told: set[str] = set()  # startup problems already notified
        self._running_call: tuple[str, str, str] | None = None  # (call id, tool, what) shown in the stage line

    def action_goal_tree(self) -> None:
        from agentui.ui.tree import TreeScreen

        if self._modal_pending():  # not over a pending confirmation
            return
        self.push_screen(TreeScreen(self.workspace, self.config))

    # -- layout ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield StatusBar(id="status")
        yield Static("", id="onboarding")
        yield Static(FIRST_RUN_HINT, id="hint")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield Static("[b]bus[/b]", classes="panel-title", id="bus-title")
                yield Input(placeholder="filter the bus: role:ggs type:PlanDirective or any text (Esc closes)",
                            id="bus-filter", classes="hidden")
                yield BusView(limit=self.config.ui.bus_history, id="bus")
            with Vertical(id="right"):
                yield Static("[b]audit[/b]", classes="panel-title", id="audit-title")
                yield AuditFeed(id="audit")
                yield Static("[b]result[/b]", classes="panel-title", id="result-title")
                with ResultBox(title_id="result-title", id="result-box"):
                    yield ResultPanel("[dim]no result yet[/dim]", id="result")
        yield PipelineLine(id="pipeline")
        yield StageLine(animate=self.spinner_animated, now=self.feed_now, id="stage")
        yield TaskInput(id="task", suggester=InputSuggester(lambda: self.workspace))
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        import signal

        for sig in (signal.SIGTERM, signal.SIGHUP):  # handled like Ctrl+C, never a bare kill
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                asyncio.get_running_loop().add_signal_handler(sig, self._on_signal, sig)
        wanted = self.config.ui.theme
        extra = [Path(wanted).expanduser()] if wanted.endswith(".toml") else []  # --theme FILE
        themes, problems = load_themes(extra=extra)
        for t in themes:
            self.register_theme(t)
        self.theme_names = [t.name for t in themes]
        if extra:
            from agentui.themes import file_theme_name

            wanted = file_theme_name(extra[0])
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
        self.query_one("#hint", Static).display = False
        if self.replay_path is not None:
            speed = f"×{self.speed:g}" if self.speed else "instant"
            self.title = f"agentui — replay of {self.replay_path.name} ({speed}, no model needed)"
            self.query_one(StatusBar).set(mode=f"replay of {self.replay_path.name} ({speed})",
                                          model="recorded — no model needed", healthy=True)
            ti = self.query_one(TaskInput)
            ti.placeholder = "replay — nothing to type here · Ctrl+G past tasks · Ctrl+Q quits"
            self.query_one("#onboarding", Static).display = False
            if self.memory is None:
                with contextlib.suppress(Exception):
                    await self._open_memory()  # browsing memory works during a replay too
            if self.memory is not None:
                self.refresh_memory_counts()
            self.run_replay()
        else:
            self.query_one(StatusBar).set(workspace=str(self.workspace), model="checking the LLM…", healthy=None)
            self.show_first_run_hint()
            # imports (httpx, numpy, plyvel), the memory open and the runtime wait for the first
            # paint: the screen is up ~0.1–0.2 s sooner
            self.call_after_refresh(self.setup_runtime)

    async def _open_memory(self) -> bool:
        """Open the LevelDB memory in a worker thread (numpy + plyvel imports and the DB open take
        100–200 ms that the first screen should not wait for)."""
        if self.memory is not None:
            return True

        def open_it() -> Any:
            from agentui.memory import open_memory

            self.data_layout.ensure()
            return open_memory(self.data_layout.memory_db, self.clock, self.ids)

        try:
            self.memory = await asyncio.to_thread(open_it)
        except Exception as e:
            from agentui.memory import MemoryError_, MemoryInUse, open_memory
            from agentui.paths import DataDirError

            if isinstance(e, MemoryError_ | DataDirError) and not isinstance(e, MemoryInUse):
                # a damaged / unusable store: stop with one line and exit 2, never run on it
                self.exit(return_code=2, message=f"agentui: {e}")
                return False
            if not isinstance(e, MemoryInUse):
                raise
            self.notify(f"{e}; using a temporary memory", severity="warning", timeout=10)
            self.memory = open_memory(None, self.clock, self.ids)
        return True

    # -- runtime --------------------------------------------------------------------------------
    @work(exclusive=True, group="setup")
    async def setup_runtime(self) -> None:
        from agentui.llm import LLMError, LLMPool
        from agentui.runtime import Runtime

        onboarding = self.query_one("#onboarding", Static)
        if not await self._open_memory():
            return
        pool = self._pool
        self.llm_error = None
        if pool is None:
            await self._key_from_keychain()
            try:
                pool = LLMPool(self.config)
            except LLMError as e:
                self.llm_error = str(e)
        latency: float | None = None
        self.llm_waiting = None
        if pool is not None and self.do_preflight and self._pool is None:
            self.stage("checking the LLM endpoint (a tiny completion)…", busy=True)
            self._header_model(pool)

            def waiting(url: str, elapsed: float, why: str) -> None:
                # no wall: a server that answers but has not completed yet is waited for, visibly;
                # a goal typed meanwhile runs once it answers
                self.llm_waiting = f"waiting for the model ({why}, {elapsed:.0f} s)"
                queued = "your goal runs" if self._queued_goal else "a goal typed now runs"
                self.stage(f"{self.llm_waiting} — slow, not down; {queued} once it answers", busy=True, clock=False)
                self.query_one(StatusBar).set(health=f"waiting {elapsed:.0f} s", healthy=None)
                if onboarding.display:  # an earlier "no LLM" notice is stale once an endpoint is set
                    onboarding.update(f"[b]Waiting for the model[/b] at {escape(url)} ({why}, {elapsed:.0f} s) — "
                                      f"slow, not down; {queued} once it answers. Ctrl+S changes the endpoint.")

            # the preflight `doctor` and `run` share: healthy only once a completion answered
            results = await pool.preflight(timeout_s=self.check_window_s, completion=True, patience_s=math.inf,
                                           waiting=waiting)
            self.llm_waiting = None
            bad = [r for r in results if not r.ok]
            latency = max((r.latency_s for r in results), default=None)
            if bad:
                self.llm_error = "; ".join(f"{r.url}: {r.error}" for r in bad)
                await pool.aclose()
                pool = None
        if self.llm_error:
            again = "" if self.llm_error.startswith("no LLM is configured") else "Enter on a goal checks again. "
            onboarding.update(
                f"[b $error]No LLM available.[/] {escape(self.llm_error)}\n"
                f"{again}[b]Ctrl+S[/b]: Settings finds Ollama, LM Studio or llama.cpp, checks and applies — no "
                "restart. Memory (Ctrl+O) and audit (Ctrl+R) still work.")
            onboarding.display = True
            self.query_one("#hint", Static).display = False  # no goal can run yet: leave the bus its rows
            self.stage("no LLM — see above", busy=False)
        else:
            if onboarding.display and self.replay_path is None:
                self.show_first_run_hint()  # an LLM was just set in Settings
            onboarding.display = False
        from agentui.tools import default_registry

        config, mcp_notices = self._mcp_config()
        tools = default_registry()
        self.runtime = Runtime(config, workspace=self.workspace, data_dir=self.data_layout.root, clock=self.clock,
                               ids=self.ids, pool=pool, memory=self.memory, clarify=self._clarify,
                               confirm=self._confirm, tools=tools)
        self.runtime.problems.extend(mcp_notices)
        turns, self._carried_turns = self._carried_turns, []
        if turns:
            self.runtime.continue_session(turns)
        if config.mcp.servers:
            self._start_mcp(config, tools)
        await self.runtime.start()
        watchers = getattr(getattr(self.runtime, "tools", None), "watchers", None)
        if isinstance(watchers, list):  # each tool call's start and end, live: the stage line names it
            watchers.append(self.on_tool_event)
        self.dreamer = self.runtime.dreamer
        if self.runtime.auditor is not None:
            self.runtime.auditor.channel.listen(self._on_audit)
        self._header(pool, latency)
        self._tell_problems()
        if not self.llm_error:
            self.stage("ready — type a goal", busy=False)
        self.consume(self.runtime.bus.tap("ui"))
        goal, self._queued_goal = self._queued_goal, None
        if goal and not self.llm_error:
            self.call_after_refresh(self.start_goal, goal)
        elif goal:
            self.query_one(TaskInput).value = goal  # kept for the next try

    def _mcp_config(self) -> tuple[Config, list[str]]:
        """The config with the project's trusted MCP servers (`.agentui/mcp.toml`) added, as an
        editor's session gets them; notices say what was left out and why."""
        from agentui.mcp.projectfile import with_project_servers

        notices: list[str] = []
        return with_project_servers(self.config, self.workspace, self.data_layout.root, notices), notices

    def _start_mcp(self, config: Config, tools: Any) -> None:
        """The MCP servers start in the background: the UI is usable at once, the status line counts
        them ready, and a goal given meanwhile waits for them (see `start_goal`)."""
        from agentui.mcp import McpHub

        hub = McpHub(config.mcp.servers, cwd=str(self.workspace))
        hub.ask = self._elicit
        hub.on_log = lambda line: self.notify(line, title="MCP", severity="warning", timeout=15)
        hub.on_progress = self.on_mcp_progress
        hub.on_report = lambda _report: self._show_mcp(hub)
        self.runtime.mcp = hub
        self._show_mcp(hub)
        self._mcp_ready = asyncio.ensure_future(self._attach_mcp(hub, tools))

    async def _attach_mcp(self, hub: Any, tools: Any) -> None:
        try:
            problems = await hub.attach(tools)
        except Exception as e:  # noqa: BLE001 - a hub failure is a problem line, never a dead UI
            problems = [f"MCP servers could not start: {e}"]
        if self.runtime is None or self.runtime.mcp is not hub:  # restarted meanwhile
            return
        self.runtime.problems.extend(problems)
        self._show_mcp(hub)
        if self.runtime.started:  # else setup_runtime tells them once the runtime is up
            self._tell_problems()
            self.query_one(StatusBar).set(problems=list(self.runtime.problems))
        goal, self._mcp_goal = self._mcp_goal, None
        if goal:
            self.call_after_refresh(self.start_goal, goal)

    def _tell_problems(self) -> None:
        """Each startup problem (an MCP server that failed to start) once, as a notification."""
        for problem in self.runtime.problems:
            if problem not in self._told:
                self._told.add(problem)
                self.notify(problem, title="agentui started with a problem", severity="warning", timeout=20)
        hub = getattr(self.runtime, "mcp", None)
        for r in getattr(hub, "reports", []):  # here a sign-in is one command away
            if r.needs_sign_in and f"\0login:{r.name}" not in self._told:
                self._told.add(f"\0login:{r.name}")
                self.notify(f"{r.name} asks for an OAuth sign-in: type /login {r.name}", title="MCP",
                            severity="warning", timeout=20)

    def _show_mcp(self, hub: Any) -> None:
        """`MCP: 2/3 ready` in the status line while they start, then the failed ones named."""
        with contextlib.suppress(Exception):  # a status line never stops the start
            total = len(hub.servers)
            ok = sorted(r.name for r in hub.reports if r.ok)
            failed = sorted(r.name for r in hub.reports if not r.ok)
            text = f"MCP: {len(ok)}/{total} ready"
            if len(hub.reports) < total:
                text += " (starting)"
            if failed:
                text += f", failed: {', '.join(failed)}"
            self.query_one(StatusBar).set(mcp=text)

    def on_mcp_progress(self, call_id: str, line: str) -> None:
        """An MCP server's progress notification for the running call: shown in the stage line."""
        running = getattr(self, "_running_call", None)
        if running is None or running[0] != call_id:  # a late notification never overwrites the end
            return
        self.stage(f"running {running[1]}: {running[2]} — {line}", busy=True)

    async def _elicit(self, request: Any) -> Any:
        """An MCP server's form: a modal the server's call waits on; closed as `cancel` when the
        call ends first."""
        from agentui.mcp.elicit import Answer
        from agentui.ui.elicit import ElicitModal

        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        modal = ElicitModal(request)
        self.push_screen(modal, lambda v: fut.done() or fut.set_result(v or Answer("cancel")))
        try:
            return await fut
        except asyncio.CancelledError:
            if modal.is_attached and not fut.done():
                fut.set_result(Answer("cancel"))
                modal.dismiss(Answer("cancel"))
            raise

    async def _key_from_keychain(self) -> None:
        """An API key saved from Settings lives in the OS keychain: use it when none is set (remote
        endpoints only — local servers need none, and the lookup costs a subprocess)."""
        from agentui.config_write import api_key_from_keychain

        await asyncio.to_thread(api_key_from_keychain, self.config)

    def _header_model(self, pool: Any) -> None:
        """The model and endpoint in the header while the check runs (health: pending)."""
        with contextlib.suppress(Exception):  # a status line never stops the check
            model = ", ".join(sorted({f"{b.model or '?'}@{b.url}" for b in pool.endpoints()}))
            self.query_one(StatusBar).set(model=model, health="checking", healthy=None)

    def _header(self, pool: Any, latency_s: float | None = None) -> None:
        from agentui.ui.status import sandbox_label

        model = "no LLM"
        if pool is not None:
            eps = pool.endpoints()
            model = ", ".join(sorted({f"{b.model or '?'}@{b.url}" for b in eps}))
        self.title = f"agentui — {model}"
        if self.llm_error:
            unset = self.llm_error.startswith("no LLM is configured")
            slow = "slow:" in self.llm_error
            health = "not set — Ctrl+S" if unset else "slow — Enter checks again" if slow else \
                "unreachable — Ctrl+S"
        else:
            health = "ok" if not latency_s else f"ok {latency_s * 1000:.0f} ms" if latency_s < self.check_window_s \
                else f"ok (first answer after {latency_s:.0f} s)"
        box, active = sandbox_label(self.runtime)
        self.query_one(StatusBar).set(workspace=str(self.workspace), model=model, health=health,
                                      healthy=pool is not None and not self.llm_error, sandbox=box, sandboxed=active,
                                      problems=list(getattr(self.runtime, "problems", None) or []))
        self.refresh_health()
        self.refresh_memory_counts()

    def refresh_health(self) -> None:
        """The endpoints' health as the pool last saw it (its health report): preflight and every call."""
        pool = getattr(self.runtime, "pool", None)
        report = getattr(pool, "health_report", None)
        if report is None:
            return
        try:
            rows = report()
        except Exception:  # noqa: BLE001 - a status line never crashes the app
            return
        states = {r.get("state") for r in rows}
        if "down" in states:
            down = "; ".join(str(r.get("message") or r.get("url")) for r in rows if r.get("state") == "down")
            self.query_one(StatusBar).set(healthy=False, health=f"down: {down}")
        elif states == {"ok"}:
            bar = self.query_one(StatusBar)
            bar.set(healthy=True, health=bar.fields["health"] if bar.fields["health"].startswith("ok") else "ok")

    def show_first_run_hint(self) -> None:
        """The glossary in a sentence, until the first task: shown when the data dir has no past tasks."""
        from agentui.history import list_tasks

        try:
            first = not list_tasks(self.data_layout, limit=1)
        except OSError:
            first = False
        self.query_one("#hint", Static).display = first

    def show_bus_title(self) -> None:
        """The bus pane's title; an active filter stays visible after Esc (n of m shown, and why)."""
        bus = self.query_one(BusView)
        title = self.query_one("#bus-title", Static)
        if bus.filter:
            title.update(f"[b]bus[/b] · [b $warning]filter {escape(bus.filter)!r}[/] — {len(bus.rows)} of "
                         f"{len(bus.envs)} shown · Ctrl+F changes it")
            title.add_class("filtered")
        else:
            # count what is listed; hidden usage messages are named, not silently counted
            hidden = len(bus.envs) - len(bus.rows)
            title.update(f"[b]bus[/b] · {len(bus.rows)} shown" + (f" ({hidden} usage hidden)" if hidden else "")
                         + " · Ctrl+L picks one")
            title.remove_class("filtered")

    @work(group="memcount")
    async def refresh_memory_counts(self) -> None:
        try:
            st = await asyncio.to_thread(self.memory.stats)
            lv = st["by_level"]
            mem = f"M{lv['M']} K{lv['K']} C{lv['C']} T{lv['T']}"
        except Exception:  # noqa: BLE001
            mem = "memory ?"
        self.sub_title = f"{mem} · {self.data_layout.root}"
        for bar in self.query(StatusBar):  # none while the app shuts down: the stats read may end after
            bar.set(memory=mem)

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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MAIN_SCREEN_ONLY and len(self.screen_stack) > 1:
            return False  # over another screen: hidden and off, so each footer fits 80 columns
        if action == "abort" and isinstance(self.screen, ModalScreen):
            return False  # a dialog's Esc is its own (an approval's Esc denies): never "Abort task"
        if action == "escape_key":
            return self.screen is self.screen_stack[0]
        if action == "abort":
            # "Abort task" is offered (footer, Esc) only while a task runs or a goal waits for the
            # MCP servers; otherwise Esc falls through to `escape_key`
            return bool(self.current) or getattr(self, "_mcp_goal", None) is not None
        return True

    # -- input and actions ----------------------------------------------------------------------
    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "bus-filter":
            self.query_one(BusView).set_filter(event.value)
            self.show_bus_title()
            self.query_one(TaskInput).focus()
            return
        if event.input.id != "task":
            return
        text = event.value.strip()
        if not text:
            return
        ti = self.query_one(TaskInput)
        if self.is_command(text):  # agentui's own verbs: no LLM needed, never a goal
            ti.remember(text)
            ti.value = ""
            self.run_command(text)
            return
        if self.replay_path is not None:
            self.notify("this is a replay; run `agentui` to give goals", severity="warning")
            return
        if self.llm_waiting is not None or (self.runtime is None and self.llm_error is None):
            # the endpoint is being checked (or waited for): the goal runs as soon as it answers
            self._queued_goal = text
            ti.remember(text)
            ti.value = ""
            self.notify("the model has not answered yet — your goal runs as soon as it does", timeout=6)
            return
        if self.llm_error:
            if self.llm_error.startswith("no LLM is configured"):
                self.notify(self.llm_error, severity="error", timeout=8)
                return
            # the endpoint failed its last check: check again now, then run the goal if it answers
            self._queued_goal = text
            ti.remember(text)
            ti.value = ""
            self.stage("checking the LLM endpoint again…", busy=True)
            self.recheck_llm()
            return
        if self.current is not None:
            self.notify("a task is running — Escape aborts it", severity="warning")
            return
        if self._mcp_goal is not None:
            self.notify("a goal is waiting for the MCP servers — Escape drops it", severity="warning")
            return
        ti.remember(text)
        ti.value = ""
        await self.start_goal(text)

    def recheck_llm(self) -> None:
        """Check the endpoint again (Enter on a goal after a failed check): the runtime restarts."""
        self.run_worker(self._restart_runtime(), exclusive=True, group="restart")

    async def start_goal(self, text: str) -> None:
        from agentui.ui.commands import attach_notice, goal_with_attachments

        if self.runtime is None or self.llm_error or self.current is not None:
            return
        # @path mentions: each file or folder of the workspace they name follows the goal (bounded);
        # one that is not attached (missing, outside, a secret) is said so, never dropped silently
        text, attached, refused = goal_with_attachments(text, self.workspace)
        notice, warn = attach_notice(attached, refused)
        if notice:
            self.notify(notice, severity="warning" if warn else "information", timeout=8 if warn else 5,
                        markup=False)  # a path may hold [brackets]
        self.task_envs = []
        self.query_one("#hint", Static).display = False
        self.query_one(PipelineLine).reset()
        self.query_one(PipelineLine).running()
        self.query_one(StageLine).start_task()
        self.query_one(ResultPanel).update("[dim]working…[/dim]")
        self._live_texts = {}
        ready = self._mcp_ready
        if ready is not None and not ready.done():  # the goal may need the servers' tools: it waits
            self._mcp_goal = text
            self.refresh_bindings()
            self.stage("waiting for the MCP servers to start — the goal runs once they have (Esc drops it)",
                       busy=True)
            return
        self.current = await self.runtime.submit(text)
        self.refresh_bindings()  # the footer offers "Abort task" now

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "bus-filter":
            self.query_one(BusView).set_filter(event.value)
            self.show_bus_title()
