"""AgentApp's actions: keys, the command palette's entries, quitting and retrying the LLM."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable

from textual.app import SystemCommand
from textual.screen import Screen
from textual.widgets import Input

from agentui.ui.modals import PayloadModal, YesNoModal
from agentui.ui.screens import AuditScreen, HelpScreen, MemoryScreen, TaskDetailScreen
from agentui.ui.widgets import BusView, TaskInput


class Actions:
    """Mixin for AgentApp: one method per key binding / palette command."""

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
