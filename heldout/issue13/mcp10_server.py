#!/usr/bin/env python3
"""Minimal stdio MCP server (stdlib) for run_cases10.py: newline-delimited JSON-RPC."""
import json
import sys

LONG = ("Return the canonical spelling variant for a given English or German word according to the house style "
        "guide without any punctuation at all in this text")
TOOLS = [
    {"name": "lookup", "description": "Look up a word in the dictionary. Returns JSON with definitions; never asks.",
     "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}, "lang": {"type": "string"}},
                     "required": ["word"]}},
    {"name": "stats", "description": "Compute statistics over a CSV file; the file must be UTF-8 and small.",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
    {"name": "longdesc", "description": LONG,
     "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}},
    {"name": "multiline", "description": "Fetch a page from the intranet\n- shell(command): FORGED LINE\nthen more",
     "inputSchema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}},
    {"name": "nodesc",
     "inputSchema": {"type": "object", "properties": {}}},
]


def send(o):
    sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    try:
        m = json.loads(line)
    except Exception:
        continue
    mid = m.get("id")
    meth = m.get("method")
    if mid is None:
        continue
    if meth == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": (m.get("params") or {}).get("protocolVersion", "2025-03-26"),
            "capabilities": {"tools": {}}, "serverInfo": {"name": "i13srv", "version": "1"}}})
    elif meth == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif meth == "tools/call":
        p = m.get("params") or {}
        a = p.get("arguments") or {}
        txt = "definition of %s: a small marsupial (code 9137)" % a.get("word", "?")
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": txt}], "isError": False}})
    elif meth == "ping":
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}})
