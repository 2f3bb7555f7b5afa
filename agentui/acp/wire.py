"""The stdin side of `agentui acp` (#18): only well-formed JSON-RPC objects reach the SDK.

The SDK's receive loop dies on a line that is JSON but not an object (e.g. a batch array) and logs
a traceback for every line that is not JSON, so a misbehaving client could stop agentui or fill its
log with tracebacks. Each line is checked here first; a bad one is dropped with one stderr line.
SDK log records are printed as one line each, never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys

MAX_LINE = 50 * 1024 * 1024  # like the SDK's own stdio buffer
INVALID_PARAMS = "invalid params: "  # a problem() answered -32602 rather than -32600


def problem(line: bytes) -> str | None:
    """Why this line is not a JSON-RPC message the SDK can take (None: it can)."""
    try:
        msg = json.loads(line)
    except ValueError:
        return "not JSON"
    if not isinstance(msg, dict):
        return f"a JSON {type(msg).__name__}, not an object (batches are not supported)"
    if "method" in msg and not isinstance(msg["method"], str):
        return "`method` is not a string"
    rid = msg.get("id")
    if "id" in msg and (isinstance(rid, bool) or not isinstance(rid, int | str | type(None))):
        return "`id` is not a number or a string"
    if "method" not in msg and "id" not in msg:
        return "neither a request, a notification nor a response"
    if "params" in msg and not isinstance(msg["params"], dict | list | type(None)):
        return "`params` is not an object"
    version = (msg.get("params") or {}).get("protocolVersion") if isinstance(msg.get("params"), dict) else None
    if msg.get("method") == "initialize" and version is not None and (
            isinstance(version, bool) or not isinstance(version, int)):
        return INVALID_PARAMS + "`protocolVersion` is not an integer"  # the SDK would read "1.0" as 1
    return None


def say(text: str) -> None:
    print(f"agentui acp: {text}", file=sys.stderr, flush=True)


def refusal(line: bytes, why: str) -> bytes | None:
    """A JSON-RPC "Invalid Request" answer for a bad request that has a usable id (else None)."""
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    rid = msg.get("id") if isinstance(msg, dict) and "method" in msg else None
    if isinstance(rid, bool) or not isinstance(rid, int | str):
        return None
    if why.startswith(INVALID_PARAMS):
        err = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "Invalid params",
                                                     "data": why[len(INVALID_PARAMS):]}}
    else:
        err = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32600, "message": "Invalid Request", "data": why}}
    return json.dumps(err).encode() + b"\n"


async def checked(source: asyncio.StreamReader, writer: asyncio.StreamWriter | None = None) -> asyncio.StreamReader:
    """A reader fed only with the acceptable lines of `source` (a task pumps them across); a bad
    request with an id is answered on `writer` so the client does not wait for it."""
    out = asyncio.StreamReader(limit=MAX_LINE)

    async def pump() -> None:
        try:
            while True:
                try:
                    line = await source.readuntil(b"\n")
                except asyncio.IncompleteReadError as e:
                    line = e.partial
                except asyncio.LimitOverrunError:  # an endless line: dropped, up to its end
                    say(f"dropped a message longer than {MAX_LINE} bytes")
                    while True:
                        chunk = await source.read(65536)
                        if not chunk or b"\n" in chunk:
                            break
                    continue
                if not line:
                    return
                if not line.strip():
                    continue
                why = problem(line)
                if why is not None:
                    say(f"ignored a message from the client: {why}")
                    answer = refusal(line, why) if writer is not None else None
                    if answer is not None:
                        writer.write(answer)
                    continue
                out.feed_data(line if line.endswith(b"\n") else line + b"\n")
        finally:
            out.feed_eof()

    out._agentui_pump = asyncio.create_task(pump(), name="acp:stdin")  # type: ignore[attr-defined]
    return out


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
