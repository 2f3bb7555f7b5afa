"""A hand-written MCP stdio server (newline-delimited JSON-RPC 2.0) for what the SDK's own server will
not send or show: tools whose input schema is invalid, tool annotations, a tool list that changes,
and the client's side of the handshake. Tools: `echo(text)` (valid); with `--bad-schemas` also
`s_string` (its schema a string), `s_banana` (type "banana"), `s_missing` (no inputSchema) and
`s_array` (a top-level array schema); with `--annotated` also `peek(text)` (`readOnlyHint`),
`wipe(text)` (`destructiveHint`) and `lying(text)` (read-only *and* destructive); with
`--list-changed`, calling `grow` adds a tool `grown` and sends `notifications/tools/list_changed`.
`--record FILE` appends every message the client sends (one JSON a line); after `initialized` the
server asks `roots/list` when the client declared roots, and records the answer too.
`--log-and-crash TEXT` answers `initialize` with TEXT, a non-JSON line (the SDK logs it), then
exits; `--exit-after S` waits S seconds, says so on stderr and exits before any answer;
`--slow-start S` waits S seconds before it serves. With `--elicit`, `ask(text)` sends the client an
`elicitation/create` (a form: a string, a number, a boolean and an enum) mid-call, as a server of
protocol 2025-11-25 does, and answers the call with the client's reply as JSON; `open_page(text)`
sends a URL-mode one."""

from __future__ import annotations

import json
import sys
import time


def _tool(name: str, description: str, **annotations: bool) -> dict:
    tool = {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
    if annotations:
        tool["annotations"] = annotations
    return tool


ECHO = _tool("echo", "Return the text unchanged.")
BAD = [
    {"name": "s_string", "description": "schema is a string", "inputSchema": "not a schema"},
    {"name": "s_banana", "description": "type banana", "inputSchema": {"type": "banana"}},
    {"name": "s_missing", "description": "no inputSchema"},
    {"name": "s_array", "description": "top-level array", "inputSchema": {"type": "array", "items": {}}},
]
ANNOTATED = [
    _tool("peek", "Read something.", readOnlyHint=True),
    _tool("wipe", "Delete something.", readOnlyHint=False, destructiveHint=True),
    _tool("lying", "Claims both.", readOnlyHint=True, destructiveHint=True),
]

ELICIT_FORM = {"mode": "form", "message": "Which release?", "requestedSchema": {
    "type": "object", "required": ["version"], "properties": {
        "version": {"type": "string", "title": "Version", "description": "e.g. 1.2.0", "minLength": 1},
        "count": {"type": "number", "title": "How many", "minimum": 0},
        "draft": {"type": "boolean", "title": "Draft", "default": True},
        "channel": {"type": "string", "title": "Channel", "oneOf": [
            {"const": "stable", "title": "Stable"}, {"const": "beta", "title": "Beta"}]}}}}
ELICIT_URL = {"mode": "url", "message": "Sign in", "url": "https://example.com/sign-in", "elicitationId": "e-1"}


def send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _arg(flag: str) -> str | None:
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv[:-1] else None


def main() -> None:
    record = _arg("--record")
    crash = _arg("--log-and-crash")
    tools = [BAD[0], ECHO, *BAD[1:]] if "--bad-schemas" in sys.argv else [ECHO]
    if "--annotated" in sys.argv:
        tools += ANNOTATED
    if "--list-changed" in sys.argv:
        tools.append(_tool("grow", "Add a tool named grown."))
    if "--elicit" in sys.argv:
        tools += [_tool("ask", "Ask the user for a form."), _tool("open_page", "Ask the user to open a page.")]
    waiting: dict[str, object] = {}  # elicitation request id → the tools/call id it answers
    caps: dict = {}
    if (wait := _arg("--exit-after")) is not None:
        time.sleep(float(wait))
        print("raw test server: exiting as told", file=sys.stderr, flush=True)
        sys.exit(6)
    if (slow := _arg("--slow-start")) is not None:
        time.sleep(float(slow))
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if record:
            with open(record, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(msg) + "\n")
        mid, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        if method == "initialize":
            caps = params.get("capabilities") or {}
            if crash:
                sys.stdout.write(crash + "\n")
                sys.stdout.flush()
                sys.exit(5)
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {"listChanged": "--list-changed" in sys.argv}},
                "serverInfo": {"name": "agentui-raw-test", "version": "0.0.1"}}})
        elif method == "notifications/initialized" and "roots" in caps:
            send({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
        elif mid in waiting and not method:  # the client's answer to our elicitation/create
            answer = msg.get("result") if "result" in msg else {"error": msg.get("error")}
            send({"jsonrpc": "2.0", "id": waiting.pop(mid),
                  "result": {"content": [{"type": "text", "text": json.dumps(answer, sort_keys=True)}]}})
        elif method == "tools/call" and params.get("name") in ("ask", "open_page"):
            ask = f"elicit-{len(waiting) + 1}-{mid}"
            waiting[ask] = mid
            send({"jsonrpc": "2.0", "id": ask, "method": "elicitation/create", "params": ELICIT_URL
                  if params["name"] == "open_page" else ELICIT_FORM})
        elif method == "tools/call":
            name = params.get("name")
            if name == "grow" and not any(t["name"] == "grown" for t in tools):
                tools.append(_tool("grown", "Added later."))
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            text = str((params.get("arguments") or {}).get("text", ""))
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": f"{name}: {text}"
                                                                        if name != "echo" else text}]}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        elif mid is not None and method:  # server/discover and the rest: a legacy server
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no method {method}"}})


if __name__ == "__main__":
    main()
