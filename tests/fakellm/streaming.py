"""The fake server's streamed replies (#12): server-sent events over chunked HTTP, as llama.cpp's
server and Ollama send them, with runaway tails, idle gaps and slow-but-alive pacing — and a
record of whether (and when) the client hung up mid-stream, which is how a real server learns to
stop generating."""

from __future__ import annotations

import itertools
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

MAX_CHUNKS = 50_000  # a runaway tail ends here even if the client never hangs up


def tokens(text: str, size: int = 4) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def tail_tokens(kind: str | None, unit: str) -> Iterator[str]:
    if kind == "whitespace":
        return itertools.repeat("\n")
    if kind == "loop":
        return itertools.cycle(tokens(unit))
    if kind == "long":
        return (f"w{i} " for i in itertools.count())
    return iter(())


def peer_closed(sock: socket.socket) -> bool:
    """Has the client closed its end? (a readable socket with nothing to read)"""
    try:
        sock.setblocking(False)
        try:
            return sock.recv(1, socket.MSG_PEEK) == b""
        finally:
            sock.setblocking(True)
    except BlockingIOError:
        return False
    except OSError:
        return True


def stream_reply(handler: Any, fake: Any, req: dict[str, Any], role: str, reply: Any) -> None:
    rec: dict[str, Any] = {"role": role, "chunks": 0, "disconnected": False, "done": False,
                           "t_start": time.monotonic(), "t_end": None, "tail": reply.tail}
    with fake._lock:
        fake.streams.append(rec)
    model = req.get("model") or fake.model

    def emit(obj: Any) -> None:
        data = f"data: {obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)}\n\n".encode()
        handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        handler.wfile.flush()

    def chunk(delta: str, finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model, "choices": [{"index": 0, "delta": {"content": delta} if delta else {},
                                             "finish_reason": finish}]}

    def wait(seconds: float) -> bool:
        """Sleep, watching for the client hanging up; True if it did."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if peer_closed(handler.connection) or fake._release.is_set():
                return True
            time.sleep(min(0.01, max(0.0, end - time.monotonic())))
        return False

    handler.close_connection = True
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        handler.wfile.flush()
        if reply.delay_s and wait(reply.delay_s):  # prompt processing
            raise ConnectionResetError
        body = tokens(reply.content)
        for i, tok in enumerate(itertools.chain(body, tail_tokens(reply.tail, reply.tail_unit))):
            if i >= MAX_CHUNKS:
                break
            if reply.chunk_delay_s and wait(reply.chunk_delay_s):
                raise ConnectionResetError
            emit(chunk(tok))
            rec["chunks"] += 1
        if reply.tail == "idle":
            while not wait(0.05):  # tokens stopped, the connection stays open
                pass
            raise ConnectionResetError
        emit(chunk("", reply.finish_reason))
        if getattr(reply, "cost", None) is not None:  # the usage chunk, as OpenRouter sends it last
            prompt = sum(len(str(m.get("content", ""))) for m in req.get("messages", []))
            emit({"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": int(time.time()),
                  "model": model, "choices": [], "usage": {
                      "prompt_tokens": max(1, prompt // 4), "completion_tokens": max(1, len(reply.content) // 4),
                      "cost": reply.cost}})
        emit("[DONE]")
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
        rec["done"] = True
    except (BrokenPipeError, ConnectionResetError, OSError):
        rec["disconnected"] = True
        if reply.linger_s:
            time.sleep(reply.linger_s)  # still "generating" the abandoned reply
    finally:
        rec["t_end"] = time.monotonic()
