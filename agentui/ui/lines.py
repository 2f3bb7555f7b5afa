"""The two status lines under the bus: GGS's pipeline line (directive, D, P, ∇L, Ω, L, a sparkline
of L — each field with its glossary tooltip) and the stage line (spinner, stage, elapsed time per
stage and per task, the running task's LLM calls, tokens in/out and tool calls)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.widgets import Static

from agentui.contracts import FinalResult, PlanDirective
from agentui.describe import grad_arrow
from agentui.ui.glossary import tooltip

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
SPARK = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float]) -> str:
    if not values:
        return ""
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    return "".join(SPARK[min(7, int((v - lo) / span * 7))] for v in values)


def human_tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else f"{n:,}"


def human_seconds(s: float) -> str:
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(int(s), 60)
    return f"{m}m{sec:02d}s"


class PipelineLine(Horizontal):
    """`prev→directive ∇L-arrow  D  P  ∇L  Ω  L  sparkline`, one field per Static (each its tooltip)."""

    FIELDS = (("pl-dir", "directive"), ("pl-d", "D"), ("pl-p", "P"), ("pl-grad", "∇L"), ("pl-omega", "Ω"),
              ("pl-l", "L"))

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.losses: list[float] = []
        self.text = ""  # the line as plain text (tests, copy)

    def compose(self) -> ComposeResult:
        yield Static("", id="pl-note")
        for wid, term in self.FIELDS:
            s = Static("", id=wid, classes="pl-field")
            s.tooltip = tooltip(term)
            yield s
        yield Static("", id="pl-spark", classes="pl-field")

    def on_mount(self) -> None:
        self.reset()

    def _set(self, note: str, fields: dict[str, str] | None = None) -> None:
        fields = fields or {}
        self._fields = fields
        self.query_one("#pl-note", Static).update(note)
        self.query_one("#pl-note", Static).display = bool(note)
        for wid, _ in self.FIELDS:
            w = self.query_one(f"#{wid}", Static)
            w.update(fields.get(wid, ""))
            w.display = wid in fields
        spark = self.query_one("#pl-spark", Static)
        spark.update(fields.get("pl-spark", ""))
        spark.display = "pl-spark" in fields
        self.text = " ".join(Content.from_markup(x).plain for x in [note, *fields.values()] if x)

    def reset(self) -> None:
        self.losses = []
        self._set("[dim]pipeline: no task yet — D P ∇L Ω appear after each round (F1 explains them)[/dim]")

    def running(self, round_no: int | None = None) -> None:
        """A task started: say so, never 'idle' while it runs (rounds count from 0, as on the bus)."""
        if not self.losses:
            which = "first round" if round_no is None else f"round {round_no}"
            self._set(f"[dim]pipeline: {which} running — GGS scores it when its subtasks finish[/dim]")

    def ended(self, how: str) -> None:
        """The task ended without a FinalResult (Esc, timeout): never leave "running" behind."""
        if self.losses:
            self._set(f"[dim]pipeline: {how} —[/dim]", self._fields)
        else:
            self._set(f"[dim]pipeline: {how} before GGS scored a round[/dim]")

    def show(self, p: PlanDirective | FinalResult) -> None:
        self.losses.append(p.loss.L)
        first = p.prev_directive.value == "init"
        arrow = grad_arrow(p.grad_l, first=first)
        colour = {"accept": "$success", "success": "$success", "abandon": "$error"}.get(p.directive.value, "$secondary")
        self._set("", {
            "pl-dir": f"[b]{p.prev_directive.value}→[{colour}]{p.directive.value}[/][/b] {arrow}",
            "pl-d": f"D [b]{p.loss.D:.2f}[/b]", "pl-p": f"P [b]{p.loss.P:.2f}[/b]",
            "pl-grad": f"∇L [b]{p.grad_l:+.2f}[/b]", "pl-omega": f"Ω [b]{p.loss.Omega:.2f}[/b]",
            "pl-l": f"L {p.loss.L:.2f}", "pl-spark": f"[$primary]{sparkline(self.losses)}[/]",
        })


def with_elapsed(stage: str, elapsed: str) -> str:
    """The stage with its elapsed time after its head ("running shell 2.4 s: sleep 8; wc -l
    notes.txt"): the command or subtask after the head is what a narrow line cuts, never the time."""
    cuts = [i for i in (stage.find(": "), stage.find(" — ")) if i > 0]
    if not cuts:
        return f"{stage} {elapsed}"
    i = min(cuts)
    return f"{stage[:i]} {elapsed}{stage[i:]}"


class StageLine(Static):
    """Spinner + the current stage and its elapsed time; on the right the task's clock, LLM calls,
    tokens in/out and tool calls; while R2 replans, GGS's rationale on a second line."""

    def __init__(self, animate: bool = True, now: Callable[[], float] | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.spinning = animate
        self.now = now or (lambda: 0.0)
        self._frame = 0
        self._shown: tuple[Any, ...] = ()
        self.stage = "starting…"
        self.busy = False
        self.rationale = ""
        self.stage_t0: float | None = None
        self.task_t0: float | None = None
        self.task_t1: float | None = None  # set when the task ended: its clock stops
        self.meter: dict[str, int] = {}
        self.text = ""
        self.seen: deque[str] = deque(maxlen=200)  # every stage asked for, batched or shown, oldest first

    def on_resize(self) -> None:
        self.paint()

    def on_mount(self) -> None:
        if self.spinning:
            self.set_interval(0.1, self._tick)
        self.paint()

    def _tick(self) -> None:
        if self.busy:
            self._frame = (self._frame + 1) % len(SPINNER)
            self.paint()

    def set_stage(self, text: str, *, busy: bool, rationale: str = "", clock: bool = True) -> None:
        """`clock=False`: the text counts its own seconds, so no elapsed time is added after it."""
        if text != self.stage or busy != self.busy:
            self.stage_t0 = self.now() if busy and clock else None
        self.stage, self.busy, self.rationale = text, busy, rationale
        self.paint()

    def start_task(self) -> None:
        self.task_t0, self.task_t1 = self.now(), None
        self.meter = {}

    def end_task(self) -> None:
        if self.task_t0 is not None and self.task_t1 is None:
            self.task_t1 = self.now()

    def meter_text(self) -> str:
        if self.task_t0 is None:
            return ""
        end = self.task_t1 if self.task_t1 is not None else self.now()
        m = self.meter
        t = human_seconds(max(0.0, end - self.task_t0))
        tin, tout = human_tokens(m.get("in", 0)), human_tokens(m.get("out", 0))
        if self.size.width and self.size.width < 110:  # 80 columns: the stage keeps room
            return f"task {t} · {m.get('calls', 0)} calls · {tin}↑ {tout}↓ tok · {m.get('tools', 0)} tools"
        return (f"task {t} · {m.get('calls', 0)} LLM calls · {tin} in / {tout} out tokens · "
                f"{m.get('tools', 0)} tool calls")

    def paint(self) -> None:
        spin = SPINNER[self._frame] if self.busy else "·"
        stage = f"{spin} {self.stage}"
        if self.busy and self.stage_t0 is not None:
            stage = f"{spin} {with_elapsed(self.stage, human_seconds(max(0.0, self.now() - self.stage_t0)))}"
        meter = self.meter_text()
        key = (stage, meter, self.rationale if self.busy else "")
        if key == self._shown:  # an update re-lays out the screen: skip it when nothing changed
            return
        self._shown = key
        self.text = f"{stage}  {meter}".rstrip()
        grid = Table.grid(expand=True)
        grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        grid.add_column(justify="right", no_wrap=True, overflow="ellipsis")
        grid.add_row(Text(stage), Text("  " + meter if meter else ""))  # never glued to a cut stage
        if self.rationale and self.busy:
            grid.add_row(Text("  " + self.rationale[:300], style="italic", overflow="ellipsis", no_wrap=True), "")
        self.update(grid)
