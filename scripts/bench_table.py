#!/usr/bin/env python3
"""Turn `agentui bench --out FILE` lines into the Markdown table the README shows.

Usage: python scripts/bench_table.py results.jsonl [more.jsonl …]
       python scripts/bench_table.py --compare ggs.jsonl naive.jsonl [--names GGS,naive-retry]
       python scripts/bench_table.py --summary a.jsonl b.jsonl … [--names A,B,…]
FILE@N reads only pass N of a `bench --passes` file (`--compare memory.jsonl@1 memory.jsonl@2`).
One row per task (the last record of each id wins, in suite order of first appearance), then a
totals row: passed, LLM calls, prompt/completion tokens, parse failures, runaways cut, wall seconds.
With --compare: one row per task both runs finished (GGS vs. the naive-retry ablation, or any two
runs), side by side — result, LLM calls, prompt tokens — then totals over those common tasks.
With --summary: one row per file (one run) — tasks, passed, LLM calls, prompt tokens and wall
seconds per task, and how many runs claimed success for a failed check or reported failure for a
passing one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def outcome(r: dict) -> str:
    if r.get("passed"):
        return "pass"
    if r.get("error"):
        return "fail — " + str(r["error"]).split(":")[0][:40]
    return f"fail — {r.get('directive') or '?'}"


def disagreeing(records: list[dict]) -> tuple[list[dict], list[str], list[str]]:
    """The finished runs, those that claimed success for a failed check (exit 0 = it claimed
    success) and those that reported failure though the check passed."""
    ended = [r for r in records if r.get("exit_code") is not None]
    false_ok = sorted(r["id"] for r in ended if r["exit_code"] == 0 and not r.get("passed"))
    false_fail = sorted(r["id"] for r in ended if r["exit_code"] != 0 and r.get("passed"))
    return ended, false_ok, false_fail


def truth(records: list[dict]) -> str:
    """Does the run's own verdict agree with the check script?"""
    ended, false_ok, false_fail = disagreeing(records)
    line = (
        f"Reported vs. checked: {len(ended) - len(false_ok) - len(false_fail)} of {len(ended)} finished runs agree; "
        f"success claimed for a failed check: {len(false_ok)}"
    )
    line += f" ({', '.join(false_ok)})" if false_ok else ""
    line += f"; failure reported though the check passed: {len(false_fail)}"
    return line + (f" ({', '.join(false_fail)})." if false_fail else ".")


def table(records: list[dict]) -> str:
    by_id: dict[str, dict] = {}
    for r in records:
        by_id[r["id"]] = r
    rows = ["| task | result | LLM calls | prompt tok | completion tok | parse failures | runaways cut | wall s |",
            "|---|---|--:|--:|--:|--:|--:|--:|"]
    tot = {"calls": 0, "prompt": 0, "completion": 0, "pf": 0, "rw": 0, "wall": 0.0}
    for r in by_id.values():
        calls, pt, ct = int(r.get("llm_calls", 0)), int(r.get("prompt_tokens", 0)), int(r.get("completion_tokens", 0))
        pf, rw, wall = (
            int(r.get("parse_failures", 0) or 0),
            int(r.get("runaways_cut", 0) or 0),
            float(r.get("wall_s", 0)),
        )
        rows.append(f"| {r['id']} | {outcome(r)} | {calls} | {pt:,} | {ct:,} | {pf} | {rw} | {wall:.0f} |")
        tot["calls"] += calls
        tot["prompt"] += pt
        tot["completion"] += ct
        tot["pf"] += pf
        tot["rw"] += rw
        tot["wall"] += wall
    n = len(by_id)
    passed = sum(1 for r in by_id.values() if r.get("passed"))
    rows.append(f"| **{n} tasks** | **{passed} passed ({passed / n:.0%})** | {tot['calls']} | {tot['prompt']:,} | "
                f"{tot['completion']:,} | {tot['pf']} | {tot['rw']} | {tot['wall']:.0f} |" if n else "| (none) |")
    if n:
        rows.append(f"\nPer task: {tot['calls'] / n:.1f} LLM calls, {tot['prompt'] / n:,.0f} prompt tokens, "
                    f"{tot['wall'] / n:.0f} s.")
        rows.append(truth(list(by_id.values())))
    return "\n".join(rows)


def compare(a: list[dict], b: list[dict], names: tuple[str, str]) -> str:
    """Side by side over the tasks both runs have (order of the first run)."""
    last_a = {r["id"]: r for r in a}
    last_b = {r["id"]: r for r in b}
    ids = [i for i in last_a if i in last_b]
    na, nb = names
    rows = [f"| task | {na} | {na} calls | {na} prompt tok | {nb} | {nb} calls | {nb} prompt tok |",
            "|---|---|--:|--:|---|--:|--:|"]
    tot = {k: 0 for k in ("pa", "pb", "ca", "cb", "ta", "tb")}
    for i in ids:
        ra, rb = last_a[i], last_b[i]
        ca, cb = int(ra.get("llm_calls", 0)), int(rb.get("llm_calls", 0))
        ta, tb = int(ra.get("prompt_tokens", 0)), int(rb.get("prompt_tokens", 0))
        rows.append(f"| {i} | {outcome(ra)} | {ca} | {ta:,} | {outcome(rb)} | {cb} | {tb:,} |")
        tot["pa"] += bool(ra.get("passed"))
        tot["pb"] += bool(rb.get("passed"))
        tot["ca"] += ca
        tot["cb"] += cb
        tot["ta"] += ta
        tot["tb"] += tb
    n = len(ids)
    if not n:
        return "| (no task in both runs) |"
    rows.append(f"| **{n} tasks** | **{tot['pa']} passed** | {tot['ca']} | {tot['ta']:,} | **{tot['pb']} passed** | "
                f"{tot['cb']} | {tot['tb']:,} |")
    rows.append(f"\nPer task: {na} {tot['ca'] / n:.1f} calls, {tot['ta'] / n:,.0f} prompt tokens; "
                f"{nb} {tot['cb'] / n:.1f} calls, {tot['tb'] / n:,.0f} prompt tokens.")
    only_a = sorted(i for i in ids if last_a[i].get("passed") and not last_b[i].get("passed"))
    only_b = sorted(i for i in ids if last_b[i].get("passed") and not last_a[i].get("passed"))
    rows.append(f"Passed only with {na}: {len(only_a)}" + (f" ({', '.join(only_a)})" if only_a else "")
                + f"; only with {nb}: {len(only_b)}" + (f" ({', '.join(only_b)})" if only_b else "") + ".")
    return "\n".join(rows)


def summary(runs: list[list[dict]], names: list[str]) -> str:
    """One row per run: the figures the issue's goal is judged on, per task."""
    rows = [
        "| run | tasks | passed | LLM calls / task | prompt tok / task | wall s / task "
        "| false success | false failure |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for name, records in zip(names, runs, strict=True):
        last = list({r["id"]: r for r in records}.values())
        n = len(last)
        if not n:
            rows.append(f"| {name} | 0 | — | — | — | — | — | — |")
            continue
        passed = sum(1 for r in last if r.get("passed"))
        calls = sum(int(r.get("llm_calls", 0)) for r in last)
        prompt = sum(int(r.get("prompt_tokens", 0)) for r in last)
        wall = sum(float(r.get("wall_s", 0)) for r in last)
        _, false_ok, false_fail = disagreeing(last)
        rows.append(f"| {name} | {n} | {passed} ({passed / n:.0%}) | {calls / n:.1f} | {prompt / n:,.0f} | "
                    f"{wall / n:.0f} | {len(false_ok)} | {len(false_fail)} |")
    return "\n".join(rows)


def _read(name: str) -> list[dict] | str:
    """The records of one file (of one pass of it with FILE@N), or the one-line error."""
    path, at, wanted = name.rpartition("@")
    if at and wanted.isdigit() and not Path(name).exists():
        got = _read(path)
        return got if isinstance(got, str) else [r for r in got if r.get("pass") == int(wanted)]
    try:
        lines = Path(name).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        return f"bench_table: cannot read {name}: {e.strerror}"
    records = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            return f"bench_table: {name}:{i} is not a JSON line"
    return records


def main(argv: list[str]) -> int:
    usage = "\n".join(__doc__.strip().splitlines()[2:5])
    names: list[str] | None = None
    if "--names" in argv:
        i = argv.index("--names")
        names = argv[i + 1].split(",") if i + 1 < len(argv) else []
        argv = argv[:i] + argv[i + 2:]
    mode = argv[0] if argv and argv[0] in ("--compare", "--summary") else ""
    files = argv[1:] if mode else argv
    if mode == "--compare":
        names = names if names is not None else ["GGS", "naive-retry"]
    elif mode == "--summary":
        names = names if names is not None else files
    ok = bool(files) and (mode != "--compare" or len(files) == 2)
    if not ok or (mode and (len(names) != len(files) or not all(names))):
        print(usage, file=sys.stderr)
        return 2
    runs = []
    for name in files:
        got = _read(name)
        if isinstance(got, str):
            print(got, file=sys.stderr)
            return 2
        runs.append(got)
    if mode == "--compare":
        print(compare(runs[0], runs[1], (names[0], names[1])))
    elif mode == "--summary":
        print(summary(runs, names))
    else:
        print(table([r for run in runs for r in run]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
