"""`agentui replay` — not built yet (see the issues)."""

from __future__ import annotations

import argparse
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    print("agentui replay: not available in this build yet", file=sys.stderr)
    return 2
