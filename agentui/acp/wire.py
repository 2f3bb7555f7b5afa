"""The stdin side of `agentui acp`: only well-formed JSON-RPC 2.0 objects reach the SDK.

The SDK's receive loop dies on a line that is JSON but not an object (e.g. a batch array), logs a
traceback for every line that is not JSON, and takes any `jsonrpc` value, so each line is checked
here first. A bad line gets one stderr line and the JSON-RPC error answer the specification asks
for: -32700 (id null) for a line that is not JSON, -32600 for a batch, a message that is not a
request, a notification or a response, an `id` that is not a number or a string (id null), or a
`jsonrpc` other than "2.0"; -32602 for an `initialize` whose protocol version is not an integer.
A line longer than the limit is answered -32600 (id null) rather than dropped silently. A bad
response (a client's answer to one of our requests) is dropped without an answer: a client does
not expect one. SDK log records are printed as one line each, never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from dataclasses import dataclass
from typing import Any

MAX_LINE = 50 * 1024 * 1024  # like the SDK's own stdio buffer
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602
_MESSAGES = {PARSE_ERROR: "Parse error", INVALID_REQUEST: "Invalid Request", INVALID_PARAMS: "Invalid params"}
_NULL = object()  # "answer with id null" (as opposed to None: do not answer)


@dataclass(frozen=True)
class Problem:
    """Why a line is refused, the error code, and the id to answer with (`_NULL`: id null; None: no answer)."""

    why: str
    code: int = INVALID_REQUEST
    rid: Any = _NULL


def _usable_id(rid: Any) -> bool:
    return not isinstance(rid, bool) and isinstance(rid, int | str)


def problem(line: bytes) -> Problem | None:
    """Why this line is not a JSON-RPC message the SDK can take (None: it can)."""
    try:
        msg = json.loads(line)
    except ValueError:  # UnicodeDecodeError included
        return Problem("not JSON", PARSE_ERROR)
    if isinstance(msg, list):
        return Problem("a JSON array: batches are not supported")
    if not isinstance(msg, dict):
        return Problem(f"a JSON {type(msg).__name__}, not an object")
    rid = msg.get("id")
    if "id" in msg and rid is not None and not _usable_id(rid):
        return Problem("`id` is not a number or a string")
    answer_to: Any = rid if _usable_id(rid) else _NULL
    if "method" not in msg:
        if "id" in msg and ("result" in msg or "error" in msg):  # a response to one of our requests
            if msg.get("jsonrpc") != "2.0":
                return Problem('a response whose `jsonrpc` is not "2.0"', rid=None)
            return None
        return Problem("neither a request, a notification nor a response", rid=answer_to)
    if msg.get("jsonrpc") != "2.0":
        return Problem(f'`jsonrpc` is {json.dumps(msg.get("jsonrpc"))[:40]}, not "2.0"', rid=answer_to)
    if not isinstance(msg["method"], str):
        return Problem("`method` is not a string", rid=answer_to)
    if "params" in msg and not isinstance(msg["params"], dict | list | type(None)):
        return Problem("`params` is not an object", rid=answer_to)
    params = msg.get("params")
    version = params.get("protocolVersion") if isinstance(params, dict) else None
    if msg["method"] == "initialize" and version is not None and (
            isinstance(version, bool) or not isinstance(version, int)):
        # the SDK would read "1.0" as 1
        return Problem("`protocolVersion` is not an integer", INVALID_PARAMS, answer_to)
    return None


def say(text: str) -> None:
    print(f"agentui acp: {text}", file=sys.stderr, flush=True)


def refusal(p: Problem) -> bytes | None:
    """The JSON-RPC error answer for a refused line (None: it gets none)."""
    if p.rid is None:
        return None
    rid = None if p.rid is _NULL else p.rid
    err = {"jsonrpc": "2.0", "id": rid, "error": {"code": p.code, "message": _MESSAGES[p.code], "data": p.why}}
    return json.dumps(err).encode() + b"\n"


async def checked(source: asyncio.StreamReader, writer: asyncio.StreamWriter | None = None,
                  limit: int = MAX_LINE) -> asyncio.StreamReader:
    """A reader fed only with the acceptable lines of `source` (a task pumps them across); a refused
    line is answered on `writer` so the client does not wait for it."""
    out = asyncio.StreamReader(limit=MAX_LINE)

    def answer(p: Problem) -> None:
        data = refusal(p) if writer is not None else None
        if data is not None:
            writer.write(data)

    async def pump() -> None:
        try:
            while True:
                try:
                    line = await source.readuntil(b"\n")
                except asyncio.IncompleteReadError as e:
                    line = e.partial
                except asyncio.LimitOverrunError:  # an endless line: skipped to its end, then refused
                    say(f"refused a message longer than {limit} bytes")
                    await _skip_line(source)
                    answer(Problem(f"the message is longer than {limit} bytes"))
                    continue
                if not line:
                    return
                if not line.strip():
                    continue
                p = problem(line)
                if p is not None:
                    say(f"ignored a message from the client: {p.why}")
                    answer(p)
                    continue
                out.feed_data(line if line.endswith(b"\n") else line + b"\n")
        finally:
            out.feed_eof()

    out._agentui_pump = asyncio.create_task(pump(), name="acp:stdin")  # type: ignore[attr-defined]
    return out


async def _skip_line(source: asyncio.StreamReader) -> None:
    """Discard the rest of an over-long line, up to and with its newline (the next line is kept)."""
    while True:
        try:
            await source.readuntil(b"\n")
            return
        except asyncio.IncompleteReadError:
            return
        except asyncio.LimitOverrunError as e:
            await source.readexactly(max(e.consumed, 1))


class OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        exc = f": {type(record.exc_info[1]).__name__}: {record.exc_info[1]}" if record.exc_info else ""
        return f"agentui acp: {record.getMessage()}{exc}"[:1000]


def quiet_logs() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
