"""`agentui bench` end to end over the fake LLM: a suite, a table, a summary line, JSONL results."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts


def test_bench_runs_a_suite_and_reports(fakellm, tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps([
        {"id": "count", "description": "How many lines does notes.txt have?",
         "init": "printf 'a\\nb\\nc\\n' > notes.txt", "check": {"expected": 3, "match": "integer"}},
        {"id": "file", "description": "Create ok.txt", "init": "true", "check": "test -f ok.txt"},
    ]))
    fakellm.script("perceiver", [perceive("count lines"), perceive("create ok.txt")])
    fakellm.script("planner", [plan(["count given"], sub("wc -l notes.txt", "a number"), checks=["grep -c '' notes.txt"]),
                               plan(["ok.txt exists"], sub("create ok.txt", "file exists"), checks=["ls ok.txt"])])
    fakellm.script("executor", [call("shell", command="wc -l < notes.txt"), finish("3"),
                                finish("I could not create it")])
    fakellm.script("agent_validator", [verdicts("pass", quote="3"), verdicts("pass")])
    fakellm.script("meta_validator", [merge("notes.txt has 3 lines", "pass"), merge("created", "pass")])
    out = tmp_path / "results.jsonl"
    env = {**os.environ, "AGENTUI_BASE_URL": fakellm.base_url, "COLUMNS": "160"}
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "bench", str(suite), "--out", str(out), "--timeout", "60"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert "bench: 1 passed, 1 failed, 0 false success(es)" in r.stdout, r.stdout + r.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    by_id = {x["id"]: x for x in rows}
    assert by_id["count"]["passed"] is True and by_id["count"]["directive"] == "accept"
    assert by_id["count"]["answer"] == "notes.txt has 3 lines"
    assert by_id["count"]["llm_calls"] == 6 and by_id["count"]["prompt_tokens"] > 0
    assert by_id["file"]["passed"] is False  # the check script, not the model's claim, decides
    assert by_id["file"]["false_success"] is False  # not done, so not a false success


def test_bench_counts_a_done_run_with_a_wrong_answer_as_a_false_success(fakellm, tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps([
        {"id": "wrong", "description": "How many lines does notes.txt have?",
         "init": "printf 'a\\nb\\nc\\n' > notes.txt", "check": {"expected": 3, "match": "integer"}},
    ]))
    # a wrong check that agrees with a wrong answer: the run says done, and it is wrong
    fakellm.script("perceiver", [perceive("count lines")])
    fakellm.script("planner", [plan(["count given"], sub("count the lines", "a number"), checks=["echo 4"])])
    fakellm.script("executor", [call("shell", command="echo 4"), finish("4")])
    fakellm.script("agent_validator", [verdicts("pass", quote="4")])
    fakellm.script("meta_validator", [merge("notes.txt has 4 lines, 3 of them blank: 3", "pass", answer="4")])
    out = tmp_path / "results.jsonl"
    env = {**os.environ, "AGENTUI_BASE_URL": fakellm.base_url, "COLUMNS": "160"}
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "bench", str(suite), "--out", str(out), "--timeout", "60"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert "bench: 0 passed, 1 failed, 1 false success(es)" in r.stdout, r.stdout + r.stderr
    row = json.loads(out.read_text())
    # only the answer is matched: the 3 in the merged output does not pass the task
    assert row["answer"] == "4" and row["passed"] is False and row["false_success"] is True
    assert "FALSE SUCCESS wrong" in r.stderr


def test_bench_keep_leaves_each_tasks_workspace_and_task_log(fakellm, tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps([
        {"id": "count", "description": "How many lines does notes.txt have?",
         "init": "printf 'a\\nb\\nc\\n' > notes.txt", "check": {"expected": 3, "match": "integer"}},
    ]))
    fakellm.script("perceiver", [perceive("count lines")])
    fakellm.script("planner", [plan(["count given"], sub("wc -l notes.txt", "a number"), checks=["grep -c '' notes.txt"])])
    fakellm.script("executor", [call("shell", command="wc -l < notes.txt"), finish("3")])
    fakellm.script("agent_validator", [verdicts("pass", quote="3")])
    fakellm.script("meta_validator", [merge("notes.txt has 3 lines", "pass")])
    out, keep = tmp_path / "results.jsonl", tmp_path / "kept"
    env = {**os.environ, "AGENTUI_BASE_URL": fakellm.base_url, "COLUMNS": "160"}
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "bench", str(suite), "--out", str(out),
                        "--timeout", "60", "--keep", str(keep)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert "bench: 1 passed, 0 failed" in r.stdout, r.stdout + r.stderr
    row = json.loads(out.read_text())
    kept = row["kept"]
    assert kept.startswith(str(keep)) and f"kept in {kept}" in r.stderr.replace("\n", "")
    assert (tmp_path / kept / "ws" / "notes.txt").read_text() == "a\nb\nc\n"
    assert list((tmp_path / kept / "data").rglob("*.jsonl")), "the task log is kept"


def test_bench_keep_that_is_a_file_is_one_line_exit_2(tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps([{"id": "t", "description": "x", "init": "true", "check": "true"}]))
    blocker = tmp_path / "afile"
    blocker.write_text("")
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "bench", str(suite), "--keep", str(blocker)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--keep" in r.stderr and "directory" in r.stderr


def test_a_killed_runs_usage_is_read_from_its_task_log(tmp_path):
    """#13: a task the bench killed at --timeout reported 0 calls and 0 tokens (the naive-retry
    ablation's two timeouts had spent 46 and 50 calls); its task log still holds them."""
    from agentui.benchsuite import _logged_usage

    tasks = tmp_path / "data" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "t1.jsonl").write_text(
        json.dumps({"kind": "llm", "prompt_tokens": 500, "completion_tokens": 40}) + "\n"
        + json.dumps({"kind": "tool", "exit_code": 0}) + "\n"
        + json.dumps({"kind": "llm", "prompt_tokens": 700, "completion_tokens": 60}) + "\n"
        + '{"kind": "llm", "prompt_tok')  # the killed writer's last line, cut
    assert _logged_usage(tmp_path / "data") == {"llm_calls": 2, "prompt_tokens": 1200, "completion_tokens": 100}
    assert _logged_usage(tmp_path / "nothing") == {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
