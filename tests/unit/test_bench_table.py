"""scripts/bench_table.py: the README's bench table from `agentui bench --out` lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_table.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)


def test_rows_totals_and_the_last_record_of_an_id_wins(tmp_path):
    recs = [
        {"id": "a", "passed": False, "directive": None, "error": "timed out after 900 s", "llm_calls": 0,
         "prompt_tokens": 0, "completion_tokens": 0, "wall_s": 900.0},
        {"id": "b", "passed": False, "directive": "abandon", "error": None, "llm_calls": 3, "prompt_tokens": 1466,
         "completion_tokens": 108, "parse_failures": 2, "runaways_cut": 2, "wall_s": 64.6},
        {"id": "a", "passed": True, "directive": "accept", "error": None, "llm_calls": 6, "prompt_tokens": 2758,
         "completion_tokens": 229, "parse_failures": 0, "runaways_cut": 0, "wall_s": 55.0},
    ]
    f = tmp_path / "r.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    r = _run(str(f))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[2] == "| a | pass | 6 | 2,758 | 229 | 0 | 0 | 55 |"
    assert lines[3] == "| b | fail — abandon | 3 | 1,466 | 108 | 2 | 2 | 65 |"
    assert lines[4] == "| **2 tasks** | **1 passed (50%)** | 9 | 4,224 | 337 | 2 | 2 | 120 |"
    assert "4.5 LLM calls, 2,112 prompt tokens" in r.stdout
    assert lines[-1] == ("Reported vs. checked: 0 of 0 finished runs agree; success claimed for a failed check: 0; "
                         "failure reported though the check passed: 0.")


def test_truth_line_names_runs_whose_exit_code_disagrees_with_the_check(tmp_path):
    recs = [{"id": "ok", "passed": True, "exit_code": 0}, {"id": "liar", "passed": False, "exit_code": 0},
            {"id": "modest", "passed": True, "exit_code": 1}, {"id": "honest", "passed": False, "exit_code": 1},
            {"id": "killed", "passed": False, "error": "timed out after 900 s"}]
    f = tmp_path / "r.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    r = _run(str(f))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1] == (
        "Reported vs. checked: 2 of 4 finished runs agree; success claimed for a "
        "failed check: 1 (liar); failure reported though the check passed: 1 (modest)."
    )


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text("{not json\n")
    r = _run(str(f))
    assert r.returncode == 2 and r.stderr.strip() == f"bench_table: {f}:1 is not a JSON line"
    r = _run(str(tmp_path / "missing.jsonl"))
    assert r.returncode == 2 and "cannot read" in r.stderr and "Traceback" not in r.stderr
    assert _run().returncode == 2


def test_compare_puts_two_runs_side_by_side_over_their_common_tasks(tmp_path):
    ggs = [{"id": "a", "passed": True, "llm_calls": 6, "prompt_tokens": 2800},
           {"id": "b", "passed": False, "directive": "abandon", "llm_calls": 20, "prompt_tokens": 12000},
           {"id": "only-ggs", "passed": True, "llm_calls": 6, "prompt_tokens": 2000}]
    naive = [{"id": "b", "passed": True, "llm_calls": 30, "prompt_tokens": 18000},
             {"id": "a", "passed": False, "directive": "abandon", "llm_calls": 40, "prompt_tokens": 22000}]
    fa, fb = tmp_path / "g.jsonl", tmp_path / "n.jsonl"
    fa.write_text("".join(json.dumps(r) + "\n" for r in ggs))
    fb.write_text("".join(json.dumps(r) + "\n" for r in naive))
    r = _run("--compare", str(fa), str(fb))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[2] == "| a | pass | 6 | 2,800 | fail — abandon | 40 | 22,000 |"
    assert lines[3] == "| b | fail — abandon | 20 | 12,000 | pass | 30 | 18,000 |"
    assert lines[4] == "| **2 tasks** | **1 passed** | 26 | 14,800 | **1 passed** | 70 | 40,000 |"
    assert "only-ggs" not in r.stdout.split("\n\n")[0]
    assert "GGS 13.0 calls, 7,400 prompt tokens; naive-retry 35.0 calls, 20,000 prompt tokens" in r.stdout
    assert lines[-1] == "Passed only with GGS: 1 (a); only with naive-retry: 1 (b)."
    assert _run("--compare", str(fa)).returncode == 2
    named = _run("--compare", str(fa), str(fb), "--names", "old,new")
    assert named.returncode == 0 and named.stdout.splitlines()[0].startswith("| task | old | old calls |")
    assert _run("--compare", str(fa), str(fb), "--names", "one").returncode == 2


def test_summary_is_one_row_per_run_with_per_task_figures_and_the_truth_counts(tmp_path):
    ggs = [{"id": "a", "passed": True, "exit_code": 0, "llm_calls": 6, "prompt_tokens": 2800, "wall_s": 60},
           {"id": "b", "passed": False, "exit_code": 0, "llm_calls": 20, "prompt_tokens": 12000, "wall_s": 300},
           {"id": "c", "passed": True, "exit_code": 1, "llm_calls": 10, "prompt_tokens": 5000, "wall_s": 90}]
    naive = [{"id": "a", "passed": False, "exit_code": 1, "llm_calls": 9, "prompt_tokens": 4000, "wall_s": 80},
             {"id": "a", "passed": True, "exit_code": 0, "llm_calls": 7, "prompt_tokens": 3001, "wall_s": 70}]
    fa, fb = tmp_path / "g.jsonl", tmp_path / "n.jsonl"
    fa.write_text("".join(json.dumps(r) + "\n" for r in ggs))
    fb.write_text("".join(json.dumps(r) + "\n" for r in naive))
    r = _run("--summary", str(fa), str(fb), "--names", "GGS over HTTP,naive-retry")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("| run | tasks | passed | LLM calls / task | prompt tok / task |")
    assert lines[2] == "| GGS over HTTP | 3 | 2 (67%) | 12.0 | 6,600 | 150 | 1 | 1 |"
    assert lines[3] == "| naive-retry | 1 | 1 (100%) | 7.0 | 3,001 | 70 | 0 | 0 |"
    unnamed = _run("--summary", str(fa))
    assert unnamed.returncode == 0 and unnamed.stdout.splitlines()[2].startswith(f"| {fa} | 3 |")
    assert _run("--summary", str(fa), str(fb), "--names", "one").returncode == 2
    assert _run("--summary").returncode == 2


def test_file_at_n_reads_one_pass_of_a_passes_file(tmp_path):
    recs = [{"id": "a", "pass": 1, "passed": False, "directive": "abandon", "llm_calls": 9, "prompt_tokens": 900},
            {"id": "a", "pass": 2, "passed": True, "directive": "accept", "llm_calls": 6, "prompt_tokens": 600}]
    f = tmp_path / "memory.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    r = _run("--compare", f"{f}@1", f"{f}@2", "--names", "pass 1,pass 2")
    assert r.returncode == 0, r.stderr
    row = next(x for x in r.stdout.splitlines() if x.startswith("| a "))
    assert "fail" in row.split("|")[2] and "pass" in row.split("|")[5]
