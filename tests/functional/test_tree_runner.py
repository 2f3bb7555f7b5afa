"""The iteration runner in-process over the fake LLM, real guards, temp git repos (#16)."""

from __future__ import annotations

import json
import socket

import pytest

from agentui.tree.layout import TreeConfig, init_layout, render_config
from agentui.tree.model import Node, load_tree, write_tree
from agentui.tree.runner import TreeRunner
from tests.fakellm import Reply
from tests.functional.treeharness import agent_config, file_agent, git, make_repo, subjects


def _setup(tmp_path, fake, *, guard="test -f a.txt", tree: Node | None = None, **cfg):
    repo = make_repo(tmp_path / "repo")
    lay = init_layout(repo, "write a.txt", node_id="a", guard=guard, acceptance=["a.txt exists"])
    if tree is not None:
        write_tree(lay.tree, tree)
    lay.config.write_text(render_config(TreeConfig(guard=guard, **cfg)))
    runner = TreeRunner(lay, agent_config(fake, tmp_path / "data"), yes=True)
    runner.start("r")
    return repo, lay, runner


async def test_timeout_consumes_no_attempt_and_stops(fakellm, tmp_path):
    file_agent(fakellm)
    fakellm.script("perceiver", [Reply.fault("hang")])
    repo, lay, runner = _setup(tmp_path, fakellm, iteration_timeout_s=1.5, decompose=False)
    res = await runner.run()
    assert (res.status, res.agent_status, res.iteration) == ("error", "error", 1)
    assert "timed out" in res.error
    a = load_tree(lay.tree)
    assert (a.attempts, a.passes) == (0, False)  # no attempt consumed
    assert subjects(repo)[-1] == "chore(tree): a runner error (timeout)"
    it = lay.iteration_dir("r", 1)
    assert (it / "runner_error.log").read_text().startswith("runner error (timeout)")
    assert json.loads((it / "meta.json").read_text())["runner_error"] == "timeout"
    assert lay.load_run_state()["next_iteration"] == 2


async def test_endpoint_down_runs_and_commits_nothing(tmp_path):
    """No usable endpoint: the step neither runs nor commits (was: a "runner error" commit)."""
    from agentui.tree.runner import NotReady
    from tests.fakellm import FakeLLM

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with FakeLLM() as fake:
        repo, lay, runner = _setup(tmp_path, fake)
    runner.agent_config = runner.agent_config.model_copy(
        update={"llm": runner.agent_config.llm.model_copy(update={"base_url": f"http://127.0.0.1:{port}"})})
    before = (subjects(repo), lay.tree.read_bytes(), lay.run_state.read_bytes())
    with pytest.raises(NotReady, match=f"cannot connect to http://127.0.0.1:{port}"):
        await runner.step()
    assert (subjects(repo), lay.tree.read_bytes(), lay.run_state.read_bytes()) == before
    assert not (lay.iterations / "r").exists() and git(repo, "status", "--porcelain") == ""


async def test_no_llm_configured_runs_and_commits_nothing(tmp_path):
    from agentui.config import Config
    from agentui.tree.runner import NotReady
    from tests.fakellm import FakeLLM

    with FakeLLM() as fake:
        repo, lay, runner = _setup(tmp_path, fake)
    runner.agent_config = Config.model_validate({"data_dir": str(tmp_path / "data")})  # no endpoint at all
    before = subjects(repo)
    with pytest.raises(NotReady, match="no LLM is configured"):
        await runner.run()
    assert subjects(repo) == before and lay.load_run_state()["next_iteration"] == 1
    assert not (lay.iterations / "r").exists() and git(repo, "status", "--porcelain") == ""


async def test_guard_spawn_error_and_missing_guard_are_runner_internal(fakellm, tmp_path):
    file_agent(fakellm)
    repo, lay, runner = _setup(tmp_path, fakellm, guard="definitely-not-a-command-xyz")
    res = await runner.step()
    assert res.status == "error" and "not found" in res.error and load_tree(lay.tree).attempts == 0
    assert "definitely-not-a-command-xyz" in (lay.iteration_dir("r", 1) / "guard.log").read_text()


async def test_guard_output_is_capped_and_fed_back_as_failure_md(fakellm, tmp_path):
    seen = []

    def behaviour(_name, text):
        seen.append(text)
        return "finish"

    file_agent(fakellm, behaviour=behaviour)
    guard = "python3 -c \"import sys; print('x'*500); print('E'*300, file=sys.stderr); sys.exit(3)\""
    repo, lay, runner = _setup(tmp_path, fakellm, guard=guard, guard_output_cap_bytes=100, decompose=False)
    res = await runner.step()
    assert (res.agent_status, res.guard, load_tree(lay.tree).attempts) == ("done", "fail", 1)
    log = (lay.iteration_dir("r", 1) / "guard.log").read_text()
    assert "[truncated 401 bytes]" in log and "[truncated 201 bytes]" in log and "=== exit 3 ===" in log
    await runner.step()
    assert (lay.context / "failure.md").read_text().startswith("# Guard failed last time")
    assert not (lay.context / "history.md").exists()
    assert subjects(repo)[-2:] == ["fix(tree): a guard failed 1/3", "fix(tree): a guard failed 2/3"]


async def test_stuck_after_max_attempts_exit_status(fakellm, tmp_path):
    file_agent(fakellm, behaviour=lambda _n, _t: "infeasible")
    repo, lay, runner = _setup(tmp_path, fakellm, decompose=False)
    res = await runner.run()
    assert res.status == "stuck" and load_tree(lay.tree).attempts == 3
    assert subjects(repo)[-3:] == ["chore(tree): a retry 1/3", "chore(tree): a retry 2/3", "chore(tree): a retry 3/3"]
    assert "Previous attempt:" in json.dumps(fakellm.calls("perceiver")[-1]["messages"])  # history.md fed back
    assert (lay.context / "history.md").is_file()
    again = await runner.step()
    assert again.status == "stuck" and again.iteration is None


async def test_agent_edit_of_a_passed_node_is_an_agent_error_retry(fakellm, tmp_path):
    tree = Node(id="root", title="root", children=[
        Node(id="a", order=0, title="done already", passes=True),
        Node(id="b", order=1, title="write b.txt", goal="write b.txt", acceptance=["b.txt exists"])])
    file_agent(fakellm)
    # the executor rewrites the tree, changing the passed node `a`
    edited = tree.copy()
    edited.find("a").title = "rewritten by the agent"
    fakellm.script("executor", [
        Reply.json({"tool": "write_file", "args": {"path": ".agentui/state/tree.json",
                                                   "content": json.dumps(edited.to_dict())}}),
        Reply.json({"tool": "finish", "output": "edited"})])
    marker = tmp_path / "guard-ran"
    repo, lay, runner = _setup(tmp_path, fakellm, guard=f"touch {marker}", tree=tree, decompose=False)
    res = await runner.step()
    assert (res.agent_status, res.guard) == ("retry", "skipped")
    after = load_tree(lay.tree)
    assert after.find("a").title == "done already" and after.find("b").attempts == 1 and not after.find("b").passes
    it = lay.iteration_dir("r", 1)
    assert "passed node 'a' changed" in (it / "agent_error.log").read_text()
    # a retry skips the guard: it must not even run (an outside tester found it ran, exit 0 logged)
    assert not marker.exists() and not (it / "guard.log").exists()
    assert json.loads((it / "meta.json").read_text())["guard_exit"] is None


async def test_a_failed_commit_keeps_the_previous_tree(fakellm, tmp_path):
    """Found by an outside tester: with git unable to commit, tree.json kept `passes: true` and
    run_state said done, so `select` reported the tree complete. A runner error keeps the previous
    tree and uses no attempt (#16)."""
    file_agent(fakellm)
    repo, lay, runner = _setup(tmp_path, fakellm, guard="true", decompose=False)
    (repo / ".git/index.lock").write_text("")
    res = await runner.step()
    assert res.status == "error" and "git" in res.error
    a = load_tree(lay.tree)
    assert (a.passes, a.attempts) == (False, 0)
    rs = json.loads(lay.run_state.read_text())
    assert (rs["next_iteration"], rs["last"]["status"], rs["last"]["error"]) == (2, "error", "git")
    it = lay.iteration_dir("r", 1)
    meta = json.loads((it / "meta.json").read_text())
    assert (meta["status"], meta["runner_error"], meta["commit"]) == ("error", "git", None)
    assert json.loads((it / "tree.after.json").read_text())["passes"] is False


async def test_agent_may_edit_open_nodes_but_not_runner_fields(fakellm, tmp_path):
    tree = Node(id="root", title="root", children=[
        Node(id="b", order=1, title="write b.txt", goal="write b.txt", acceptance=["b.txt exists"]),
        Node(id="c", order=2, title="later")])
    edited = tree.copy()
    edited.find("c").title = "later, reworded"
    edited.find("c").passes = True
    edited.find("c").attempts = 2
    file_agent(fakellm)
    fakellm.script("executor", [
        Reply.json({"tool": "write_file", "args": {"path": ".agentui/state/tree.json",
                                                   "content": json.dumps(edited.to_dict())}}),
        Reply.json({"tool": "write_file", "args": {"path": "b.txt", "content": "B"}}),
        Reply.json({"tool": "finish", "output": "edited"})])
    repo, lay, runner = _setup(tmp_path, fakellm, guard="test -f b.txt", tree=tree, decompose=False)
    res = await runner.step()
    assert (res.agent_status, res.guard, res.status) == ("done", "pass", "open")
    after = load_tree(lay.tree)
    c = after.find("c")
    assert (c.title, c.passes, c.attempts) == ("later, reworded", False, 0)
    assert after.find("b").passes and not after.passes


async def test_broken_tree_from_agent_is_restored_and_costs_an_attempt(fakellm, tmp_path):
    file_agent(fakellm)
    fakellm.script("executor", [
        Reply.json({"tool": "write_file", "args": {"path": ".agentui/state/tree.json", "content": "{oops"}}),
        Reply.json({"tool": "finish", "output": "x"})])
    repo, lay, runner = _setup(tmp_path, fakellm, guard="true", decompose=False)
    res = await runner.step()
    assert res.agent_status == "retry" and load_tree(lay.tree).attempts == 1
    assert "not valid JSON" in (lay.iteration_dir("r", 1) / "agent_error.log").read_text()


async def test_invalid_decomposition_is_a_retry(fakellm, tmp_path):
    file_agent(fakellm, decompose=lambda _u: [{"title": "only one"}])
    repo, lay, runner = _setup(tmp_path, fakellm)
    res = await runner.step()
    a = load_tree(lay.tree)
    assert (res.agent_status, a.attempts, a.children) == ("retry", 1, [])
    log = (lay.iteration_dir("r", 1) / "agent_error.log").read_text()
    assert "decompose needs 2..6 children, got 1" in log and "did not gain children" in log


async def test_decomposition_stops_at_max_depth(fakellm, tmp_path):
    file_agent(fakellm, decompose=lambda _u: [{"title": "x"}, {"title": "y"}])
    repo, lay, runner = _setup(tmp_path, fakellm, guard="true", max_depth=1)
    await runner.step()
    assert [c.id for c in load_tree(lay.tree).children] == ["a.1", "a.2"]
    res = await runner.step()  # a.1 is at depth 1 = max_depth: executed, not split again
    assert (res.node, res.agent_status, res.guard) == ("a.1", "done", "pass")
    assert len(fakellm.calls("tree_planner")) == 1


async def test_runs_are_byte_stable(tmp_path):
    """Same script twice → identical tree.json bytes, run state and commit subjects."""
    from tests.fakellm import FakeLLM

    outs = []
    for k in (1, 2):
        with FakeLLM() as fake:
            file_agent(fake, decompose=lambda u: [{"title": "write a.txt"}, {"title": "write b.txt"}]
                       if "Node a:" in u else None)
            repo, lay, runner = _setup(tmp_path / str(k), fake, guard="true")
            res = await runner.run()
        assert res.status == "complete"
        outs.append((lay.tree.read_bytes(), lay.run_state.read_bytes(), subjects(repo),
                     git(repo, "ls-files").splitlines()))
    assert outs[0] == outs[1]
    assert outs[0][0].endswith(b"}\n")


async def test_endpoint_failure_inside_the_pipeline_is_runner_internal(fakellm, tmp_path):
    """#12's infrastructure outcome (TaskEnd.infra) maps to a runner error: no attempt, run stops."""
    file_agent(fakellm)
    fakellm.script("planner", [Reply.fault("http500")] * 3)
    repo, lay, runner = _setup(tmp_path, fakellm, decompose=False)
    res = await runner.run()
    assert (res.status, res.agent_status, res.iteration) == ("error", "error", 1)
    assert "LLM endpoint failed" in res.error
    assert load_tree(lay.tree).attempts == 0
    assert subjects(repo)[-1] == "chore(tree): a runner error (llm)"


async def test_destructive_commands_ask_the_injected_confirm_handler(fakellm, tmp_path):
    from agentui.contracts import ConfirmationChoice

    asked = []

    async def deny(req):  # noqa: ANN001, ANN202
        asked.append(req.command)
        return ConfirmationChoice.DENY

    file_agent(fakellm)
    fakellm.script("executor", [Reply.json({"tool": "write_file", "args": {"path": "README", "content": "gone"}}),
                                Reply.json({"tool": "finish", "output": "tried"})])
    repo, lay, runner = _setup(tmp_path, fakellm, guard="true", decompose=False)
    runner.yes, runner.confirm = False, deny
    await runner.step()
    assert len(asked) == 1 and "README" in asked[0]
    assert (repo / "README").read_text() == "project\n"  # the denial held


def _two_leaves(tmp_path, fake):
    """Leaves a.txt and b.txt of one kind of work (one memory space)."""
    from tests.functional.pipeline import perceive
    from tests.functional.treeharness import last_user

    file_agent(fake)
    fake.responder("perceiver", lambda req: perceive(f"write the file {_file_in(last_user(req))}"))
    tree = Node(id="root", title="files", children=[
        Node(id="a", order=1, title="write a.txt", goal="create a.txt", guard="test -f a.txt"),
        Node(id="b", order=2, title="write b.txt", goal="create b.txt", guard="test -f b.txt")])
    return _setup(tmp_path, fake, guard="true", tree=tree, decompose=False)


def _file_in(text):
    import re

    m = re.search(r"\b([a-z0-9_]+\.txt)\b", text)
    return m.group(1) if m else "unknown.txt"


async def test_what_iteration_1_learned_reaches_iteration_2(fakellm, tmp_path):
    """The user's persistent memory (data dir) across iterations: GGS's Megram from iteration 1's
    accept is in the store and in iteration 2's planner prompt (was: a fresh in-memory store each)."""
    from agentui.clock import SystemClock
    from agentui.ids import UuidIds
    from agentui.memory import open_memory

    repo, lay, runner = _two_leaves(tmp_path, fakellm)
    res = await runner.step()
    assert (res.node, res.agent_status, res.guard) == ("a", "done", "pass")
    mem = open_memory(tmp_path / "data" / "memory.leveldb", SystemClock(), UuidIds())
    learned = [m.content for m in mem.list(None, "intent:write_files", None)]
    await mem.close()
    assert learned == [
        'worked (accept) for "write files": 1 step(s) [write_file]; calls that worked: write_file `a.txt`'
    ]
    n1 = len(fakellm.calls("planner"))
    res = await runner.step()
    assert (res.node, res.status) == ("b", "complete")
    prompt = fakellm.calls("planner")[n1]["messages"][1]["content"]
    assert 'SHOULD PREFER:\n- worked (accept) for "write files": 1 step(s) [write_file]; calls that worked: ' \
           "write_file `a.txt` [memory " in prompt
    assert json.loads((lay.iteration_dir("r", 2) / "meta.json").read_text())["memory"] == "data dir"


async def test_an_unattended_step_is_the_go_ahead_for_memorys_caution(fakellm, tmp_path):
    """A mixed record for this kind of work: the planner asks to go ahead; with nobody to ask and no
    --yes the tree run gives the go-ahead (logged), instead of abandoning the leaf and its attempt."""
    from agentui.clock import SystemClock
    from agentui.ids import UuidIds
    from agentui.memory import ENV_LOCAL, open_memory

    mem = open_memory(tmp_path / "data" / "memory.leveldb", SystemClock(), UuidIds())
    for sigma in (1.0, -1.0):
        mem.remember(f"outcome {sigma}", level="M", space="intent:write_files", entity=ENV_LOCAL, sigma=sigma,
                     f=0.9, k=0.05)
    await mem.close()
    repo, lay, runner = _two_leaves(tmp_path, fakellm)
    runner.yes, runner.confirm = False, None
    res = await runner.step()
    assert (res.node, res.agent_status, res.guard) == ("a", "done", "pass")
    logs = [json.loads(x) for f in (lay.iteration_dir("r", 1) / "pipeline" / "tasks").glob("*.jsonl")
            for x in f.read_text().splitlines()]
    assert [(x["go_ahead"], x["by"]) for x in logs if x["kind"] == "memory_caution"] == [(True, "unattended")]


async def test_memory_in_use_gives_a_temporary_memory_and_a_warning(fakellm, tmp_path):
    from agentui.clock import SystemClock
    from agentui.ids import UuidIds
    from agentui.memory import open_memory

    repo, lay, runner = _two_leaves(tmp_path, fakellm)
    seen = []
    runner.listeners.append(seen.append)
    held = open_memory(tmp_path / "data" / "memory.leveldb", SystemClock(), UuidIds())  # another agentui
    try:
        res = await runner.step()
    finally:
        await held.close()
    assert res.agent_status == "done"
    warnings = [e["message"] for e in seen if e["kind"] == "warning"]
    assert len(warnings) == 1 and "temporary memory" in warnings[0]
    assert json.loads((lay.iteration_dir("r", 1) / "meta.json").read_text())["memory"] == "temporary"


async def test_damaged_memory_store_runs_and_commits_nothing(fakellm, tmp_path):
    from agentui.tree.runner import NotReady

    repo, lay, runner = _two_leaves(tmp_path, fakellm)
    db = tmp_path / "data" / "memory.leveldb"
    db.mkdir(parents=True)
    (db / "CURRENT").write_text("MANIFEST-000099\n")  # names a manifest that is not there
    before = subjects(repo)
    with pytest.raises(NotReady):
        await runner.step()
    assert subjects(repo) == before and not (lay.iterations / "r").exists()
    assert (db / "CURRENT").read_text() == "MANIFEST-000099\n"  # never recreated (#15)


async def test_head_moved_to_main_during_the_iteration_commits_nothing(fakellm, tmp_path):
    """The branch is checked again before the commit: an iteration never lands on main (held-out corpus)."""
    file_agent(fakellm)
    repo, lay, runner = _setup(tmp_path, fakellm, guard="test -f a.txt && git checkout -q main", decompose=False)
    res = await runner.step()
    assert (res.status, res.agent_status, res.commit) == ("error", "error", None)
    assert "HEAD moved from 'runner/r' to 'main'" in res.error
    assert git(repo, "log", "--format=%s", "main").splitlines() == ["initial"]
    assert git(repo, "log", "--format=%s", "runner/r").splitlines()[0] == "chore(tree): start run r"
    assert load_tree(lay.tree).attempts == 0  # no attempt consumed
    it = lay.iteration_dir("r", 1)
    assert (it / "runner_error.log").read_text().startswith("runner error (git): HEAD moved")
    meta = json.loads((it / "meta.json").read_text())
    assert (meta["runner_error"], meta["commit"]) == ("git", None)
    assert lay.load_run_state()["next_iteration"] == 2


async def test_unspawnable_guard_is_a_committed_runner_error_each_step(fakellm, tmp_path):
    """A guard with a NUL (validate rejects it) ends the iteration as runner error (guard) before the
    agent runs: committed, no attempt, and the next step is iteration 2 (was: a crash, no commit)."""
    tree = Node(id="a", title="write a.txt", goal="write a.txt", guard="true\0false")
    file_agent(fakellm)
    repo, lay, runner = _setup(tmp_path, fakellm, tree=tree, decompose=False)
    for n in (1, 2):
        res = await runner.step()
        assert (res.status, res.iteration, res.agent_status) == ("error", n, "error")
        assert subjects(repo)[-1] == "chore(tree): a runner error (guard)"
        it = lay.iteration_dir("r", n)
        assert "NUL character" in (it / "runner_error.log").read_text()
        assert json.loads((it / "meta.json").read_text())["runner_error"] == "guard"
    assert load_tree(lay.tree).attempts == 0 and not fakellm.calls("perceiver")
    assert git(repo, "status", "--porcelain") == ""


async def test_empty_child_title_is_an_invalid_decomposition_not_a_parse_error(fakellm, tmp_path):
    file_agent(fakellm, decompose=lambda _u: [{"title": ""}, {"title": "x"}])
    repo, lay, runner = _setup(tmp_path, fakellm)
    res = await runner.step()
    a = load_tree(lay.tree)
    assert (res.agent_status, a.attempts, a.children) == ("retry", 1, [])
    assert "a child has an empty title" in (lay.iteration_dir("r", 1) / "agent_error.log").read_text()
