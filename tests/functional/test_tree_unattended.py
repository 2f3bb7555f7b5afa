"""What a long unattended tree run meets: a killed step, a second run on the same tree, a guard
that writes the tree, a busy endpoint, another branch, a big tree. Real git repos, real
subprocesses, the fake LLM over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentui.tree.layout import TreeConfig, init_layout, render_config
from agentui.tree.model import Node, load_tree, write_tree
from agentui.tree.runner import TreeRunner
from tests.fakellm import FakeLLM, Reply
from tests.functional.treeharness import (
    agent_config,
    config_toml,
    file_agent,
    git,
    make_repo,
    subjects,
)


def _tree(repo, *args, timeout=120):
    return subprocess.run([sys.executable, "-m", "agentui.cli", "tree", "--repo", str(repo), *args],
                          capture_output=True, text=True, timeout=timeout)


def _popen(repo, *args):
    return subprocess.Popen([sys.executable, "-m", "agentui.cli", "tree", "--repo", str(repo), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for(cond, what: str, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _kill(p: subprocess.Popen, *, group: bool) -> None:
    """SIGKILL: the step gets no chance to record anything (an OOM kill, a power cut)."""
    if group:
        os.killpg(p.pid, signal.SIGKILL)
    else:
        os.kill(p.pid, signal.SIGKILL)
    p.communicate(timeout=30)


def _four_leaves() -> Node:
    return Node(id="root", title="four files", children=[
        Node(id=x, order=i, title=f"write {x}.txt", goal=f"write {x}.txt", acceptance=[f"{x}.txt exists"],
             guard=f"test -f {x}.txt")
        for i, x in enumerate("abcd")])


def test_a_step_killed_at_any_point_is_recovered_by_the_next(fakellm, tmp_path):
    """SIGKILL during the agent, during the guard, inside `git commit` and right after it: each
    time the next `tree step` records the unfinished iteration in its own directory as a runner
    error (crash, no attempt used), commits what the killed step left, and goes on; the run ends
    complete with every iteration logged."""
    repo = make_repo(tmp_path / "repo")
    cfg = config_toml(tmp_path / "agentui.toml", fakellm, tmp_path / "data")
    file_agent(fakellm)
    lay = init_layout(repo, "four files", node_id="root")
    pidf, slow = tmp_path / "guard.pid", tmp_path / "slow-guard"
    tree = _four_leaves()
    # node b's guard sleeps while the flag file exists: the kill lands inside it
    tree.children[1].guard = f"if [ -e {slow} ]; then echo $$ > {pidf}; sleep 60; fi; test -f b.txt"
    write_tree(lay.tree, tree)
    lay.config.write_text(render_config(TreeConfig(guard="true", decompose=False)))
    hooks = repo / ".git/hooks"
    in_commit, after_commit = tmp_path / "in-commit", tmp_path / "after-commit"
    for hook, flag in (("prepare-commit-msg", in_commit), ("post-commit", after_commit)):
        (hooks / hook).write_text(f"#!/bin/sh\nif [ -e {flag} ]; then touch {flag}.reached; sleep 60; fi\n")
        (hooks / hook).chmod(0o755)
    assert _tree(repo, "start", "--run-id", "r1").returncode == 0
    it = repo / ".agentui/iterations/r1"

    # 1. killed while the agent waits for the model
    fakellm.script("executor", [Reply.fault("hang")])
    p = _popen(repo, "--config", str(cfg), "step", "--yes")
    _wait_for(lambda: fakellm.calls("executor"), "the executor call")
    _kill(p, group=True)
    assert (it / "1").is_dir() and not (it / "1/meta.json").exists()
    r = _tree(repo, "--config", str(cfg), "step", "--yes")
    assert r.returncode == 0, r.stderr
    assert "iteration 1 (a) was left unfinished by a killed step" in r.stderr
    assert subjects(repo)[-2:] == ["chore(tree): a runner error (crash)", "feat(tree): a done"]
    meta1 = json.loads((it / "1/meta.json").read_text())
    assert (meta1["runner_error"], meta1["status"], meta1["recovered"]) == ("crash", "error", True)
    assert (it / "1/runner_error.log").read_text().startswith("runner error (crash)")
    assert load_tree(lay.tree).find("a").attempts == 0  # a crash uses no attempt

    # 2. killed inside the guard (its own process group sleeps on; the test ends it)
    slow.touch()
    p = _popen(repo, "--config", str(cfg), "step", "--yes")
    _wait_for(lambda: pidf.exists() and pidf.read_text().strip(), "the guard")
    _kill(p, group=True)
    os.killpg(int(pidf.read_text()), signal.SIGKILL)
    slow.unlink()
    assert (repo / "b.txt").exists() and git(repo, "status", "--porcelain")  # the agent's work, uncommitted
    r = _tree(repo, "--config", str(cfg), "step", "--yes")
    assert r.returncode == 0, r.stderr
    assert subjects(repo)[-2:] == ["chore(tree): b runner error (crash)", "feat(tree): b done"]
    assert git(repo, "show", "--stat", "HEAD~1").count("b.txt") == 1  # committed with the crash record

    # 3. killed inside `git commit` (git and its hook go too), the run state already written
    in_commit.touch()
    p = _popen(repo, "--config", str(cfg), "step", "--yes")
    _wait_for(lambda: Path(f"{in_commit}.reached").exists(), "the commit")
    _kill(p, group=True)
    in_commit.unlink()
    assert json.loads(lay.run_state.read_text())["next_iteration"] == 6  # written, never committed
    r = _tree(repo, "--config", str(cfg), "step", "--yes")
    assert r.returncode == 0, r.stderr
    assert subjects(repo)[-2:] == ["chore(tree): c runner error (crash)", "feat(tree): c done"]

    # 4. killed right after the commit landed, before meta.json was written
    after_commit.touch()
    p = _popen(repo, "--config", str(cfg), "step", "--yes")
    _wait_for(lambda: Path(f"{after_commit}.reached").exists(), "the post-commit hook")
    _kill(p, group=True)
    after_commit.unlink()
    r = _tree(repo, "--config", str(cfg), "step", "--yes")
    assert r.returncode == 2, r.stderr  # complete: the last iteration had been committed
    meta7 = json.loads((it / "7/meta.json").read_text())  # filled in from the commit and the run state
    assert (meta7["node_id"], meta7["status"], meta7["guard"], meta7["recovered"]) == ("d", "done", "pass", True)
    assert meta7["commit"] == git(repo, "rev-parse", "HEAD").strip()

    assert sorted(int(x.name) for x in it.iterdir()) == [1, 2, 3, 4, 5, 6, 7]
    assert all((it / str(n) / "meta.json").is_file() for n in range(1, 8))
    assert git(repo, "status", "--porcelain") == ""
    done = load_tree(lay.tree)
    assert done.passes and [c.attempts for c in done.children] == [0, 0, 0, 0]
    assert _tree(repo, "recover").stdout.startswith("nothing to recover")


def test_tree_recover_records_the_unfinished_iteration_without_stepping(fakellm, tmp_path):
    repo = make_repo(tmp_path / "repo")
    cfg = config_toml(tmp_path / "agentui.toml", fakellm, tmp_path / "data")
    file_agent(fakellm)
    assert _tree(repo, "init", "write a.txt", "--id", "a", "--guard", "test -f a.txt").returncode == 0
    assert _tree(repo, "start", "--run-id", "r1").returncode == 0
    fakellm.script("executor", [Reply.fault("hang")])
    p = _popen(repo, "--config", str(cfg), "step", "--yes")
    _wait_for(lambda: fakellm.calls("executor"), "the executor call")
    _kill(p, group=True)
    (repo / ".git/index.lock").write_text("")  # what a git command killed mid-write leaves
    r = _tree(repo, "recover")
    assert r.returncode == 1 and "index.lock exists" in r.stderr and "delete it" in r.stderr, r.stderr
    (repo / ".git/index.lock").unlink()
    r = _tree(repo, "recover")
    assert r.returncode == 0 and r.stdout.startswith("recovered iteration 1 (a)"), (r.stdout, r.stderr)
    assert subjects(repo)[-1] == "chore(tree): a runner error (crash)"
    assert git(repo, "status", "--porcelain") == ""
    assert json.loads((repo / ".agentui/state/run_state.json").read_text())["next_iteration"] == 2


def test_a_second_run_on_the_tree_is_refused_naming_the_holder(tmp_path):
    """Two runs on one tree: the second says who holds it and exits 2 (nothing ran), instead of
    failing later with advice about the data dir or the memory store."""
    from agentui.tree.lock import RunLock

    repo = make_repo(tmp_path / "repo")
    assert _tree(repo, "init", "write a.txt", "--id", "a", "--guard", "true").returncode == 0
    assert _tree(repo, "start", "--run-id", "r1").returncode == 0
    before = subjects(repo)
    held = RunLock(repo.resolve())
    held.acquire()  # this process is the run in progress
    try:
        for action in (["step", "--yes"], ["run", "--yes"], ["recover"]):
            r = _tree(repo, "--base-url", "http://127.0.0.1:9/v1", *action)
            assert r.returncode == 2, (action, r.stdout, r.stderr)
            assert f"another run holds this tree (pid {os.getpid()})" in r.stderr, (action, r.stderr)
        assert subjects(repo) == before and git(repo, "status", "--porcelain") == ""
    finally:
        held.release()
    # released (or its holder killed): the tree is free again
    r = _tree(repo, "recover")
    assert r.returncode == 0 and "nothing to recover" in r.stdout


def test_the_lock_dies_with_its_holder(tmp_path):
    repo = make_repo(tmp_path / "repo")
    code = ("import sys, time; from pathlib import Path; from agentui.tree.lock import RunLock\n"
            "RunLock(Path(sys.argv[1])).acquire(); print('held', flush=True); time.sleep(60)\n")
    p = subprocess.Popen([sys.executable, "-c", code, str(repo)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "held"
        from agentui.tree.lock import RunLock, RunLocked

        with pytest.raises(RunLocked, match=f"pid {p.pid}"):
            RunLock(repo).acquire()
    finally:
        p.kill()
        p.wait()
    lock = RunLock(repo)
    lock.acquire()
    lock.release()


def _runner(tmp_path, fake, tree: Node, guard: str, **cfg):
    repo = make_repo(tmp_path / "repo")
    lay = init_layout(repo, "tree", node_id="root", guard=guard)
    write_tree(lay.tree, tree)
    lay.config.write_text(render_config(TreeConfig(guard=guard, **cfg)))
    runner = TreeRunner(lay, agent_config(fake, tmp_path / "data"), yes=True)
    runner.start("r")
    return repo, lay, runner


async def test_edits_the_guard_makes_to_the_tree_are_not_blamed_on_the_agent(fakellm, tmp_path):
    """A passing guard that rewrites tree.json (here: a passed node's title) leaves the iteration
    a pass: the tree the agent left is read before the guard runs, and the guard's edits are
    dropped."""
    file_agent(fakellm)
    tree = Node(id="root", title="root", children=[
        Node(id="a", order=0, title="done already", passes=True),
        Node(id="b", order=1, title="write b.txt", goal="write b.txt", acceptance=["b.txt exists"])])
    edit = ("import json; p='.agentui/state/tree.json'; d=json.load(open(p)); "
            "d['children'][0]['title']='touched by the guard'; json.dump(d, open(p, 'w'))")
    guard = f'{sys.executable} -c "{edit}" && test -f b.txt'
    repo, lay, runner = _runner(tmp_path, fakellm, tree, guard, decompose=False)
    res = await runner.step()
    assert (res.agent_status, res.guard, res.status) == ("done", "pass", "complete"), res
    after = load_tree(lay.tree)
    assert after.find("a").title == "done already" and after.find("b").passes and after.find("b").attempts == 0
    assert not (lay.iteration_dir("r", 1) / "agent_error.log").exists()
    assert subjects(repo)[-1] == "feat(tree): b done" and git(repo, "status", "--porcelain") == ""


async def test_step_runs_only_on_the_runs_own_branch(fakellm, tmp_path):
    from agentui.tree.git import GitError

    file_agent(fakellm)
    repo, lay, runner = _runner(tmp_path, fakellm, Node(id="a", title="write a.txt", goal="write a.txt"),
                                "test -f a.txt", decompose=False)
    git(repo, "checkout", "-q", "-b", "elsewhere")
    before = subjects(repo)
    with pytest.raises(GitError, match="works on 'runner/r', but HEAD is on 'elsewhere'"):
        await runner.step()
    assert subjects(repo) == before and not (lay.iterations / "r").exists()
    assert not fakellm.calls()  # refused before the model was asked anything
    git(repo, "checkout", "-q", "runner/r")
    assert (await runner.step()).status == "complete"


def _big(n_groups: int, per: int) -> Node:
    groups = [Node(id=f"g{g}", order=g, title=f"group {g} " + "x" * 40, children=[
        Node(id=f"g{g}.{k}", order=k, title=f"leaf {g}.{k} " + "y" * 40, goal="z" * 60, passes=True)
        for k in range(per)]) for g in range(n_groups)]
    for grp in groups:
        grp.passes = True
    last = groups[-1].children[-1]
    last.passes, last.title, last.goal = False, "write z.txt", "write z.txt"
    groups[-1].passes = False
    return Node(id="root", title="a big tree", children=groups)


async def test_the_tree_planner_prompt_has_a_fixed_budget(fakellm, tmp_path):
    """A 2,001-node tree: the planner gets the node, its ancestors, its siblings near it and counts
    for the rest, within the budget (the whole tree's outline is ~38 characters a node: ~76,000 here)."""
    file_agent(fakellm)
    tree = _big(40, 49)
    repo, lay, runner = _runner(tmp_path, fakellm, tree, "test -f z.txt")
    res = await runner.step()
    assert res.status == "complete", res
    [call] = fakellm.calls("tree_planner")
    user = [m["content"] for m in call["messages"] if m["role"] == "user"][-1]
    assert len(user) < 4500, len(user)  # the node (~60 characters here) and the tree's 1,000 tokens at most
    part = user.split("Where it sits in the tree (read-only):\n")[1]
    assert len(part) <= 4000
    assert "The tree has 2001 nodes: 1998 passed, 0 stuck, 1 open leaves." in part
    assert "[ ] root: a big tree" in part and "[ ] g39: group 39" in part
    assert "g39.48: write z.txt  ← this node" in part and "[x] g39.47:" in part
    assert "nodes elsewhere in the tree are not shown" in part and "g0.0" not in part


def test_bookkeeping_is_linear_in_the_tree_size():
    """The transitions of one iteration on a 4,000-node tree where nearly every node has passed
    (a lookup of each passed node by walking the whole tree would make it quadratic: seconds)."""
    from agentui.tree.model import select
    from agentui.tree.transitions import apply_iteration

    def cost(groups: int) -> float:
        tree = _big(groups, 99)
        node = select(tree).node
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            applied = apply_iteration(tree, tree, node.id, "done", "pass")
            best = min(best, time.perf_counter() - t0)
        assert applied.tree.passes
        return best

    small, big = cost(10), cost(40)  # 1,000 and 4,000 nodes
    assert big < 1.5, f"{big:.2f} s at 4,000 nodes"
    assert big < 8 * small + 0.05, (small, big)  # linear is ~4x; quadratic ~16x


class BusyModelsLLM(FakeLLM):
    """Like llama-cpp-python's server: even its model list waits for the one generation slot."""

    def _handler_class(self):  # noqa: ANN202
        base = super()._handler_class()
        fake = self

        class Handler(base):
            def do_GET(self) -> None:  # noqa: N802
                if fake.slot is not None and self.path.rstrip("/").endswith("/models"):
                    with fake.slot:
                        return super().do_GET()
                return super().do_GET()

        return Handler


def test_the_preflight_waits_for_a_busy_endpoint_like_run(tmp_path):
    """The endpoint's only slot is busy with another generation, and its model list waits for it:
    the step says so and waits (`llm.idle_wait_s`) instead of giving up after 10 s, then runs its
    iteration once the slot is free."""
    with BusyModelsLLM(single_slot=True) as fake:
        file_agent(fake)
        repo = make_repo(tmp_path / "repo")
        cfg = tmp_path / "agentui.toml"
        cfg.write_text(f'data_dir = "{tmp_path / "data"}"\n[llm]\nbase_url = "{fake.base_url}"\nmax_retries = 0\n'
                       'backoff_base_s = 0.0\nread_timeout_s = 5.0\nidle_wait_s = 30.0\n'
                       '[ggs]\nmax_replans = 1\ntime_budget_ms = 1000000000\n[pipeline]\ncorrection_budget = 0\n')
        assert _tree(repo, "init", "write a.txt", "--id", "a", "--guard", "test -f a.txt").returncode == 0
        (repo / ".agentui/state/config.toml").write_text(render_config(TreeConfig(guard="test -f a.txt",
                                                                                  decompose=False)))
        assert _tree(repo, "start", "--run-id", "r1").returncode == 0
        fake.slot.acquire()  # another process's generation holds the server's only slot
        held = True
        p = _popen(repo, "--config", str(cfg), "step", "--yes")
        try:
            err = []
            for line in p.stderr:
                err.append(line)
                if "is up but busy" in line:
                    time.sleep(1.0)
                    fake.slot.release()
                    held = False
                    break
            out, rest = p.communicate(timeout=120)
        finally:
            if held:
                fake.slot.release()
            if p.poll() is None:
                p.kill()
        stderr = "".join(err) + rest
        assert "is up but busy" in stderr and "waiting up to 30 s" in stderr, stderr
        assert p.returncode == 2, (out, stderr)  # complete
        assert subjects(repo)[-1] == "feat(tree): a done"


async def test_run_wide_limits_hold_across_separate_steps(fakellm, tmp_path):
    """run_max_iterations counts every iteration since `start`, whichever `step` or `run` ran it;
    at the limit a step runs nothing and says which limit (exit 4 from the CLI)."""
    file_agent(fakellm, behaviour=lambda _n, _t: "infeasible")  # every iteration is a retry
    tree = Node(id="a", title="write a.txt", goal="write a.txt", max_attempts=9)
    repo, lay, runner = _runner(tmp_path, fakellm, tree, "test -f a.txt", decompose=False, run_max_iterations=3)
    assert (await runner.step()).status == "open"
    again = TreeRunner(lay, runner.agent_config, yes=True)  # another invocation
    assert (await again.run(max_iterations=5)).status == "limit"
    totals = lay.load_run_state()["totals"]
    assert totals == {"iterations": 3, "tokens": totals["tokens"]} and totals["tokens"] > 0
    assert lay.run_seconds("r") > 0  # wall time stays out of the committed state (byte-stable runs)
    assert subjects(repo)[-3:] == ["chore(tree): a retry 1/9", "chore(tree): a retry 2/9", "chore(tree): a retry 3/9"]
    before = subjects(repo)
    res = await TreeRunner(lay, runner.agent_config, yes=True).step()
    assert (res.status, res.iteration) == ("limit", None)
    assert "3/3 iterations (run_max_iterations)" in res.message and subjects(repo) == before
    r = _tree(repo, "step", "--no-preflight")
    assert r.returncode == 4 and "run limit reached" in r.stdout, (r.stdout, r.stderr)
    s = _tree(repo, "status")
    assert "used: 3 iterations of 3 iterations" in s.stdout, s.stdout
    # the token limit, raised past the iteration limit
    lay.config.write_text(
        render_config(TreeConfig(guard="test -f a.txt", decompose=False, run_max_tokens=totals["tokens"] + 1))
    )
    git(repo, "commit", "-qam", "raise the limits")
    assert (await TreeRunner(lay, runner.agent_config, yes=True).run()).status == "limit"
    assert "(run_max_tokens)" in (await TreeRunner(lay, runner.agent_config, yes=True).step()).message
    assert lay.load_run_state()["totals"]["iterations"] == 4
    # and the wall-clock limit
    lay.config.write_text(render_config(TreeConfig(guard="test -f a.txt", decompose=False, run_max_wall_s=0.001)))
    git(repo, "commit", "-qam", "a wall-clock limit")
    assert "(run_max_wall_s)" in (await TreeRunner(lay, runner.agent_config, yes=True).step()).message


async def test_progress_notes_reach_later_nodes_within_their_cap(fakellm, tmp_path):
    file_agent(fakellm)
    tree = Node(id="root", title="three files", children=[
        Node(id=x, order=i, title=f"write {x}.txt", goal=f"write {x}.txt", guard=f"test -f {x}.txt")
        for i, x in enumerate("abc")])
    repo, lay, runner = _runner(tmp_path, fakellm, tree, "true", decompose=False, progress_notes_bytes=220)
    assert (await runner.step()).guard == "pass"
    notes = lay.progress.read_text()
    assert "- iteration 1 · a (done, guard pass): the file is written" in notes
    assert git(repo, "show", "--stat", "HEAD").count("progress.md") == 1  # committed with the iteration
    await runner.step()
    task_b = [m["content"] for m in fakellm.calls("perceiver")[-1]["messages"] if m["role"] == "user"][-1]
    assert "Notes from earlier iterations of this tree:\n- iteration 1 · a (done, guard pass)" in task_b
    assert (lay.context / "progress.md").read_text() == notes
    assert (await runner.step()).status == "complete"
    final = lay.progress.read_text()
    assert len(final.encode()) <= 220 and "iteration 3 · c" in final and "iteration 1 · a" not in final


@pytest.mark.parametrize("mode", ["read-write", "read-only", "off"])
async def test_the_memory_setting_of_tree_runs(fakellm, tmp_path, mode):
    """read-write: the iteration's lessons reach the user's store; read-only: recalled, never
    written; off: a throw-away store."""
    from agentui.clock import SystemClock
    from agentui.ids import UuidIds
    from agentui.memory import open_memory
    from agentui.paths import DataLayout

    file_agent(fakellm)
    repo, lay, runner = _runner(tmp_path, fakellm, Node(id="a", title="write a.txt", goal="write a.txt"),
                                "test -f a.txt", decompose=False, memory=mode)
    res = await runner.step()
    assert res.guard == "pass", res
    meta = json.loads((lay.iteration_dir("r", 1) / "meta.json").read_text())
    assert meta["memory"] == {"read-write": "data dir", "read-only": "data dir, read-only", "off": "off"}[mode]
    db = DataLayout(runner.agent_config.data_path()).memory_db
    mem = open_memory(db, SystemClock(), UuidIds()) if db.exists() else None
    try:
        n = len(mem.list()) if mem is not None else 0
    finally:
        if mem is not None:
            await mem.close()
    assert (n > 0) == (mode == "read-write"), (mode, n)
