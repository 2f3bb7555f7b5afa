"""A misbehaving OpenAI-compatible HTTP server (stdlib only).

Serves GET /v1/models and POST /v1/chat/completions (streaming SSE and not) with
switchable faults.  Used as a library by run_cases.py (one server per case, in a
thread), or standalone:

    python3 fakesrv.py --port 8081 --fault whitespace_flood

Every request is recorded (arrival/end time, parsed body, bytes and tokens sent,
whether the client disconnected before we finished) so the tests can assert on
what the client did on the wire.
"""
from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ClientGone(Exception):
    pass


class Record:
    def __init__(self, method, path, body, headers):
        self.method = method
        self.path = path
        self.body = body  # parsed JSON or raw str
        self.headers = headers
        self.t0 = time.monotonic()
        self.t_end = None
        self.bytes_sent = 0
        self.tokens_sent = 0
        self.chars_sent = 0   # content characters in completion deltas
        self.disconnected = False
        self.finished = False  # responder ran to its natural end
        self.kind = "?"
        self.planned_tokens = None
        self.status = None

    @property
    def stream(self):
        return isinstance(self.body, dict) and bool(self.body.get("stream"))

    @property
    def max_tokens(self):
        if not isinstance(self.body, dict):
            return None
        return self.body.get("max_tokens") or self.body.get("max_completion_tokens")

    def summary(self):
        return {
            "path": self.path, "kind": self.kind, "stream": self.stream,
            "max_tokens": self.max_tokens, "status": self.status,
            "bytes_sent": self.bytes_sent, "tokens_sent": self.tokens_sent,
            "planned_tokens": self.planned_tokens,
            "disconnected": self.disconnected, "finished": self.finished,
            "dur": round((self.t_end or time.monotonic()) - self.t0, 2),
        }


def classify(body) -> str:
    """Best-effort role of a completion request, from what is on the wire."""
    if not isinstance(body, dict):
        return "?"
    mt = body.get("max_tokens") or body.get("max_completion_tokens")
    msgs = body.get("messages") or []
    text = " ".join(str(m.get("content", "")) for m in msgs if isinstance(m, dict))
    if mt is not None and mt <= 8 and len(text) < 400:
        return "probe"
    rf = body.get("response_format") or {}
    name = ""
    if isinstance(rf, dict):
        js = rf.get("json_schema") or {}
        name = (js.get("name") or "") if isinstance(js, dict) else ""
    by_schema = {"PerceiverOut": "perceiver", "PlanOut": "planner", "ExecutorAction": "executor",
                 "Judgement": "agent_validator", "MergeOut": "meta_validator"}
    if name in by_schema:
        return by_schema[name]
    low = (name + " " + text[:3000]).lower()
    for role in ("perceiver", "planner", "meta_validator", "meta-validator",
                 "agent_validator", "agent-validator", "executor", "dreamer"):
        if role in low:
            return role.replace("-", "_")
    return "other"


class FakeServer:
    """responder(handler, rec) handles each POST /v1/chat/completions."""

    def __init__(self, responder=None, models=("fake-model",), models_status=200,
                 models_body=None, port=0, host="127.0.0.1", single_slot=False,
                 auth=None):
        self.responder = responder or good_responder
        self.models = list(models)
        self.models_status = models_status
        self.models_body = models_body
        self.records: list[Record] = []
        self.lock = threading.Lock()
        self.slot = threading.Lock()     # llama.cpp-like: one generation at a time
        self.single_slot = single_slot
        self.busy_until = 0.0            # monotonic time the fake background generation ends
        self.busy_windows = []           # (start, end) of abandoned generations
        self.auth = auth
        self.state = {}
        srv = self

        class H(Handler):
            server_obj = srv

        self.httpd = ThreadingHTTPServer((host, port), H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://{host}:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def completions(self, kinds=None):
        out = [r for r in self.records if r.path.endswith("/chat/completions")]
        if kinds is not None:
            out = [r for r in out if r.kind in kinds]
        return out

    def set_busy(self, seconds):
        now = time.monotonic()
        self.busy_until = max(self.busy_until, now + seconds)
        self.busy_windows.append((now, now + seconds))


class Handler(BaseHTTPRequestHandler):
    server_obj: FakeServer = None
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    # ---- low-level helpers -------------------------------------------------
    def _write(self, data: bytes, rec: Record | None = None):
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
            if rec:
                rec.disconnected = True
            raise ClientGone()
        if rec:
            rec.bytes_sent += len(data)

    def send_json(self, status, obj, rec=None, ctype="application/json", headers=None):
        data = obj if isinstance(obj, (bytes, str)) else json.dumps(obj)
        if isinstance(data, str):
            data = data.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if rec:
            rec.status = status
        self._write(data, rec)

    def start_sse(self, rec, status=200):
        self.send_response(status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        rec.status = status

    def sse_delta(self, rec, content, finish=None, model="fake-model", count_token=True):
        chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                 "created": int(time.time()), "model": model,
                 "choices": [{"index": 0, "delta": ({"content": content} if content is not None else {}),
                              "finish_reason": finish}]}
        self._write(b"data: " + json.dumps(chunk).encode() + b"\n\n", rec)
        if content and count_token:
            rec.tokens_sent += 1
            rec.chars_sent += len(content)

    def sse_done(self, rec):
        self._write(b"data: [DONE]\n\n", rec)

    def full_reply(self, rec, content, finish="stop", model="fake-model", usage=None):
        body = {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": finish}],
                "usage": usage or {"prompt_tokens": 10, "completion_tokens": max(1, len(content) // 4),
                                   "total_tokens": 10 + max(1, len(content) // 4)}}
        rec.tokens_sent += max(1, len(content) // 4)
        self.send_json(200, body, rec)

    def stream_tokens(self, rec, tokens, delay=0.0, finish="stop", done=True, first_delay=0.0):
        """Stream tokens one per SSE event. Raises ClientGone on disconnect."""
        self.start_sse(rec)
        if first_delay:
            time.sleep(first_delay)
        for t in tokens:
            self.sse_delta(rec, t)
            if delay:
                time.sleep(delay)
        if finish is not None:
            self.sse_delta(rec, None, finish=finish)
        if done:
            self.sse_done(rec)

    def reply(self, rec, content, delay=0.0, finish="stop"):
        """Answer `content` streamed (token = ~4 chars) or whole, as the client asked."""
        if rec.stream:
            toks = [content[i:i + 4] for i in range(0, len(content), 4)]
            self.stream_tokens(rec, toks, delay=delay, finish=finish)
        else:
            if delay:
                time.sleep(delay * max(1, len(content) // 4))
            self.full_reply(rec, content, finish=finish)

    # ---- HTTP verbs --------------------------------------------------------
    def _record(self, method, body):
        rec = Record(method, self.path, body, dict(self.headers))
        srv = self.server_obj
        with srv.lock:
            srv.records.append(rec)
        return rec

    def _auth_ok(self, rec):
        srv = self.server_obj
        if srv.auth is None:
            return True
        status, msg = srv.auth
        self.send_json(status, {"error": {"message": msg, "type": "invalid_request_error",
                                          "code": "invalid_api_key" if status == 401 else "forbidden"}}, rec)
        return False

    def do_GET(self):
        srv = self.server_obj
        rec = self._record("GET", None)
        rec.kind = "models"
        try:
            if self.path.rstrip("/").endswith("/models"):
                if not self._auth_ok(rec):
                    return
                if srv.models_body is not None:
                    self.send_json(srv.models_status, srv.models_body, rec)
                else:
                    self.send_json(srv.models_status, {"object": "list", "data": [
                        {"id": m, "object": "model", "owned_by": "fake"} for m in srv.models]}, rec)
            else:
                self.send_json(404, {"error": {"message": f"no route {self.path}"}}, rec)
        except ClientGone:
            pass
        finally:
            rec.t_end = time.monotonic()

    def do_POST(self):
        srv = self.server_obj
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw)
        except Exception:
            body = raw.decode(errors="replace")
        rec = self._record("POST", body)
        rec.kind = classify(body) if self.path.endswith("/chat/completions") else "other"
        try:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self.send_json(404, {"error": {"message": f"no route {self.path}"}}, rec)
                return
            if not self._auth_ok(rec):
                return
            if srv.single_slot:
                # like llama.cpp with one slot: wait for the abandoned generation, then serve
                while time.monotonic() < srv.busy_until:
                    time.sleep(0.05)
                with srv.slot:
                    srv.responder(self, rec)
            else:
                srv.responder(self, rec)
            rec.finished = True
        except ClientGone:
            pass
        except Exception as e:  # keep serving
            rec.status = rec.status or 599
            import traceback
            traceback.print_exc()
        finally:
            rec.t_end = time.monotonic()


# ---- canned replies ----------------------------------------------------------

def guess_reply(rec) -> str:
    """A valid-looking JSON reply for the role the request is from (schema-driven)."""
    body = rec.body if isinstance(rec.body, dict) else {}
    schema = None
    rf = body.get("response_format") or {}
    if isinstance(rf, dict):
        if isinstance(rf.get("json_schema"), dict):
            schema = rf["json_schema"].get("schema")
        elif isinstance(rf.get("schema"), dict):
            schema = rf["schema"]
    if rec.kind == "probe":
        return "ok"
    if schema is None:
        return json.dumps({"ok": True})
    return json.dumps(instance(schema, schema))


def _resolve(s, root):
    if isinstance(s, dict) and "$ref" in s:
        ref = s["$ref"]
        node = root
        for part in ref.lstrip("#/").split("/"):
            node = node.get(part, {})
        return node
    return s


def instance(s, root, key=""):
    s = _resolve(s, root)
    if not isinstance(s, dict):
        return None
    if "const" in s:
        return s["const"]
    if "enum" in s:
        return s["enum"][0]
    for comb in ("anyOf", "oneOf"):
        if comb in s:
            opts = [o for o in s[comb] if _resolve(o, root).get("type") != "null"] or s[comb]
            return instance(opts[0], root, key)
    t = s.get("type")
    if isinstance(t, list):
        t = [x for x in t if x != "null"][0] if [x for x in t if x != "null"] else "null"
    if t == "object" or "properties" in s:
        out = {}
        for k, v in (s.get("properties") or {}).items():
            out[k] = instance(v, root, k)
        return out
    if t == "array":
        n = max(1, s.get("minItems", 1))
        return [instance(s.get("items", {}), root, key) for _ in range(n)]
    if t == "string":
        return "done"
    if t == "integer":
        return max(0, s.get("minimum", 0))
    if t == "number":
        return max(0.0, s.get("minimum", 0.0))
    if t == "boolean":
        return True
    if t == "null":
        return None
    return "x"


def good_responder(h: Handler, rec: Record):
    h.reply(rec, guess_reply(rec))


# ---- named faults for standalone use ---------------------------------------------

def _fault(name):
    def ws_flood(h, rec):
        if rec.kind == "probe":
            return h.reply(rec, "ok")
        h.stream_tokens(rec, ["{"] + [" "] * 100000, delay=0.001)

    def loop(h, rec):
        if rec.kind == "probe":
            return h.reply(rec, "ok")
        h.stream_tokens(rec, ['{"tools": ['] + ['"glob", "read_file", '] * 100000, delay=0.001)

    def r404(h, rec):
        h.send_json(404, {"error": {"message": f"model \"{rec.body.get('model')}\" not found, try pulling it first",
                                    "type": "api_error"}}, rec)

    def r500(h, rec):
        h.send_json(500, {"error": {"message": "internal server error: CUDA out of memory"}}, rec)

    return {"good": good_responder, "whitespace_flood": ws_flood, "loop": loop,
            "model_not_found": r404, "http500": r500}[name]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8081)
    ap.add_argument("--fault", default="good")
    ap.add_argument("--log", action="store_true")
    a = ap.parse_args()
    s = FakeServer(_fault(a.fault), port=a.port).start()
    print(f"fake server on {s.url} fault={a.fault}", flush=True)
    try:
        while True:
            time.sleep(2)
            if a.log:
                for r in s.records:
                    pass
    except KeyboardInterrupt:
        s.stop()
