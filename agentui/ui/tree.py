"""The goal-tree screens: the tree pane with the iterations of the run, and one
iteration's guard log and diff.

TreeScreen (F2): node states ([x] passed, [ ] open, [!] stuck), attempts, each node's last
guard result, the running node highlighted; the iterations table; the current iteration's
pipeline as bus lines. `s` runs one iteration, `r` runs until complete/stuck/error, Enter on an
iteration opens IterationScreen. Destructive commands ask through the app's confirmation modal
(a host without one denies them).

The tree is edited here with the CLI's own edits (agentui.tree.edit): `a` adds a child under the
highlighted node, `e` (or Enter) edits its title, goal and guard, `d` removes it after a yes/no,
Shift+↑/↓ move it among its siblings. Each goes through `edit.apply` — the run lock, the schema and
invariants, one commit on the run's branch — so nothing is edited while a run holds the tree.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Input, Label, OptionList, RichLog, Static
from textual.widgets.option_list import Option, OptionDoesNotExist

from agentui.tree.layout import StateError, TreeLayout
from agentui.tree.model import Node, TreeInvalid, load_tree, select
from agentui.tree.view import MARK, node_state, rows
from agentui.ui.markup import escape

CSS = """
TreeScreen #tree-main { height: 1fr; }
TreeScreen #tree-pane { width: 1fr; }
TreeScreen #tree-note { padding: 0 1; }
TreeScreen #tree-view { height: 1fr; max-height: 100%; padding: 0 1; background: $surface; }
TreeScreen #tree-keys { height: auto; padding: 0 1; color: $text-muted; }
TreeScreen #tree-right { width: 1fr; border-left: solid $panel; }
TreeScreen #tree-iterations { height: 1fr; }
TreeScreen #tree-bus { height: 10; border-top: solid $panel; }
TreeScreen #tree-status { height: 1; padding: 0 1; background: $panel; }
IterationScreen #iter-head { height: auto; padding: 0 1; background: $panel; }
IterationScreen #iter-body { padding: 0 1; }
"""

STATE_STYLE = {"passed": "green", "open": "", "stuck": "bold red"}
EDIT_KEYS = "a add · e edit · d remove\nm move under… · ⇧↑↓ reorder"


def read_iterations(lay: TreeLayout, run_id: str | None) -> list[dict[str, Any]]:
    """meta.json of every logged iteration of the run, in order (unreadable ones skipped)."""
    if not run_id:
        return []
    base = lay.iterations / run_id
    out = []
    if base.is_dir():
        for d in base.iterdir():
            meta = d / "meta.json"
            if d.name.isdigit() and meta.is_file():
                with contextlib.suppress(OSError, json.JSONDecodeError):
                    out.append(json.loads(meta.read_text(encoding="utf-8")))
    return sorted(out, key=lambda m: int(m.get("iteration", 0)))


def node_line(depth: int, n: Node, *, running: str | None, guards: dict[str, str], selected: str | None) -> Text:
    """One row of the tree pane: state mark, id, title, attempts, last guard result, running / next."""
    state = node_state(n)
    line = Text("  " * depth + f"{MARK[state]} {n.id}  ", style=STATE_STYLE[state])
    line.append(n.title[:60])
    line.append(f"  {n.attempts}/{n.max_attempts}", style="dim")
    if n.id in guards:
        g = guards[n.id]
        line.append(f"  guard {g}", style={"pass": "green", "fail": "red"}.get(g, "dim"))
    if n.id == running:
        line.stylize("reverse")
        line.append("  ◀ running", style="bold")
    elif n.id == selected:
        line.append("  ← next", style="bold")
    return line


class NodeModal(ModalScreen[bool]):
    """A node's title, goal and guard, for a new child or an edit. Enter saves through `submit`,
    which writes the edit or returns why not (shown here, the typed text kept); Esc cancels."""

    DEFAULT_CSS = """
    NodeModal { align: center middle; }
    NodeModal #node-dialog { width: 90%; max-width: 100; height: auto; padding: 0 1;
                             border: thick $primary; background: $surface; }
    NodeModal .node-row { height: 1; margin-top: 1; }
    NodeModal .node-row Label { width: 7; }
    NodeModal .node-row Input { width: 1fr; }
    NodeModal #node-error { color: $error; height: auto; margin-top: 1; }
    NodeModal #node-keys { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, heading: str, submit: Callable[[dict[str, str]], str | None], *, title: str = "",
                 goal: str = "", guard: str = "") -> None:
        super().__init__()
        self.heading, self.submit = heading, submit
        self.values = {"title": title, "goal": goal, "guard": guard}

    def compose(self) -> ComposeResult:
        fields = (("title", "what the node does, in a few words"), ("goal", "what it must achieve (empty: the title)"),
                  ("guard", "shell command, exit 0 = pass (empty: the tree's guard)"))
        with Vertical(id="node-dialog"):
            yield Static(f"[b]{escape(self.heading)}[/b]")
            for name, hint in fields:
                with Horizontal(classes="node-row"):
                    yield Label(name)
                    yield Input(self.values[name], id=f"node-{name}", placeholder=hint, compact=True)
            yield Static("", id="node-error")
            yield Static("Enter save · Tab next field · Esc cancel", id="node-keys")

    def on_mount(self) -> None:
        from agentui.ui.modals import steady_cursors

        steady_cursors(self)
        self.query_one("#node-title", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        values = {k: self.query_one(f"#node-{k}", Input).value.strip() for k in ("title", "goal", "guard")}
        why = self.submit(values)
        if why:
            self.query_one("#node-error", Static).update(Text(why))
        else:
            self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


class MoveModal(ModalScreen[str | None]):
    """Where to move a node: the open nodes outside its own subtree, picked with ↑↓ and Enter."""

    DEFAULT_CSS = """
    MoveModal { align: center middle; }
    MoveModal #move-dialog { width: 90%; max-width: 100; height: auto; max-height: 80%; padding: 0 1;
                             border: thick $primary; background: $surface; }
    MoveModal OptionList { height: auto; max-height: 16; margin-top: 1; }
    MoveModal #move-keys { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, node: Node, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.node, self.choices = node, choices

    def compose(self) -> ComposeResult:
        with Vertical(id="move-dialog"):
            yield Static(f"[b]Move {escape(self.node.id)} (and its subtree) under…[/b]")
            yield OptionList(*[Option(f"{nid} — {title[:70]}", id=nid) for nid, title in self.choices],
                             id="move-choices", compact=True)
            yield Static("↑↓ choose · Enter move · Esc cancel", id="move-keys")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class TreeScreen(Screen[None]):
    DEFAULT_CSS = CSS
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("s", "step", "Step"),
        Binding("r", "run", "Run"),
        Binding("u", "reload", "Reload"),
        # the edit keys are named in the tree pane's own hint line: the footer keeps room at 80
        # columns for the app's keys (Ctrl+S: Settings, which the no-LLM message names)
        Binding("a", "add", "Add", show=False),
        Binding("e", "edit", "Edit", show=False),
        Binding("d,delete", "remove", "Remove", show=False),
        Binding("shift+up", "reorder(-1)", "Move up", key_display="⇧↑", show=False),
        Binding("shift+down", "reorder(1)", "Move down", key_display="⇧↓", show=False),
        Binding("m", "move", "Move under…", show=False),
    ]

    def __init__(self, repo: Path, agent_config: Any) -> None:
        super().__init__()
        self.lay = TreeLayout(repo)
        self.agent_config = agent_config
        self.running: str | None = None
        self.busy = False
        self.iterations: list[dict[str, Any]] = []
        self.run_id: str | None = None
        self.not_ready = ""  # why the last step could not start (no LLM), shown in the status line
        self.root: Node | None = None  # the tree as last loaded

    def compose(self) -> ComposeResult:
        with Horizontal(id="tree-main"):
            with Vertical(id="tree-pane"):
                yield Static("", id="tree-note")
                yield OptionList(id="tree-view", compact=True)
                yield Static(EDIT_KEYS, id="tree-keys")
            with Vertical(id="tree-right"):
                yield DataTable(id="tree-iterations", cursor_type="row", zebra_stripes=True)
                yield RichLog(id="tree-bus", wrap=False, markup=False, max_lines=500)
        yield Static("", id="tree-status")
        yield Footer(compact=True)  # 80 columns: room for every key

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for col in ("#", "node", "status", "guard", "commit"):
            table.add_column(col, key=col)
        self.reload()

    def action_reload(self) -> None:
        self.reload()

    def reload(self, highlight: str | None = None) -> None:
        """Re-read the tree and the run; the highlighted node stays (or becomes `highlight`)."""
        note, status = self.query_one("#tree-note", Static), self.query_one("#tree-status", Static)
        view = self.query_one("#tree-view", OptionList)
        keep = highlight or self.highlighted()
        self.root = None
        if not self.lay.exists():
            self._show_note(f"no goal tree in {self.lay.repo}\n\n"
                            "start one with:\n  agentui tree init \"GOAL\" --guard CMD")
            status.update("no tree")
            return
        try:
            root = load_tree(self.lay.tree)
            rs = self.lay.load_run_state()
        except (TreeInvalid, StateError) as e:
            errs = e.errors if isinstance(e, TreeInvalid) else [str(e)]
            self._show_note("[b red]invalid state[/]\n" + "\n".join(f"- {escape(x)}" for x in errs))
            status.update("invalid state — fix it, then press u")
            return
        self.root = root
        note.display = False
        view.display = self.query_one("#tree-keys", Static).display = True
        self.run_id = rs["run_id"] if rs else None
        self.iterations = read_iterations(self.lay, self.run_id)
        guards = {m["node_id"]: m.get("guard", "") for m in self.iterations if m.get("guard") in ("pass", "fail")}
        sel = select(root)
        nxt = sel.node.id if sel.node else None
        view.set_options(Option(node_line(d, n, running=self.running, guards=guards, selected=nxt), id=n.id)
                         for d, n in rows(root))
        with contextlib.suppress(OptionDoesNotExist):  # the node is gone (removed): the first row
            view.highlighted = view.get_option_index(keep or nxt or root.id)
        if view.highlighted is None:
            view.highlighted = 0
        table = self.query_one(DataTable)
        table.clear()
        for m in self.iterations:
            table.add_row(
                *(
                    Text("" if m.get(k) is None else str(m.get(k)))
                    for k in ("iteration", "node_id", "status", "guard", "commit_message")
                ),
                key=str(m.get("iteration")),
            )
        run = f"run {self.run_id}" if self.run_id else "not started (agentui tree start)"
        state = f"running {self.running}" if self.running else sel.line()
        if self.not_ready:
            status.update(Text(self.not_ready, style="bold red"))
            return
        status.update(f"{run} · {len(self.iterations)} iteration(s) · {state}")

    def _show_note(self, markup: str) -> None:
        note, view = self.query_one("#tree-note", Static), self.query_one("#tree-view", OptionList)
        note.update(markup)
        note.display = True
        view.display = self.query_one("#tree-keys", Static).display = False
        view.clear_options()

    def highlighted(self) -> str | None:
        opt = self.query_one("#tree-view", OptionList).highlighted_option
        return opt.id if opt is not None else None

    # -- editing the tree (the CLI's edits, under the run lock) ------------------------------
    def _target(self) -> Node | None:
        """The highlighted node when it may be edited now; else None, and the reason is shown."""
        nid = self.highlighted()
        node = self.root.find(nid) if self.root is not None and nid else None
        why = ""
        if node is None:
            why = "no tree to edit" if self.root is None else "no node highlighted"
        elif self.busy:  # this screen's run holds the tree's lock until it stops
            why = (f"{nid} is running: edit it when the run stops" if nid == self.running
                   else f"a run is in progress{f' ({self.running})' if self.running else ''}: "
                        "edit the tree when it stops")
        elif node.passes:
            why = f"{nid} has passed: passed nodes are immutable; add follow-up work as a new node"
        if why:
            self.notify(why, severity="warning", timeout=6)
            return None
        return node

    def _apply(self, change: Callable[[Node], tuple[Node, str]],
               highlight: Callable[[], str | None] = lambda: None) -> str | None:
        """Write one edit as `agentui tree` does; None when written, else why not."""
        from agentui.tree import edit as E
        from agentui.tree.git import GitError
        from agentui.tree.lock import RunLocked

        if self.busy:
            return "a run is in progress: edit the tree when it stops"
        try:
            done = E.apply(self.lay, change)
        except RunLocked as e:
            return f"{e}: edit the tree when it stops"
        except (E.EditError, GitError, StateError) as e:
            return str(e)
        except TreeInvalid as e:
            return "; ".join(e.errors)
        where = (f"committed {done.commit[:8]} on {done.branch}" if done.commit
                 else "written, not committed (no run on this branch): commit it before the next step")
        self.notify(f"{done.what}: {where}", timeout=6)
        self.reload(highlight=highlight())
        return None

    def action_add(self) -> None:
        from agentui.tree import edit as E

        parent = self._target()
        if parent is None:
            return
        added: list[str] = []

        def submit(v: dict[str, str]) -> str | None:
            if not v["title"]:
                return "a title is needed"

            def change(tree: Node) -> tuple[Node, str]:
                tree, nid = E.add(tree, parent.id, title=v["title"], goal=v["goal"] or v["title"],
                                  guard=v["guard"] or None)
                added.append(nid)
                return tree, f"add {nid} under {parent.id}"

            return self._apply(change, lambda: added[-1] if added else None)

        self.app.push_screen(NodeModal(f"Add a node under {parent.id}", submit))

    def action_edit(self) -> None:
        from agentui.tree import edit as E

        node = self._target()
        if node is None:
            return

        def submit(v: dict[str, str]) -> str | None:
            if not v["title"]:
                return "a title is needed"
            old = {"title": node.title, "goal": node.goal, "guard": node.guard or ""}
            fields: dict[str, Any] = {k: v[k] for k in old if v[k] != old[k]}
            if not fields:
                self.notify(f"{node.id}: nothing changed", timeout=4)
                return None
            return self._apply(lambda tree: (E.edit(tree, node.id, **fields), f"edit {node.id}"), lambda: node.id)

        self.app.push_screen(NodeModal(f"Edit {node.id}", submit, title=node.title, goal=node.goal,
                                       guard=node.guard or ""))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_edit()

    def action_remove(self) -> None:
        from agentui.tree import edit as E
        from agentui.ui.modals import YesNoModal

        node = self._target()
        if node is None:
            return
        under = sum(1 for _ in node.walk()) - 1
        parent = self.root.parent_of(node.id) if self.root is not None else None

        def done(yes: bool | None) -> None:
            if not yes:
                return

            def change(tree: Node) -> tuple[Node, str]:
                tree, n = E.remove(tree, node.id)
                return tree, f"remove {node.id}" + (f" and {n - 1} node(s) under it" if n > 1 else "")

            why = self._apply(change, lambda: parent.id if parent is not None else None)
            if why:
                self.notify(why, severity="error", timeout=8)

        what = f" and the {under} node(s) under it" if under else ""
        self.app.push_screen(YesNoModal(f"Remove {node.id} ({node.title[:60]}){what} from the tree?"), done)

    def action_reorder(self, step: int) -> None:
        from agentui.tree import edit as E

        node = self._target()
        if node is None:
            return
        way = "up" if step < 0 else "down"
        why = self._apply(lambda tree: (E.reorder(tree, node.id, step), f"move {node.id} {way} among its siblings"),
                          lambda: node.id)
        if why:
            self.notify(why, severity="warning", timeout=6)

    def action_move(self) -> None:
        from agentui.tree import edit as E

        node = self._target()
        if node is None or self.root is None:
            return
        if self.root.parent_of(node.id) is None:
            self.notify("the root cannot be moved", severity="warning", timeout=6)
            return
        inside = {n.id for _, n in node.walk()}
        parent = self.root.parent_of(node.id)
        choices = [(n.id, n.title) for _, n in self.root.walk()
                   if n.id not in inside and not n.passes and (parent is None or n.id != parent.id)]
        if not choices:
            self.notify(f"no other open node can take {node.id}", severity="warning", timeout=6)
            return

        def done(target: str | None) -> None:
            if not target:
                return
            why = self._apply(lambda tree: (E.move(tree, node.id, target), f"move {node.id} under {target}"),
                              lambda: node.id)
            if why:
                self.notify(why, severity="error", timeout=8)

        self.app.push_screen(MoveModal(node, choices), done)

    # -- driving the runner ------------------------------------------------------------------
    def action_step(self) -> None:
        self._drive(once=True)

    def action_run(self) -> None:
        self._drive(once=False)

    @work(exclusive=True, group="tree-runner")
    async def _drive(self, once: bool) -> None:
        from agentui.tree.git import GitError
        from agentui.tree.runner import NotReady, RunLocked, TreeRunner

        if self.busy:
            return
        self.busy = True
        self.not_ready = ""
        # the app's current configuration (Settings may have changed it) and its open memory store
        # (the LevelDB lock is the app's; the runner shares the store instead of opening it)
        runner = TreeRunner(self.lay, getattr(self.app, "config", None) or self.agent_config,
                            confirm=getattr(self.app, "_confirm", None), memory=getattr(self.app, "memory", None))
        runner.listeners.append(self._on_event)
        try:
            res = await (runner.step() if once else runner.run())
            self.notify(res.line() if res.iteration else res.message or res.status, timeout=6,
                        severity="error" if res.status == "error" else "information")
        except NotReady as e:  # no usable LLM or memory: nothing ran, nothing was committed
            # the fix first: the status line is one row (80 columns cut the rest)
            head = "no LLM — Ctrl+S: Settings" if e.llm else "cannot step"
            self.not_ready = f"{head} · nothing run or committed · {e}"
            self.notify(self.not_ready[:400], severity="error", timeout=10)
        except (GitError, StateError, TreeInvalid, RunLocked) as e:
            self.notify(str(e)[:300], severity="error", timeout=8)
        finally:
            self.busy = False
            self.running = None
            self.reload()

    def _on_event(self, event: dict[str, Any]) -> None:
        if event.get("kind") == "warning":
            self.notify(str(event.get("message", ""))[:300], severity="warning", timeout=10)
        elif event.get("kind") == "iteration":
            self.running = event["node"] if event["phase"] == "start" else None
            if event["phase"] == "start":
                self.query_one("#tree-bus", RichLog).clear()
            self.reload()
        elif event.get("kind") == "runtime":
            self._follow(event["runtime"])

    @work(group="tree-bus")
    async def _follow(self, runtime: Any) -> None:
        """The current iteration's pipeline, one line per bus message (LLM usage lines skipped)."""
        from agentui.describe import line

        log = self.query_one("#tree-bus", RichLog)
        async for env in runtime.bus.tap("tree-screen"):
            if env.type not in ("LLMUsage", "LLMDelta"):
                log.write(line(env))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if self.run_id and event.row_key.value:
            self.app.push_screen(IterationScreen(self.lay, self.run_id, int(event.row_key.value)))


class IterationScreen(Screen[None]):
    DEFAULT_CSS = CSS
    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, lay: TreeLayout, run_id: str, n: int) -> None:
        super().__init__()
        self.lay, self.run_id, self.n = lay, run_id, n

    def compose(self) -> ComposeResult:
        yield Static("", id="iter-head")
        with VerticalScroll(id="iter-body"):
            yield Static("", id="iter-text", markup=False)
        yield Footer(compact=True)  # 80 columns: room for every key

    def on_mount(self) -> None:
        head, body = self.query_one("#iter-head", Static), self.query_one("#iter-text", Static)
        d = self.lay.iteration_dir(self.run_id, self.n)
        meta: dict[str, Any] = {}
        with contextlib.suppress(OSError, json.JSONDecodeError):
            meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
        head.update(escape(f"iteration {self.n} · {meta.get('node_id')} · {meta.get('status')} · "
                           f"guard {meta.get('guard')} · {meta.get('commit_message', '')}"))
        body.update(iteration_report(self.lay, d, meta))


def iteration_report(lay: TreeLayout, d: Path, meta: dict[str, Any]) -> str:
    """Summary, errors, the guard log and the commit's diff of one iteration, as plain text."""
    from agentui.tree.git import diff_of

    parts = [f"summary: {meta.get('summary', '')}"]
    for name in ("runner_error.log", "agent_error.log"):
        if (d / name).is_file():
            parts.append(f"── {name}\n" + (d / name).read_text(encoding="utf-8", errors="replace"))
    guard = d / "guard.log"
    parts.append("── guard.log\n" + (guard.read_text(encoding="utf-8", errors="replace") if guard.is_file()
                                     else "(no guard ran in this iteration)\n"))
    commit = meta.get("commit")
    parts.append("── diff\n" + (diff_of(lay.repo, commit) if commit else "(no commit)\n"))
    return "\n".join(parts)
