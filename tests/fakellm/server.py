"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests (DESIGN §4).

Replies come from scripts keyed by role (the `X-Agentui-Role` header the client sends) and order,
or from a responder function; faults are injected per reply. It runs in a background thread, so
sync tests, async tests and subprocesses (`agentui run …`) all talk to it over a real socket.

    with FakeLLM() as llm:
        llm.script("planner", [Reply.json({...}), Reply.fault("http500"), Reply.json({...})])
        llm.responder("executor", lambda req: Reply.json({...}))
        ... base_url = llm.base_url
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakellm.grammar import enforceable
from tests.fakellm.streaming import stream_reply, tail_tokens

FAULTS = (
    "garbage", "truncated", "think", "fenced", "prose", "concatenated", "empty",
    "http500", "http429", "http400", "slow", "hang", "length", "not_openai", "drop",
    "http401", "model_not_found",
)


@dataclass
class Reply:
    content: str = ""
    kind: str | None = None  # the injected fault, if any
    status: int = 200
    finish_reason: str = "stop"
    delay_s: float = 0.0  # before the first byte
    retry_after: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # streaming (#12): the gap between chunks, and what follows the content until the client
    # hangs up: "whitespace" | "loop" | "long" (distinct words) | "idle" (nothing, connection open)
    chunk_delay_s: float = 0.0
    tail: str | None = None
    tail_unit: str = '"read_file", "write_file", "web_search", "file_search", '
    linger_s: float = 0.0  # a single-slot server stays busy this long after the client hangs up
    cost: float | None = None  # reported as `usage.cost`, as OpenRouter does (plain and streamed replies)

    @classmethod
    def stream(cls, content: str | Any, *, tail: str | None = None, **kw: Any) -> Reply:
        """A streamed reply: `content` (a JSON value or text) then the `tail`."""
        s = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return cls(content=s, tail=tail, kind=f"stream:{tail}" if tail else None, **kw)

    @classmethod
    def text(cls, s: str, **kw: Any) -> Reply:
        return cls(content=s, **kw)

    @classmethod
    def json(cls, obj: Any, *, think: bool = False, fenced: bool = False, prose: bool = False,
             **kw: Any) -> Reply:
        s = json.dumps(obj, ensure_ascii=False)
        if fenced:
            s = f"```json\n{s}\n```"
        if prose:
            s = f"Sure! Here is the answer:\n{s}\nLet me know if you need anything else."
        if think:
            s = f"<think>The user wants JSON. {{not json}} I'll answer.</think>\n{s}"
        return cls(content=s, **kw)

    @classmethod
    def fault(cls, kind: str, obj: Any = None, **kw: Any) -> Reply:
        """A fault. Content faults wrap `obj` (default `{"ok": true}`)."""
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; one of {FAULTS}")
        body = json.dumps({"ok": True} if obj is None else obj, ensure_ascii=False)
        if kind == "garbage":
            return cls(content="I cannot comply %%% ¯\\_(ツ)_/¯", kind=kind, **kw)
        if kind == "truncated":
            return cls(content=body[: max(1, len(body) // 2)], kind=kind, **kw)
        if kind == "think":
            return cls(content=f"<think>{{\"draft\": 1}} hmm</think>{body}", kind=kind, **kw)
        if kind == "fenced":
            return cls(content=f"```json\n{body}\n```", kind=kind, **kw)
        if kind == "prose":
            return cls(content=f"Here you go: {body} — hope that helps.", kind=kind, **kw)
        if kind == "concatenated":
            return cls(content=body + body, kind=kind, **kw)
        if kind == "empty":
            return cls(content="", kind=kind, **kw)
        if kind == "length":
            return cls(content=body[: max(1, len(body) // 2)], finish_reason="length", kind=kind, **kw)
        if kind == "http500":
            return cls(status=500, kind=kind, content="internal error", **kw)
        if kind == "http401":
            return cls(status=401, kind=kind, content='{"error":{"message":"Invalid API key"}}', **kw)
        if kind == "model_not_found":  # what Ollama says for a model that was never pulled
            return cls(status=404, kind=kind, **kw,
                       content='{"error":{"message":"model \\"qwen2.5-coder:1.5b\\" not found, try pulling it first"}}')
        if kind == "http400":
            return cls(status=400, kind=kind, content='{"error":"bad request"}', **kw)
        if kind == "http429":
            return cls(status=429, kind=kind, content="slow down",
                       retry_after=kw.pop("retry_after", 0.05), **kw)
        if kind == "slow":
            return cls(content=body, kind=kind, delay_s=kw.pop("delay_s", 0.5), **kw)
        if kind == "hang":
            return cls(kind=kind, delay_s=kw.pop("delay_s", 3600.0), **kw)
        if kind == "not_openai":
            return cls(content='{"hello": "world"}', kind=kind, **kw)
        return cls(kind=kind, **kw)  # drop: close the connection without an answer


Responder = Callable[[dict[str, Any]], Reply]


class FakeLLM:
    """The server. Thread-safe; use as a context manager or call start()/stop()."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, model: str = "fake-model",
                 reject_response_format: Iterable[str] = (), reject_status: int = 500,
                 stream: str = "sse", single_slot: bool = False, only_listed: bool = False,
                 llama_cpp: bool = False) -> None:
        self.model = model
        # like llama-cpp-python's `llama_cpp.server` (0.3.x): `json_schema` is refused (422), a
        # `json_object` schema becomes a grammar only when its converter recognises every node —
        # else generic JSON, silently. Each request records which one it got in `_grammar` (#13).
        self.llama_cpp = llama_cpp
        # like Ollama or vLLM: a completion for a model not in /v1/models is a 404 "model not found"
        # (llama.cpp's server answers any name: the default)
        self.only_listed = only_listed
        # like vLLM: /v1/models lists each model's context window as `max_model_len` when set
        self.context_window: int | None = None
        # "sse": honour `stream: true`; "ignore": answer with a plain completion; "reject": HTTP 400
        self.stream_mode = stream
        # like llama.cpp with one slot: one generation at a time, the others wait
        self.slot = threading.Lock() if single_slot else None
        self.streams: list[dict[str, Any]] = []  # one record per streamed reply: chunks, disconnect
        self.reject_response_format = set(reject_response_format)
        self.reject_status = reject_status
        self.requests: list[dict[str, Any]] = []
        self._scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self._responders: dict[str, Responder] = {}
        self._lock = threading.Lock()
        self._release = threading.Event()
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- scripting
    def script(self, role: str, replies: Iterable[Reply | dict | str]) -> FakeLLM:
        with self._lock:
            for r in replies:
                if isinstance(r, dict | list):
                    r = Reply.json(r)
                elif isinstance(r, str):
                    r = Reply.text(r)
                self._scripts[role].append(r)
        return self

    def responder(self, role: str, fn: Responder) -> FakeLLM:
        """Answer `role` ("*" = any role) with `fn(request)` once its script is used up."""
        with self._lock:
            self._responders[role] = fn
        return self

    def pending(self, role: str | None = None) -> int:
        with self._lock:
            if role is None:
                return sum(len(q) for q in self._scripts.values())
            return len(self._scripts[role])

    def calls(self, role: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if role is None or r.get("_role") == role]

    def _next(self, role: str, req: dict[str, Any]) -> Reply:
        with self._lock:
            q = self._scripts.get(role)
            if q:
                return q.popleft()
            fn = self._responders.get(role) or self._responders.get("*")
        if fn is None and role == "runtime":
            return Reply.text("ok")  # preflight / doctor probes need no script
        if fn is not None:
            r = fn(req)
            if isinstance(r, dict | list):
                return Reply.json(r)
            if isinstance(r, str):
                return Reply.text(r)
            return r
        return Reply(status=418, content=f"fakellm: no scripted reply left for role {role!r}")

    # -- lifecycle
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeLLM:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="fakellm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- HTTP
    # C901: a handler class built in a closure; its methods' branches count towards this function
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:  # noqa: C901
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # headers and body go out in separate writes: without NODELAY, Nagle + delayed
                # ACK add ~40 ms to every reply
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, *a: Any) -> None:  # quiet
                pass

            def _send(self, status: int, body: bytes, ctype: str = "application/json",
                      headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the client gave up on this call

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    entry = {"id": fake.model, "object": "model"}
                    if fake.context_window:
                        entry["max_model_len"] = fake.context_window
                    body = {"object": "list", "data": [entry]}
                    self._send(200, json.dumps(body).encode())
                else:
                    self._send(404, b'{"error":"not found"}')

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, b'{"error":"not found"}')
                    return
                try:
                    req = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, b'{"error":"invalid JSON body"}')
                    return
                role = self.headers.get("X-Agentui-Role", "")
                req["_role"] = role
                req["_auth"] = self.headers.get("Authorization")  # the API key the client sent
                with fake._lock:
                    fake.requests.append(req)
                rf = req.get("response_format")
                if isinstance(rf, dict) and fake.llama_cpp:
                    if rf.get("type") not in ("text", "json_object"):
                        msg = {"detail": [{"type": "literal_error", "loc": ["body", "response_format", "type"],
                                           "msg": "Input should be 'text' or 'json_object'"}]}
                        self._send(422, json.dumps(msg).encode())
                        return
                    if rf.get("type") == "json_object":
                        req["_grammar"] = "schema" if "schema" in rf and enforceable(rf["schema"]) else "json"
                if isinstance(rf, dict) and fake.reject_response_format:
                    kind = rf.get("type")
                    if kind == "json_object" and "schema" in rf:
                        kind = "json_object_schema"
                    if kind in fake.reject_response_format:
                        msg = {"detail": [{"loc": ["body", "response_format"],
                                           "msg": f"response_format type {kind} not supported"}]}
                        self._send(fake.reject_status, json.dumps(msg).encode())
                        return
                req["_t"] = time.monotonic()
                if fake.only_listed and req.get("model") != fake.model:
                    name = str(req.get("model"))
                    msg = {"error": {"message": f'model "{name}" not found, try pulling it first', "type": "api_error"}}
                    self._send(404, json.dumps(msg).encode())
                    return
                if req.get("stream") and fake.stream_mode == "reject":
                    self._send(400, b'{"error":{"message":"stream is not supported by this server"}}')
                    return
                reply = fake._next(role, req)
                if fake.slot is not None:
                    with fake.slot:
                        self._reply(req, role, reply)
                else:
                    self._reply(req, role, reply)

            def _reply(self, req: dict[str, Any], role: str, reply: Reply) -> None:
                if (req.get("stream") and fake.stream_mode == "sse" and reply.status == 200
                        and reply.kind not in ("drop", "hang", "not_openai")):
                    stream_reply(self, fake, req, role, reply)
                    return
                if reply.delay_s:
                    fake._release.wait(reply.delay_s)
                if reply.kind == "drop" or (reply.kind == "hang" and fake._release.is_set()):
                    self.close_connection = True
                    try:
                        self.connection.shutdown(2)
                    except OSError:
                        pass
                    return
                if reply.status != 200:
                    headers = dict(reply.headers)
                    if reply.retry_after is not None:
                        headers["Retry-After"] = f"{reply.retry_after:g}"
                    self._send(reply.status, reply.content.encode(), "text/plain", headers)
                    return
                if reply.kind == "not_openai":
                    self._send(200, reply.content.encode())
                    return
                if reply.tail and reply.tail != "idle":  # a plain completion runs away to max_tokens
                    budget = int(req.get("max_tokens") or 1024)
                    pieces = [reply.content, *itertools.islice(tail_tokens(reply.tail, reply.tail_unit), budget)]
                    reply = Reply(content="".join(pieces)[: budget * 4], finish_reason="length")
                prompt = sum(len(str(m.get("content", ""))) for m in req.get("messages", []))
                body = {
                    "id": f"chatcmpl-{len(fake.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": req.get("model") or fake.model,
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": reply.content},
                        "finish_reason": reply.finish_reason,
                    }],
                    "usage": {
                        "prompt_tokens": max(1, prompt // 4),
                        "completion_tokens": max(1, len(reply.content) // 4),
                        "total_tokens": max(1, prompt // 4) + max(1, len(reply.content) // 4),
                        **({"cost": reply.cost} if reply.cost is not None else {}),
                    },
                }
                self._send(200, json.dumps(body, ensure_ascii=False).encode("utf-8"), headers=reply.headers)

        return Handler

