#!/usr/bin/env python3
"""Turn `agentui bench --out FILE` lines into the Markdown table the README shows.

Usage: python scripts/bench_table.py results.jsonl [more.jsonl …]
One row per task (the last record of each id wins, in suite order of first appearance), then a
totals row: passed, LLM calls, prompt/completion tokens, parse failures, runaways cut, wall seconds.
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


def truth(records: list[dict]) -> str:
    """Does the run's own verdict agree with the check script? (exit 0 = it claimed success.)"""
    ended = [r for r in records if r.get("exit_code") is not None]
    false_ok = sorted(r["id"] for r in ended if r["exit_code"] == 0 and not r.get("passed"))
    false_fail = sorted(r["id"] for r in ended if r["exit_code"] != 0 and r.get("passed"))
    line = (f"Reported vs. checked: {len(ended) - len(false_ok) - len(false_fail)} of {len(ended)} finished runs agree; "
            f"success claimed for a failed check: {len(false_ok)}")
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
        pf, rw, wall = int(r.get("parse_failures", 0) or 0), int(r.get("runaways_cut", 0) or 0), float(r.get("wall_s", 0))
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


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    records = []
    for name in argv:
        try:
            lines = Path(name).read_text(encoding="utf-8").splitlines()
        except OSError as e:
            print(f"bench_table: cannot read {name}: {e.strerror}", file=sys.stderr)
            return 2
        for i, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                print(f"bench_table: {name}:{i} is not a JSON line", file=sys.stderr)
                return 2
    print(table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
