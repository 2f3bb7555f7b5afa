"""The newcomer's report, CLI items still open on main (#17 item 11): `replay` given a directory — real subprocesses, one line, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "agentui.cli", *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=60)


def test_replay_of_a_directory_says_it_is_one(tmp_path):
    r = _cli("replay", str(tmp_path))
    assert r.returncode == 2 and "not found" not in r.stderr
    assert r.stderr.strip().startswith(f"agentui replay: {tmp_path} is a directory; give one recording in it")
