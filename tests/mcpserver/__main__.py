"""A small MCP server speaking stdio, written for the tests (issue #18).

Tools: `echo(text)`, `add(a, b)`, `fail(message)` (a tool error, `is_error`), `big(n)` (n chars of
output), `sleep(seconds)`, `die(code)` (the process exits mid-call), `env(name)` (one variable of
the server's environment, to check what the client passes); a resource `note://today`, a template
`note://{day}` and a prompt `review(file)`; `count(n)` reports progress at each step; `book()` asks the user for a
form (elicitation: a name, a number of guests, a yes/no and a choice). `--crash-on-start` exits before the
handshake; `--marker FILE` appends each call's name to FILE. `--http PORT_FILE` serves Streamable
HTTP instead (the port written to PORT_FILE), behind `--require-header "Name: value"` if given (a
401 names its resource metadata in WWW-Authenticate, as an OAuth-protected server does); with
`--sse` the legacy HTTP+SSE transport at /sse. With `--oauth` (and `--http`) the server is its own OAuth
authorization server (tests/mcpserver/oauth.py, #40): dynamic registration, an /authorize that approves at
once (`--deny`: refuses), access tokens that expire after `--token-ttl` seconds; the marker file gets a
line per OAuth event (`oauth:register`, `oauth:authorize`, `oauth:deny`, `oauth:token`, `oauth:refresh`,
`oauth:reject`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field


class Booking(BaseModel):
    name: str = Field(description="Whose name the table is under")
    guests: int = Field(ge=1, le=12, description="How many people")
    outside: bool = Field(default=False, description="A table outside")
    area: Literal["bar", "window", "garden"] = Field(default="window")


def booking() -> Elicit[Booking]:
    return Elicit("Book a table: who, how many, and where?", Booking)


def marker_writer(marker: str | None) -> Callable[[str], None]:
    """Appends one line to the marker file (nothing without one)."""

    def mark(name: str) -> None:
        if marker:
            with open(marker, "a", encoding="utf-8") as fh:
                fh.write(name + "\n")

    return mark


def build(marker: str | None = None, *, oauth: dict[str, Any] | None = None) -> MCPServer:
    """The server; with `oauth` (the keyword arguments of `oauth.TestOAuthProvider`, `base_url` among
    them) it is also its own OAuth authorization server and requires a bearer token from it."""
    mark = marker_writer(marker)
    auth: dict[str, Any] = {}
    if oauth is not None:
        from tests.mcpserver import oauth as oauth_mod

        auth = {"auth_server_provider": oauth_mod.TestOAuthProvider(mark=mark, **oauth),
                "auth": oauth_mod.settings(oauth["base_url"])}
    server = MCPServer("agentui-test", log_level="WARNING", **auth)

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

    @server.tool(description="Count to n, reporting progress at each step.")
    async def count(n: int, ctx: Context) -> str:
        mark("count")
        for i in range(n):
            await ctx.report_progress(i + 1, n, f"step {i + 1}")
            await asyncio.sleep(0.05)
        return f"counted to {n}"

    @server.tool(description="Book a table: asks the user for the details (elicitation).")
    def book(answer: Annotated[ElicitationResult[Booking], Resolve(booking)]) -> str:
        mark("book")
        if answer.action == "accept":
            return f"accepted: {answer.data.model_dump_json()}"
        return answer.action

    @server.resource("note://today", description="Today's note.")
    def today() -> str:
        mark("resource")
        return "remember the milk"

    @server.resource("note://{day}", description="The note of a day.")
    def note(day: str) -> str:
        return f"the note of {day}"

    @server.prompt(description="Ask for a review of one file.")
    def review(file: str) -> str:
        return f"Review {file} and list its problems."

    return server


def guarded(app, header: str):  # noqa: ANN001, ANN201
    """The app behind a required request header (`Name: value`); anything else is a 401."""
    name, _, value = header.partition(":")
    want = (name.strip().lower().encode(), value.strip().encode())

    async def asgi(scope, receive, send):  # noqa: ANN001, ANN202
        if scope["type"] == "http" and (want[0], want[1]) not in list(scope["headers"]):
            meta = f'Bearer resource_metadata="http://127.0.0.1:{scope["server"][1]}/.well-known/oauth-protected-resource"'
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", meta.encode())]})
            await send({"type": "http.response.body", "body": b"missing or wrong auth header"})
            return
        await app(scope, receive, send)

    return asgi


def serve_http(server: MCPServer | Callable[[str], MCPServer], port_file: str, header: str | None,
               sse: bool = False) -> None:
    """Streamable HTTP (or with `sse`, the legacy HTTP+SSE transport at /sse) on 127.0.0.1 at a
    free port, written to `port_file` once listening. `server` may be a function of the base URL
    (`http://127.0.0.1:PORT`), for a server that must know its own address (OAuth metadata)."""
    import socket

    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    if not isinstance(server, MCPServer):
        server = server(f"http://127.0.0.1:{sock.getsockname()[1]}")
    app = server.sse_app() if sse else server.streamable_http_app()
    config = uvicorn.Config(guarded(app, header) if header else app, log_level="warning", lifespan="on")
    userver = uvicorn.Server(config)

    async def run() -> None:
        task = asyncio.create_task(userver.serve(sockets=[sock]))
        while not userver.started:
            await asyncio.sleep(0.02)
        with open(port_file + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(str(sock.getsockname()[1]))
        os.replace(port_file + ".tmp", port_file)
        await task

    asyncio.run(run())


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--crash-on-start", action="store_true")
    p.add_argument("--marker")
    p.add_argument("--http", metavar="PORT_FILE", help="serve Streamable HTTP; the port is written here")
    p.add_argument("--require-header", metavar="NAME: VALUE")
    p.add_argument("--sse", action="store_true", help="with --http: the legacy HTTP+SSE transport at /sse")
    p.add_argument("--oauth", action="store_true",
                   help="with --http: require OAuth bearer tokens, issued by this server itself")
    p.add_argument("--token-ttl", type=int, default=3600, metavar="SECONDS",
                   help="with --oauth: access tokens expire after this long (then a client must refresh)")
    p.add_argument("--deny", action="store_true", help="with --oauth: the user refuses every authorization")
    p.add_argument("--flood-stderr", type=int, metavar="MB", help="write MB megabytes to stderr, then exit 4")
    args = p.parse_args()
    if args.oauth and not args.http:
        p.error("--oauth needs --http")
    if args.deny and not args.oauth:
        p.error("--deny needs --oauth")
    if args.token_ttl < 1:
        p.error("--token-ttl must be at least 1")
    if args.flood_stderr:
        line = b"x" * 1023 + b"\n"
        for _ in range(args.flood_stderr * 1024):
            sys.stderr.buffer.write(line)
        sys.stderr.buffer.write(b"test server: last words after the flood\n")
        sys.stderr.flush()
        sys.exit(4)
    if args.crash_on_start:
        print("test server: configured to crash on start", file=sys.stderr)
        sys.exit(4)
    if args.http and args.oauth:
        def oauth_server(base_url: str) -> MCPServer:
            return build(args.marker, oauth={"base_url": base_url, "ttl": args.token_ttl, "deny": args.deny})

        serve_http(oauth_server, args.http, args.require_header, args.sse)
        return
    if args.http:
        serve_http(build(args.marker), args.http, args.require_header, args.sse)
        return
    build(args.marker).run("stdio")


if __name__ == "__main__":
    main()
