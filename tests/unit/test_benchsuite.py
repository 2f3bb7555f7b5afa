"""agentui bench's suite loading and answer checking (the whole-run path is in tests/functional)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentui.benchsuite import (
    ExpectedCheck,
    SuiteError,
    SuiteTask,
    answer_text,
    load_suite,
    matches_expected,
    run_check,
    summarise,
)

REPO = Path(__file__).resolve().parents[2]


def test_bundled_suite_is_valid_and_big_enough() -> None:
    tasks = load_suite(REPO / "benchmarks" / "tasks.json")
    assert len(tasks) >= 20
    assert len({t.id for t in tasks}) == len(tasks)


def test_bundled_suite_init_scripts_run_and_checks_fail_on_empty_answer(tmp_path: Path) -> None:
    """Every init works in an empty dir, and no check passes without the agent doing anything."""
    for t in load_suite(REPO / "benchmarks" / "tasks.json"):
        ws = tmp_path / t.id
        ws.mkdir()
        proc = subprocess.run(["bash", "-c", t.init], cwd=ws, capture_output=True, text=True)
        assert proc.returncode == 0, (t.id, proc.stderr)
        assert not run_check(t, ws, ""), t.id


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not valid JSON"),
        ('[{"id": "a"}]', "description"),
        ('[{"id": "a", "description": "d", "check": "true", "extra": 1}]', "extra"),
        ('[{"id": "a", "description": "d", "check": "true"}, {"id": "a", "description": "e", "check": "true"}]',
         "duplicate"),
        ('[{"id": "a", "description": "d", "check": {"expected": 1, "match": "regex"}}]', "match"),
    ],
)
def test_bad_suites_are_reported(tmp_path: Path, content: str, message: str) -> None:
    p = tmp_path / "suite.json"
    p.write_text(content)
    with pytest.raises(SuiteError) as e:
        load_suite(p)
    assert message in str(e.value)


def test_missing_suite_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "agentui.cli", "bench", str(tmp_path / "none.json")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "not found" in proc.stderr


@pytest.mark.parametrize(
    ("expected", "match", "answer", "ok"),
    [
        (3, "integer", "notes.txt has 3 lines", True),
        (3, "integer", "It has 13 lines", False),
        (3, "integer", "version 3.5 of the file", False),
        (8080, "integer", "The port is 8,080.", True),
        (55, "integer", '{"sum": 55}', True),
        ("b.txt", "string", "The file is B.TXT", True),
        ("b.txt", "string", "a.txt", False),
        # the answer's last number: "3 files, 12 lines" answers 12, not 3
        (3, "integer", "3 files, 12 lines", False),
        (12, "integer", "3 files, 12 lines", True),
    ],
)
def test_expected_matching(expected, match, answer, ok) -> None:
    assert matches_expected(ExpectedCheck(expected=expected, match=match), answer) is ok


def test_script_check_sees_workspace_and_answer(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("hi\n")
    t = SuiteTask(id="x", description="d", check='grep -q hi out.txt && test "$AGENTUI_ANSWER" = yes')
    assert run_check(t, tmp_path, "yes")
    assert not run_check(t, tmp_path, "no")


def test_answer_text_and_summary() -> None:
    # the answer field only: a number in the step outputs or the summary is no answer
    assert answer_text({"answer": " 42 ", "output": {"value": 7}, "summary": "done"}) == "42"
    assert answer_text({"output": {"value": 42}, "summary": "42 done"}) == ""
    assert answer_text({"text": "hello"}) == "" and answer_text(None) == ""
    s = summarise([
        {"passed": True, "llm_calls": 5, "prompt_tokens": 100, "completion_tokens": 10, "parse_repairs": 1,
         "replans": 0, "tool_calls": 1, "wall_s": 2.0},
        {"passed": False, "llm_calls": 9, "prompt_tokens": 300, "completion_tokens": 30, "parse_repairs": 0,
         "replans": 2, "tool_calls": 3, "wall_s": 4.0, "false_success": True},
    ])
    assert (s["passed"], s["failed"], s["llm_calls_per_task"], s["tokens_per_task"]) == (1, 1, 7.0, 220.0)
    assert s["false_successes"] == 1
    json.dumps(s)


def test_terminating_bench_kills_the_running_task(tmp_path, fakellm):
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.fakellm import Reply

    fakellm.responder("*", lambda _r: Reply.fault("hang"))  # the model never answers
    suite = tmp_path / "s.json"
    suite.write_text('[{"id": "hangs", "description": "x", "init": "true", "check": "true"}]')
    env = {**os.environ, "AGENTUI_BASE_URL": fakellm.base_url}
    p = subprocess.Popen([sys.executable, "-m", "agentui.cli", "bench", str(suite), "--timeout", "120"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pids: list[int] = []
    for _ in range(100):
        out = subprocess.run(["pgrep", "-f", "agentui-bench-hangs-"], capture_output=True, text=True).stdout
        pids = [int(x) for x in out.split()]
        if pids and fakellm.calls():
            break
        time.sleep(0.1)
    assert pids, "the task process never started"
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=20)
    time.sleep(0.5)
    for pid in pids:
        try:
            os.kill(pid, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        assert not alive, f"task process {pid} survived"


def test_a_value_check_never_passes_on_a_run_that_did_not_succeed(tmp_path: Path) -> None:
    # Seen on the 1.5B bench: wall-missing-dir (expected 2) "passed" on the abandon summary "2/2 subtasks failed".
    t = SuiteTask(id="x", description="d", check={"expected": 2, "match": "integer"})
    summary = "Abandoned: budget exhausted. 2/2 subtasks failed"
    assert run_check(t, tmp_path, summary)  # the matcher alone is fooled by the summary ...
    assert not run_check(t, tmp_path, summary, succeeded=False)  # ... so only a successful run's answer counts
    assert run_check(t, tmp_path, "there are 2 files", succeeded=True)
    script = SuiteTask(id="y", description="d", check="test -f made.txt")
    (tmp_path / "made.txt").write_text("")
    assert run_check(script, tmp_path, "", succeeded=False)  # the workspace's state counts however the run ended
