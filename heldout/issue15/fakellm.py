#!/usr/bin/env python3
"""Tiny OpenAI-compatible server for adversarial tests.
Usage: fakellm.py PORTFILE LOGFILE [mode]
Replies are generated from the request's json schema; the executor is steered to run `sleep 100`.
"""
import json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, LOGFILE = sys.argv[1], sys.argv[2]
CMD = sys.argv[3] if len(sys.argv) > 3 else "sleep 100"
MODE = sys.argv[4] if len(sys.argv) > 4 else "normal"
lock = threading.Lock()


def gen(schema, defs, key="", depth=0):
    if depth > 12:
        return None
    if "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        return gen(defs.get(name, {}), defs, key, depth + 1)
    for k in ("anyOf", "oneOf"):
        if k in schema:
            opts = [o for o in schema[k] if o.get("type") != "null"] or schema[k]
            return gen(opts[0], defs, key, depth + 1)
    if "allOf" in schema:
        return gen(schema["allOf"][0], defs, key, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        en = schema["enum"]
        prefs = {"execute", "shell", "run_shell", "bash", "execute", "task", "act", "tool_call", "call", "pass", "accept"}
        for p in en:
            if p in prefs:
                return p
        return en[0]
    t = schema.get("type")
    if isinstance(t, list):
        t = [x for x in t if x != "null"][0] if [x for x in t if x != "null"] else "null"
    if t == "object" or "properties" in schema:
        if key == "args":
            return {"command": CMD}
        out = {}
        props = schema.get("properties", {})
        for pk, ps in props.items():
            out[pk] = gen(ps, defs, pk, depth + 1)
        return out
    if t == "array":
        n = schema.get("minItems", 0)
        return [gen(schema.get("items", {}), defs, key, depth + 1) for _ in range(n)]
    if t == "string":
        kl = key.lower()
        if kl in ("command", "cmd", "script"):
            return CMD
        s = CMD
        if "maxLength" in schema:
            s = s[: schema["maxLength"]]
        if len(s) < schema.get("minLength", 0):
            s = s + "x" * (schema["minLength"] - len(s))
        return s
    if t == "integer":
        return max(schema.get("minimum", 1), 1) if "maximum" not in schema else schema.get("minimum", 0)
    if t == "number":
        return schema.get("minimum", 0.5)
    if t == "boolean":
        return False
    return None


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def _send(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        else:
            self._send(404, {"error": "nf"})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(n) or b"{}")
        with lock, open(LOGFILE, "a") as f:
            f.write(json.dumps(body) + "\n")
        rf = body.get("response_format") or {}
        schema = None
        if rf.get("type") == "json_schema":
            schema = rf.get("json_schema", {}).get("schema")
        elif rf.get("schema"):
            schema = rf.get("schema")
        if schema:
            obj = gen(schema, schema.get("$defs", schema.get("definitions", {})))
            text = json.dumps(obj)
        else:
            text = "ok"
        if MODE == "hang" and schema:
            time.sleep(1000)
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "fake",
                     "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            fin = {"id": "c1", "object": "chat.completion.chunk", "model": "fake",
                   "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                   "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
            self.wfile.write(b"data: " + json.dumps(fin).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True
        else:
            self._send(200, {"id": "c1", "object": "chat.completion", "model": "fake",
                             "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})


srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
