"""Main-screen widgets: the bus stream, the pipeline line, the stage spinner, the audit feed, the
result panel and the task input."""

from __future__ import annotations

from collections import deque
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, RichLog, Static

from agentui.contracts import AuditEvent, AuditReport, Envelope, FinalResult, PlanDirective
from agentui.describe import STYLE, grad_arrow, line

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPARK = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float]) -> str:
    if not values:
        return ""
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    return "".join(SPARK[min(7, int((v - lo) / span * 7))] for v in values)


class TaskInput(Input):
    """One task per submit; a multi-line paste stays one task; ↑/↓ walk the history."""

    BINDINGS = [("up", "history(-1)", "Previous task"), ("down", "history(1)", "Next task")]

    def __init__(self, **kw: Any) -> None:
        super().__init__(placeholder="Type a goal and press Enter  (F1 help · Ctrl+P commands)", **kw)
        self.history: list[str] = []
        self._pos = 0

    def _on_paste(self, event: events.Paste) -> None:
        if event.text:
            text = " ".join(part.strip() for part in event.text.splitlines() if part.strip())
            self.insert_text_at_cursor(text)
        event.stop()

    async def _on_key(self, event: events.Key) -> None:
        if event.character == "?" and not self.value:  # `?` on an empty input is help, not text
            event.stop()
            event.prevent_default()
            self.app.action_help()  # type: ignore[attr-defined]
            return
        await super()._on_key(event)

    def remember(self, text: str) -> None:
        if text and (not self.history or self.history[-1] != text):
            self.history.append(text)
        self._pos = len(self.history)

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        self._pos = max(0, min(len(self.history), self._pos + step))
        self.value = self.history[self._pos] if self._pos < len(self.history) else ""
        self.cursor_position = len(self.value)


class BusView(ScrollView, can_focus=True):
    """One line per envelope, colour per type, bounded, filterable, with a line cursor: ↑/↓ pick a
    line, Enter opens its full payload. Line API: only the rows on screen are rendered, so a flood
    of thousands of messages a second costs a list append each (DESIGN §8)."""

    BINDINGS = [
        Binding("enter", "open", "Open payload"),
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "move(-20)", "Page up", show=False),
        Binding("pagedown", "move(20)", "Page down", show=False),
        Binding("home,g", "first", "First", show=False),
        Binding("end,G", "last", "Last (follow)", show=False),
    ]
    COMPONENT_CLASSES = {"bus-view--cursor"}
    DEFAULT_CSS = """
    BusView { background: $surface 0%; }
    BusView > .bus-view--cursor { background: $accent 35%; }
    """

    class Opened(Message):
        def __init__(self, env: Envelope) -> None:
            super().__init__()
            self.env = env

    def __init__(self, limit: int = 2000, **kw: Any) -> None:
        super().__init__(**kw)
        self.limit = max(10, limit)
        self.envs: deque[Envelope] = deque(maxlen=self.limit)  # everything, filtered or not
        self.rows: list[Envelope] = []  # what the filter lets through, oldest first
        self.cursor = -1  # index into rows; -1 = follow the newest line
        self.filter = ""
        self.hidden_types = {"LLMUsage"}
        self._terms: list[tuple[str, str]] = []
        self._strips: dict[tuple[str, int, bool, str], Strip] = {}

    # -- filtering ----------------------------------------------------------------------------
    def _visible(self, env: Envelope) -> bool:
        asked_types = [v for k, v in self._terms if k == "type"]
        if env.type in self.hidden_types and not any(v in env.type.casefold() for v in asked_types):
            return False
        for key, val in self._terms:
            if key == "type":
                ok = val in env.type.casefold()
            elif key == "role":
                ok = val in env.sender.value or val in env.receiver.value
            elif key == "from":
                ok = val in env.sender.value
            elif key == "to":
                ok = val in env.receiver.value
            elif key == "task":
                ok = val in (env.task_id or "").casefold()
            else:
                ok = val in line(env).casefold()
            if not ok:
                return False
        return True

    def set_filter(self, text: str) -> None:
        """`role:ggs type:PlanDirective from:x to:y task:id` and free text, all must match."""
        self.filter = text.strip()
        self._terms = []
        for tok in self.filter.split():
            key, sep, val = tok.partition(":")
            if sep and val and key.casefold() in ("role", "type", "from", "to", "task"):
                self._terms.append((key.casefold(), val.casefold()))
            else:
                self._terms.append(("text", tok.casefold()))
        self.rows = [e for e in self.envs if self._visible(e)]
        self.cursor = -1
        self._resize()

    # -- feeding ------------------------------------------------------------------------------
    @staticmethod
    def format_env(env: Envelope) -> Text:
        style = STYLE.get(env.type, "")
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f"{env.sender.value}→{env.receiver.value} ", style="dim")
        t.append(env.type, style=style or "bold")
        t.append(": " + line(env).split(": ", 1)[-1])
        return t

    def add(self, env: Envelope) -> None:
        self.add_many([env])

    def add_many(self, envs: list[Envelope]) -> None:
        """One layout update per batch, whatever its size."""
        self.envs.extend(envs)
        vis = [e for e in envs if self._visible(e)]
        if not vis:
            return
        self.rows.extend(vis)
        over = len(self.rows) - self.limit
        if over > 0:
            del self.rows[:over]
            if self.cursor >= 0:
                self.cursor = max(0, self.cursor - over)
        self._resize()

    def clear(self) -> None:
        self.envs.clear()
        self.rows = []
        self.cursor = -1
        self._resize()

    def shown(self) -> list[Envelope]:
        return list(self.rows)

    def _resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows))
        if self.cursor < 0:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        self.refresh()

    # -- cursor -------------------------------------------------------------------------------
    @property
    def selected(self) -> Envelope | None:
        if not self.rows:
            return None
        i = self.cursor if self.cursor >= 0 else len(self.rows) - 1
        return self.rows[min(i, len(self.rows) - 1)]

    def _show_cursor(self) -> None:
        i = self.cursor if self.cursor >= 0 else len(self.rows) - 1
        self.scroll_to_region(Region(0, i, 1, 1), animate=False, immediate=True, force=True)
        self.refresh()

    def action_move(self, step: int) -> None:
        if not self.rows:
            return
        i = self.cursor if self.cursor >= 0 else len(self.rows) - 1
        i = max(0, min(len(self.rows) - 1, i + step))
        self.cursor = -1 if i == len(self.rows) - 1 and step > 0 else i
        self._show_cursor()

    def action_first(self) -> None:
        if self.rows:
            self.cursor = 0
            self._show_cursor()

    def action_last(self) -> None:
        self.cursor = -1
        self._resize()

    def action_open(self) -> None:
        env = self.selected
        if env is not None:
            self.post_message(self.Opened(env))

    def on_click(self, event: events.Click) -> None:
        row = int(self.scroll_offset.y + event.y)
        if 0 <= row < len(self.rows):
            self.cursor = -1 if row == len(self.rows) - 1 else row
            self.refresh()
            if event.chain >= 2:
                self.action_open()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # -- painting -----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        row = int(self.scroll_offset.y) + y
        if row >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        env = self.rows[row]
        cur = self.cursor if self.cursor >= 0 else len(self.rows) - 1
        selected = row == cur and self.has_focus
        key = (env.id, width, selected, self.app.theme)
        strip = self._strips.get(key)
        if strip is None:  # a flood scrolls every line each frame: render each envelope once
            text = self.format_env(env)
            text.truncate(max(1, width), overflow="ellipsis")
            if selected:
                text.stylize(self.get_component_rich_style("bus-view--cursor"))
            strip = Strip(text.render(self.app.console), text.cell_len)
            strip = strip.extend_cell_length(width, self.rich_style).apply_style(self.rich_style)
            if len(self._strips) > 4 * max(50, self.size.height):
                self._strips.clear()
            self._strips[key] = strip
        return strip


class PipelineLine(Static):
    """`prev→directive ∇L-arrow D P ∇L Ω` and a sparkline of L across the task's rounds."""

    def on_mount(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.losses: list[float] = []
        self.update("[dim]pipeline: idle — D P ∇L Ω appear on every PlanDirective and FinalResult[/dim]")

    def show(self, p: PlanDirective | FinalResult) -> None:
        self.losses.append(p.loss.L)
        first = p.prev_directive.value == "init"
        arrow = grad_arrow(p.grad_l, first=first)
        colour = {"accept": "green", "success": "green", "abandon": "red"}.get(p.directive.value, "magenta")
        self.update(
            f"[b]{p.prev_directive.value}→[{colour}]{p.directive.value}[/{colour}][/b] {arrow}  "
            f"D [b]{p.loss.D:.2f}[/b]  P [b]{p.loss.P:.2f}[/b]  ∇L [b]{p.grad_l:+.2f}[/b]  "
            f"Ω [b]{p.loss.Omega:.2f}[/b]  L {p.loss.L:.2f}  [cyan]{sparkline(self.losses)}[/cyan]"
        )


class StageLine(Static):
    """Spinner + the current stage; while R2 replans, GGS's rationale."""

    stage: reactive[str] = reactive("idle")
    busy: reactive[bool] = reactive(False)

    def __init__(self, animate: bool = True, **kw: Any) -> None:
        super().__init__(**kw)
        self.spinning = animate
        self._frame = 0
        self._shown = ""
        self.rationale = ""

    def on_mount(self) -> None:
        if self.spinning:
            self.set_interval(0.1, self._tick)
        self._paint()

    def _tick(self) -> None:
        if self.busy:
            self._frame = (self._frame + 1) % len(SPINNER)
            self._paint()

    def watch_stage(self) -> None:
        self._paint()

    def watch_busy(self) -> None:
        self._paint()

    def _paint(self) -> None:
        spin = SPINNER[self._frame] if self.busy else "·"
        text = f"{spin} {escape(self.stage)}"
        if self.rationale and self.busy:
            text += f"\n  [i dim]{escape(self.rationale[:300])}[/i dim]"
        if text != self._shown:  # an update re-lays out the screen: skip it when nothing changed
            self._shown = text
            self.update(text)


class AuditFeed(RichLog):
    def __init__(self, **kw: Any) -> None:
        super().__init__(max_lines=500, wrap=True, markup=True, **kw)

    def add(self, item: AuditEvent | AuditReport) -> None:
        if isinstance(item, AuditEvent):
            colour = {"critical": "red", "warning": "yellow", "info": "dim"}.get(item.severity.value, "")
            self.write(f"[{colour}]{item.severity.value} {item.kind.value}[/{colour}] {escape(item.message)}")
        else:
            self.write(f"[dim]report: {escape(item.summary)}[/dim]")


class ResultPanel(Static):
    def show_final(self, f: FinalResult, stats: dict[str, Any]) -> None:
        colour = "green" if f.directive.value in ("accept", "success") else "red"
        out = f.output if isinstance(f.output, str) else (str(f.output) if f.output is not None else "")
        parts = [f"[b {colour}]{f.directive.value}[/] after {f.replans} replan(s): {escape(f.summary)}"]
        if out:
            parts.append(escape(out[:2000]))
        if f.partial_result:
            parts.append("[b]partial:[/b] " + escape(str(f.partial_result)[:600]))
        parts.extend(f"→ {escape(m)}" for m in f.next_moves)
        self.update(self._with_costs("\n".join(parts), stats))

    def show_text(self, text: str, stats: dict[str, Any] | None = None) -> None:
        self.update(self._with_costs(escape(text), stats or {}))

    def _with_costs(self, head: str, stats: dict[str, Any]) -> Any:
        from rich.console import Group

        self.stats = stats  # what the cost table shows (tests read it)

        if not stats.get("by_role"):
            return Text.from_markup(head)
        t = Table(box=None, header_style="bold", pad_edge=False)
        for col in ("role", "calls", "in", "out", "s", "rep"):
            t.add_column(col, justify="left" if col == "role" else "right")
        for role, r in stats["by_role"].items():
            t.add_row(role, str(r["calls"]), str(r["prompt_tokens"]), str(r["completion_tokens"]),
                      f"{r['seconds']:.1f}", str(r["parse_repairs"]))
        t.add_row("tools", str(stats.get("tool_calls", 0)), "", "", f"{stats.get('tool_seconds', 0):.1f}", "")
        return Group(Text.from_markup(head), t, Text(f"wall {stats.get('wall_s', 0):.1f} s", style="dim"))
