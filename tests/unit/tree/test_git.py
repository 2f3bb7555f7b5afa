"""Git policy in temp repos: refusals, runner/<run-id>, clean tree, one commit per iteration (#16)."""

from __future__ import annotations

import pytest

from agentui.tree import git as G
from agentui.tree.layout import StateError, TreeLayout, init_layout
from agentui.tree.runner import TreeRunner
from tests.functional.treeharness import git, make_repo, subjects


@pytest.mark.parametrize("branch", ["main", "master"])
def test_step_refused_on_protected_branches(tmp_path, branch) -> None:
    repo = make_repo(tmp_path / "r", branch=branch)
    with pytest.raises(G.GitError, match=f"refusing to step on '{branch}'"):
        G.require_step_branch(repo)
    git(repo, "checkout", "-q", "-b", "feature")
    assert G.require_step_branch(repo) == "feature"


def test_clean_check_counts_untracked_but_not_ignored(tmp_path) -> None:
    repo = make_repo(tmp_path / "r")
    init_layout(repo, "goal", guard="true")
    with pytest.raises(G.GitError, match=r"not clean \(\.agentui/\.gitignore"):
        G.require_clean(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tree")
    G.require_clean(repo)
    (repo / ".agentui/context").mkdir()
    (repo / ".agentui/context/goal.md").write_text("x")
    (repo / ".agentui/iterations/r/1").mkdir(parents=True)
    (repo / ".agentui/iterations/r/1/meta.json").write_text("{}")
    G.require_clean(repo)  # context/ and iterations/ are ignored by .agentui/.gitignore
    (repo / "new.txt").write_text("x")
    with pytest.raises(G.GitError, match=r"not clean \(new\.txt\)"):
        G.require_clean(repo)


def test_start_branches_off_main_and_commits_state(tmp_path) -> None:
    repo = make_repo(tmp_path / "r")
    lay = init_layout(repo, "goal", guard="true")
    rid = TreeRunner(TreeLayout(repo), None).start("abc")
    assert rid == "abc"
    assert G.current_branch(repo) == "runner/abc"
    assert subjects(repo) == ["initial", "chore(tree): start run abc"]
    assert G.dirty_paths(repo) == []
    assert lay.load_run_state() == {"branch": "runner/abc", "last": None, "next_iteration": 1, "run_id": "abc"}
    with pytest.raises(G.GitError, match="already exists"):
        TreeRunner(TreeLayout(repo), None).start("abc")


def test_start_refuses_other_dirty_files_and_bad_run_ids(tmp_path) -> None:
    repo = make_repo(tmp_path / "r")
    init_layout(repo, "goal", guard="true")
    (repo / "wip.py").write_text("x")
    with pytest.raises(G.GitError, match="wip.py"):
        TreeRunner(TreeLayout(repo), None).start("r1")
    (repo / "wip.py").unlink()
    with pytest.raises(StateError, match="run id"):
        TreeRunner(TreeLayout(repo), None).start("bad/id")
    assert G.current_branch(repo) == "main"


def test_commit_messages_are_deterministic_conventional_commits() -> None:
    kw = {"run_id": "r1", "iteration": 4, "max_attempts": 3}
    assert G.commit_message("a", "done", "pass", attempts=0, **kw) == "feat(tree): a done\n\nrun r1 iteration 4\n"
    assert G.commit_message("a", "done", "fail", attempts=2, **kw).startswith("fix(tree): a guard failed 2/3\n")
    assert G.commit_message("a", "retry", "skipped", attempts=2, **kw).startswith("chore(tree): a retry 2/3\n")
    assert G.commit_message("a", "decomposed", "skipped", attempts=0, children=3, **kw).startswith(
        "chore(tree): a decomposed into 3\n")
    assert G.commit_message("a", "error", "skipped", attempts=0, error="timeout", **kw).startswith(
        "chore(tree): a runner error (timeout)\n")


def test_commit_all_commits_even_without_changes_and_without_identity(tmp_path, monkeypatch) -> None:
    repo = make_repo(tmp_path / "r")
    git(repo, "config", "--unset", "user.email")
    git(repo, "config", "--unset", "user.name")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "nogit"))
    G.commit_all(repo, "chore(tree): x retry 1/3\n\nrun r iteration 1\n")
    assert subjects(repo)[-1] == "chore(tree): x retry 1/3"
    assert git(repo, "log", "-1", "--format=%an").strip() == "agentui tree"
