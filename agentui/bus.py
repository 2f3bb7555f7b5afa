"""The observable message bus (roles-v0.8 "Architectural Constraint: Observable Message Bus").

Every inter-role message passes through here as an :class:`~agentui.contracts.Envelope`.

- ``publish`` routes by payload type (and optionally task and receiver) to subscribers.
- ``tap`` gives a read-only copy of *every* envelope (R6 Auditor, the recorder, the UI). A
  :class:`Tap` has no way to publish: it holds no reference to the bus.
- ``record`` is a tap that writes one canonical JSON line per envelope (a JSONL recording).

Backpressure policy (DESIGN §8): every queue is bounded. When a subscriber's queue is
full, ``publish`` waits until that subscriber takes a message — nothing is dropped and memory stays
bounded; a slow subscriber slows its publishers instead of losing messages. Taps get a much larger
buffer (default 64k) so a briefly slow observer never stalls the roles; one that falls behind for
good applies the same backpressure rather than losing audit evidence. Messages of a task that was
cancelled (``drop_task``) are dropped on purpose, except ``TaskCancelled`` and ``FinalResult``.

Delivery order is FIFO per subscriber. Roles must not block inside their receive loop on a publish
that waits for themselves (they process each message in its own task), so cycles cannot deadlock.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from agentui.clock import Clock, SystemClock, iso
from agentui.contracts import Contract, Envelope, Role
from agentui.ids import IdFactory

# Types that still flow for a dropped (cancelled) task: the cancellation itself and GGS's closure.
_ALWAYS_DELIVERED = frozenset({"TaskCancelled", "FinalResult"})


class BusClosed(Exception):
    """Publishing on a closed bus."""


_ENV_SET = tuple(Envelope.__dict__[f].__set__ for f in ("id", "ts", "task_id", "sender", "receiver", "type", "payload"))


def _new_envelope(id_: str, ts: str, task_id: str | None, sender: Role, receiver: Role, type_: str,
                  payload: Contract) -> Envelope:
    """``Envelope(...)`` without the frozen dataclass's ``object.__setattr__`` per field (half the
    cost; the bus makes one per message). Same object: slots set once, frozen afterwards."""
    e = object.__new__(Envelope)
    s_id, s_ts, s_task, s_from, s_to, s_type, s_payload = _ENV_SET
    s_id(e, id_)
    s_ts(e, ts)
    s_task(e, task_id)
    s_from(e, sender)
    s_to(e, receiver)
    s_type(e, type_)
    s_payload(e, payload)
    return e


class _FastIds:
    """Default envelope ids: a random per-bus prefix and a counter (unique, cheap, opaque)."""

    def __init__(self) -> None:
        self._prefix = os.urandom(6).hex()
        self._counter = itertools.count(1)

    def new(self, kind: str) -> str:
        return f"{self._prefix}-{next(self._counter):08x}"


class _Queue:
    """A bounded FIFO with one consumer; cheaper than asyncio.Queue on the hot path."""

    __slots__ = ("name", "maxsize", "_items", "_getter", "_putters", "closed", "delivered")

    def __init__(self, name: str, maxsize: int) -> None:
        self.name = name
        self.maxsize = maxsize
        self._items: deque[Envelope] = deque()
        self._getter: asyncio.Future[None] | None = None
        self._putters: deque[asyncio.Future[None]] = deque()
        self.closed = False
        self.delivered = 0

    def __len__(self) -> int:
        return len(self._items)

    def put_nowait(self, env: Envelope) -> bool:
        if len(self._items) >= self.maxsize:
            return False
        self._items.append(env)
        self.delivered += 1
        g = self._getter
        if g is not None:
            self._getter = None
            if not g.done():
                g.set_result(None)
        return True

    async def put(self, env: Envelope) -> None:
        while not self.put_nowait(env):
            if self.closed:
                return
            fut = asyncio.get_running_loop().create_future()
            self._putters.append(fut)
            try:
                await fut
            finally:
                if not fut.done():
                    fut.cancel()

    def _wake_putter(self) -> None:
        while self._putters:
            p = self._putters.popleft()
            if not p.done():
                p.set_result(None)
                return

    def get_nowait(self) -> Envelope | None:
        if not self._items:
            return None
        env = self._items.popleft()
        if self._putters:
            self._wake_putter()
        return env

    async def get(self) -> Envelope:
        while not self._items:
            if self.closed:
                raise StopAsyncIteration
            fut = asyncio.get_running_loop().create_future()
            self._getter = fut
            try:
                await fut
            finally:
                if self._getter is fut:
                    self._getter = None
        env = self._items.popleft()
        if self._putters:
            self._wake_putter()
        return env

    def drain(self) -> list[Envelope]:
        items = list(self._items)
        self._items.clear()
        while self._putters:
            self._wake_putter()
        return items

    def close(self) -> None:
        self.closed = True
        g = self._getter
        if g is not None and not g.done():
            g.set_result(None)
        while self._putters:
            p = self._putters.popleft()
            if not p.done():
                p.set_result(None)


class _Reader:
    """The reading side of one queue, shared by a Subscription and a Tap (neither can publish)."""

    _q: _Queue

    @property
    def pending(self) -> int:
        return len(self._q)

    async def get(self) -> Envelope:
        """The next envelope; raises StopAsyncIteration once the reader is closed and empty."""
        return await self._q.get()

    def get_nowait(self) -> Envelope | None:
        return self._q.get_nowait()

    def drain(self) -> list[Envelope]:
        """Everything pending, without waiting (for batched consumers such as the UI)."""
        return self._q.drain()

    def __aiter__(self) -> AsyncIterator[Envelope]:
        return self

    def __anext__(self) -> Awaitable[Envelope]:
        return self._q.get()  # the queue's coroutine itself: one frame less on the hot path


class Subscription(_Reader):
    """Envelopes matching a filter, in order. Iterate with ``async for`` or call ``get``."""

    def __init__(
        self,
        bus: Bus,
        name: str,
        types: frozenset[str] | None,
        task_id: str | None,
        receiver: Role | None,
        maxsize: int,
    ) -> None:
        self._bus = bus
        self.name = name
        self.types = types
        self.task_id = task_id
        self.receiver = receiver
        self._q = _Queue(name, maxsize)
        self._all = task_id is None and receiver is None  # no filter beyond the type

    def _matches(self, env: Envelope) -> bool:
        return (self.task_id is None or env.task_id == self.task_id) and (
            self.receiver is None or env.receiver == self.receiver
        )

    def close(self) -> None:
        self._bus._unsubscribe(self)
        self._q.close()


class Tap(_Reader):
    """A read-only copy of every envelope. It exposes no way to publish (only get, drain, close)."""

    def __init__(self, name: str, maxsize: int) -> None:
        self.name = name
        self._q = _Queue(name, maxsize)
        self._detach: object = None
        self._backlog: Callable[[], int] = lambda: 0

    def bus_backlog(self) -> int:
        """Envelopes the bus's subscribers have queued and not yet taken (0: the roles caught up)."""
        return self._backlog()

    @property
    def capacity(self) -> int:
        return self._q.maxsize

    def close(self) -> None:
        detach = self._detach
        self._detach = None
        if callable(detach):
            detach()
        self._q.close()


class Recorder:
    """A tap that writes one canonical JSON line per envelope to a file (the bus recording)."""

    def __init__(self, tap: Tap, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tap = tap
        self._fh = self.path.open("a", encoding="utf-8", newline="\n")
        self.written = 0
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"recorder:{self.path.name}")

    async def _run(self) -> None:
        try:
            while True:
                try:
                    first = await self._tap.get()
                except StopAsyncIteration:
                    break
                batch = [first, *self._tap.drain()]
                self._fh.write("".join(env.to_json() + "\n" for env in batch))
                self._fh.flush()
                self.written += len(batch)
        finally:
            self._fh.flush()

    async def aclose(self) -> None:
        """Stop recording after everything already published is written."""
        self._tap.close()
        await self._task
        self._fh.close()


class Bus:
    """Async publish/subscribe by message type and by task, with read-only taps."""

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        ids: IdFactory | None = None,
        queue_size: int = 1024,
        tap_queue_size: int = 65536,
    ) -> None:
        self._clock = clock or SystemClock()
        self._ids = ids or _FastIds()
        self.queue_size = queue_size
        self.tap_queue_size = tap_queue_size
        self._by_type: dict[str, list[Subscription]] = {}
        self._wildcard: list[Subscription] = []
        self._taps: list[_Queue] = []
        self._routes: dict[str, tuple[list[_Queue], list[Subscription]]] = {}
        self._dropped_tasks: set[str] = set()
        self.dropped = 0  # envelopes dropped because their task was cancelled
        self.published = 0
        self.closed = False
        self._system_clock = isinstance(self._clock, SystemClock)
        self._last_ms = -1
        self._last_ts = ""

    def _ts(self) -> str:
        if not self._system_clock:
            return iso(self._clock.now())
        ms = int(time.time() * 1000)  # format once per millisecond: timestamps are ms precision
        if ms != self._last_ms:
            self._last_ms = ms
            self._last_ts = iso(datetime.fromtimestamp(ms / 1000, UTC))
        return self._last_ts

    # -- subscribing -----------------------------------------------------------------------

    def subscribe(
        self,
        name: str,
        *,
        types: Iterable[str] | None = None,
        task_id: str | None = None,
        receiver: Role | None = None,
        maxsize: int | None = None,
    ) -> Subscription:
        tset = frozenset(types) if types is not None else None
        sub = Subscription(self, name, tset, task_id, receiver, maxsize or self.queue_size)
        if self.closed:
            sub._q.close()
            return sub
        if tset is None:
            self._wildcard = [*self._wildcard, sub]
        else:
            for t in tset:
                self._by_type[t] = [*self._by_type.get(t, ()), sub]
        self._routes.clear()
        return sub

    def _unsubscribe(self, sub: Subscription) -> None:
        if sub.types is None:
            self._wildcard = [s for s in self._wildcard if s is not sub]
        else:
            for t in sub.types:
                self._by_type[t] = [s for s in self._by_type.get(t, ()) if s is not sub]
        self._routes.clear()

    def tap(self, name: str, *, maxsize: int | None = None) -> Tap:
        tap = Tap(name, maxsize or self.tap_queue_size)
        q = tap._q
        if self.closed:
            q.close()
            return tap
        self._taps = [*self._taps, q]
        self._routes.clear()

        def detach() -> None:
            self._taps = [t for t in self._taps if t is not q]
            self._routes.clear()

        tap._detach = detach
        tap._backlog = self.backlog
        return tap

    def record(self, path: Path | str) -> Recorder:
        return Recorder(self.tap(f"recorder:{path}"), Path(path))

    # -- publishing ------------------------------------------------------------------------

    def envelope(
        self, sender: Role, receiver: Role, payload: Contract, task_id: str | None = None
    ) -> Envelope:
        return _new_envelope(
            self._ids.new("msg"), self._ts(), task_id, sender, receiver, type(payload).__name__, payload
        )

    async def publish(
        self, sender: Role, receiver: Role, payload: Contract, task_id: str | None = None
    ) -> Envelope:
        env = self.envelope(sender, receiver, payload, task_id)
        await self.publish_envelope(env)
        return env

    async def publish_envelope(self, env: Envelope) -> None:
        queues = self._targets(env)
        if queues is None:
            return
        self.published += 1
        # _Queue.put_nowait inlined for its common case (room, nobody waiting to be woken): one
        # call less per delivery, and a message has one delivery per subscriber and tap
        for q in queues:
            items = q._items
            if q._getter is None and len(items) < q.maxsize:
                items.append(env)
                q.delivered += 1
            elif not q.put_nowait(env):
                await q.put(env)

    def publish_nowait(self, env: Envelope) -> bool:
        """Deliver `env` now, without waiting, if every queue it goes to has room; False (nothing
        delivered) if one is full — then `publish` it, which waits. For a message that must not
        fall behind the ones its sender is about to publish (the rest of a streamed reply)."""
        queues = self._targets(env)
        if queues is None:
            return True
        if any(len(q) >= q.maxsize for q in queues):
            return False
        self.published += 1
        for q in queues:
            q.put_nowait(env)
        return True

    def _targets(self, env: Envelope) -> list[_Queue] | None:
        """The queues `env` is delivered to; None (counted as dropped) when its task was cancelled."""
        if self.closed:
            raise BusClosed("the bus is closed")
        if env.task_id is not None and env.task_id in self._dropped_tasks and env.type not in _ALWAYS_DELIVERED:
            self.dropped += 1
            return None
        route = self._routes.get(env.type)
        if route is None:
            route = self._route(env.type)
        queues, filtered = route
        if filtered:
            queues = [*queues, *(sub._q for sub in filtered if sub._matches(env))]
        return queues

    def _route(self, type_: str) -> tuple[list[_Queue], list[Subscription]]:
        """Where a message type goes: the taps' and unfiltered subscribers' queues (in that
        order), and the subscribers whose task/receiver filter is checked per message. Cached per
        type until a subscription or tap comes or goes."""
        subs = [*self._by_type.get(type_, ()), *self._wildcard]
        route = ([*self._taps, *(s._q for s in subs if s._all)], [s for s in subs if not s._all])
        self._routes[type_] = route
        return route

    def backlog(self) -> int:
        """Envelopes queued for subscribers and not yet taken (taps not counted): 0 when every
        role has caught up — when a low-priority observer like the Auditor should do its work."""
        n = sum(len(sub._q) for sub in self._wildcard)
        for subs in self._by_type.values():
            n += sum(len(sub._q) for sub in subs)
        return n

    # -- tasks and lifetime ----------------------------------------------------------------

    def drop_task(self, task_id: str) -> None:
        """From now on, drop this task's late envelopes (except TaskCancelled and FinalResult)."""
        self._dropped_tasks.add(task_id)

    def is_dropped(self, task_id: str | None) -> bool:
        return task_id is not None and task_id in self._dropped_tasks

    async def close(self) -> None:
        """End every subscription and tap; consumers finish what is queued, then stop."""
        self.closed = True
        for q in self._taps:
            q.close()
        for sub in self._wildcard:
            sub._q.close()
        for subs in self._by_type.values():
            for sub in subs:
                sub._q.close()
        await asyncio.sleep(0)
