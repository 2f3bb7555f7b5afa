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
from textual.containers import VerticalScroll
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, RichLog, Static

from agentui.contracts import AuditEvent, AuditReport, Envelope, FinalResult
from agentui.describe import line
from agentui.ui.lines import PipelineLine, StageLine, sparkline  # noqa: F401 - re-exported
from agentui.ui.palette import colour, type_style


class TaskInput(Input):
    """One task per submit; a multi-line paste stays one task; ↑/↓ walk the history."""

    BINDINGS = [Binding("up", "history(-1)", "Previous goal", show=False),
                Binding("down", "history(1)", "Next goal", show=False),
                Binding("tab", "complete", "Complete", show=False)]

    def __init__(self, **kw: Any) -> None:
        super().__init__(placeholder="Type a goal and press Enter · /commands · @file attaches · F1 help", **kw)
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

    def action_complete(self) -> None:
        """Tab takes the ghost-text completion (a `/` command, an `@path`); without one it moves on."""
        if self._suggestion and len(self._suggestion) > len(self.value) and self.cursor_at_end:
            self._take_suggestion()
        else:
            self.screen.focus_next()

    def _take_suggestion(self) -> None:
        from agentui.ui.commands import quote_completion

        self.value = quote_completion(self.value, self._suggestion)
        self.cursor_position = len(self.value)

    def action_cursor_right(self, select: bool = False) -> None:
        """→ at the end takes the completion as Tab does (a name with a space comes quoted)."""
        if not select and self.cursor_at_end and self._suggestion:
            self._take_suggestion()
        else:
            super().action_cursor_right(select)

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
        Binding("c", "copy", "Copy line"),
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "move(-20)", "Page up", show=False),
        Binding("pagedown", "move(20)", "Page down", show=False),
        Binding("home,g", "first", "First", show=False),
        Binding("end,G", "last", "Last (follow)", show=False),
    ]
    COMPONENT_CLASSES = {"bus-view--cursor"}
    DEFAULT_CSS = """
    BusView { background: $surface 0%; overflow-x: hidden; }
    BusView > .bus-view--cursor { background: $accent 35%; }
    """

    class Opened(Message):
        def __init__(self, env: Envelope) -> None:
            super().__init__()
            self.env = env

    class Copy(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

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
    def format_env(self, env: Envelope) -> Text:
        theme = self.app.current_theme
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f"{env.sender.value}→{env.receiver.value} ", style=type_style(theme, "TaskStarted"))
        t.append(env.type, style=type_style(theme, env.type))
        t.append(": " + line(env).split(": ", 1)[-1])
        return t

    def add(self, env: Envelope) -> None:
        self.add_many([env])

    def add_many(self, envs: list[Envelope]) -> None:
        """One layout update per batch, whatever its size."""
        envs = [e for e in envs if e.type not in UNLISTED]
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
        # lines are cut with "…" to the width: never a horizontal scrollbar over the newest lines
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.rows))
        if self.cursor < 0:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
            # the new virtual size counts after the next layout: follow the end again then
            self.call_after_refresh(self._follow_end)
        self.refresh()

    def _follow_end(self) -> None:
        if self.cursor < 0 and self.scroll_offset.y < self.max_scroll_y:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

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

    def action_copy(self) -> None:
        env = self.selected
        self.post_message(self.Copy(line(env) if env is not None else ""))

    def on_click(self, event: events.Click) -> None:
        row = int(self.scroll_offset.y + event.y)
        if 0 <= row < len(self.rows):
            self.cursor = -1 if row == len(self.rows) - 1 else row
            self.refresh()
            if event.chain >= 2:
                self.action_open()

    def on_focus(self) -> None:
        self.refresh()

    def on_resize(self) -> None:
        self._resize()  # a layout change (narrow screen, filter box) keeps the newest line in view

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


class AuditFeed(RichLog):
    def __init__(self, **kw: Any) -> None:
        # min_width=1: lines wrap to the pane (the default 78 cut them at the pane's edge)
        super().__init__(max_lines=500, wrap=True, markup=True, min_width=1, **kw)
        self.items: deque[AuditEvent | AuditReport] = deque(maxlen=500)
        self.drawn_width = 0

    #: narrower than this the pane is hidden or squeezed: a line written now would wrap a letter a row
    #: and stay that way, so it waits for the next resize
    MIN_DRAW_WIDTH = 10

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._rethemed)

    def on_resize(self, _event: Any) -> None:
        """Lines are wrapped when written: redraw them at the pane's new width (written while the pane
        was hidden at 80×24, they read one letter a row once the window grew)."""
        width = self.scrollable_content_region.width
        if width != self.drawn_width and width >= self.MIN_DRAW_WIDTH:
            self._redraw()

    def _rethemed(self, _theme: Any) -> None:
        """Lines are coloured when written: redraw them in the new theme (dark's #ffd75f warning
        stayed on the light background, 1.3:1)."""
        self._redraw()

    def _redraw(self) -> None:
        items = list(self.items)
        self.clear()
        self.items.clear()
        for item in items:
            self.add(item)

    def add(self, item: AuditEvent | AuditReport) -> None:
        self.items.append(item)
        width = self.scrollable_content_region.width
        if width < self.MIN_DRAW_WIDTH:  # hidden: drawn by the next resize
            self.drawn_width = 0
            return
        self.drawn_width = width
        theme = self.app.current_theme
        if isinstance(item, AuditEvent):
            c = colour(theme, {"critical": "error", "warning": "warning"}.get(item.severity.value, "muted"))
            self.write(f"[{c}]{item.severity.value} {item.kind.value}[/] {escape(item.message)}")
        else:
            self.write(f"[{colour(theme, 'muted')}]report: {escape(item.summary)}[/]")


#: never listed in the bus pane: a role's text as it is generated (up to ten messages a second) is
#: shown in the result pane instead — listed, it would push the messages out of the pane's history
UNLISTED = frozenset({"LLMDelta"})


class ResultBox(VerticalScroll):
    """The result pane's scroller: a scrollbar, and its title says when text is out of sight (at 80×24 the cost
    table's last rows are below the fold)."""

    can_focus = True  # Tab reaches it; ↑ ↓ PgUp PgDn then scroll

    def __init__(self, *children: Any, title_id: str, **kw: Any) -> None:
        super().__init__(*children, **kw)
        self.title_id = title_id

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.update_hint()

    def on_resize(self) -> None:
        self.call_after_refresh(self.update_hint)

    def hint(self) -> str:
        below = self.max_scroll_y - round(self.scroll_y)
        above = round(self.scroll_y)
        if below <= 0 and above <= 0:
            return ""
        parts = ([f"↑ {above} line(s) above"] if above > 0 else []) + ([f"↓ {below} more"] if below > 0 else [])
        return " · ".join(parts) + " — scroll (wheel, or Tab here and ↑ ↓)"

    def update_hint(self) -> None:
        hint = self.hint()
        for title in self.screen.query(f"#{self.title_id}"):
            title.update("[b]result[/b]" + (f" [dim]· {hint}[/]" if hint else ""))


def _checked_by(run: Any) -> str:
    """One check as the result's evidence: its command and what it printed (one line, cut)."""
    from agentui.tools.safety import one_line

    cmd = escape(one_line(run.command, 120))
    if not run.ran:
        return f"[dim]check[/dim] `{cmd}` [dim]could not run:[/dim] {escape(one_line(run.error, 120))}"
    out = one_line(" ".join(run.output.split()) or "(no output)", 120)
    return f"[dim]checked by[/dim] `{cmd}` → {escape(out)}" + (
        f" [dim](exit {run.exit_code})[/dim]" if run.exit_code not in (0, None) else "")


class ResultPanel(Static):
    copy_text = ""  # the final answer as plain text, for Ctrl+Y / copy
    LIVE_CHARS = 600  # of a reply being generated, the newest this many characters…
    LIVE_LINES = 8  # …in at most this many lines: at 80×24 the pane has few rows

    def show_live(self, who: str, text: str, *, chars: int, done: bool) -> None:
        """A role's reply while it is generated (the task's result replaces it): the newest text,
        which the pane keeps in view."""
        tail = text[-self.LIVE_CHARS:]
        lines = tail.splitlines()[-self.LIVE_LINES:] or [""]
        cut = len(text) > len(tail) or len(tail.splitlines()) > len(lines)
        muted = colour(self.app.current_theme, "muted")
        state = f"wrote {chars:,} characters" if done else f"is writing… {chars:,} characters"
        self.update(Text.assemble((f"live · {who} {state}", muted), "\n", ("…" if cut else "") + "\n".join(lines)))

    def update(self, content: Any = "", *, layout: bool = True) -> None:
        super().update(content, layout=layout)
        box = self.parent
        if isinstance(box, ResultBox):  # the new text may (no longer) overflow the pane
            self.call_after_refresh(box.update_hint)

    def show_final(self, f: FinalResult, stats: dict[str, Any], lessons: int = 0,
                   checks: list[Any] | None = None) -> None:
        """`checks`: the task's checks as they ran (roles.checks.CheckRun); each is named, with what
        it printed, as the evidence under the answer."""
        c = colour(self.app.current_theme, "success" if f.directive.value in ("accept", "success") else "error")
        out = f.output if isinstance(f.output, str) else (str(f.output) if f.output is not None else "")
        answer = getattr(f, "answer", None)  # the single answer as a sentence, when the result has one
        self.copy_text = answer or out or f.summary
        parts = []
        if answer:  # the answer first; how it was checked follows as evidence
            parts.append(f"[b]{escape(answer)}[/b]")
            parts.extend(_checked_by(run) for run in checks or [])
            parts.append(("" if checks else "[dim]checked by[/dim] ")
                         + f"[b {c}]{f.directive.value}[/] after {f.replans} replan(s): {escape(f.summary)}")
        else:
            parts.append(f"[b {c}]{f.directive.value}[/] after {f.replans} replan(s): {escape(f.summary)}")
            parts.extend(_checked_by(run) for run in checks or [])
        if out and out.strip() != (answer or "").strip():
            parts.append(escape(out[:2000]))
        if f.partial_result:
            parts.append("[b]partial:[/b] " + escape(str(f.partial_result)[:600]))
        parts.extend(f"→ {escape(m)}" for m in f.next_moves)
        if lessons:  # memory helping or hurting is one key away
            parts.append(f"[dim]planned with {lessons} Megram(s) from memory — Ctrl+D lists them[/dim]")
        self.update(self._with_costs("\n".join(parts), stats))

    def show_text(self, text: str, stats: dict[str, Any] | None = None) -> None:
        self.copy_text = text
        self.update(self._with_costs(escape(text), stats or {}))

    def _with_costs(self, head: str, stats: dict[str, Any]) -> Any:
        from rich.console import Group

        self.stats = stats  # what the cost table shows (tests read it)

        if not stats.get("by_role"):
            return Text.from_markup(head)
        t = Table(box=None, header_style="bold", pad_edge=False)
        # numbers are never cut: only the role name gives way (with "…") on a narrow screen
        for col in ("role", "calls", "in", "out", "s", "rep"):
            if col == "role":
                t.add_column(col, justify="left", overflow="ellipsis", no_wrap=True, min_width=5)
            else:
                t.add_column(col, justify="right", no_wrap=True)
        for role, r in stats["by_role"].items():
            t.add_row(role, str(r.get("calls", 0)), str(r.get("prompt_tokens", 0)), str(r.get("completion_tokens", 0)),
                      f"{r.get('seconds', 0.0):.1f}", str(r.get("parse_repairs", 0)))
        t.add_row("tools", str(stats.get("tool_calls", 0)), "", "", f"{stats.get('tool_seconds', 0):.1f}", "")
        muted = colour(self.app.current_theme, "muted")
        roles = stats["by_role"].values()
        # the totals first: at 80×24 the table's last rows are below the fold
        total = Text(f"total {sum(r.get('calls', 0) for r in roles)} calls · "
                     f"{sum(r.get('prompt_tokens', 0) for r in roles):,}↑ "
                     f"{sum(r.get('completion_tokens', 0) for r in roles):,}↓ tok · "
                     f"{stats.get('tool_calls', 0)} tools · {stats.get('wall_s', 0):.1f} s · table below",
                     style=muted, no_wrap=True, overflow="ellipsis")
        return Group(Text.from_markup(head), total, t, Text(f"wall {stats.get('wall_s', 0):.1f} s", style=muted))
