"""The newcomer's report, CLI items still open on main (#17 item 11 and 19): `audit --task` with
an unknown id, `replay` given a directory — real subprocesses, one line, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "agentui.cli", *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=60)


def test_audit_for_an_unknown_task_says_so(tmp_path):
    data = tmp_path / "data"
    data.mkdir()  # a named data dir that does not exist is its own error (#15)
    for extra in ((), ("--json",)):
        r = _cli("--data-dir", str(data), "audit", *extra, "--task", "nosuch")
        assert r.returncode == 2 and "no anomalies" not in r.stdout and not r.stdout, (r.stdout, r.stderr)
        assert r.stderr.strip() == (f"agentui audit: no task 'nosuch' in {data / 'tasks'} (give a task id or "
                                    "its prefix, as `agentui audit` or Ctrl+G history lists them)")
    (data / "tasks").mkdir(parents=True)
    (data / "tasks" / "0f3a-task.jsonl").write_text("{}\n")  # a task that ran without anomalies or approvals
    r = _cli("--data-dir", str(data), "audit", "--task", "0f3a")
    assert r.returncode == 0 and "no anomalies recorded" in r.stdout, r.stderr
    assert "approvals: none recorded" in r.stdout  # #14's line for a task that never reached the gate


def test_replay_of_a_directory_says_it_is_one(tmp_path):
    r = _cli("replay", str(tmp_path))
    assert r.returncode == 2 and "not found" not in r.stderr
    assert r.stderr.strip().startswith(f"agentui replay: {tmp_path} is a directory; give one recording in it")
