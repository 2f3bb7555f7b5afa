"""`agentui acp`: serve the role pipeline as an ACP agent over stdio.

An editor or TUI (Zed, Toad, JetBrains, Neovim) starts this as a subprocess and speaks JSON-RPC on
its stdin/stdout; stdout carries nothing else. Logs and problems go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import sys


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version-info", action="store_true",
                        help="print the ACP SDK and protocol versions and exit")


def run(args: argparse.Namespace) -> int:
    from agentui.cli import load_from_args

    loaded = load_from_args(args)
    try:
        from agentui.acp.agent import serve, versions
    except ImportError as e:
        print(f"agentui acp: the ACP SDK is not installed ({e}); reinstall agentui (make install)",
              file=sys.stderr)
        return 2
    from agentui.gcpolicy import settle

    settle()  # the import heap leaves the full collections
    if args.version_info:
        sdk, proto = versions()
        print(f"agent-client-protocol {sdk}, ACP protocol version {proto}")
        return 0
    try:
        asyncio.run(serve(loaded.config))
    except KeyboardInterrupt:
        return 130
    return 0
