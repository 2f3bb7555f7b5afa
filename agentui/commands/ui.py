"""`agentui` / `agentui ui`: open the terminal UI (the pipeline runs inside it)."""

from __future__ import annotations

import argparse
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    from agentui.cli import non_empty_path

    parser.add_argument(
        "--workspace",
        "-w",
        metavar="DIR",
        type=non_empty_path,
        default=argparse.SUPPRESS,
        help="directory the tools work in (default: cwd; also before the command: agentui --workspace DIR)",
    )
    parser.add_argument("--theme", metavar="NAME", default=argparse.SUPPRESS,
                        help="dark, light or a .toml theme file (also before the command: agentui --theme light)")


def run(args: argparse.Namespace) -> int:
    from agentui.cli import UsageError, load_from_args
    from agentui.paths import DataLayout
    from agentui.themes import check_theme

    loaded = load_from_args(args)
    cfg = loaded.config
    try:  # --theme was checked by the CLI; a theme from the config file is checked here
        cfg.ui.theme = getattr(args, "theme", None) or check_theme(cfg.ui.theme)
    except ValueError as e:
        raise UsageError(f"[ui] theme: {e}") from None
    ws = getattr(args, "workspace", None)
    if ws and not Path(ws).expanduser().is_dir():
        raise UsageError(f"workspace {ws} is not a directory")
    layout = DataLayout(cfg.data_path())
    layout.check()  # before the screen opens: a bad data dir or a damaged store is one line, exit 2
    from agentui.memory.leveldb import precheck

    precheck(layout.memory_db)
    from agentui.gcpolicy import settle
    from agentui.ui.app import AgentApp

    settle()  # Textual's and our import heap leave the full collections
    app = AgentApp(cfg, workspace=Path(ws).expanduser() if ws else None, config_file=loaded.file)
    app.run()
    return int(app.return_code or 0)  # non-zero after a crash or a store that cannot open
