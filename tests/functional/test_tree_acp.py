"""Leaves worked by another agent over ACP (executor = "acp"): a tiny ACP agent written for the
tests (tests/acpagent/agent.py) is spawned for real; guards, git policy and accounting are the
runner's. No LLM is configured: with decompose off, an ACP run needs none."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agentui.tree.layout import TreeConfig, TreeLayout, render_config
from agentui.tree.model import Node, load_tree, write_tree
from tests.functional.treeharness import git, make_repo, subjects

AGENT = [sys.executable, str(Path(__file__).resolve().parent.parent / "acpagent" / "agent.py")]


def _tree(repo, *args, timeout=120):
    return subprocess.run([sys.executable, "-m", "agentui.cli", "tree", "--repo", str(repo), *args],
                          capture_output=True, text=True, timeout=timeout)


def _setup(tmp_path, leaves: dict[str, str], **cfg) -> tuple[Path, TreeLayout]:
    repo = make_repo(tmp_path / "repo")
    assert _tree(repo, "init", "files", "--id", "root").returncode == 0
    lay = TreeLayout(repo)
    write_tree(lay.tree, Node(id="root", title="files", children=[
        Node(id=nid, order=i, title=goal[:60], goal=goal, guard=f"test -f {nid}.txt")
        for i, (nid, goal) in enumerate(leaves.items())]))
    cfg.setdefault("acp_command", AGENT)
    lay.config.write_text(render_config(TreeConfig(guard="true", executor="acp", decompose=False, **cfg)))
    assert _tree(repo, "start", "--run-id", "r1").returncode == 0
    return repo, lay


def test_an_acp_agent_works_the_leaves_under_the_runners_guards(tmp_path):
    repo, lay = _setup(tmp_path, {"a": "write a.txt", "b": "write b.txt"})
    r = _tree(repo, "run", "--yes")
    assert r.returncode == 2, (r.stdout, r.stderr)  # complete
    assert subjects(repo)[-2:] == ["feat(tree): a done", "feat(tree): b done"]
    assert (repo / "a.txt").read_text() == "A.TXT" and (repo / "b.txt").read_text() == "B.TXT"
    assert git(repo, "status", "--porcelain") == ""
    it = lay.iteration_dir("r1", 1)
    meta = json.loads((it / "meta.json").read_text())
    assert (meta["status"], meta["guard"], meta["tokens"]["executor"]) == ("done", "pass", "acp")
    assert meta["summary"] == "wrote a.txt"
    log = [json.loads(x) for x in (it / "acp.log").read_text().splitlines()]
    assert {"permission": "write a.txt", "allowed": True, "option": "yes"} in log


def test_without_yes_its_permission_requests_are_denied_and_the_guard_decides(tmp_path):
    repo, lay = _setup(tmp_path, {"a": "write a.txt"})
    r = _tree(repo, "step")
    assert r.returncode == 0, (r.stdout, r.stderr)
    assert subjects(repo)[-1] == "fix(tree): a guard failed 1/3" and not (repo / "a.txt").exists()
    assert json.loads((lay.iteration_dir("r1", 1) / "meta.json").read_text())["summary"] == "not allowed to write a.txt"


def test_a_refusal_is_a_retry_and_a_dead_or_hanging_agent_a_runner_error(tmp_path):
    repo, lay = _setup(tmp_path, {"a": "write a.txt REFUSE"})
    assert _tree(repo, "step", "--yes").returncode == 0
    assert subjects(repo)[-1] == "chore(tree): a retry 1/3"
    assert load_tree(lay.tree).find("a").attempts == 1

    repo, lay = _setup(tmp_path / "hang", {"a": "write a.txt HANG"}, iteration_timeout_s=3)
    r = _tree(repo, "step", "--yes")
    assert r.returncode == 1 and "did not finish" in r.stderr, r.stderr
    assert subjects(repo)[-1] == "chore(tree): a runner error (timeout)"
    assert load_tree(lay.tree).find("a").attempts == 0

    repo, lay = _setup(tmp_path / "missing", {"a": "write a.txt"}, acp_command=["no-such-acp-agent-xyz"])
    r = _tree(repo, "step", "--yes")
    assert r.returncode == 1 and "could not start" in r.stderr, r.stderr
    assert subjects(repo)[-1] == "chore(tree): a runner error (acp)"
