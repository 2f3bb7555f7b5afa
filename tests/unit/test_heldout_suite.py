"""The held-out suite loads as a bench suite and every expected value is what an independent
reference command computes (benchmarks/verify_heldout_suite.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agentui.benchsuite import load_suite

REPO = Path(__file__).resolve().parents[2]


def test_the_heldout_suite_is_valid_and_verified():
    tasks = load_suite(REPO / "benchmarks" / "heldout-suite.json")
    assert len(tasks) >= 40
    r = subprocess.run([sys.executable, str(REPO / "benchmarks" / "verify_heldout_suite.py")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1].startswith(f"OK: all {len(tasks)} tasks verified")
