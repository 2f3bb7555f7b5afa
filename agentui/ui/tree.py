"""The goal-tree screens: the tree pane with the iterations of the run, and one
iteration's guard log and diff.

TreeScreen (Ctrl+G): node states ([x] passed, [ ] open, [!] stuck), attempts, each node's last
guard result, the running node highlighted; the iterations table; the current iteration's
pipeline as bus lines. `s` runs one iteration, `r` runs until complete/stuck/error, Enter on an
iteration opens IterationScreen. Destructive commands ask through the app's confirmation modal
(a host without one denies them).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, RichLog, Static

from agentui.tree.layout import StateError, TreeLayout
from agentui.tree.model import Node, TreeInvalid, load_tree, select
from agentui.tree.view import MARK, node_state, rows

CSS = """
TreeScreen #tree-main { height: 1fr; }
TreeScreen #tree-pane { width: 1fr; padding: 0 1; }
TreeScreen #tree-right { width: 1fr; border-left: solid $panel; }
TreeScreen #tree-iterations { height: 1fr; }
TreeScreen #tree-bus { height: 10; border-top: solid $panel; }
TreeScreen #tree-status { height: 1; padding: 0 1; background: $panel; }
IterationScreen #iter-head { height: auto; padding: 0 1; background: $panel; }
IterationScreen #iter-body { padding: 0 1; }
"""

STATE_STYLE = {"passed": "green", "open": "", "stuck": "bold red"}


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


def tree_text(root: Node, *, running: str | None, guards: dict[str, str], selected: str | None) -> Text:
    t = Text()
    for depth, n in rows(root):
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
        t.append_text(line)
        t.append("\n")
    return t


class TreeScreen(Screen[None]):
    DEFAULT_CSS = CSS
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("s", "step", "Step"),
        Binding("r", "run", "Run"),
        Binding("u", "reload", "Reload"),
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

    def compose(self) -> ComposeResult:
        with Horizontal(id="tree-main"):
            with VerticalScroll(id="tree-pane"):
                yield Static("", id="tree-view")
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

    def reload(self) -> None:
        view, status = self.query_one("#tree-view", Static), self.query_one("#tree-status", Static)
        if not self.lay.exists():
            view.update(f"no goal tree in {self.lay.repo}\n\nstart one with:\n  agentui tree init \"GOAL\" --guard CMD")
            status.update("no tree")
            return
        try:
            root = load_tree(self.lay.tree)
            rs = self.lay.load_run_state()
        except (TreeInvalid, StateError) as e:
            errs = e.errors if isinstance(e, TreeInvalid) else [str(e)]
            view.update("[b red]invalid state[/]\n" + "\n".join(f"- {escape(x)}" for x in errs))
            status.update("invalid state — fix it, then press u")
            return
        self.run_id = rs["run_id"] if rs else None
        self.iterations = read_iterations(self.lay, self.run_id)
        guards = {m["node_id"]: m.get("guard", "") for m in self.iterations if m.get("guard") in ("pass", "fail")}
        sel = select(root)
        view.update(tree_text(root, running=self.running, guards=guards,
                              selected=sel.node.id if sel.node else None))
        table = self.query_one(DataTable)
        table.clear()
        for m in self.iterations:
            table.add_row(*(Text("" if m.get(k) is None else str(m.get(k))) for k in ("iteration", "node_id", "status", "guard",
                                                                 "commit_message")), key=str(m.get("iteration")))
        run = f"run {self.run_id}" if self.run_id else "not started (agentui tree start)"
        state = f"running {self.running}" if self.running else sel.line()
        if self.not_ready:
            status.update(Text(self.not_ready, style="bold red"))
            return
        status.update(f"{run} · {len(self.iterations)} iteration(s) · {state}")

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
