"""The goal-tree screens (#16, #39): tree pane snapshots at fixed sizes, stepping from the screen,
the iteration screen's guard log and diff, the app's F2 hook, and editing the tree from the
keyboard (add, edit, reorder, remove) with the CLI's edits, refused while a run holds the tree."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import DataTable, Input, OptionList, Static

from agentui.config import Config
from agentui.tree.layout import TreeConfig, TreeLayout, init_layout, render_config
from agentui.tree.model import Node, load_tree, write_tree
from agentui.tree.runner import TreeRunner
from agentui.ui.modals import YesNoModal
from agentui.ui.tree import IterationScreen, NodeModal, TreeScreen
from tests.fakellm import FakeLLM
from tests.functional.treeharness import agent_config, file_agent, git, make_repo, subjects

SIZE = (110, 30)


def shown(screen) -> str:  # noqa: ANN001
    """The tree pane as the user sees it: its note (no tree, invalid state) or the node rows."""
    note = screen.query_one("#tree-note", Static)
    if note.display:
        return str(note.render())
    return "\n".join(str(o.prompt) for o in screen.query_one("#tree-view", OptionList).options)


class Host(App[None]):
    def __init__(self, repo: Path, cfg) -> None:  # noqa: ANN001
        super().__init__()
        self.repo, self.cfg = repo, cfg

    def on_mount(self) -> None:
        self.push_screen(TreeScreen(self.repo, self.cfg))


def _repo_with_history(tmp: Path, fake: FakeLLM) -> Path:
    """root split into a.txt / b.txt; a.txt failed its guard once, then passed."""
    repo = make_repo(tmp / "repo")
    lay = init_layout(repo, "write a.txt and b.txt", node_id="root", guard="test -f a.txt")
    lay.config.write_text(render_config(TreeConfig(guard="test -f a.txt", max_depth=1)))

    def kids(u: str):
        return [{"title": "write a.txt"}, {"title": "write b.txt"}] if "Node root:" in u else None

    file_agent(fake, decompose=kids, behaviour=lambda n, t: "write" if "FIX" in t else "finish")
    runner = TreeRunner(lay, agent_config(fake, tmp / "data"), yes=True)
    runner.start("r1")
    for _ in range(3):
        asyncio.run(runner.step())
    return repo


def test_tree_screen_snapshot(snap_compare, tmp_path):
    with FakeLLM() as fake:
        repo = _repo_with_history(tmp_path, fake)
    assert snap_compare(Host(repo, Config()), terminal_size=SIZE, run_before=lambda p: p.pause(0.3))


async def test_step_from_the_screen_and_open_the_iteration(fakellm, tmp_path):
    repo = make_repo(tmp_path / "repo")
    lay = init_layout(repo, "write a.txt", node_id="a", guard="test -f a.txt")
    lay.config.write_text(render_config(TreeConfig(guard="test -f a.txt", decompose=False)))
    file_agent(fakellm)
    TreeRunner(lay, None).start("r1")
    app = Host(repo, agent_config(fakellm, tmp_path / "data"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        assert "[ ] a" in shown(app.screen)
        await pilot.press("s")
        for _ in range(100):
            await pilot.pause(0.1)
            if app.screen.query_one(DataTable).row_count == 1 and not app.screen.busy:
                break
        assert "[x] a" in shown(app.screen)
        assert "feat(tree): a done" in str(app.screen.query_one("#tree-status", Static).render()) or \
            str(app.screen.query_one(DataTable).get_row_at(0)[-1]) == "feat(tree): a done"
        app.screen.query_one(DataTable).focus()
        await pilot.press("enter")
        await pilot.pause(0.3)
        assert isinstance(app.screen, IterationScreen)
        text = str(app.screen.query_one("#iter-text", Static).render())
        assert "── guard.log" in text and "$ test -f a.txt" in text and "=== exit 0 ===" in text
        assert "+A.TXT" in text  # the diff of the iteration's commit
    assert TreeLayout(repo).load_run_state()["next_iteration"] == 2


async def test_f2_opens_the_goal_tree_from_the_main_app(tmp_path):
    from agentui.ui.app import AgentApp

    repo = tmp_path / "repo"
    repo.mkdir()
    app = AgentApp(Config.model_validate({"data_dir": str(tmp_path / "d")}), workspace=repo, preflight=False,
                   animate=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        await pilot.press("f2")
        await pilot.pause(0.2)
        assert isinstance(app.screen, TreeScreen)
        assert "no goal tree in" in shown(app.screen)


async def test_f2_step_without_an_llm_commits_nothing(tmp_path):
    """Was: F2 `s` with no endpoint made a `chore(tree): … runner error (llm)` commit."""
    from agentui.ui.app import AgentApp
    from tests.functional.treeharness import git, subjects

    repo = make_repo(tmp_path / "repo")
    init_layout(repo, "add a version flag", node_id="a", guard="true")
    TreeRunner(TreeLayout(repo), None).start("r1")
    before = subjects(repo)
    app = AgentApp(Config.model_validate({"data_dir": str(tmp_path / "d")}), workspace=repo, preflight=False,
                   animate=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("f2")
        await pilot.pause(0.2)
        assert isinstance(app.screen, TreeScreen)
        shown = [b.binding.description for b in app.screen.active_bindings.values() if b.binding.show]
        assert "Settings" in shown and "Copy" not in shown  # the key the message names fits 80 columns
        await pilot.press("s")
        for _ in range(50):
            await pilot.pause(0.1)
            if app.screen.not_ready:
                break
        status = str(app.screen.query_one("#tree-status", Static).render())
        assert "no LLM is configured" in status and "Ctrl+S" in status, status
        assert not app.screen.busy
    assert subjects(repo) == before and git(repo, "status", "--porcelain") == ""
    assert not (repo / ".agentui/iterations/r1").exists()


# -- editing the tree from the screen ------------------------------------------------------------


async def _type(pilot, text: str) -> None:  # noqa: ANN001
    await pilot.press(*("space" if c == " " else c for c in text))


async def _fill(pilot, title: str | None = None, goal: str | None = None, guard: str | None = None) -> None:  # noqa: ANN001
    """Fill the node dialog from the keyboard: Tab between fields, End + Ctrl+U clears one."""
    for i, value in enumerate((title, goal, guard)):
        if i:
            await pilot.press("tab")
        if value is not None:
            await pilot.press("end", "ctrl+u")
            await _type(pilot, value)
    await pilot.press("enter")
    await pilot.pause(0.3)


def _notes(app) -> list[str]:  # noqa: ANN001
    return [str(n.message) for n in app._notifications]


async def test_add_edit_reorder_and_remove_nodes_from_the_keyboard(tmp_path):
    repo = make_repo(tmp_path / "repo")
    lay = init_layout(repo, "two files", node_id="root", guard="true")
    TreeRunner(lay, None).start("r1")
    start = len(subjects(repo))
    app = Host(repo, Config())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        screen = app.screen
        assert screen.highlighted() == "root"
        await pilot.press("a")
        await pilot.pause(0.2)
        assert isinstance(app.screen, NodeModal)
        await _fill(pilot, "write a.txt", "", "test -f a.txt")
        assert app.screen is screen and screen.highlighted() == "root.1"  # the new node
        await pilot.press("up", "a")
        await pilot.pause(0.2)
        await _fill(pilot, "write b.txt", "b.txt holds b")
        assert "[ ] root.2  write b.txt" in shown(screen)
        await pilot.press("shift+up")  # root.2 before root.1: the next leaf the runner works
        await pilot.pause(0.3)
        t = load_tree(lay.tree)
        assert [c.id for c in sorted(t.children, key=Node.key)] == ["root.2", "root.1"]
        assert "← next" in shown(screen).splitlines()[1] and screen.highlighted() == "root.2"
        # edit root.1's goal and guard (Enter on a node opens its dialog)
        await pilot.press("down", "enter")
        await pilot.pause(0.2)
        assert isinstance(app.screen, NodeModal)
        assert app.screen.query_one("#node-guard", Input).value == "test -f a.txt"
        await _fill(pilot, None, "a.txt holds a", "grep -q a a.txt")
        # remove root.2: n keeps it, y removes it
        await pilot.press("up", "d")
        await pilot.pause(0.2)
        assert isinstance(app.screen, YesNoModal)
        await pilot.press("n")
        await pilot.pause(0.2)
        assert load_tree(lay.tree).find("root.2") is not None
        await pilot.press("d")
        await pilot.pause(0.2)
        await pilot.press("y")
        await pilot.pause(0.3)
        assert "root.2" not in shown(screen) and screen.highlighted() == "root"
    t = load_tree(lay.tree)
    [a] = t.children
    assert (a.id, a.title, a.goal, a.guard) == ("root.1", "write a.txt", "a.txt holds a", "grep -q a a.txt")
    assert subjects(repo)[start:] == ["chore(tree): add root.1 under root", "chore(tree): add root.2 under root",
                                      "chore(tree): move root.2 up among its siblings", "chore(tree): edit root.1",
                                      "chore(tree): remove root.2"]
    assert git(repo, "status", "--porcelain") == ""  # the next step starts from a clean tree
    assert TreeLayout(repo).load_run_state()["next_iteration"] == 1  # edits are not iterations


async def test_a_refused_edit_says_why_and_changes_nothing(tmp_path):
    from agentui.tree.lock import RunLock

    repo = make_repo(tmp_path / "repo")
    lay = init_layout(repo, "x", node_id="root", guard="true")
    write_tree(lay.tree, Node(id="root", title="root", children=[
        Node(id="done", order=0, title="passed", passes=True), Node(id="b", order=1, title="open")]))
    TreeRunner(lay, None).start("r1")
    before = (lay.tree.read_bytes(), subjects(repo))
    app = Host(repo, Config())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        screen = app.screen
        assert screen.highlighted() == "b"  # the screen opens on the next leaf
        await pilot.press("up")  # done: passed
        for key in ("e", "d", "a", "shift+down"):
            await pilot.press(key)
            await pilot.pause(0.1)
            assert app.screen is screen, key  # refused before any dialog
        assert "done has passed: passed nodes are immutable; add follow-up work as a new node" in _notes(app)
        await pilot.press("down", "e")  # b, while another process holds the run lock
        await pilot.pause(0.2)
        held = RunLock(repo.resolve())
        held.acquire()
        try:
            await _fill(pilot, "renamed")
            assert isinstance(app.screen, NodeModal)  # stays open, the typed text kept
            err = str(app.screen.query_one("#node-error", Static).render())
            assert f"another run holds this tree (pid {os.getpid()})" in err, err
            assert app.screen.query_one("#node-title", Input).value == "renamed"
        finally:
            held.release()
        await pilot.press("escape")
        await pilot.pause(0.1)
        await pilot.press("home", "d")  # the root
        await pilot.pause(0.2)
        await pilot.press("y")
        await pilot.pause(0.2)
        assert "the root cannot be removed" in _notes(app)
    assert (lay.tree.read_bytes(), subjects(repo)) == before


async def test_no_edit_while_the_screen_runs_the_tree(fakellm, tmp_path):
    repo = make_repo(tmp_path / "repo")
    guard = "sleep 3 && test -f a.txt"  # the run holds the tree while its guard sleeps
    lay = init_layout(repo, "write a.txt", node_id="a", guard=guard)
    lay.config.write_text(render_config(TreeConfig(guard=guard, decompose=False)))
    file_agent(fakellm)
    TreeRunner(lay, None).start("r1")
    app = Host(repo, agent_config(fakellm, tmp_path / "data"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.2)
        screen = app.screen
        await pilot.press("s")
        for _ in range(100):
            await pilot.pause(0.1)
            if screen.running == "a":
                break
        assert screen.running == "a"
        for key in ("e", "a", "d"):
            await pilot.press(key)
            await pilot.pause(0.1)
            assert app.screen is screen, key
        assert "a is running: edit it when the run stops" in _notes(app)
        for _ in range(200):
            await pilot.pause(0.1)
            if not screen.busy:
                break
        assert not screen.busy
    assert subjects(repo)[-1] == "feat(tree): a done"  # the run's own commit, no edit between
    assert load_tree(lay.tree).find("a").passes


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
def test_tree_editing_snapshot(snap_compare, tmp_path, size):
    """The tree pane with a node highlighted and its edit dialog open, inside the app (its footer:
    at 80 columns the app's Ctrl+S Settings still shows; the edit keys are in the pane's hint)."""
    from agentui.ui.app import AgentApp

    repo = make_repo(tmp_path / "repo")
    lay = init_layout(repo, "ship the release", node_id="root", guard="make test")
    write_tree(lay.tree, Node(id="root", title="ship the release", children=[
        Node(id="root.1", order=1, title="write the changelog", passes=True),
        Node(id="root.2", order=2, title="bump the version", goal="set the version to 1.2.0 in pyproject.toml",
             guard="grep -q 1.2.0 pyproject.toml", attempts=1),
        Node(id="root.3", order=3, title="tag the release", attempts=3)]))
    TreeRunner(lay, None).start("r1")
    app = AgentApp(Config.model_validate({"data_dir": str(tmp_path / "d")}), workspace=repo, preflight=False,
                   animate=False)

    async def go(pilot) -> None:  # noqa: ANN001
        await pilot.pause(0.3)
        await pilot.press("f2")
        await pilot.pause(0.3)
        await pilot.press("e")  # on root.2, the next leaf, where the screen opens
        await pilot.pause(0.3)

    assert snap_compare(app, terminal_size=size, run_before=go)


async def test_move_a_node_under_another_from_the_keyboard(tmp_path):
    from agentui.ui.tree import MoveModal

    repo = make_repo(tmp_path / "repo")
    lay = init_layout(repo, "x", node_id="root", guard="true")
    write_tree(lay.tree, Node(id="root", title="root", children=[
        Node(id="done", order=0, title="passed", passes=True),
        Node(id="a", order=1, title="group a", children=[Node(id="a1", order=0, title="leaf a1")]),
        Node(id="b", order=2, title="leaf b")]))
    TreeRunner(lay, None).start("r1")
    start = len(subjects(repo))
    app = Host(repo, Config())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.2)
        screen = app.screen
        await pilot.press("home", "m")  # the root stays where it is
        await pilot.pause(0.1)
        assert app.screen is screen and "the root cannot be moved" in _notes(app)
        while screen.highlighted() != "a":
            await pilot.press("down")
        await pilot.press("m")
        await pilot.pause(0.2)
        modal = app.screen
        assert isinstance(modal, MoveModal)
        # not itself, its subtree, its own parent or a passed node: only b can take it
        assert [c[0] for c in modal.choices] == ["b"]
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert app.screen is screen and load_tree(lay.tree).find("b").children == []
        await pilot.press("m", "enter")
        await pilot.pause(0.3)
        assert app.screen is screen and screen.highlighted() == "a"
    t = load_tree(lay.tree)
    assert [c.id for c in t.find("b").children] == ["a"] and [c.id for c in t.find("a").children] == ["a1"]
    assert subjects(repo)[start:] == ["chore(tree): move a under b"]
    assert git(repo, "status", "--porcelain") == ""
