"""Entry point: `agentui [run|memory|audit|bench|doctor|replay|tree|mcp|acp]`; no subcommand opens the TUI.

Each subcommand lives in `agentui/commands/<name>.py` with `configure(parser)` and
`run(args) -> int`. Those modules keep their top-level imports light so `--help` stays fast;
heavy imports happen inside `run`.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from agentui import __version__

# name → (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "run": ("agentui.commands.run", "run one task headless and print the pipeline"),
    "memory": (
        "agentui.commands.memory",
        "inspect and edit the MKCT memory (stats, list, show, remember, forget, dream, export, repair)",
    ),
    "audit": ("agentui.commands.audit", "print the Auditor's report (also from previous runs)"),
    "bench": ("agentui.commands.bench", "run a task suite and measure success, calls and tokens"),
    "doctor": ("agentui.commands.doctor", "check config, data dir, LLM endpoint and LevelDB"),
    "replay": ("agentui.commands.replay", "replay a recorded bus JSONL in the UI"),
    "tree": (
        "agentui.commands.tree",
        "work a goal tree leaf by leaf (init, validate, select, status, start, step, run)",
    ),
    "ui": ("agentui.commands.ui", "open the terminal UI (the default)"),
    "mcp": ("agentui.commands.mcp", "list, add and remove MCP servers whose tools the executors may call"),
    "acp": ("agentui.commands.acp", "serve the pipeline as an ACP agent over stdio (for Zed, Toad, …)"),
}

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the problem and where help is (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def common_options(*, suppress: bool = False) -> argparse.ArgumentParser:
    """Flags every subcommand accepts; they override config file and environment.

    Subparsers use `suppress` so `agentui --data-dir X memory stats` keeps X (argparse would
    otherwise overwrite it with the subparser's default).
    """
    p = Parser(add_help=False, argument_default=argparse.SUPPRESS if suppress else None)
    _add_common(p)
    return p


def _add_common(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("configuration")
    g.add_argument("--config", metavar="FILE", type=non_empty_path,
                   help="config file (default: platform config dir/config.toml)")
    g.add_argument("--data-dir", metavar="DIR", type=non_empty_path,
                   help="data directory (memory, audit log, task logs)")
    g.add_argument("--base-url", metavar="URL", help="OpenAI-compatible endpoint for both tiers")
    g.add_argument("--model", metavar="M", help="model name for both tiers")
    g.add_argument("--api-key", metavar="KEY", help="API key for the endpoint")


def _nested(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The action parsers under a subcommand (`memory stats`, `tree init`, `mcp add`)."""
    return [p for a in parser._actions if isinstance(a, argparse._SubParsersAction)
            for p in dict.fromkeys(a.choices.values())]


def non_empty_path(text: str) -> str:
    """argparse type: a path that is not empty (`--data-dir "$UNSET"` used the default store)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: give a path (or leave the flag out for the default)")
    return text


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (timeouts)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v) or v <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return v


def non_negative_int(text: str) -> int:
    """argparse type: a whole number >= 0 (counts)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more")
    return v


class UsageError(Exception):
    """Bad input found after parsing: `main` prints the message (one line, with the fix), exit 2."""


def overrides_from_args(args: argparse.Namespace) -> dict[str, object]:
    return {
        "data_dir": getattr(args, "data_dir", None),
        "llm.base_url": getattr(args, "base_url", None),
        "llm.model": getattr(args, "model", None),
        "llm.api_key": getattr(args, "api_key", None),
    }


def load_from_args(args: argparse.Namespace):
    """Load config honouring --config and the override flags (once per invocation).

    Raises ConfigError. `main` calls it before any subcommand runs, so a bad config file stops
    every command with the same one-line message and exit code 2.
    """
    from agentui.config import load_config

    cached = getattr(args, "_loaded_config", None)
    if cached is None:
        cached = load_config(getattr(args, "config", None), overrides=overrides_from_args(args))
        args._loaded_config = cached
    return cached


def build_parser() -> argparse.ArgumentParser:
    common = common_options()
    sub_common = common_options(suppress=True)
    parser = Parser(
        prog="agentui",
        description="Turn a goal typed in plain language into work done by a hierarchy of LLM roles.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"agentui {__version__}")
    parser.add_argument("--theme", metavar="NAME", help="UI theme: dark, light or a .toml theme file")
    parser.add_argument("--workspace", "-w", metavar="DIR", type=non_empty_path,
                        help="the UI's workspace: the directory the tools work in (default: cwd)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, (module, help_text) in SUBCOMMANDS.items():
        sp = sub.add_parser(name, help=help_text, description=help_text, parents=[sub_common])
        mod = importlib.import_module(module)
        mod.configure(sp)
        sp.set_defaults(_module=module)
        for action_parser in _nested(sp):  # `agentui memory stats --data-dir X` too (docs/cli.md)
            if "--data-dir" in action_parser._option_string_actions:
                continue  # the command gave its actions the global options itself
            nested = Parser(add_help=False, argument_default=argparse.SUPPRESS)
            _add_common(nested)
            action_parser._add_container_actions(nested)
    return parser


def _bad_utf8(argv: Sequence[str]) -> str | None:
    """The first argument that is not valid UTF-8 (Python keeps such bytes as lone surrogates)."""
    for i, a in enumerate(argv):
        try:
            a.encode("utf-8")
        except UnicodeEncodeError as e:
            bad = a[e.start].encode("utf-8", "surrogateescape")
            return (f"argument {i + 1} is not valid UTF-8 text (byte 0x{bad.hex()} at {e.start}); "
                    "re-type it or fix the file's encoding")
    return None


def _one_line(e: BaseException) -> tuple[str, int]:
    """(message, exit code) for an error that reached `main`: one line, never a traceback."""
    from agentui.cli import (
        UsageError as Usage,  # differs from ours when run as `python -m agentui.cli`
    )
    from agentui.paths import DataDirError, os_problem

    mem = sys.modules.get("agentui.memory.errors")  # loaded iff the memory store was involved
    if mem is not None and isinstance(e, mem.MemoryInUse):
        return f"{e}; close the other agentui first", EXIT_USAGE
    if isinstance(e, UsageError | Usage | DataDirError) or (
        mem is not None and isinstance(e, mem.MemoryDamaged | mem.MemoryUnavailable)
    ):
        return str(e), EXIT_USAGE
    if type(e).__module__.startswith(("plyvel", "plyvel_next")):  # a read found damage after the open
        from agentui.memory.leveldb import classify

        return str(classify(None, e)), EXIT_USAGE
    llm = sys.modules.get("agentui.llm")
    if llm is not None and isinstance(e, llm.LLMError):  # e.g. a GGUF that is not there
        return str(e), EXIT_USAGE
    if isinstance(e, UnicodeError):
        return f"input is not valid UTF-8 text ({e}); fix its encoding", EXIT_USAGE
    if isinstance(e, OSError):
        path = e.filename if e.filename is not None else "a file"
        return os_problem(e, path), EXIT_USAGE
    return (f"unexpected error {type(e).__name__}: {e} (set AGENTUI_DEBUG=1 to see where; "
            "please report it)"), EXIT_FAIL


_CLOSED_STDIO: set[int] = set()  # the standard descriptors that were closed when agentui started


def _guard_stdio() -> None:
    """Stand /dev/null in for a standard stream the caller closed (`<&-`, `>&-`).

    Python leaves sys.stdin (stdout, stderr) None then, so code asking ``sys.stdin.isatty()``
    raised AttributeError; and while the descriptor stays free, the next file agentui opens (a
    LevelDB table, the audit log) takes its number, and a tool's output written to "stdout" would
    land in it. A descriptor something has reused since start-up is left to its owner."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        if getattr(sys, name) is not None:
            continue
        _CLOSED_STDIO.add(fd)
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if null != fd:  # the lowest free number is `fd` unless a lower one is free too
                os.dup2(null, fd)
                os.close(null)
        setattr(sys, name, open(os.devnull, mode))  # noqa: SIM115 - lives as long as the process


def stdin_closed() -> bool:
    """True if agentui started with its standard input closed (nothing can be read from it). Asked
    of the stream itself: `python -m agentui.cli` runs this file as __main__, a second copy of
    this module whose _CLOSED_STDIO the commands never see; the stand-in opened by
    :func:`_guard_stdio` is the one stdin named after /dev/null (an inherited stdin is "<stdin>")."""
    return 0 in _CLOSED_STDIO or sys.stdin is None or getattr(sys.stdin, "name", None) == os.devnull


def main(argv: Sequence[str] | None = None) -> int:
    from agentui.config import ConfigError

    _guard_stdio()
    raw = list(sys.argv[1:] if argv is None else argv)
    bad = _bad_utf8(raw)
    if bad:
        print(f"agentui: {bad}", file=sys.stderr)
        return EXIT_USAGE
    parser = build_parser()
    args = parser.parse_args(raw)
    module = getattr(args, "_module", "agentui.commands.ui")
    try:
        if getattr(args, "theme", None) is not None:  # '' too: an empty name is no theme
            from agentui.themes import check_theme

            try:
                args.theme = check_theme(args.theme)
            except ValueError as e:
                raise UsageError(f"--theme: {e}") from None
        load_from_args(args)
        return int(importlib.import_module(module).run(args) or 0)
    except ConfigError as e:
        print(f"agentui: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("agentui: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as e:  # noqa: BLE001 - the last line of defence: no traceback reaches a user
        if os.environ.get("AGENTUI_DEBUG"):
            raise
        msg, code = _one_line(e)
        print(msg if msg.startswith("agentui") else f"agentui: {msg}", file=sys.stderr)
        return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
