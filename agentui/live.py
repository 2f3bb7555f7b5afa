"""Roles' reply text on the bus while it is generated: throttled :class:`~agentui.contracts.LLMDelta`.

The LLM client tells the runtime each piece of a reply as it streams in — often one token at a
time. Putting each piece on the bus would flood the UI and every tap, so :class:`LiveText` gathers
the pieces per call and publishes at most one LLMDelta per `interval_s` for each, bounded
to `max_chars` (the newest text is kept, the rest counted as skipped); the rest of a reply goes
out as soon as its call ends, so it precedes the message the role sends with the result. One
publish at a time per call, off the role's own task: a slow consumer makes the events fewer and
larger, and never holds up the call that is generating.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field

from agentui.contracts import Envelope, LLMDelta, Role

#: the roles whose text is shown as it is generated: the executor's steps and R4b's merge
STREAMED_ROLES = frozenset({Role.EXECUTOR, Role.META_VALIDATOR})
INTERVAL_S = 0.1  # at most ten events a second per call
MAX_CHARS = 2000  # per event


@dataclass
class _Stream:
    parts: list[str] = field(default_factory=list)
    fresh: bool = True  # the next event is the call's first
    active: bool = False  # a call is generating
    done: bool = False  # the call ended after some text: one last event says so
    chars: int = 0
    last: float = float("-inf")
    pump: asyncio.Task[None] | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)  # the call ended: send the rest now
    publishing: bool = False  # an event is on its way (waiting for room on the bus)
    held: Envelope | None = None  # the end of a reply the bus had no room for at once


class LiveText:
    """The pool's `on_delta`: (role, call, "start" | "delta" | "end", text) in, LLMDelta envelopes out.

    `publish` waits for room (the bus's backpressure); `offer`, when given, delivers at once or
    says it cannot — it sends the rest of a reply at its call's end, ahead of the role's result."""

    def __init__(self, envelope: Callable[[Role, LLMDelta, str], Envelope],
                 publish: Callable[[Envelope], Awaitable[None]], task_of: Callable[[], str | None], *,
                 offer: Callable[[Envelope], bool] | None = None,
                 roles: Iterable[Role] = STREAMED_ROLES, interval_s: float = INTERVAL_S,
                 max_chars: int = MAX_CHARS, now: Callable[[], float] = time.monotonic) -> None:
        self._envelope = envelope
        self._publish = publish
        self._offer = offer
        self._task_of = task_of
        self.roles = frozenset(roles)
        self.interval_s = interval_s
        self.max_chars = max_chars
        self._now = now
        self._streams: dict[tuple[str, Role, int], _Stream] = {}
        self._pumps: set[asyncio.Task[None]] = set()

    def watch(self, role: str, call: int, what: str, text: str) -> None:
        try:
            r = Role(role)
        except ValueError:
            return
        tid = self._task_of()
        if r not in self.roles or not tid:
            return
        key = (tid, r, call)
        if what == "start":
            self._streams[key] = _Stream(active=True)
            return
        s = self._streams.get(key)
        if s is None:
            return
        if what == "delta" and text:
            s.parts.append(text)
            s.chars += len(text)
        elif what == "end":
            s.active = False
            del self._streams[key]  # the pump, if any, holds on to what is left to send
            if s.chars == 0:
                return  # a reply that came whole (a server that does not stream) shows nothing here
            s.done = True
            s.wake.set()  # the rest goes out now, not after the throttle's pause
            if not s.publishing and self._offer is not None:
                env = self._event(key, s)
                if self._offer(env):
                    return  # all sent: a pump waiting for its turn finds nothing left
                s.held = env  # the bus is full: the pump sends it, first
        else:
            return
        if s.pump is None and (s.parts or s.done or s.held):
            s.pump = asyncio.get_running_loop().create_task(self._run(key, s), name=f"live:{r.value}")
            self._pumps.add(s.pump)
            s.pump.add_done_callback(self._pumps.discard)

    def _event(self, key: tuple[str, Role, int], s: _Stream) -> Envelope:
        """The next event: the text gathered since the last one (bounded), and what it ends or starts."""
        tid, role, call = key
        text = "".join(s.parts)
        s.parts.clear()
        skipped = max(0, len(text) - self.max_chars)
        ev = LLMDelta(role=role, call=call, text=text[skipped:], fresh=s.fresh, done=s.done and not s.active,
                      chars=s.chars, skipped=skipped)
        s.fresh = False
        if ev.done:
            s.done = False
        s.last = self._now()
        return self._envelope(role, ev, tid)

    async def _run(self, key: tuple[str, Role, int], s: _Stream) -> None:
        try:
            while s.parts or s.done or s.held:
                wait = s.last + self.interval_s - self._now()
                if wait > 0 and not s.wake.is_set() and s.held is None:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(s.wake.wait(), wait)
                s.wake.clear()
                env, s.held = s.held, None
                if env is None:
                    if not (s.parts or s.done):
                        break
                    env = self._event(key, s)
                s.publishing = True
                try:
                    await self._publish(env)
                finally:
                    s.publishing = False
        finally:
            s.pump = None

    def forget(self, task_id: str) -> None:
        """The task ended: drop its streams (an event already on its way still goes out)."""
        for key in [k for k in self._streams if k[0] == task_id]:
            del self._streams[key]

    async def aclose(self) -> None:
        for t in list(self._pumps):
            t.cancel()
        for t in list(self._pumps):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self._streams.clear()
