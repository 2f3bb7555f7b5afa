"""`agentui replay FILE`: play a recorded bus JSONL in the UI — no model needed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a bus recording (<data dir>/recordings/<task>.bus.jsonl)")
    parser.add_argument("--speed", type=float, default=1.0, help="playback speed factor (default 1; 0 = instant)")
    parser.add_argument("--theme", metavar="NAME", default=argparse.SUPPRESS, help="dark, light or a .toml theme file")


def run(args: argparse.Namespace) -> int:
    from agentui.cli import load_from_args
    from agentui.ui.app import AgentApp

    path = Path(args.file).expanduser()
    if path.is_dir():
        print(f"agentui replay: {path} is a directory; give one recording in it, e.g. "
              f"{path / 'recordings' / '<task>.bus.jsonl'}", file=sys.stderr)
        return 2
    if not path.is_file():
        print(f"agentui replay: {path} not found", file=sys.stderr)
        return 2
    if not args.speed >= 0 or args.speed == float("inf"):  # also NaN
        print("agentui replay: --speed must be >= 0", file=sys.stderr)
        return 2
    _check_recording(path)
    cfg = load_from_args(args).config
    if getattr(args, "theme", None):
        cfg.ui.theme = args.theme
    app = AgentApp(cfg, replay=path, speed=args.speed)
    app.run()
    return int(app.return_code or 0)  # non-zero after a crash


def _check_recording(path: Path) -> None:
    """A file that is not UTF-8 JSONL with at least one bus envelope is one line + exit 2, before
    the screen opens; single bad lines are reported inside the replay."""
    from agentui.cli import UsageError
    from agentui.contracts import Envelope

    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"agentui replay: {path} is not a text recording (byte {e.start} is not UTF-8); "
                         "give a <data dir>/recordings/<task>.bus.jsonl file") from None
    for raw in text.splitlines():
        if raw.strip():
            try:
                Envelope.from_json(raw)
                return
            except Exception:  # noqa: BLE001 - any parse failure: keep looking for a good line
                continue
    raise UsageError(f"agentui replay: {path} holds no bus envelopes; give a "
                     "<data dir>/recordings/<task>.bus.jsonl file")
