"""AgentApp's actions: keys, the command palette's entries, quitting and retrying the LLM."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from textual.app import SystemCommand
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, Static

from agentui.ui.help import HelpScreen
from agentui.ui.modals import PayloadModal, YesNoModal
from agentui.ui.screens import AuditScreen, MemoryScreen, TaskDetailScreen
from agentui.ui.status import StatusBar
from agentui.ui.widgets import BusView, ResultPanel, TaskInput

#: after a signal, how long restoring the terminal may take before the process leaves without it
EXIT_GRACE_S = 5.0


def _exit_soon(code: int, message: str | None) -> None:
    """After SIGHUP the terminal is gone: Textual's shutdown writes to it to restore its modes and can
    block on the dead tty for ever (seen: a closed tmux pane left the app spinning). The memory and
    the task log are closed by now, so if the orderly exit has not happened within the grace
    period, the process leaves without the terminal."""
    import os
    import sys
    import threading

    def leave() -> None:
        if message:
            with contextlib.suppress(OSError):
                os.write(sys.__stderr__.fileno() if sys.__stderr__ else 2, (message + "\n").encode())
        os._exit(code)

    timer = threading.Timer(EXIT_GRACE_S, leave)
    timer.daemon = True
    timer.start()


class Actions:
    """Mixin for AgentApp: one method per key binding / palette command."""

    def on_bus_view_opened(self, event: BusView.Opened) -> None:
        self.push_screen(PayloadModal(event.env))

    def action_open_message(self) -> None:
        """Focus the bus stream (↑/↓ pick a line, Enter opens it); again opens the picked line."""
        if self.screen is not self.screen_stack[0]:
            return
        bus = self.query_one(BusView)
        if bus.has_focus:
            bus.action_open()
        else:
            bus.focus()
            if bus.rows:
                self.notify("↑/↓ pick a line · Enter opens its payload · Esc back to the task input", timeout=4)

    async def action_abort(self) -> None:
        f = self.query_one("#bus-filter", Input)
        if f.has_focus:  # Esc closes the filter box; the filter stays on, and the bus title says so
            f.add_class("hidden")
            self.query_one(TaskInput).focus()
            return
        if self.current and self.runtime:
            await self.runtime.cancel(self.current, "aborted from the UI")
        elif getattr(self, "_mcp_goal", None) is not None:  # a goal waiting for the MCP servers
            self._mcp_goal = None
            self.stage("the goal waiting for the MCP servers was dropped", busy=False)
        elif not self.query_one(TaskInput).has_focus:
            self.query_one(TaskInput).focus()

    async def action_escape_key(self) -> None:
        """Esc when no task runs: the same, minus aborting (closes the filter, back to the input)."""
        await self.action_abort()

    def _modal_pending(self) -> bool:
        """A question or confirmation is on screen: other screens must not stack over it."""
        if isinstance(self.screen, ModalScreen):
            self.notify("answer the dialog first", severity="warning", timeout=3)
            return True
        return False

    def copy_out(self, text: str, what: str) -> None:
        """Copy to the system clipboard (OSC 52, which most terminals and tmux honour)."""
        if not text:
            self.notify(f"nothing to copy: no {what} yet", severity="warning", timeout=3)
            return
        self.copy_to_clipboard(text)
        self.notify(f"copied the {what} ({len(text)} characters)", timeout=3)

    def action_copy_answer(self) -> None:
        self.copy_out(self.query_one(ResultPanel).copy_text, "final answer")

    def on_bus_view_copy(self, event: BusView.Copy) -> None:
        self.copy_out(event.text, "bus line")

    async def action_quit_app(self) -> None:
        if self.current:
            def done(yes: bool | None) -> None:
                if yes:
                    self.run_worker(self._stop_and_exit())

            self.push_screen(YesNoModal("A task is running. Abort it and quit?"), done)
            return
        await self._stop_and_exit()

    async def _stop_and_exit(self, code: int = 0, message: str | None = None, signalled: bool = False) -> None:
        starting = getattr(self, "_mcp_ready", None)
        if starting is not None and not starting.done():  # MCP servers still starting: stopped too
            starting.cancel()
            with contextlib.suppress(BaseException):
                await starting
        if self.runtime is not None:
            with contextlib.suppress(Exception):
                await self.runtime.stop()
        elif self.memory is not None:
            with contextlib.suppress(Exception):
                await self.memory.close()
        if signalled:
            _exit_soon(code, message)
        self.exit(return_code=code, message=message)

    def _on_signal(self, sig: int) -> None:
        """SIGTERM / SIGHUP: like quitting with a task running, without asking; exit 128+sig.

        Once: `timeout` sends SIGTERM to the command and again to its process group, and a second
        exit message made Textual print "NOTE: 1 of 2 errors shown" after the clean stop line."""
        import signal

        if getattr(self, "_signal_stop", False):
            return
        self._signal_stop = True
        self.run_worker(self._stop_and_exit(128 + sig, f"agentui: {signal.Signals(sig).name}, stopped", signalled=True))

    def _memory_opening(self) -> bool:
        """True, after telling the user, while the memory store is still opening."""
        if self.memory is None:
            self.notify("the memory is still opening — try again in a moment", severity="warning")
            return True
        return False

    def action_memory(self, filter: str = "") -> None:
        if isinstance(self.screen, MemoryScreen) or self._modal_pending():
            return
        if self._memory_opening():
            return
        self.push_screen(MemoryScreen(self.memory, self.clock, filter))

    def action_plan_memory(self) -> None:
        """The Megram browser on the Megrams the current (or last) task's plans were made with."""
        from agentui.ui.screens import plan_memory

        if isinstance(self.screen, MemoryScreen) or self._modal_pending():
            return
        used = [mid for _r, mid in plan_memory(self.task_envs)]
        if not used or self.memory is None:
            self.notify("the last task's plans were made without memory", severity="warning", timeout=4)
            return
        self.push_screen(MemoryScreen(self.memory, self.clock, ids=used, focus=used[0]))

    def action_task_detail(self) -> None:
        if isinstance(self.screen, TaskDetailScreen) or self._modal_pending():
            return
        self.push_screen(TaskDetailScreen(list(self.task_envs)))

    def action_audit(self) -> None:
        from agentui.roles.auditor import AuditLog

        if isinstance(self.screen, AuditScreen) or self._modal_pending():
            return
        stored = AuditLog(self.data_layout.audit_dir).reports()
        self.push_screen(AuditScreen(list(self.audit_history), stored))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen) or self._modal_pending():
            return
        self.push_screen(HelpScreen())

    def action_history(self) -> None:
        from agentui.ui.sessions import HistoryScreen

        if isinstance(self.screen, HistoryScreen) or self._modal_pending():
            return

        def done(result: tuple[str, Any] | None) -> None:
            if result and result[0] == "rerun":
                self.rerun_goal(result[1])
            elif result and result[0] == "continue":
                self.continue_session(result[1])

        self.push_screen(HistoryScreen(self.data_layout, self.clock), done)

    def continue_session(self, rec: Any) -> None:
        """Reopen a past task's session to continue it: its turns (what was asked → what came of
        it) become this session's, so the next goal typed is a follow-up of them."""
        from agentui.history import session_turns

        if self.replay_path is not None or self.runtime is None:
            self.notify("a replay cannot continue a session: start agentui without --replay", timeout=6)
            return
        turns = session_turns(rec)
        if not turns:
            self.notify(f"{rec.task_id} has no recorded turns to continue", severity="warning", timeout=6)
            return
        self.runtime.continue_session(turns)
        shown = "\n".join(f"• {t}" for t in turns[-self.config.pipeline.history_turns or None:])
        self.query_one(ResultPanel).show_text(
            f"Continuing the session of {rec.task_id} — the next goal follows up on:\n{shown}")
        self.query_one("#hint", Static).display = False
        self.stage(f"continuing a past session ({len(turns)} turn(s)) — type a follow-up", busy=False)
        self.query_one(TaskInput).focus()

    def rerun_goal(self, goal: str) -> None:
        """Put a past goal in the input and run it (in the current workspace)."""
        ti = self.query_one(TaskInput)
        ti.value = goal
        ti.focus()
        if self.replay_path is not None or self.runtime is None or self.llm_error:
            self.notify("the goal is in the input; it can run once an LLM is set (Ctrl+S)", timeout=5)
            return
        self.call_after_refresh(ti.action_submit)

    def action_filter(self) -> None:
        if self.screen is not self.screen_stack[0]:
            return
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

    def action_settings(self) -> None:
        from agentui.paths import default_config_file
        from agentui.ui.settings import SettingsScreen

        if isinstance(self.screen, SettingsScreen):
            self.screen.action_save()  # Ctrl+S on the settings screen saves
            return
        if self._modal_pending():
            return

        def done(cfg: Any) -> None:
            if cfg is not None:
                self.apply_config(cfg)

        self.push_screen(SettingsScreen(self.config, self.config_file or default_config_file(), self.workspace,
                                        self.theme_names), done)

    def apply_config(self, cfg: Any) -> None:
        """Settings saved: the new theme now, and the runtime restarted on the new endpoint and
        workspace — no restart of the app."""
        from pathlib import Path

        if self.current:
            self.notify("saved; it applies after the running task (Esc aborts it)", severity="warning")
            self._deferred_config = cfg
            return
        self.config = cfg
        name = cfg.ui.theme if cfg.ui.theme in self.theme_names else f"agentui-{cfg.ui.theme}"
        if name in self.theme_names:
            self.theme = name
        self.workspace = Path(cfg.tools.workspace or self.workspace).expanduser().resolve()
        if self.replay_path is None:
            self.run_worker(self._restart_runtime(), exclusive=True, group="restart")

    async def _restart_runtime(self) -> None:
        rt, self.runtime = self.runtime, None
        if rt is not None:
            if rt.history:  # a setup that failed earlier may still hold the turns: keep those then
                self._carried_turns = rt.history
            with contextlib.suppress(Exception):
                await rt.stop()  # also closes the memory: setup reopens it
            self.memory = None
        self._pool = None  # a pool given at start belongs to the old endpoint
        self.do_preflight = True
        self.setup_runtime()

    # -- `/` commands from the task input -----------------------------------------------------------
    def is_command(self, text: str) -> bool:
        """`/remember …` and the other known verbs; "/etc/hosts has how many lines?" stays a goal."""
        from agentui.ui.commands import COMMANDS

        head = text.split(maxsplit=1)[0] if text.strip() else ""
        return head in COMMANDS or (head.startswith("/") and head[1:].isalpha())

    def run_command(self, text: str) -> None:
        from agentui.ui.commands import COMMANDS, help_text

        name, _, arg = text.strip().partition(" ")
        arg = arg.strip()
        if name not in COMMANDS:
            self.notify(f"no command {name}; {help_text()}", severity="warning", timeout=10, markup=False)
        elif name == "/help":
            self.notify(help_text(), timeout=12, markup=False)
        elif name == "/remember":
            self._remember_from_input(arg)
        elif name == "/forget":
            self._forget_from_input(arg)
        elif name == "/memory":
            self.action_memory(arg)
        elif name == "/audit":
            self.action_audit()
        elif name == "/tree":
            self.action_goal_tree()
        elif name == "/settings":
            self.action_settings()
        elif name == "/clear":
            self.clear_view()
        elif name == "/login":
            self._login_from_input(arg)

    def _login_from_input(self, name: str) -> None:
        """`/login NAME`: the OAuth sign-in of a remote MCP server, in the browser; the server's tools
        join this session once it is done."""
        hub = getattr(self.runtime, "mcp", None)
        servers = getattr(hub, "servers", {})
        remote = sorted(n for n, c in servers.items() if c.url)
        if not name or name not in servers or not servers[name].url:
            waiting = sorted(r.name for r in getattr(hub, "reports", []) if r.needs_sign_in)
            why = ("no remote MCP server is configured" if not remote
                   else f"waiting for a sign-in: {', '.join(waiting)}" if waiting
                   else f"remote servers: {', '.join(remote)}")
            head = f"/login NAME — no remote MCP server {name!r}; " if name else "/login NAME — "
            self.notify(head + why, severity="warning", timeout=10)
            return
        self.run_worker(self._sign_in(hub, name), group="mcp-login", exclusive=True)

    async def _sign_in(self, hub: Any, name: str) -> None:
        from agentui.mcp.client import McpUnavailable

        def say(line: str) -> None:
            self.notify(line, title=f"MCP sign-in: {name}", timeout=60)

        try:
            report = await hub.sign_in(name, say, registry=getattr(self.runtime, "tools", None))
        except McpUnavailable as exc:
            self.notify(f"{name}: {exc}", title="MCP sign-in failed", severity="error", timeout=20)
            return
        if self.runtime is not None:  # its start-up problem is solved
            self.runtime.problems[:] = [p for p in self.runtime.problems if f"'{name}'" not in p]
            self.query_one(StatusBar).set(problems=list(self.runtime.problems))
        self._show_mcp(hub)
        self.notify(f"signed in to {name}: {len(report.tools)} tools ready", title="MCP", timeout=8)

    def _remember_from_input(self, text: str) -> None:
        from agentui.ui.screens import remember_rule

        if not text:
            self.notify("/remember TEXT — e.g. /remember run the tests before committing", severity="warning")
            return
        if self._memory_opening():
            return
        m = remember_rule(self.memory, text)
        self.notify(f"remembered {m.id[:8]} (C level, space {m.space}: read for every plan)", timeout=5)
        self.refresh_memory_counts()

    def _forget_from_input(self, prefix: str) -> None:
        if not prefix:
            self.notify("/forget ID — the Megram's id or a prefix (Ctrl+O lists them)", severity="warning")
            return
        if self._memory_opening():
            return
        try:
            m = self.memory.get(prefix)
        except Exception as e:  # noqa: BLE001 - not found, or a prefix of several: one line
            self.notify(f"/forget {prefix}: {e}", severity="warning", timeout=6)
            return

        def done(yes: bool | None) -> None:
            if yes:
                self.memory.forget(m.id)
                self.notify(f"forgot {m.id[:8]}", timeout=4)
                self.refresh_memory_counts()

        self.push_screen(YesNoModal(f"Delete Megram {m.id} ({m.content[:60]})? This cannot be undone."), done)

    def clear_view(self) -> None:
        """/clear: an empty bus, result pane and pipeline line (the tasks stay in History)."""
        from agentui.ui.widgets import PipelineLine

        if self.current:
            self.notify("a task is running — Esc aborts it first", severity="warning")
            return
        self.query_one(BusView).clear()
        self.show_bus_title()
        self.query_one(ResultPanel).copy_text = ""
        self.query_one(ResultPanel).update("[dim]no result yet[/dim]")
        self.query_one(PipelineLine).reset()
        self.task_envs = []

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Textual's own Theme (every built-in theme, unchecked for contrast), Keys (a second help)
        # and Quit (skips stopping the runtime) are replaced by ours below
        for cmd in super().get_system_commands(screen):  # type: ignore[misc]
            if cmd.title not in ("Theme", "Keys", "Quit"):
                yield cmd
        yield SystemCommand("Help & glossary", "Keys, and what D, P, ∇L, Ω, L and M/K/C/T mean (F1)", self.action_help)
        yield SystemCommand("Abort task", "Cancel the running task (Esc)", self.action_abort)
        yield SystemCommand("Copy the final answer", "To the clipboard (Ctrl+Y)", self.action_copy_answer)
        yield SystemCommand("Memory browser", "Browse, filter, remember, forget Megrams (Ctrl+O)", self.action_memory)
        yield SystemCommand("Memory the plan used", "The Megrams the last task's plans were made with, to forget "
                            "a bad lesson", self.action_plan_memory)
        yield SystemCommand("Task detail", "Subtasks, verdicts, gap trajectory, rounds (Ctrl+D)",
                            self.action_task_detail)
        yield SystemCommand("Audit reports", "The Auditor's reports and events (Ctrl+R)", self.action_audit)
        yield SystemCommand("History", "Past tasks: replay one, continue its session or run its goal again (Ctrl+G)",
                            self.action_history)
        yield SystemCommand("Settings", "Endpoint, models, API key, theme, workspace (Ctrl+S)", self.action_settings)
        yield SystemCommand("Open a message", "Pick a recent bus message and see its payload (Ctrl+L)",
                            self.action_open_message)
        yield SystemCommand("Filter bus", "Show only matching bus lines (Ctrl+F)", self.action_filter)
        for name in self.theme_names:
            yield SystemCommand(f"Theme: {name}", "Use this theme (Ctrl+T cycles)", lambda n=name: self.set_theme(n))
        yield SystemCommand("Quit", "Stop the runtime and quit (Ctrl+Q)", self.action_quit_app)
