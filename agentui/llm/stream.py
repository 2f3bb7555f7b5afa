"""Reading a streamed reply: server-sent events in, a verdict on every chunk out.

:class:`ReplyGuard` watches the text as it arrives and says when to stop reading — and so close
the connection, which is how llama.cpp's server and Ollama learn to stop generating:

* ``done`` — the first balanced JSON value (object or array) is closed and parses;
* ``runaway:whitespace`` — a long run of whitespace (a grammar-constrained model padding forever);
* ``runaway:loop`` — the tail is one short unit repeated many times (the same list items again);
* ``runaway:budget`` — more tokens than the role's budget (a server ignoring ``max_tokens``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

WHITESPACE_RUN = 160  # chars of unbroken whitespace: no reply needs that much padding
LOOP_MIN_SPAN = 240  # chars the repeated tail must cover…
LOOP_MIN_REPEATS = 4  # …in at least this many repetitions of one unit
LOOP_MAX_UNIT = 300
_THINK_OPEN = re.compile(r"^\s*<think(?:ing)?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)


class ReplyGuard:
    """Feed it each delta; `feed` returns None (keep reading) or why to stop."""

    def __init__(self, budget: int, *, want_json: bool = True) -> None:
        self.budget = budget
        self.want_json = want_json
        self.parts: list[str] = []
        self.text = ""
        self.tokens = 0
        self._ws_run = 0
        self._since_loop_check = 0
        # incremental balanced-value scanner
        self._pos = 0
        self._start = -1
        self._depth = 0
        self._in_str = False
        self._esc = False
        self._body_from: int | None = None  # where scanning may start (after a <think> block)

    def feed(self, delta: str, tokens: int = 1) -> str | None:
        if not delta:
            return None
        self.parts.append(delta)
        self.text += delta
        self.tokens += max(1, tokens)
        stripped = delta.rstrip(" \t\r\n")
        if stripped == "" :
            self._ws_run += len(delta)
        else:
            tail = len(delta) - len(stripped)
            self._ws_run = tail
        if self.want_json and self._closed_value():
            return "done"
        if self._ws_run >= WHITESPACE_RUN:
            return "runaway:whitespace"
        self._since_loop_check += len(delta)
        if self._since_loop_check >= 24 and len(self.text) >= LOOP_MIN_SPAN:
            self._since_loop_check = 0
            if looping(self.text):
                return "runaway:loop"
        if self.tokens > self.budget:
            return "runaway:budget"
        return None

    def _closed_value(self) -> bool:
        s = self.text
        if self._body_from is None:
            if _THINK_OPEN.match(s):
                m = _THINK_CLOSE.search(s)
                if m is None:
                    return False
                self._body_from = m.end()
            elif s.strip() and not s.lstrip().startswith("<"):
                self._body_from = 0
            elif len(s.strip()) > 12:  # some other tag: scan everything
                self._body_from = 0
            else:
                return False
            self._pos = self._body_from
        i = self._pos
        n = len(s)
        while i < n:
            c = s[i]
            if self._start < 0:
                if c in "{[":
                    self._start, self._depth, self._in_str, self._esc = i, 1, False, False
            elif self._in_str:
                if self._esc:
                    self._esc = False
                elif c == "\\":
                    self._esc = True
                elif c == '"':
                    self._in_str = False
            elif c == '"':
                self._in_str = True
            elif c in "{[":
                self._depth += 1
            elif c in "}]":
                self._depth -= 1
                if self._depth == 0:
                    frag = s[self._start:i + 1]
                    self._pos = i + 1
                    try:
                        json.loads(frag)
                        return True
                    except ValueError:
                        self._start = -1  # not JSON (prose in braces): look for the next value
                        continue
            i += 1
        self._pos = n
        return False


def looping(text: str) -> bool:
    """Is the tail of `text` one unit repeated (≥ LOOP_MIN_REPEATS times, ≥ LOOP_MIN_SPAN chars)?"""
    tail = text[-(LOOP_MAX_UNIT * LOOP_MIN_REPEATS + LOOP_MIN_SPAN):]
    n = len(tail)
    for p in range(1, min(LOOP_MAX_UNIT, n // LOOP_MIN_REPEATS) + 1):
        unit = tail[n - p:]
        if unit.isspace():
            continue  # whitespace has its own rule
        reps = 1
        while (reps + 1) * p <= n and tail[n - (reps + 1) * p:n - reps * p] == unit:
            reps += 1
        if reps >= LOOP_MIN_REPEATS and reps * p >= LOOP_MIN_SPAN:
            return True
    return False


def sse_events(buffer: str) -> tuple[list[str], str]:
    """Split complete `data:` payloads off an SSE buffer: (payloads, rest)."""
    out: list[str] = []
    buffer = buffer.replace("\r\n", "\n")
    while "\n\n" in buffer:
        block, buffer = buffer.split("\n\n", 1)
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if data:
            out.append("\n".join(data))
    return out, buffer


def chunk_fields(payload: Any) -> Iterator[tuple[str, str | None, dict[str, Any] | None]]:
    """(delta text, finish_reason, usage) of one streamed chat-completion chunk."""
    usage = payload.get("usage") if isinstance(payload, dict) else None
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not choices:
        if usage:
            yield "", None, usage
        return
    ch = choices[0] or {}
    delta = ch.get("delta") or {}
    text = delta.get("content") if isinstance(delta, dict) else None
    if text is None:
        text = ch.get("text") or ""
    yield (text if isinstance(text, str) else ""), ch.get("finish_reason"), usage
