"""Tiny fake OpenAI-compatible server (stdlib only) for black-box tests of agentui.

FakeLLM(responder).start() -> serves on a free port in a thread.
responder(body: dict, srv: FakeLLM) -> str (assistant content) or dict
  {"content": str} / {"tool_calls": [...]} / {"status": int, "body": ...}
Every request body is recorded in srv.requests (list of dicts) and optionally in a JSONL file.
"""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "fake-model-1"


def _msgs_text(body):
    out = []
    for m in body.get("messages") or []:
        c = m.get("content")
        if isinstance(c, list):
            c = " ".join(p.get("text", "") for p in c if isinstance(p, dict))
        out.append(c or "")
    return out


class FakeLLM:
    def __init__(self, responder, log_path=None, model=MODEL):
        self.responder = responder
        self.requests = []
        self.log_path = log_path
        self.model = model
        self.lock = threading.Lock()
        self.state = {}
        self.httpd = None

    # ---------------- helpers for responders -----------------
    @staticmethod
    def system(body):
        for m in body.get("messages") or []:
            if m.get("role") == "system":
                c = m.get("content")
                return c if isinstance(c, str) else json.dumps(c)
        return ""

    @staticmethod
    def all_text(body):
        return "\n".join(_msgs_text(body))

    @staticmethod
    def last_user(body):
        for m in reversed(body.get("messages") or []):
            if m.get("role") == "user":
                c = m.get("content")
                return c if isinstance(c, str) else json.dumps(c)
        return ""

    @staticmethod
    def schema(body):
        rf = body.get("response_format") or {}
        if rf.get("type") == "json_schema":
            return (rf.get("json_schema") or {}).get("schema") or {}
        if "schema" in rf:
            return rf.get("schema") or {}
        return {}

    def start(self):
        srv = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _send_json(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    self._send_json(200, {"object": "list", "data": [
                        {"id": srv.model, "object": "model", "owned_by": "fake"}]})
                else:
                    self._send_json(404, {"error": {"message": "not found"}})

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw or b"{}")
                except Exception:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send_json(404, {"error": {"message": "not found"}})
                    return
                with srv.lock:
                    idx = len(srv.requests)
                    srv.requests.append(body)
                    if srv.log_path:
                        with open(srv.log_path, "a") as f:
                            f.write(json.dumps(body) + "\n")
                try:
                    r = srv.responder(body, srv)
                except Exception as e:  # never crash the server
                    import traceback
                    traceback.print_exc()
                    r = "{}"
                if isinstance(r, dict) and "status" in r:
                    self._send_json(r["status"], r.get("body") or {"error": {"message": "err"}})
                    return
                if isinstance(r, str):
                    r = {"content": r}
                content = r.get("content") or ""
                tool_calls = r.get("tool_calls")
                ptoks = max(1, len(json.dumps(body.get("messages", ""))) // 4)
                ctoks = max(1, len(content) // 4)
                usage = {"prompt_tokens": ptoks, "completion_tokens": ctoks,
                         "total_tokens": ptoks + ctoks}
                cid = "chatcmpl-%d" % idx
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Cache-Control", "no-cache")
                    self.send_header("Connection", "close")
                    self.end_headers()

                    def ev(obj):
                        self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
                        self.wfile.flush()
                    try:
                        base = {"id": cid, "object": "chat.completion.chunk",
                                "created": int(time.time()), "model": srv.model}
                        ev(dict(base, choices=[{"index": 0, "delta": {"role": "assistant"},
                                                "finish_reason": None}]))
                        step = 40
                        for i in range(0, len(content), step):
                            ev(dict(base, choices=[{"index": 0,
                                                    "delta": {"content": content[i:i + step]},
                                                    "finish_reason": None}]))
                        if tool_calls:
                            ev(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [
                                dict(tc, index=k) for k, tc in enumerate(tool_calls)]},
                                "finish_reason": None}]))
                        ev(dict(base, choices=[{"index": 0, "delta": {},
                                                "finish_reason": "tool_calls" if tool_calls else "stop"}],
                                usage=usage))
                        self.wfile.write(b"data: [DONE]\n\n")
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        pass
                    self.close_connection = True
                else:
                    msg = {"role": "assistant", "content": content}
                    if tool_calls:
                        msg["tool_calls"] = tool_calls
                    try:
                        self._send_json(200, {"id": cid, "object": "chat.completion",
                                              "created": int(time.time()), "model": srv.model,
                                              "choices": [{"index": 0, "message": msg,
                                                           "finish_reason": "tool_calls" if tool_calls else "stop"}],
                                              "usage": usage})
                    except (BrokenPipeError, ConnectionResetError):
                        pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    @property
    def base_url(self):
        return "http://127.0.0.1:%d/v1" % self.port

    def stop(self):
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()
