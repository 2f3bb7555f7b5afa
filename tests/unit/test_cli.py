"""`agentui --help` lists every subcommand; `--version` prints the version."""

from __future__ import annotations

import subprocess
import sys

from agentui import __version__
from agentui.cli import SUBCOMMANDS


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentui.cli", *args], capture_output=True, text=True, timeout=60)


def test_help_lists_every_subcommand() -> None:
    proc = run("--help")
    assert proc.returncode == 0
    for name in SUBCOMMANDS:
        assert name in proc.stdout
    for name in ("run", "memory", "audit", "bench", "doctor", "replay"):
        assert name in SUBCOMMANDS


def test_version() -> None:
    proc = run("--version")
    assert proc.returncode == 0 and __version__ in proc.stdout


def test_unknown_subcommand_is_a_usage_error() -> None:
    proc = run("frobnicate")
    assert proc.returncode == 2
