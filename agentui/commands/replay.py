"""`agentui replay FILE`: play a recorded bus JSONL in the UI — no model needed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a bus recording (<data dir>/recordings/<task>.bus.jsonl)")
    parser.add_argument("--speed", type=float, default=1.0, help="playback speed factor (default 1; 0 = instant)")
    parser.add_argument("--theme", metavar="NAME", help="dark or light")


def run(args: argparse.Namespace) -> int:
    from agentui.cli import load_from_args
    from agentui.ui.app import AgentApp

    path = Path(args.file).expanduser()
    if not path.is_file():
        print(f"agentui replay: {path} not found", file=sys.stderr)
        return 2
    if args.speed < 0:
        print("agentui replay: --speed must be >= 0", file=sys.stderr)
        return 2
    cfg = load_from_args(args).config
    if args.theme:
        cfg.ui.theme = args.theme
    return int(AgentApp(cfg, replay=path, speed=args.speed).run() or 0)
