"""Main-screen widgets: the bus stream, the pipeline line, the stage spinner, the audit feed, the
result panel and the task input."""

from __future__ import annotations

from collections import deque
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
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


class BusView(RichLog):
    """One line per envelope, colour per type, bounded, filterable. A RichLog, because it streams
    thousands of lines a second cheaply; Enter opens a picker over the recent lines, and the
    chosen line opens its full payload."""

    BINDINGS = [("enter", "pick", "Open a message")]

    class Opened(Message):
        def __init__(self, env: Envelope) -> None:
            super().__init__()
            self.env = env

    def __init__(self, limit: int = 2000, **kw: Any) -> None:
        super().__init__(max_lines=limit, wrap=False, markup=False, auto_scroll=True, **kw)
        self.can_focus = True
        self.limit = limit
        self.envs: deque[Envelope] = deque(maxlen=limit)
        self.filter = ""
        self.hidden_types = {"LLMUsage"}

    def _visible(self, env: Envelope) -> bool:
        if env.type in self.hidden_types:
            return False
        if not self.filter:
            return True
        f = self.filter.casefold()
        return any(f in s.casefold() for s in (env.type, env.sender.value, env.receiver.value, line(env)))

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
        """One write per batch. In a flood, only the lines that can still be on screen are drawn;
        the rest stay in the history (filter and the Enter picker show them) behind a marker."""
        self.envs.extend(envs)
        vis = [e for e in envs if self._visible(e)]
        if not vis:
            return
        room = max(10, self.size.height or 40)
        block = Text(no_wrap=True, overflow="ellipsis")
        if len(vis) > room:
            block.append(f"… {len(vis) - room} more message(s) — Enter lists them\n", style="dim italic")
            vis = vis[-room:]
        for i, e in enumerate(vis):
            if i:
                block.append("\n")
            block.append_text(self.format_env(e))
        self.write(block)

    def shown(self) -> list[Envelope]:
        return [e for e in self.envs if self._visible(e)]

    def set_filter(self, text: str) -> None:
        self.filter = text.strip()
        self.clear()
        for e in self.shown():
            self.write(self.format_env(e))

    def action_pick(self) -> None:
        from agentui.ui.modals import BusPicker

        recent = self.shown()[-500:]
        if not recent:
            return

        def chosen(env: Envelope | None) -> None:
            if env is not None:
                self.post_message(self.Opened(env))

        self.app.push_screen(BusPicker(recent), chosen)


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
        self.animate = animate
        self._frame = 0
        self.rationale = ""

    def on_mount(self) -> None:
        if self.animate:
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

    @staticmethod
    def _with_costs(head: str, stats: dict[str, Any]) -> Any:
        from rich.console import Group

        if not stats.get("by_role"):
            return Text.from_markup(head)
        t = Table(box=None, header_style="bold", pad_edge=False)
        for col in ("role", "calls", "tokens in", "out", "s", "repairs"):
            t.add_column(col, justify="left" if col == "role" else "right")
        for role, r in stats["by_role"].items():
            t.add_row(role, str(r["calls"]), str(r["prompt_tokens"]), str(r["completion_tokens"]),
                      f"{r['seconds']:.1f}", str(r["parse_repairs"]))
        t.add_row("tools", str(stats.get("tool_calls", 0)), "", "", f"{stats.get('tool_seconds', 0):.1f}", "")
        return Group(Text.from_markup(head), t, Text(f"wall {stats.get('wall_s', 0):.1f} s", style="dim"))
