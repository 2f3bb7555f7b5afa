"""The goal-tree screens (#16): tree pane snapshot at a fixed size, stepping from the screen,
the iteration screen's guard log and diff, and the app's F2 hook."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.app import App
from textual.widgets import DataTable, Static

from agentui.config import Config
from agentui.tree.layout import TreeConfig, TreeLayout, init_layout, render_config
from agentui.tree.runner import TreeRunner
from agentui.ui.tree import IterationScreen, TreeScreen
from tests.fakellm import FakeLLM
from tests.functional.treeharness import agent_config, file_agent, make_repo

SIZE = (110, 30)


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
        assert "[ ] a" in str(app.screen.query_one("#tree-view", Static).render())
        await pilot.press("s")
        for _ in range(100):
            await pilot.pause(0.1)
            if app.screen.query_one(DataTable).row_count == 1 and not app.screen.busy:
                break
        assert "[x] a" in str(app.screen.query_one("#tree-view", Static).render())
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
        assert "no goal tree in" in str(app.screen.query_one("#tree-view", Static).render())


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
