"""`make bench`: run every `benchmarks/bench_*.py` in its own process and print its figures.

Each script prints lines of the form
`bench <area>.<figure>: <value> <unit> (budget <op> <limit>: ok|OVER)`.
This runner exits 1 if any figure is OVER or any script fails.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).parent
    only = set(argv)
    scripts = sorted(p for p in here.glob("bench_*.py") if not only or p.stem[6:] in only)
    failed: list[str] = []
    over = 0
    for script in scripts:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            if line.startswith("bench "):
                print(line, flush=True)
                if line.rstrip().endswith("OVER)"):
                    over += 1
        if proc.returncode != 0:
            failed.append(script.name)
            sys.stderr.write(f"{script.name} failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}\n")
        print(f"# {script.name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if failed or over:
        print(f"bench: {over} figure(s) over budget, {len(failed)} script(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
