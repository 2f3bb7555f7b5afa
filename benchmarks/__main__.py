"""`make bench`: run every `benchmarks/bench_*.py` in its own process, 3 times, and print each
figure's median and its spread over the runs — what a user will see, not the best run (#15).

Each script prints lines of the form
`bench <area>.<figure>: <value> <unit> (budget <op> <limit>: ok|OVER)`; this runner prints
`bench <area>.<figure>: <median> <unit> [<min>–<max> over 3 runs] (budget <op> <limit>: ok|OVER)`,
the budget judged on the median. It exits 1 if any median is OVER or any script fails.

    python -m benchmarks [AREA ...] [--runs N]
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _report import _OPS  # noqa: E402

LINE = re.compile(r"^bench (\S+): (\S+) (.*?) \(budget (\S+) (\S+): (?:ok|OVER)\)\s*$")


def _fmt(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.3g}"


def main(argv: list[str]) -> int:
    runs = 3
    if "--runs" in argv:
        i = argv.index("--runs")
        runs = max(1, int(argv[i + 1]))
        argv = argv[:i] + argv[i + 2:]
    here = Path(__file__).parent
    only = set(argv)
    scripts = sorted(p for p in here.glob("bench_*.py") if not only or p.stem[6:] in only)
    failed: list[str] = []
    over = 0
    for script in scripts:
        t0 = time.perf_counter()
        figures: dict[str, list[float]] = {}
        meta: dict[str, tuple[str, str, float]] = {}
        for _ in range(runs):  # one after the other: the runs must not compete for the CPU
            proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
            for line in proc.stdout.splitlines():
                m = LINE.match(line)
                if m:
                    name, value, unit, op, limit = m.groups()
                    figures.setdefault(name, []).append(float(value))
                    meta[name] = (unit, op, float(limit))
            if proc.returncode != 0 and not any(line.rstrip().endswith("OVER)") for line in proc.stdout.splitlines()):
                failed.append(script.name)
                sys.stderr.write(f"{script.name} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}\n")
                break
        for name, values in figures.items():
            unit, op, limit = meta[name]
            med = statistics.median(values)
            ok = _OPS[op](med, limit)
            over += not ok
            spread = f"[{_fmt(min(values))}–{_fmt(max(values))} over {len(values)} runs]"
            print(f"bench {name}: {_fmt(med)} {unit} {spread} (budget {op} {limit:g}: {'ok' if ok else 'OVER'})",
                  flush=True)
        print(f"# {script.name}: {time.perf_counter() - t0:.1f} s for {runs} runs", file=sys.stderr)
    if failed or over:
        print(f"bench: {over} figure(s) over budget (median of {runs}), {len(failed)} script(s) failed",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
