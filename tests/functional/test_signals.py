"""SIGTERM and SIGHUP (`timeout`, `docker stop`, CI runners, a closed terminal) are handled like
Ctrl+C by `agentui run` and `agentui bench`: the task is cancelled, its tool's process group is
killed, the JSON result is printed, and the exit code says which signal (#15)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.functional.pipeline import call, perceive, plan, sub
from tests.procs import sleeper_pid


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie still answers kill(0); it is dead for our purpose
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def _wait_pid(marker: str, proc: subprocess.Popen) -> int:
    """The host pid of the tool's `sleep <marker>` (in bubblewrap's PID namespace a `$$` it printed
    would be no pid out here)."""
    for _ in range(400):
        if pid := sleeper_pid(marker):
            return pid
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("the tool never started")


def _script_sleeper(fakellm, marker: str) -> None:
    fakellm.script("perceiver", [perceive("wait")])
    fakellm.script("planner", [plan(["waited"], sub("wait", "waited", tools=["shell"]))])
    fakellm.script("executor", [call("shell", command=f"sleep {marker}")])


def _run_with_a_sleeping_tool(fakellm, tmp_path) -> tuple[subprocess.Popen, int]:
    """`agentui run --json --yes` started and now inside its tool (`sleep 100`): (process, tool pid)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = f"100.{os.getpid()}{len(str(tmp_path))}1"
    _script_sleeper(fakellm, marker)
    env = {**os.environ, "AGENTUI_BASE_URL": fakellm.base_url}
    p = subprocess.Popen([sys.executable, "-m", "agentui.cli", "run", "--json", "--yes", "--workspace", str(ws),
                          "--data-dir", str(tmp_path / "d"), "wait"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tool = _wait_pid(marker, p)
    return p, tool


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_run_handles_sigterm_and_sighup_like_ctrl_c(fakellm, tmp_path, sig, code):
    p, tool = _run_with_a_sleeping_tool(fakellm, tmp_path)
    assert _alive(tool)
    p.send_signal(sig)
    out, err = p.communicate(timeout=20)
    assert p.returncode == code, err
    assert "Traceback" not in err
    doc = json.loads(out)
    assert doc["cancelled"] == f"interrupted ({signal.Signals(sig).name})"
    for _ in range(40):
        if not _alive(tool):
            break
        time.sleep(0.05)
    assert not _alive(tool), "the tool's `sleep 100` survived"


def test_run_signal_before_the_task_starts_still_prints_json(fakellm, tmp_path):
    from tests.fakellm import Reply

    fakellm.responder("*", lambda _r: Reply.fault("hang"))  # preflight never answers
    env = {**os.environ, "AGENTUI_BASE_URL": fakellm.base_url}
    p = subprocess.Popen([sys.executable, "-m", "agentui.cli", "run", "--json", "--workspace", str(tmp_path),
                          "--data-dir", str(tmp_path / "d"), "wait"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(200):
        if fakellm.calls():
            break
        time.sleep(0.05)
    time.sleep(0.3)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 143, err
    assert "Traceback" not in err
    assert json.loads(out)["cancelled"] == "interrupted (SIGTERM)"


def test_bench_sigterm_stops_the_child_and_its_tools(fakellm, tmp_path):
    marker = f"100.{os.getpid()}2"
    _script_sleeper(fakellm, marker)
    suite = tmp_path / "s.json"
    suite.write_text(json.dumps([{"id": "sleeps", "description": "wait", "init": "true", "check": "true"}]))
    env = {**os.environ, "AGENTUI_BASE_URL": fakellm.base_url}
    p = subprocess.Popen([sys.executable, "-m", "agentui.cli", "bench", str(suite), "--timeout", "120"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tool = _wait_pid(marker, p)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 143, err
    assert "Traceback" not in err
    for _ in range(40):
        if not _alive(tool):
            break
        time.sleep(0.05)
    assert not _alive(tool), "the bench task's tool survived"


def test_tui_sigterm_twice_stops_once_with_one_line(fakellm, tmp_path):
    """`timeout` sends SIGTERM to the command and again to its group: the TUI stops once, exit 143,
    and prints its one stop line — not Textual's "NOTE: 1 of 2 errors shown" (#15)."""
    data = tmp_path / "d"
    env = {**os.environ, "AGENTUI_BASE_URL": fakellm.base_url, "COLUMNS": "80", "LINES": "24"}
    p = subprocess.Popen([sys.executable, "-m", "agentui.cli", "--data-dir", str(data), "ui",
                          "--workspace", str(tmp_path)], env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for _ in range(600):  # up once the memory store is open (its LOCK file)
        if (data / "memory.leveldb" / "LOCK").exists():
            break
        assert p.poll() is None, p.communicate()
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signal.SIGTERM)
    time.sleep(0.02)  # the second arrives while the first stop is under way
    p.send_signal(signal.SIGTERM)
    _out, err = p.communicate(timeout=30)
    assert p.returncode == 143
    assert "SIGTERM, stopped" in err and "errors shown" not in err and "Traceback" not in err


def _signal_until_exit(p: subprocess.Popen, sig: int) -> None:
    """A user hammering Ctrl+C: the signal again every 10 ms until the process is gone."""
    while p.poll() is None:
        try:
            p.send_signal(sig)
        except ProcessLookupError:
            break
        time.sleep(0.01)


def test_run_repeated_ctrl_c_still_prints_the_result(fakellm, tmp_path):
    """A second Ctrl+C while the task was being stopped landed after the handlers were removed: a
    KeyboardInterrupt cut the JSON result short (found by an outside tester on `tree step`, #15)."""
    import threading

    p, _tool = _run_with_a_sleeping_tool(fakellm, tmp_path)
    t = threading.Thread(target=_signal_until_exit, args=(p, signal.SIGINT))
    t.start()
    out, err = p.communicate(timeout=30)
    t.join()
    assert p.returncode == 130, err
    assert "Traceback" not in err
    assert json.loads(out)["cancelled"] == "interrupted (Ctrl+C)"
