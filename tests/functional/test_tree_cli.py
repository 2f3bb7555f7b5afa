"""`agentui tree` as a user runs it: real subprocesses, a temp git repo, the fake LLM (#16)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.functional.treeharness import config_toml, file_agent, git, make_repo, subjects


def _tree(repo, *args, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "agentui.cli", "tree", "--repo", str(repo), *args],
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


def test_three_node_tree_runs_to_completion(fakellm, tmp_path):
    """root → decomposed into a.txt and b.txt; a.txt fails its guard once, b.txt is retried once."""
    repo = make_repo(tmp_path / "repo")
    cfg = config_toml(tmp_path / "agentui.toml", fakellm, tmp_path / "data")

    def children(user: str):
        if "Node root:" in user:
            return [{"title": "write a.txt", "goal": "create a.txt", "acceptance": ["a.txt exists"]},
                    {"title": "write b.txt", "goal": "create b.txt", "acceptance": ["b.txt exists"]}]
        return None

    def behaviour(name, text):
        if name == "a.txt":
            return "write" if "FIX" in text else "finish"  # first `done` leaves no file: guard fails
        return "write" if "RETRY" in text else "infeasible"  # first try abandons: retry

    file_agent(fakellm, decompose=children, behaviour=behaviour)
    r = _tree(repo, "init", "write a.txt and b.txt", "--id", "root", "--guard", "test -f a.txt")
    assert r.returncode == 0, r.stderr
    r = _tree(repo, "start", "--run-id", "r1")
    assert r.returncode == 0, r.stderr
    assert git(repo, "branch", "--show-current").strip() == "runner/r1"
    r = _tree(repo, "--config", str(cfg), "run", "--yes")
    assert r.returncode == 2, (r.stdout, r.stderr)  # 2 = complete
    assert subjects(repo)[1:] == [
        "chore(tree): start run r1",
        "chore(tree): root decomposed into 2",
        "fix(tree): root.1 guard failed 1/3",
        "feat(tree): root.1 done",
        "chore(tree): root.2 retry 1/3",
        "feat(tree): root.2 done",
    ]
    assert (repo / "a.txt").read_text() == "A.TXT" and (repo / "b.txt").read_text() == "B.TXT"
    assert git(repo, "status", "--porcelain") == ""  # every iteration ended in a commit
    tree = json.loads((repo / ".agentui/state/tree.json").read_text())
    assert tree["passes"] is True
    assert [(c["id"], c["passes"], c["attempts"]) for c in tree["children"]] == [("root.1", True, 1),
                                                                                  ("root.2", True, 1)]
    it = repo / ".agentui/iterations/r1"
    assert sorted(int(p.name) for p in it.iterdir()) == [1, 2, 3, 4, 5]
    meta2 = json.loads((it / "2/meta.json").read_text())
    assert (meta2["node_id"], meta2["status"], meta2["guard"], meta2["guard_exit"]) == ("root.1", "done", "fail", 1)
    assert meta2["tokens"]["llm_calls"] >= 6 and meta2["task_id"]
    assert "=== stdout ===" in (it / "2/guard.log").read_text()
    assert (it / "2/pipeline/tasks").is_dir() and (it / "2/pipeline/recordings").is_dir()
    assert json.loads((it / "1/planner_output.json").read_text())["decision"] == "decompose"
    assert json.loads((it / "1/tree.before.json").read_text())["children"] == []
    # the FIX marker proves failure.md's guard log reached iteration 3; RETRY proves history.md reached 5
    assert "files are plain text" in (repo / ".agentui/state/assumptions.md").read_text()
    # the loop ends cleanly; a further step reports complete
    assert _tree(repo, "step").returncode == 2
    s = _tree(repo, "status", "--json")
    assert s.returncode == 2 and json.loads(s.stdout)["counts"] == {"nodes": 3, "passed": 3, "stuck": 0}
    assert "iteration 5 · root/root.2" in r.stdout


def test_init_validate_select_status_and_errors(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    assert _tree(repo, "validate").returncode == 1
    r = _tree(repo, "init", "ship", "it", "-a", "tests pass", "--guard", "true")
    assert r.returncode == 0, r.stderr
    assert (repo / ".agentui/.gitignore").read_text().splitlines()[1:] == ["context/", "iterations/"]
    assert (
        json.loads((repo / ".agentui/state/schema.json").read_text())["$defs"]["node"]["additionalProperties"] is False
    )
    r = _tree(repo, "select")
    assert (r.returncode, r.stdout.strip()) == (0, "select: status=open id=ship-it path=ship-it attempts=0/3")
    assert _tree(repo, "init", "again").returncode == 1  # never overwrites a tree silently
    doc = json.loads((repo / ".agentui/state/tree.json").read_text())
    doc["attempts"] = 5
    doc["extra"] = 1
    doc["children"] = [{"id": "bad id"}]
    (repo / ".agentui/state/tree.json").write_text(json.dumps(doc))
    r = _tree(repo, "validate")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    lines = [x[4:] for x in r.stderr.splitlines() if x.startswith("  - ")]
    assert lines == sorted(lines) and len(lines) >= 9
    assert "$: unknown field 'extra' (additionalProperties is false)" in lines
    doc = json.loads((repo / ".agentui/state/tree.json").read_text())
    doc.pop("extra")
    doc["children"] = []
    (repo / ".agentui/state/tree.json").write_text(json.dumps(doc))
    r = _tree(repo, "validate")
    assert r.returncode == 1 and "attempts 5 outside 0..max_attempts 3" in r.stderr
    doc["attempts"] = 3
    (repo / ".agentui/state/tree.json").write_text(json.dumps(doc))
    assert _tree(repo, "select").returncode == 3  # stuck
    assert "[!] ship-it" in _tree(repo, "status").stdout
    (repo / ".agentui/state/config.toml").write_text("gaurd = 'x'\n")
    r = _tree(repo, "validate")
    assert r.returncode == 1 and "gaurd" in r.stderr and "Traceback" not in r.stderr


def test_step_refuses_main_and_start_requires_git(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert _tree(plain, "init", "x", "--guard", "true").returncode == 0
    r = _tree(plain, "start")
    assert r.returncode == 1 and "not a git repository" in r.stderr
    repo = make_repo(tmp_path / "repo")
    assert _tree(repo, "init", "x", "--guard", "true").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tree")
    git(repo, "checkout", "-q", "-b", "runner/manual")
    (repo / ".agentui/state/run_state.json").write_text('{"run_id": "m", "next_iteration": 1, "last": null}')
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "state")
    git(repo, "checkout", "-q", "main")
    r = _tree(repo, "step")
    assert r.returncode == 1 and "refusing to step on 'main'" in r.stderr
    git(repo, "checkout", "-q", "runner/manual")
    (repo / "stray.txt").write_text("x")
    r = _tree(repo, "step")
    assert r.returncode == 1 and "not clean (stray.txt)" in r.stderr


@pytest.mark.parametrize(("sig", "code", "name"), [(signal.SIGINT, 130, "Ctrl+C"), (signal.SIGTERM, 143, "SIGTERM"),
                                                   (signal.SIGHUP, 129, "SIGHUP")])
def test_a_signal_records_the_iteration_and_exits_128_plus_it(fakellm, tmp_path, sig, code, name):
    """SIGTERM/SIGHUP (timeout, CI runners, a closed terminal) end a step like Ctrl+C: was rc -15,
    no commit, no meta.json (#15, #16)."""
    import time

    from tests.fakellm import Reply

    repo = make_repo(tmp_path / "repo")
    cfg = config_toml(tmp_path / "agentui.toml", fakellm, tmp_path / "data")
    file_agent(fakellm)
    fakellm.script("perceiver", [Reply.fault("hang")])
    assert _tree(repo, "init", "write a.txt", "--id", "a", "--guard", "test -f a.txt").returncode == 0
    assert _tree(repo, "start", "--run-id", "r1").returncode == 0
    p = subprocess.Popen([sys.executable, "-m", "agentui.cli", "tree", "--repo", str(repo), "--config", str(cfg),
                          "run"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(200):
        time.sleep(0.1)
        if fakellm.calls("perceiver"):
            break
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == code, (out, err)
    assert "Traceback" not in err and f"interrupted ({name})" in err
    assert subjects(repo)[-1] == "chore(tree): a runner error (interrupted)"
    assert f"interrupted ({name})" in (repo / ".agentui/iterations/r1/1/runner_error.log").read_text()
    assert json.loads((repo / ".agentui/state/tree.json").read_text())["attempts"] == 0
    assert json.loads((repo / ".agentui/state/run_state.json").read_text())["next_iteration"] == 2
    assert git(repo, "status", "--porcelain") == ""


def _started(tmp_path):
    repo = make_repo(tmp_path / "repo")
    assert _tree(repo, "init", "write a.txt", "--id", "a", "--guard", "test -f a.txt").returncode == 0
    assert _tree(repo, "start", "--run-id", "r1").returncode == 0
    return repo


def test_step_without_an_llm_runs_and_commits_nothing(tmp_path):
    """Was: a `chore(tree): a runner error (llm)` commit. Now `agentui run`'s message, exit 2."""
    repo = _started(tmp_path)
    before = subjects(repo)
    for action in ("step", "run"):
        r = _tree(repo, action)
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert r.stderr.startswith(f"agentui tree {action}: no LLM is configured: set AGENTUI_BASE_URL")
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert subjects(repo) == before and git(repo, "status", "--porcelain") == ""
    assert not (repo / ".agentui/iterations/r1").exists()
    assert json.loads((repo / ".agentui/state/run_state.json").read_text())["next_iteration"] == 1


def test_global_options_after_the_action(fakellm, tmp_path):
    """`tree step --base-url URL --model M` was "unrecognized arguments"; both placements work."""
    import socket

    repo = _started(tmp_path)
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    down = f"http://127.0.0.1:{port}/v1"
    for args in (("step", "--yes", "--base-url", down, "--model", "m"), ("--base-url", down, "step", "--yes")):
        r = _tree(repo, *args)
        assert r.returncode == 2 and f"agentui tree step: LLM endpoint {down}" in r.stderr, (args, r.stderr)
        assert "unrecognized" not in r.stderr
    file_agent(fakellm)
    data = tmp_path / "data"
    r = _tree(repo, "step", "--yes", "--base-url", fakellm.base_url, "--model", "fake-model", "--data-dir", str(data),
              "--repo", str(repo))
    assert r.returncode == 2, (r.stdout, r.stderr)  # 2 = the tree is complete
    assert subjects(repo)[-1] == "feat(tree): a done"
    assert (data / "memory.leveldb").is_dir()  # --data-dir after the action reached the runner
    assert (repo / "a.txt").read_text() == "A.TXT"


def test_validate_checks_schema_json_and_rejects_hostile_trees(tmp_path):
    """schema.json deleted, broken or edited is an error with its fix; a 5000-digit int, a 3000-deep
    tree and a NUL guard are one clear error each, never the crash handler (held-out corpus)."""
    repo = tmp_path / "r"
    repo.mkdir()
    assert _tree(repo, "init", "ship", "--guard", "true").returncode == 0
    schema = repo / ".agentui/state/schema.json"
    for content in (None, "{ broken", json.dumps({"type": "object"})):
        if content is None:
            schema.unlink()
        else:
            schema.write_text(content)
        r = _tree(repo, "validate")
        assert r.returncode == 1 and "schema.json: " in r.stderr and "--write-schema" in r.stderr, r.stderr
    r = _tree(repo, "validate", "--write-schema")
    assert r.returncode == 0 and r.stdout.startswith("wrote "), r.stderr
    tree = repo / ".agentui/state/tree.json"
    good = tree.read_text()
    one = ('{{"id":"n{}","order":0,"title":"t","goal":"g","acceptance":[],"passes":false,"attempts":0,'
           '"max_attempts":1,"children":[')
    deep = "".join(one.format(i) for i in range(3000)) + "]}" * 3000
    for bad, why in ((good.replace('"attempts": 0', '"attempts": ' + "9" * 5000), "4300 digits"),
                     (deep, "100 levels"), (good.replace('"children"', '"guard": "true\\u0000x", "children"'), "NUL")):
        tree.write_text(bad)
        for action in ("validate", "select", "status"):
            r = _tree(repo, action)
            out = r.stdout + r.stderr
            assert "unexpected error" not in out and "Traceback" not in out, (action, out[-300:])
            if action == "validate" or why != "NUL":
                assert r.returncode == 1 and why in out, (action, why, out[-300:])


def _step_in_guard(fakellm, tmp_path):
    """`tree step --yes` started and now inside its guard (`sleep 60`): (repo, process, guard pid)."""
    repo = make_repo(tmp_path / "repo")
    cfg = config_toml(tmp_path / "agentui.toml", fakellm, tmp_path / "data")
    file_agent(fakellm)
    pidf = tmp_path / "guard.pid"
    assert (
        _tree(repo, "init", "write a.txt", "--id", "a", "--guard", f"echo $$ > {pidf}; exec sleep 60").returncode == 0
    )
    assert _tree(repo, "start", "--run-id", "r1").returncode == 0
    p = subprocess.Popen([sys.executable, "-m", "agentui.cli", "tree", "--repo", str(repo), "--config", str(cfg),
                          "step", "--yes"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(600):
        time.sleep(0.1)
        if pidf.exists() and pidf.read_text().strip():
            break
    return repo, p, int(pidf.read_text())


def test_sigterm_during_the_guard_stops_it_and_commits(fakellm, tmp_path):
    """Found by an outside tester: SIGTERM while the guard ran killed agentui alone (rc -15), left
    the guard's `sleep` running and committed nothing (#16)."""
    repo, p, guard_pid = _step_in_guard(fakellm, tmp_path)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 143, (out, err)
    assert "Traceback" not in err
    assert subjects(repo)[-1] == "chore(tree): a runner error (interrupted)"
    meta = json.loads((repo / ".agentui/iterations/r1/1/meta.json").read_text())
    assert meta["runner_error"] == "interrupted"
    assert json.loads((repo / ".agentui/state/tree.json").read_text())["attempts"] == 0
    for _ in range(50):  # the guard's group is gone (a zombie of pid 1 counts as gone)
        try:
            stat = open(f"/proc/{guard_pid}/stat").read()
        except FileNotFoundError:
            break
        if stat.split(") ")[1].startswith("Z"):
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"guard {guard_pid} still running")


def test_repeated_ctrl_c_during_the_guard_exits_130(fakellm, tmp_path):
    """Found by an outside tester: a second Ctrl+C 50 ms after the first killed agentui by SIGINT
    (rc -2) once the step had recorded the interruption (#16)."""
    import threading

    from tests.functional.test_signals import _signal_until_exit

    repo, p, guard_pid = _step_in_guard(fakellm, tmp_path)
    t = threading.Thread(target=_signal_until_exit, args=(p, signal.SIGINT))
    t.start()
    out, err = p.communicate(timeout=60)
    t.join()
    assert p.returncode == 130, (out, err)
    assert "Traceback" not in err
    assert subjects(repo)[-1] == "chore(tree): a runner error (interrupted)"
