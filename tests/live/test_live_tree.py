"""Live: `agentui tree run` on a two-node tree with the real small model on the CPU (#16).

Bounded to ≤ 12 minutes (CI's whole live run has a 90-minute cap): iterations time out at 300 s
(one pipeline task on 2 CPU cores needs minutes; 150 s timed out under load), at most 2
iterations, no decomposition. The assertions are about the runner, not the model's luck:
whatever the model does, every iteration is logged and committed with its deterministic message,
the tree stays valid, attempts stay within bounds, and a node passes only with a green guard.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentui.tree.layout import TreeConfig, TreeLayout, render_config
from agentui.tree.model import Node, load_tree, write_tree

pytestmark = pytest.mark.live

REPO = Path(__file__).resolve().parents[2]
BUDGET_S = 720
MESSAGE = re.compile(r"^(feat\(tree\): \S+ done|fix\(tree\): \S+ guard failed \d/\d|chore\(tree\): \S+ retry \d/\d"
                     r"|chore\(tree\): \S+ runner error \(\w+\))$")


@pytest.fixture(scope="module")
def gguf() -> str:
    env_path = os.environ.get("AGENTUI_LIVE_GGUF") or os.environ.get("AGENTUI_GGUF")
    if env_path:
        return env_path
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "fetch_model.py")], capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def test_live_two_node_tree(tmp_path: Path, gguf: str) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "live@example.com")
    _git(repo, "config", "user.name", "Live")
    (repo / "check.sh").write_text('#!/bin/sh\ntest "$(cat answer.txt 2>/dev/null)" = "42"\n')
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial")
    env = {**os.environ, "AGENTUI_PROVIDER": "local", "AGENTUI_GGUF": gguf}
    cfg = tmp_path / "config.toml"
    cfg.write_text("[llm]\nmax_tokens = 384\n[pipeline]\nexecutor_max_steps = 4\ncorrection_budget = 1\n"
                   "[ggs]\ntime_budget_ms = 1200000\n", encoding="utf-8")
    env["AGENTUI_CONFIG"] = str(cfg)

    def tree(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "agentui.cli", "tree", "--repo", str(repo), *args],
                              capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)

    assert tree("init", "hello file and check script", "--id", "root").returncode == 0
    lay = TreeLayout(repo)
    write_tree(lay.tree, Node(id="root", title="hello file and check script", children=[
        Node(id="hello", order=1, title="write hello.txt", max_attempts=2, guard="test -s hello.txt",
             goal="Create a file named hello.txt containing the text: hello",
             acceptance=["hello.txt exists and contains hello"]),
        Node(id="answer", order=2, title="make check.sh pass", max_attempts=2, guard="sh check.sh",
             goal="Create a file named answer.txt whose whole content is the number 42",
             acceptance=["answer.txt contains 42"]),
    ]))
    lay.config.write_text(render_config(TreeConfig(guard="true", iteration_timeout_s=300, max_iterations=2,
                                                   decompose=False)))
    assert tree("start", "--run-id", "live").returncode == 0
    t0 = time.monotonic()
    r = tree("--data-dir", str(tmp_path / "data"), "run", "--yes", timeout=BUDGET_S)
    wall = time.monotonic() - t0
    print(f"live tree: exit {r.returncode} in {wall:.0f} s\n{r.stdout}\n{r.stderr[-1500:]}")
    assert r.returncode in (0, 1, 2, 3), r.stderr[-2000:]
    assert "Traceback" not in r.stderr

    root = load_tree(lay.tree)  # still valid whatever happened
    subjects = _git(repo, "log", "--format=%s").splitlines()[::-1]
    assert subjects[:2] == ["initial", "chore(tree): start run live"]
    iters = sorted(int(p.name) for p in (lay.iterations / "live").iterdir())
    assert iters == list(range(1, len(iters) + 1)) and 1 <= len(iters) <= 2
    assert len(subjects) == 2 + len(iters)  # one commit per iteration, failures included
    assert all(MESSAGE.match(s) for s in subjects[2:]), subjects
    assert _git(repo, "status", "--porcelain") == ""
    for n in iters:
        meta = json.loads((lay.iterations / "live" / str(n) / "meta.json").read_text())
        node = root.find(meta["node_id"])
        assert node is not None and 0 <= node.attempts <= node.max_attempts
        if meta["runner_error"] is None:
            assert meta["tokens"]["llm_calls"] > 0 and meta["tokens"]["prompt_tokens"] > 0
    for nid in ("hello", "answer"):
        n = root.find(nid)
        if n.passes:  # no pass without a green guard
            metas = [json.loads((lay.iterations / "live" / str(i) / "meta.json").read_text()) for i in iters]
            assert any(m["node_id"] == nid and m["guard"] == "pass" for m in metas)
    if r.returncode == 2:
        assert root.passes and (repo / "hello.txt").is_file()
        assert (repo / "answer.txt").read_text().strip() == "42"
