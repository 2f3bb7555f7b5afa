"""Sessions: past tasks from the data dir (agentui.history) — open one as a replay with its result
and cost table, continue its session with a follow-up, or run its goal again."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from agentui.contracts import FinalResult, PerceiverReply, TaskCancelled
from agentui.history import TaskRecord, list_tasks, load_envelopes
from agentui.paths import DataLayout
from agentui.ui.lines import human_seconds, human_tokens
from agentui.ui.markup import escape
from agentui.ui.status import short_path
from agentui.ui.widgets import BusView, ResultPanel


def _when(iso_ts: str, now: datetime) -> str:
    from agentui.clock import parse_iso

    if not iso_ts:
        return "?"
    try:
        t = parse_iso(iso_ts)
    except ValueError:
        return iso_ts[:16]
    return t.strftime("%H:%M:%S") if t.date() == now.date() else t.strftime("%Y-%m-%d %H:%M")


def _clip(s: str, n: int) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


class HistoryScreen(Screen[tuple[str, Any] | None]):
    """Past tasks, newest first. Enter opens one as a replay; r runs its goal again; o continues its
    session (the next goal typed is a follow-up of it)."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("enter", "open", "Replay", priority=True),
        Binding("o", "continue_session", "Continue",
                tooltip="continue this task's session: the next goal follows up on it"),
        Binding("r", "rerun", "Run again"),
        # in the detail line and Help, not the footer: 80 columns hold the others
        Binding("c", "copy_goal", "Copy", tooltip="copy the goal of the selected task", show=False),
        Binding("g", "refresh", "Refresh", show=False),  # in Help; the footer fits 80 columns
    ]
    LIMIT = 200

    def __init__(self, layout: DataLayout, clock: Any) -> None:
        super().__init__()
        self.data_layout = layout
        self.clock = clock
        self.records: list[TaskRecord] = []

    def compose(self) -> ComposeResult:
        yield Static("[b]History[/b] — reading past tasks…", id="hist-title")
        yield DataTable(id="hist-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="hist-detail")
        yield Footer(compact=True)  # 80 columns: room for every key

    def on_mount(self) -> None:
        t = self.query_one(DataTable)
        t.add_columns("when", "goal", "outcome", "calls", "tokens", "wall", "workspace")
        t.focus()
        self.action_refresh()

    @work(exclusive=True, group="history", exit_on_error=False, description="reading task logs")
    async def action_refresh(self) -> None:
        import asyncio

        try:
            recs = await asyncio.to_thread(list_tasks, self.data_layout, limit=self.LIMIT)
        except OSError as e:
            self.notify(f"cannot read {self.data_layout.tasks_dir}: {e}", severity="error")
            recs = []
        self.fill(recs)

    def fill(self, recs: list[TaskRecord]) -> None:
        self.records = recs
        t = self.query_one(DataTable)
        t.clear()
        now = self.clock.now()
        for r in recs:
            t.add_row(*(Text(c) for c in (  # Text: a goal's "[x]" is not markup
                _when(r.started, now), _clip(r.goal or "(no goal recorded)", 48), r.outcome, str(r.llm_calls),
                human_tokens(r.tokens), human_seconds(r.wall_s), _clip(short_path(r.workspace), 30))),
                key=r.task_id)
        self.query_one("#hist-title", Static).update(
            f"[b]History[/b] — {len(recs)} past task(s) in {escape(str(self.data_layout.root))}"
            + ("" if recs else " · none yet: type a goal on the main screen"))
        self._show(self._selected())

    def _selected(self) -> TaskRecord | None:
        t = self.query_one(DataTable)
        if t.row_count == 0:
            return None
        try:
            key = t.coordinate_to_cell_key(t.cursor_coordinate).row_key.value
        except Exception:  # noqa: BLE001
            return None
        return next((r for r in self.records if r.task_id == key), None)

    def _show(self, r: TaskRecord | None) -> None:
        text = "" if r is None else (
            f"[b]{escape(r.task_id)}[/b] · {escape(r.outcome)} · {escape(_clip(r.summary, 160))}\n"
            f"goal: {escape(r.goal)}\nworkspace: {escape(r.workspace)} · Enter replays · o continues its session "
            "with a follow-up · r runs it again · c copies the goal")
        self.query_one("#hist-detail", Static).update(text)

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._show(self._selected())

    def action_open(self) -> None:
        r = self._selected()
        if r is None:
            return
        self.app.push_screen(ReplayScreen(r))

    def action_continue_session(self) -> None:
        r = self._selected()
        if r is not None:
            self.dismiss(("continue", r))

    def action_rerun(self) -> None:
        r = self._selected()
        if r is not None and r.goal:
            self.dismiss(("rerun", r.goal))

    def action_copy_goal(self) -> None:
        r = self._selected()
        if r is not None:
            self.app.copy_to_clipboard(r.goal)
            self.notify("copied the goal", timeout=3)


class ReplayScreen(Screen[None]):
    """One past task: its bus messages (Enter opens a payload), its result and its cost table."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back"), Binding("y", "copy_answer", "Copy answer"),
                Binding("d", "detail", "Task detail")]

    def __init__(self, rec: TaskRecord) -> None:
        super().__init__()
        self.rec = rec
        self.envs = load_envelopes(rec)

    def compose(self) -> ComposeResult:
        r = self.rec
        yield Static(f"[b]Replay[/b] of {escape(r.task_id)} · {escape(_clip(r.goal, 90))}", id="replay-title")
        with Horizontal(id="replay-main"):
            with Vertical(id="replay-left"):
                yield BusView(limit=5000, id="replay-bus")
            with VerticalScroll(id="replay-right"):
                yield ResultPanel("", id="replay-result")
        yield Footer(compact=True)  # 80 columns: room for every key

    def on_mount(self) -> None:
        bus = self.query_one(BusView)
        bus.add_many(self.envs)
        res = self.query_one(ResultPanel)
        r = self.rec
        stats = {"by_role": r.by_role, "tool_calls": r.tool_calls, "wall_s": r.wall_s}
        end = next((e.payload for e in reversed(self.envs)
                    if isinstance(e.payload, FinalResult | PerceiverReply | TaskCancelled)), None)
        if isinstance(end, FinalResult):  # with the checks its log records, as the live task showed them
            from agentui.roles.checks import logged

            res.show_final(end, stats, checks=logged(r.log) if r.log is not None else [])
        elif isinstance(end, PerceiverReply):
            res.show_text(end.text, stats)
        elif isinstance(end, TaskCancelled):
            res.show_text(f"cancelled: {end.reason}", stats)
        else:
            res.show_text(f"{r.outcome}: no result was recorded", stats)
        bus.focus()

    def on_bus_view_opened(self, event: BusView.Opened) -> None:
        from agentui.ui.modals import PayloadModal

        event.stop()
        self.app.push_screen(PayloadModal(event.env))

    def action_copy_answer(self) -> None:
        text = self.query_one(ResultPanel).copy_text
        self.app.copy_to_clipboard(text)
        self.notify(f"copied the final answer ({len(text)} characters)", timeout=3)

    def action_detail(self) -> None:
        from agentui.ui.screens import TaskDetailScreen

        self.app.push_screen(TaskDetailScreen([e for e in self.envs if e.type not in ("LLMUsage", "LLMDelta")]))
