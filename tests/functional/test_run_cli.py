"""`agentui run` as a user runs it: a real subprocess, the fake LLM over HTTP."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.procs import wait_for_sleeper


def _env(fake=None, **extra):
    env = {**os.environ, **extra}
    if fake is not None:
        env["AGENTUI_BASE_URL"] = fake.base_url
    return env


def _run(args, env, cwd=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "agentui.cli", "run", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=cwd)


def _script_happy(fake):
    fake.script("perceiver", [perceive("count the txt files")])
    fake.script("planner", [plan(["the count is given"], sub("count .txt files", "a number", tools=["shell"]),
                                 checks=["find . -maxdepth 1 -name '*.txt' | wc -l"])])
    fake.script("executor", [call("shell", command="ls *.txt | wc -l"), finish("2")])
    fake.script("agent_validator", [verdicts("pass", quote="2")])
    fake.script("meta_validator", [merge("2", "pass", summary="2 txt files")])


def test_run_json_prints_final_and_stats(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    (ws / "b.txt").write_text("b")
    _script_happy(fakellm)
    r = _run(["--json", "--workspace", str(ws), "--data-dir", str(tmp_path / "d"), "how many txt files?"],
             _env(fakellm))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["final"]["directive"] == "accept" and doc["final"]["output"] == "2"
    assert doc["answer"] == "2" and doc["final"]["answer"] == "2"  # the single answer, at the top level
    st = doc["stats"]
    assert st["llm_calls"] == 6 and st["tool_calls"] == 1 and st["prompt_tokens"] > 0
    assert st["by_role"]["executor"]["calls"] == 2 and "parse_repairs" in st["by_role"]["executor"]
    assert st["wall_s"] > 0
    tid = doc["task_id"]
    assert (tmp_path / "d" / "tasks" / f"{tid}.jsonl").is_file()
    assert (tmp_path / "d" / "recordings" / f"{tid}.bus.jsonl").is_file()
    assert (tmp_path / "d" / "memory.leveldb" / "CURRENT").is_file()


def test_run_renders_pipeline_and_cost_table(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    (ws / "b.txt").write_text("b")
    _script_happy(fakellm)
    r = _run(["--workspace", str(ws), "--data-dir", str(tmp_path / "d"), "how", "many", "txt", "files?"],
             _env(fakellm, COLUMNS="160"))
    assert r.returncode == 0, r.stderr
    assert "perceiver→planner TaskSpec: count files" in r.stderr
    assert "ggs→user FinalResult: init→accept" in r.stderr
    assert "accept after 0 replan(s)" in r.stdout and "cost" in r.stdout and "executor" in r.stdout
    assert r.stdout.lstrip().startswith("answer: 2")  # the answer first


def test_run_abandon_exits_1(fakellm, tmp_path):
    fakellm.script("perceiver", [perceive("x")])
    fakellm.responder("planner", lambda _r: plan(["done"], sub("x", "done")))
    fakellm.responder("executor", lambda _r: {"tool": "infeasible", "output": "network unreachable"})
    cfg = tmp_path / "c.toml"
    cfg.write_text("[ggs]\nmax_replans = 1\n[pipeline]\ncorrection_budget = 0\n")
    r = _run(["--json", "--config", str(cfg), "--workspace", str(tmp_path), "--data-dir", str(tmp_path / "d"), "x"],
             _env(fakellm))
    assert r.returncode == 1, r.stderr
    assert json.loads(r.stdout)["final"]["directive"] == "abandon"


def test_run_unreachable_endpoint_exits_2_fast_saying_what_to_set(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    t0 = time.monotonic()
    r = _run(["--data-dir", str(tmp_path), "hello world task"], _env(AGENTUI_BASE_URL=f"http://127.0.0.1:{port}"))
    assert time.monotonic() - t0 < 15
    assert r.returncode == 2
    assert f"127.0.0.1:{port}" in r.stderr and "AGENTUI_BASE_URL" in r.stderr


def test_run_without_task_or_llm_is_a_usage_error(tmp_path):
    r = _run(["--data-dir", str(tmp_path)], _env())
    assert r.returncode == 2 and "give a task" in r.stderr
    r = _run(["--data-dir", str(tmp_path), "do something"], _env())
    assert r.returncode == 2 and "AGENTUI_BASE_URL" in r.stderr


def test_run_non_interactive_denies_destructive_commands(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("precious")
    fakellm.script("perceiver", [perceive("delete keep.txt")])
    fakellm.responder("planner", lambda _r: plan(["gone"], sub("rm keep.txt", "gone")))
    fakellm.responder("executor", lambda r: call("shell", command="rm keep.txt") if len(r["messages"]) == 2
                      else {"tool": "infeasible", "output": "denied"})
    cfg = tmp_path / "c.toml"
    cfg.write_text("[ggs]\nmax_replans = 1\n[pipeline]\ncorrection_budget = 0\n")
    r = _run(["--config", str(cfg), "--workspace", str(ws), "--data-dir", str(tmp_path / "d"), "delete keep.txt"],
             _env(fakellm), )
    assert (ws / "keep.txt").read_text() == "precious"
    assert "denied" in r.stderr and "--yes" in r.stderr
    assert r.returncode == 1


def test_run_yes_approves(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "junk.txt").write_text("x")
    fakellm.script("perceiver", [perceive("delete junk.txt")])
    fakellm.script("planner", [plan(["junk.txt is gone"], sub("rm junk.txt", "gone", tools=["shell"]))])
    fakellm.script("executor", [call("shell", command="rm junk.txt"), finish("removed junk.txt")])
    fakellm.script("agent_validator", [verdicts("pass", quote="rm junk.txt")])
    fakellm.script("meta_validator", [merge("removed", "pass")])
    r = _run(["--json", "--yes", "--workspace", str(ws), "--data-dir", str(tmp_path / "d"), "delete junk.txt"],
             _env(fakellm))
    assert r.returncode == 0, r.stderr
    assert not (ws / "junk.txt").exists()


def test_ctrl_c_cancels_cleanly_with_130(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    fakellm.script("perceiver", [perceive("wait")])
    fakellm.script("planner", [plan(["waited"], sub("wait", "waited"))])
    marker = f"30.{os.getpid()}3"  # found by its command line: a `$$` in bubblewrap's PID namespace is no host pid
    fakellm.script("executor", [call("shell", command=f"sleep {marker}")])
    p = subprocess.Popen([sys.executable, "-m", "agentui.cli", "run", "--json", "--workspace", str(ws),
                          "--data-dir", str(tmp_path / "d"), "wait"], env=_env(fakellm),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = wait_for_sleeper(marker)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=15)
    assert p.returncode == 130, err
    assert "interrupted" in json.loads(out)["cancelled"]
    time.sleep(0.2)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    """Running, not a zombie: in a container whose pid 1 does not reap, a killed sandboxed process
    (a grandchild under bwrap) stays a zombie that `kill -0` still finds."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _bwrap_active() -> bool:
    import shutil

    from agentui.tools.sandbox import detect

    return sys.platform.startswith("linux") and shutil.which("bwrap") is not None and detect("linux").active


def _through_run(fake, tmp_path, name: str, *flags: str, **env_extra: str) -> str:
    """`run --yes` of a command whose path is only known at run time (the gate cannot see it is
    ~/.ssh, so --yes approves it within the sandbox): everything agentui printed and kept."""
    ws, home, data = tmp_path / name / "ws", tmp_path / name / "home", tmp_path / name / "d"
    ws.mkdir(parents=True)
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("FAKE_KEY_MARKER_0x5eed\n")
    (ws / "where.txt").write_text(str(home / ".ssh" / "id_rsa"))
    fake.responder("perceiver", lambda _r: perceive("show the file named in where.txt"))
    fake.responder("planner", lambda _r: plan(["shown"], sub("cat it", "its text", tools=["shell"])))
    fake.responder("executor", lambda r: call("shell", command='cat "$(cat where.txt)"') if len(r["messages"]) == 2
                   else finish("done"))
    fake.responder("agent_validator", lambda _r: verdicts("pass", quote="done"))
    fake.responder("meta_validator", lambda _r: merge("done", "pass"))
    r = _run(["--json", "--yes", *flags, "--workspace", str(ws), "--data-dir", str(data), "show it"],
             _env(fake, HOME=str(home), **env_extra))
    kept = "".join(p.read_text(errors="replace") for p in data.rglob("*") if p.is_file() and p.suffix == ".jsonl")
    return r.stdout + r.stderr + kept


def test_run_yes_runs_inside_the_os_sandbox(fakellm, tmp_path):
    """The OS sandbox on the real `run` path (#14): ~/.ssh is hidden from an approved command. The same
    run with --unconfined (the explicit no-sandbox mode) leaks the key, so this test sees the difference."""
    import pytest

    if not _bwrap_active():
        pytest.skip("no working bubblewrap on this machine")
    confined = _through_run(fakellm, tmp_path, "confined")
    # it ran (--yes approved it inside the sandbox) and found no key: ~/.ssh is an empty tmpfs there
    assert "No such file or directory" in confined and "FAKE_KEY_MARKER_0x5eed" not in confined
    assert "FAKE_KEY_MARKER_0x5eed" in _through_run(fakellm, tmp_path, "unconfined", "--unconfined")


def test_run_yes_runs_inside_landlock(fakellm, tmp_path):
    """Where bwrap cannot run, Landlock confines the same run (#14): the key stays unreadable."""
    import pytest

    from agentui.tools.sandbox import _landlock_works

    problem = _landlock_works(sys.executable) if sys.platform.startswith("linux") else "not Linux"
    if problem:
        pytest.skip(f"no usable Landlock here: {problem}")
    confined = _through_run(fakellm, tmp_path, "landlock", AGENTUI_SANDBOX="landlock")
    assert "Permission denied" in confined and "FAKE_KEY_MARKER_0x5eed" not in confined


def test_run_shows_the_executors_text_on_stderr_as_it_is_generated(fakellm, tmp_path):
    """Streamed replies print on stderr, a line per call that says who writes; stdout keeps only
    the result, and --json stays one JSON document."""
    from tests.fakellm import Reply

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    (ws / "b.txt").write_text("b")
    for flags in ([], ["--json"]):
        _script_happy(fakellm)
        fakellm._scripts["executor"].clear()
        fakellm.script("executor", [Reply.stream({"tool": "shell", "args": {"command": "ls *.txt | wc -l"}},
                                                 chunk_delay_s=0.02),
                                    Reply.stream({"tool": "finish", "output": "2"}, chunk_delay_s=0.02)])
        r = _run([*flags, "--workspace", str(ws), "--data-dir", str(tmp_path / "d"), "how many txt files?"],
                 _env(fakellm, COLUMNS="300"))
        assert r.returncode == 0, r.stderr
        if flags:
            assert json.loads(r.stdout)["answer"] == "2"
            continue
        lines = r.stderr.splitlines()
        step = '  R3 Executor ▸ {"tool": "shell", "args": {"command": "ls *.txt | wc -l"}}'
        assert step in lines and '  R3 Executor ▸ {"tool": "finish", "output": "2"}' in lines, r.stderr
        assert any(x.startswith("  R4b Meta-Validator ▸ {") for x in lines)
        # the step's text is printed before the pipeline line of its result
        assert lines.index(step) < next(i for i, x in enumerate(lines) if "ExecutionResult" in x)
        assert "R3 Executor" not in r.stdout and r.stdout.lstrip().startswith("answer: 2")


def _script_slow_tool(fake):
    fake.script("perceiver", [perceive("count the lines")])
    fake.script("planner", [plan(["the count is given"], sub("count the lines of a.txt", "a number", tools=["shell"]),
                                 checks=["wc -l a.txt"])])
    fake.script("executor", [call("shell", command="sleep 2; wc -l a.txt"), finish("1")])
    fake.script("agent_validator", [verdicts("pass", quote="1")])
    fake.script("meta_validator", [merge("1", "pass", summary="a.txt has 1 line")])


def test_run_says_on_stderr_when_a_tool_starts_and_ends(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    _script_slow_tool(fakellm)
    p = subprocess.Popen([sys.executable, "-m", "agentui.cli", "run", "--workspace", str(ws), "--data-dir",
                          str(tmp_path / "d"), "how many lines in a.txt?"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=_env(fakellm, COLUMNS="200"))
    seen: list[tuple[float, str]] = []
    for text in p.stderr:
        seen.append((time.monotonic(), text.rstrip("\n")))
    out = p.stdout.read()
    assert p.wait(timeout=60) == 0, "\n".join(s for _t, s in seen)
    started = [(t, s) for t, s in seen if s.strip().startswith("tool shell running: sleep")]
    ended = [(t, s) for t, s in seen if s.strip().startswith("tool shell ok in ") and "sleep" in s]
    assert len(started) == 1 and len(ended) == 1, seen
    assert "  tool shell running: wc -l a.txt" in [s for _t, s in seen]  # the plan's check is a tool call too
    executor = [s for _t, s in seen if "R3 Executor ▸" in s]
    assert executor and all(s.rstrip().endswith("}") for s in executor), executor  # never cut by a tool line
    assert started[0][1].strip() == "tool shell running: sleep 2; wc -l a.txt"
    assert ended[0][1].strip().endswith(" s: sleep 2; wc -l a.txt")
    assert float(ended[0][1].split(" ok in ")[1].split(" s")[0]) >= 1.9
    assert ended[0][0] - started[0][0] >= 1.5  # the start line came while the command ran, not after
    assert "tool shell" not in out  # progress is never on stdout
    _script_slow_tool(fakellm)
    r = _run(["--json", "--workspace", str(ws), "--data-dir", str(tmp_path / "d"), "how many lines in a.txt?"],
             _env(fakellm))
    assert r.returncode == 0, r.stderr
    assert "tool shell" not in r.stderr and "tool shell" not in r.stdout  # --json stays machine-readable
