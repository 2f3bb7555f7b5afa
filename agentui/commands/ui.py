"""`agentui` / `agentui ui`: open the terminal UI (the pipeline runs inside it)."""

from __future__ import annotations

import argparse
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", "-w", metavar="DIR", help="directory the tools work in (default: cwd)")
    parser.add_argument("--theme", metavar="NAME", help="dark or light (or any theme in themes/)")


def run(args: argparse.Namespace) -> int:
    from agentui.cli import load_from_args
    from agentui.ui.app import AgentApp

    loaded = load_from_args(args)
    cfg = loaded.config
    if getattr(args, "theme", None):
        cfg.ui.theme = args.theme
    ws = getattr(args, "workspace", None)
    if ws and not Path(ws).expanduser().is_dir():
        print(f"agentui: workspace {ws} is not a directory")
        return 2
    app = AgentApp(cfg, workspace=Path(ws).expanduser() if ws else None, config_file=loaded.file)
    return int(app.run() or 0)
