"""Other screens: the Megram browser, task detail, audit reports, help."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from rich.markup import escape as rich_escape
from rich.text import Text
from rich.tree import Tree
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, RichLog, Static

from agentui.clock import parse_iso
from agentui.contracts import (
    AuditEvent,
    AuditReport,
    DispatchManifest,
    Envelope,
    ExecutionResult,
    FinalResult,
    Megram,
    PlanDirective,
    ReplanRequest,
    SubTask,
    SubTaskOutcome,
)
from agentui.ui.markup import escape
from agentui.ui.modals import PromptModal, YesNoModal, steady_cursors

COLUMNS = ("id", "level", "content", "space", "entity", "state", "f", "σ", "k", "age", "M_att", "M_dec", "action")


def live_potentials(m: Megram, now: datetime) -> tuple[float, float]:
    ref = parse_iso(m.last_recalled_at) if m.last_recalled_at else parse_iso(m.created_at)
    ref = max(ref, parse_iso(m.created_at))
    dt = max(0.0, (now - ref).total_seconds() / 86400)
    w = math.exp(-m.k * dt)
    return abs(m.f) * w, m.sigma * m.f * w


USER_SPACE = "user"  # the user-wide space every plan reads: where `agentui memory remember` writes too


def remember_rule(memory: Any, text: str) -> Any:
    """A hand-written rule, as `agentui memory remember TEXT` writes it: C level, space `user`."""
    return memory.remember(text, level="C", space=USER_SPACE, entity="env:local")


def short_id(mid: str) -> str:
    """`megram-000123` → `000123`; a uuid-style id → its first 8 characters."""
    return mid.removeprefix("megram-")[:8]


def _clip(s: str, n: int = 20) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _age(m: Megram, now: datetime) -> str:
    s = max(0.0, (now - parse_iso(m.created_at)).total_seconds())
    if s < 3600:
        return f"{s / 60:.0f}m"
    if s < 86400:
        return f"{s / 3600:.0f}h"
    return f"{s / 86400:.0f}d"


class MemoryScreen(Screen[None]):
    """The Megram browser: sort, filter (`level:C space:intent entity:path text`), detail pane,
    remember / forget / dream. Refreshes when GGS writes."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("slash", "focus_filter", "Filter"),
        Binding("c", "copy", "Copy", tooltip="copy the selected Megram"),
        Binding("s", "sort", "Sort", tooltip="sort by the next column"),
        Binding("r", "remember", "Remember"),
        Binding("f", "forget", "Forget"),
        Binding("d", "dream", "Dream"),
        Binding("g", "refresh", "Refresh", show=False),
        # still F1 / Ctrl+S (the app's priority keys run), just not in this footer: the browser's own
        # keys and Quit fill 80 columns
        Binding("f1", "app.help", "Help", show=False, priority=True),
        Binding("ctrl+s", "app.settings", "Settings", show=False, priority=True),
    ]

    def __init__(self, memory: Any, clock: Any, filter: str = "", *, ids: list[str] | None = None,
                 focus: str | None = None) -> None:
        super().__init__()
        self.memory = memory
        self.clock = clock
        self.rows: list[Megram] = []
        self.sort_col = 0
        self.filter = filter  # `/memory FILTER` opens the browser filtered
        self.ids = ids  # only these Megrams (the ones a task's plans used); None: all of them
        self.focus_id = focus  # the row the cursor starts on

    def compose(self) -> ComposeResult:
        yield Static("[b]Memory[/b] — MKCT Megrams", id="mem-title")
        yield Input(self.filter, placeholder="filter: level:C space:intent entity:path or any text", id="mem-filter")
        with Horizontal():
            yield DataTable(id="megrams", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="mem-detail-box"):
                yield Static("select a Megram", id="mem-detail")
        yield Footer(compact=True)  # 80 columns: room for every key

    def on_mount(self) -> None:
        t = self.query_one(DataTable)
        t.add_columns(*COLUMNS)
        steady_cursors(self)
        self.action_refresh()
        t.focus()

    def _matches(self, m: Megram) -> bool:
        if self.ids is not None and m.id not in self.ids:
            return False
        for tok in self.filter.split():
            key, _, val = tok.partition(":")
            if val and key in ("level", "space", "entity", "state"):
                field = {"level": m.level.value, "space": m.space, "entity": m.entity, "state": m.state}[key]
                if val.casefold() not in field.casefold():
                    return False
            elif tok.casefold() not in f"{m.content} {m.space} {m.entity} {m.id}".casefold():
                return False
        return True

    def action_refresh(self) -> None:
        try:
            ms = list(self.memory.list())
        except Exception as e:  # noqa: BLE001 - show, never crash
            self.notify(f"memory: {e}", severity="error")
            ms = []
        self.rows = [m for m in ms if self._matches(m)]
        self._fill()

    def _key(self, m: Megram, now: datetime) -> Any:
        att, dec = live_potentials(m, now)
        col = COLUMNS[self.sort_col]
        return {"id": m.id, "level": m.level.value, "content": m.content, "space": m.space, "entity": m.entity,
                "state": m.state,
                "f": m.f, "σ": m.sigma, "k": m.k, "age": m.created_at, "M_att": att, "M_dec": dec,
                "action": m.state}[col]

    def _fill(self) -> None:
        from agentui.memory import action_for

        t = self.query_one(DataTable)
        # the cursor stays on its Megram through a refresh (GGS writing, a sort); the first fill
        # puts it on the one the browser was opened for
        keep = self.focus_id or self._selected()
        self.focus_id = None
        t.clear()
        now = self.clock.now()
        descending = COLUMNS[self.sort_col] in ("age", "M_att", "f")
        for m in sorted(self.rows, key=lambda m: self._key(m, now), reverse=descending):
            att, dec = live_potentials(m, now)
            # Text cells: a DataTable reads str as markup and would eat "[rm -rf]" from a rule
            t.add_row(*(Text(c) for c in (
                short_id(m.id), m.level.value, _clip(" ".join(m.content.split()), 32), _clip(m.space),
                _clip(m.entity), m.state, f"{m.f:.2f}", f"{m.sigma:+.1f}", f"{m.k:g}", _age(m, now),
                f"{att:.2f}", f"{dec:+.2f}", action_for(att, dec).value)), key=m.id)
        if keep is not None and keep in t.rows:
            t.move_cursor(row=t.get_row_index(keep), animate=False)
        self.query_one("#mem-title", Static).update(
            f"[b]Memory[/b] — {len(self.rows)} Megram(s) shown · sorted by {COLUMNS[self.sort_col]}"
            + (f" · the {len(self.ids)} the task's plans used" if self.ids is not None else "")
            + (f" · filter {escape(self.filter)!r}" if self.filter else ""))

    def on_input_changed(self, event: Input.Changed) -> None:
        self.filter = event.value.strip()
        self.action_refresh()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    def action_focus_filter(self) -> None:
        self.query_one("#mem-filter", Input).focus()

    def action_back(self) -> None:
        """Esc in the filter leaves the filter (the table keeps it); Esc elsewhere closes the browser."""
        if self.query_one("#mem-filter", Input).has_focus:
            self.query_one(DataTable).focus()
            return
        self.app.pop_screen()

    def action_copy(self) -> None:
        mid = self._selected()
        m = next((x for x in self.rows if x.id == mid), None)
        if m is None:
            self.notify("no Megram selected", severity="warning", timeout=3)
            return
        text = (f"{m.id} [{m.level.value}] space={m.space} entity={m.entity} state={m.state} "
                f"f={m.f} σ={m.sigma} k={m.k}\n{m.content}")
        self.app.copy_to_clipboard(text)
        self.notify(f"copied Megram {short_id(m.id)}", timeout=3)

    def action_sort(self) -> None:
        self.sort_col = (self.sort_col + 1) % len(COLUMNS)
        self._fill()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        mid = event.row_key.value if event.row_key else None
        m = next((x for x in self.rows if x.id == mid), None)
        if m is None:
            return
        from agentui.memory import action_for

        # two quantities, two labels: this Megram's own potentials (the table's M_att, M_dec and
        # action columns) and those of its (space, entity) pair over the Megrams the recall sums
        att, dec = live_potentials(m, self.clock.now())
        own_line = f"this Megram: M_att {att:.2f} · M_dec {dec:+.2f} → [b]{action_for(att, dec).value}[/b]"
        try:
            pot = self.memory.query_mk_sync(m.space, m.entity)
            pot_line = (f"its (space, entity) pair over its {pot.count} M/K Megram(s): M_att {pot.attention:.2f} · "
                        f"M_dec {pot.decision:+.2f} → [b]{pot.action.value}[/b]")
        except Exception as e:  # noqa: BLE001
            pot_line = f"pair potentials unavailable: {escape(str(e))}"
        pot_line = f"{own_line}\n{pot_line}"
        self.query_one("#mem-detail", Static).update(
            f"[b]{m.id}[/b]\nlevel {m.level.value} · state {m.state}\nspace {escape(m.space)}\n"
            f"entity {escape(m.entity)}\ncreated {m.created_at}\nlast recalled {m.last_recalled_at or 'never'}\n"
            f"f {m.f} · σ {m.sigma} · k {m.k}\n{pot_line}\n\n{escape(m.content)}")

    def _selected(self) -> str | None:
        t = self.query_one(DataTable)
        if t.row_count == 0:
            return None
        try:
            return t.coordinate_to_cell_key(t.cursor_coordinate).row_key.value
        except Exception:  # noqa: BLE001
            return None

    def action_remember(self) -> None:
        def done(text: str | None) -> None:
            if text:
                m = remember_rule(self.memory, text)
                self.notify(f"remembered {m.id[:8]} (C level, space {m.space}: read for every plan)")
                self.action_refresh()

        self.app.push_screen(PromptModal("Remember (a C-level rule, timeless):", "e.g. run the tests first"), done)

    def action_forget(self) -> None:
        mid = self._selected()
        if not mid:
            return
        m = next((x for x in self.rows if x.id == mid), None)
        what = f" ({_clip(' '.join(m.content.split()), 60)})" if m is not None else ""

        def done(yes: bool | None) -> None:
            if yes:
                self.memory.forget(mid)
                self.notify(f"forgot {mid[:8]}")
                self.action_refresh()

        self.app.push_screen(YesNoModal(f"Delete Megram {mid}{what}? This cannot be undone."), done)

    @work(exclusive=True, group="dream")
    async def action_dream(self) -> None:
        from agentui.memory import Dreamer

        self.notify("Dreamer: running one pass…")
        try:
            dreamer = getattr(self.app, "dreamer", None) or Dreamer(self.memory, self.clock, None)
            rep = await dreamer.run_once()
            self.notify(f"Dreamer: consolidated {rep.consolidated}, bankrupted {rep.bankrupted}, "
                        f"deleted {rep.deleted} of {rep.scanned}")
        except Exception as e:  # noqa: BLE001
            self.notify(f"Dreamer failed: {e}", severity="error")
        self.action_refresh()


def task_tree(envs: list[Envelope]) -> Tree:
    """Rounds → subtasks (by sequence) → verdicts, gap trajectory, tool calls; directives with loss."""
    task = next((e.task_id for e in envs if e.task_id), "—")
    root = Tree(f"[b]task {escape(str(task))}[/b]")
    subs: dict[str, SubTask] = {}
    outcomes: dict[str, SubTaskOutcome] = {}
    results: dict[str, list[ExecutionResult]] = {}
    for e in envs:
        p = e.payload
        if isinstance(p, SubTask):
            subs[p.subtask_id] = p
        elif isinstance(p, SubTaskOutcome):
            outcomes[p.subtask_id] = p
        elif isinstance(p, ExecutionResult):
            results.setdefault(p.subtask_id, []).append(p)
    for e in envs:
        p = e.payload
        if isinstance(p, DispatchManifest):
            rnd = root.add(f"[b]round {p.round}[/b] — {len(p.subtask_ids)} subtask(s)"
                           + (f" [red]no plan: {escape(p.planner_error or '')}[/red]" if not p.subtask_ids else "")
                           + (f" · planned with {len(p.memory_ids)} Megram(s) from memory, listed below"
                              if p.memory_ids else ""))
            for c in p.task_criteria:
                rnd.add(f"[dim]task criterion[/dim] {escape(c.criterion)} [dim]({c.mode.value})[/dim]")
            for sid in sorted(p.subtask_ids, key=lambda s: subs[s].sequence if s in subs else 0):
                st = subs.get(sid)
                o = outcomes.get(sid)
                status = (f"[green]{o.status.value}[/green]" if o and o.status.value == "matched"
                          else f"[red]{o.status.value}[/red]" if o else "[yellow]running[/yellow]")
                node = rnd.add(f"#{st.sequence if st else '?'} {escape(st.intent if st else sid)} — {status}")
                if o:
                    for v in o.criteria_verdicts:
                        fc = f" [red]{v.failure_class.value}[/red]" if v.failure_class else ""
                        node.add(f"{'✓' if v.verdict.value == 'pass' else '✗'} {escape(v.criterion)}{fc} "
                                 f"[dim]{escape(_clip(v.evidence, 80))}[/dim]")
                    if o.gap_trajectory:
                        node.add("gap trajectory: " + " → ".join(str(len(a.failed_criteria)) for a in o.gap_trajectory))
                for r in results.get(sid, []):
                    for c in r.tool_calls:
                        node.add(f"[dim]attempt {r.attempt}[/dim] {escape(c.tool)} {escape(_clip(c.target, 60))} "
                                 f"{'ok' if c.ok else '[red]' + escape(c.error or 'failed') + '[/red]'}")
        elif isinstance(p, ReplanRequest):
            root.add(f"[magenta]ReplanRequest[/magenta] ({p.reason}) {escape(_clip(p.gap_summary, 100))}")
        elif isinstance(p, PlanDirective | FinalResult):
            root.add(f"[b magenta]{p.prev_directive.value}→{p.directive.value}[/b magenta] D={p.loss.D:.2f} "
                     f"P={p.loss.P:.2f} Ω={p.loss.Omega:.2f} L={p.loss.L:.2f} ∇L={p.grad_l:+.2f}")
    losses = [p.loss.L for p in (e.payload for e in envs) if isinstance(p, PlanDirective | FinalResult)]
    if losses:
        from agentui.ui.widgets import sparkline

        root.add(f"[b]loss per round[/b] [cyan]{sparkline(losses)}[/cyan]  "
                 + " → ".join(f"{x:.2f}" for x in losses))
    return root


def plan_memory(envs: list[Envelope]) -> list[tuple[int, str]]:
    """(round, Megram id) of every Megram the task's plans were made with, each once, in order."""
    seen: dict[str, int] = {}
    for e in envs:
        if isinstance(e.payload, DispatchManifest):
            for mid in e.payload.memory_ids:
                seen.setdefault(mid, e.payload.round)
    return [(rnd, mid) for mid, rnd in seen.items()]


class TaskDetailScreen(Screen[None]):
    """Rounds, subtasks and verdicts; below them the Megrams the plans were made with: Enter (or a
    click) on one opens the Megram browser on it, among the task's others, where `f` forgets it."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back"),
                Binding("m", "memory", "Memory used", tooltip="open the Megram browser on the plans' Megrams")]

    def __init__(self, envs: list[Envelope]) -> None:
        super().__init__()
        self.envs = envs
        self.used = plan_memory(envs)

    def compose(self) -> ComposeResult:
        from textual.widgets import OptionList

        with VerticalScroll():
            yield Static(task_tree(self.envs) if self.envs else "no task yet", id="task-tree")
        if self.used:
            yield Static(f"[b]memory the plans used[/b] — {len(self.used)} Megram(s) · Enter opens one in the "
                         "Megram browser (f forgets it there)", id="plan-memory-title", classes="panel-title")
            yield OptionList(id="plan-memory")
        yield Footer(compact=True)  # 80 columns: room for every key

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return bool(self.used) if action == "memory" else True  # `m` only where there is memory to open

    def on_mount(self) -> None:
        self.fill_memory()

    def on_screen_resume(self) -> None:
        self.fill_memory()  # back from the browser: a forgotten Megram says so

    def fill_memory(self) -> None:
        from textual.widgets import OptionList
        from textual.widgets.option_list import Option

        from agentui.describe import megram_brief, used_megrams

        if not self.used:
            return
        ol = self.query_one("#plan-memory", OptionList)
        at = ol.highlighted
        ol.clear_options()
        memory = getattr(self.app, "memory", None)
        found = dict(used_megrams(memory, [mid for _r, mid in self.used]))
        for rnd, mid in self.used:
            m = found.get(mid)
            what = megram_brief(m, 60) if m is not None else "(no longer in memory)"
            ol.add_option(Option(Text(f"round {rnd} · {short_id(mid)} {what}"), id=mid))
        ol.highlighted = at if at is not None else 0

    def action_memory(self, focus: str | None = None) -> None:
        """The Megram browser on the task's plans' Megrams, its cursor on `focus` (else the one
        highlighted here)."""
        from textual.widgets import OptionList

        memory = getattr(self.app, "memory", None)
        if not self.used or memory is None:
            self.notify("no plan of this task was made with memory", severity="warning", timeout=4)
            return
        if focus is None:
            ol = self.query_one("#plan-memory", OptionList)
            i = ol.highlighted if ol.highlighted is not None else 0
            focus = self.used[i][1]
        self.app.push_screen(MemoryScreen(memory, self.app.clock, ids=[mid for _r, mid in self.used],  # type: ignore[attr-defined]
                                          focus=focus))

    def on_option_list_option_selected(self, event: Any) -> None:
        if event.option_list.id == "plan-memory" and event.option.id:
            self.action_memory(event.option.id)


class AuditScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, history: list[AuditEvent | AuditReport], stored: list[AuditReport]) -> None:
        super().__init__()
        self.history = history
        self.stored = stored

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"[b]Audit[/b] — {len(self.stored)} stored report(s), "
                         f"{len(self.history)} item(s) this session")
            yield RichLog(id="audit-log", wrap=True, markup=True, min_width=1)
        yield Footer(compact=True)  # 80 columns: room for every key

    def on_mount(self) -> None:
        log = self.query_one(RichLog)
        for r in self.stored[-20:]:
            log.write(f"[b]{r.ts}[/b] {r.trigger}: {rich_escape(r.summary)}")
        for item in self.history:
            if isinstance(item, AuditEvent):
                log.write(f"{item.ts} [yellow]{item.kind.value}[/yellow] {rich_escape(item.message)}")
            else:
                log.write(f"[b]{item.ts}[/b] report: {rich_escape(item.summary)}")
        if not self.stored and not self.history:
            log.write("[green]no anomalies and no reports yet[/green]")


from agentui.ui.help import HelpScreen  # noqa: E402,F401 - where callers used to find it
