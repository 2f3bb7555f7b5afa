"""A small MCP server speaking stdio, written for the tests (issue #18).

Tools: `echo(text)`, `add(a, b)`, `fail(message)` (a tool error, `is_error`), `big(n)` (n chars of
output), `sleep(seconds)`, `die(code)` (the process exits mid-call), `env(name)` (one variable of
the server's environment, to check what the client passes). `--crash-on-start` exits before the
handshake; `--marker FILE` appends each call's name to FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build(marker: str | None = None) -> MCPServer:
    server = MCPServer("agentui-test", log_level="WARNING")

    def mark(name: str) -> None:
        if marker:
            with open(marker, "a", encoding="utf-8") as fh:
                fh.write(name + "\n")

    @server.tool(description="Return the text unchanged.")
    def echo(text: str) -> str:
        mark("echo")
        return text

    @server.tool(description="Add two integers.")
    def add(a: int, b: int) -> str:
        mark("add")
        return str(a + b)

    @server.tool(description="Always fails with the message.")
    def fail(message: str) -> str:
        mark("fail")
        raise ToolError(message)

    @server.tool(description="Return n characters.")
    def big(n: int) -> str:
        mark("big")
        return "".join(chr(ord("a") + i % 26) for i in range(n))

    @server.tool(description="Sleep, then say so.")
    async def sleep(seconds: float) -> str:
        mark("sleep")
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(description="Exit the server process mid-call.")
    def die(code: int = 3) -> str:
        mark("die")
        sys.stdout.flush()
        os._exit(code)

    @server.tool(description="One environment variable of the server process.")
    def env(name: str) -> str:
        mark("env")
        return os.environ.get(name, "<unset>")

    return server


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--crash-on-start", action="store_true")
    p.add_argument("--marker")
    args = p.parse_args()
    if args.crash_on_start:
        print("test server: configured to crash on start", file=sys.stderr)
        sys.exit(4)
    build(args.marker).run("stdio")


if __name__ == "__main__":
    main()
