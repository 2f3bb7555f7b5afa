"""A hand-written MCP stdio server (newline-delimited JSON-RPC 2.0) for what the SDK's own server will
not send: tools whose input schema is invalid (#18). Tools: `echo(text)` (valid), and with
`--bad-schemas` also `s_string` (its schema a string), `s_banana` (type "banana"), `s_missing` (no
inputSchema) and `s_array` (a top-level array schema)."""

from __future__ import annotations

import json
import sys

ECHO = {"name": "echo", "description": "Return the text unchanged.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}
BAD = [
    {"name": "s_string", "description": "schema is a string", "inputSchema": "not a schema"},
    {"name": "s_banana", "description": "type banana", "inputSchema": {"type": "banana"}},
    {"name": "s_missing", "description": "no inputSchema"},
    {"name": "s_array", "description": "top-level array", "inputSchema": {"type": "array", "items": {}}},
]


def send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    tools = [BAD[0], ECHO, *BAD[1:]] if "--bad-schemas" in sys.argv else [ECHO]
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        mid, method, params = msg.get("id"), msg.get("method"), msg.get("params") or {}
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "agentui-raw-test", "version": "0.0.1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools}})
        elif method == "tools/call":
            text = str((params.get("arguments") or {}).get("text", ""))
            send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        elif mid is not None and method:  # server/discover and the rest: a legacy server
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": f"no method {method}"}})


if __name__ == "__main__":
    main()
