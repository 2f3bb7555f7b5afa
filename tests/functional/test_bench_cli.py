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
    fakellm.script(
        "planner",
        [
            plan(["count given"], sub("wc -l notes.txt", "a number"), checks=["grep -c '' notes.txt"]),
            plan(["ok.txt exists"], sub("create ok.txt", "file exists"), checks=["ls ok.txt"]),
        ],
    )
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
    r = _bench(fakellm, suite, "--out", out)
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
    fakellm.script(
        "planner", [plan(["count given"], sub("wc -l notes.txt", "a number"), checks=["grep -c '' notes.txt"])]
    )
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


def _count_lines_suite(tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps([
        {"id": "notes", "description": "How many lines does notes.txt have?",
         "init": "printf 'a\\nb\\nc\\n' > notes.txt", "check": {"expected": 3, "match": "integer"}},
        {"id": "todo", "description": "Count the lines in todo.txt",
         "init": "printf 'a\\nb\\nc\\n' > todo.txt", "check": {"expected": 3, "match": "integer"}},
    ]))
    return suite


def _count_lines_model(fake):
    def planner(r):  # by the request, not the prompt: a lesson in it names the other task's file
        request = r["messages"][1]["content"].split("Request (verbatim): ")[1].splitlines()[0]
        name = "notes.txt" if "notes.txt" in request else "todo.txt"
        return plan(["count given"], sub(f"wc -l < {name}", "a number", tools=["shell"]), checks=[f"grep -c '' {name}"])

    def executor(r):
        name = "notes.txt" if "notes.txt" in r["messages"][1]["content"] else "todo.txt"
        return call("shell", command=f"wc -l < {name}") if len(r["messages"]) == 2 else finish("3")

    fake.responder("perceiver", lambda _r: perceive("count lines in a file"))
    fake.responder("planner", planner)
    fake.responder("executor", executor)
    fake.responder("agent_validator", lambda _r: verdicts("pass", quote="3"))
    fake.responder("meta_validator", lambda _r: merge("3 lines", "pass"))


def _bench(fake, *args):
    env = {**os.environ, "AGENTUI_BASE_URL": fake.base_url, "COLUMNS": "160"}
    return subprocess.run([sys.executable, "-m", "agentui.cli", "bench", *map(str, args), "--timeout", "60"],
                          capture_output=True, text=True, env=env, timeout=300)


def test_bench_shared_memory_passes_share_one_data_dir_in_order(fakellm, tmp_path):
    _count_lines_model(fakellm)
    out = tmp_path / "results.jsonl"
    r = _bench(fakellm, _count_lines_suite(tmp_path), "--shared-memory", "--passes", "2", "--out", out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pass 1: 2/2 passed (100%)" in r.stdout and "pass 2: 2/2 passed (100%)" in r.stdout
    assert "in the suite file's order, one shared data dir" in r.stderr
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(x["pass"], x["id"]) for x in rows] == [(1, "notes"), (1, "todo"), (2, "notes"), (2, "todo")]
    prompts = [c["messages"][1]["content"] for c in fakellm.calls("planner")]
    # the first task met an empty memory; every later one the lesson of the tasks before it
    assert "[memory " not in prompts[0]
    assert all("worked (accept) for \"count lines\"" in p and "[memory " in p for p in prompts[1:])


def test_bench_passes_without_shared_memory_start_each_task_fresh(fakellm, tmp_path):
    _count_lines_model(fakellm)
    r = _bench(fakellm, _count_lines_suite(tmp_path), "--passes", "2", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(r.stdout.splitlines()[0])
    assert [p["pass"] for p in doc["passes"]] == [1, 2] and doc["order"] == ["notes", "todo"]
    assert doc["shared_memory"] is False and all(p["success_rate"] == 1.0 for p in doc["passes"])
    assert not any("[memory " in c["messages"][1]["content"] for c in fakellm.calls("planner"))


def test_bench_passes_must_be_a_small_positive_number(tmp_path):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps([{"id": "t", "description": "x", "init": "true", "check": "true"}]))
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "bench", str(suite), "--passes", "0"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "--passes" in r.stderr and "Traceback" not in r.stderr
