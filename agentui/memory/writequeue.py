"""The Megram store's write queue and close path (a part of ``store._Store``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

from agentui.contracts import Megram

from .errors import MemoryClosed, MemoryError_
from .kv import _KV

log = logging.getLogger("agentui.memory.store")

BATCH_MAX = 512  # Megrams per WriteBatch on the async path
INLINE_MAX = 64  # larger batches are written from a worker thread


class _Stoppable(Protocol):
    async def stop(self) -> None: ...


class _WriteQueue:
    # The write queue: a deque the GGS appends to and one writer task that takes up to
    # ``BATCH_MAX`` Megrams per atomic WriteBatch. ``awrite`` waits while ``queue_size`` Megrams
    # are pending (backpressure); ``write`` never waits and never drops (it may run past the bound,
    # which is what the old overflow list did). Three events instead of an ``asyncio.Queue``: no
    # coroutine, no per-item ``task_done``, and the writer takes a whole batch at once.

    def __init__(
        self, kv: _KV, write_many: Callable[[list[Megram]], int], stop_merger: Callable[[], None],
        dreamers: Sequence[_Stoppable], queue_size: int,
    ) -> None:
        self._kv = kv
        self.write_many = write_many  # the store's synchronous batched append
        self._stop_merger = stop_merger
        self._dreamers = dreamers
        self._queue_size = queue_size
        self._pending: deque[Megram] = deque()
        # replaced by _ensure_writer inside the running loop
        self._wake, self._space, self._idle = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._idle.set()
        self._stopping = False
        self._writer: asyncio.Task[None] | None = None
        self._write_error: BaseException | None = None
        self._closed = False

    def _ensure_writer(self) -> None:
        if self._writer is None:
            self._wake = asyncio.Event()
            self._space = asyncio.Event()
            self._space.set()
            self._idle = asyncio.Event()
            self._idle.set()
            self._writer = asyncio.get_running_loop().create_task(self._write_loop(), name="memory-writer")

    def _enqueue(self, m: Megram) -> None:
        self._pending.append(m)
        self._idle.clear()
        self._wake.set()
        if len(self._pending) >= self._queue_size:
            self._space.clear()

    def write(self, m: Megram) -> None:
        """Fire-and-forget enqueue (GGS hot path). Never blocks, never drops. Without a running
        event loop the Megram is written synchronously."""
        if self._closed:
            raise MemoryClosed("memory is closed")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.write_many([m])
            return
        self._ensure_writer()
        self._enqueue(m)

    async def awrite(self, m: Megram) -> None:
        """Enqueue, waiting while the queue is full (backpressure); never drops."""
        if self._closed:
            raise MemoryClosed("memory is closed")
        self._ensure_writer()
        while len(self._pending) >= self._queue_size:
            self._space.clear()
            await self._space.wait()
        self._enqueue(m)

    def _salvage(self, batch: list[Megram], err: Exception) -> None:
        """A batch failed: write its Megrams one by one so one bad record costs only itself."""
        log.warning("memory write batch of %d failed (%s); retrying one by one", len(batch), err)
        for m in batch:
            try:
                self.write_many([m])
            except Exception as e:  # surfaced by drain()/flush()/close(); a line, not a traceback
                log.warning("memory write of %s failed: %s", getattr(m, "id", "?"), e)
                self._write_error = e

    async def _write_loop(self) -> None:
        pending = self._pending
        while True:
            await self._wake.wait()
            self._wake.clear()
            while pending:
                n = min(len(pending), BATCH_MAX)
                batch = [pending.popleft() for _ in range(n)]
                if len(pending) < self._queue_size:
                    self._space.set()
                if n > INLINE_MAX:  # a worker thread: LevelDB's write releases the GIL
                    try:
                        await asyncio.to_thread(self.write_many, batch)
                    except Exception as e:
                        await asyncio.to_thread(self._salvage, batch, e)
                else:
                    try:
                        self.write_many(batch)
                    except Exception as e:
                        self._salvage(batch, e)
            self._idle.set()
            if self._stopping:
                return

    async def drain(self) -> None:
        """Wait until every enqueued Megram has been handed to LevelDB (no fsync)."""
        if self._writer is None:
            return
        while self._pending or not self._idle.is_set():
            if self._writer.done():
                raise MemoryError_(f"the memory writer stopped with {len(self._pending)} Megrams queued")
            await self._idle.wait()
        if self._write_error is not None:
            err, self._write_error = self._write_error, None
            raise MemoryError_(f"a memory write failed: {err}") from err

    async def flush(self) -> None:
        """Wait until everything enqueued so far is durable on disk (drain + one fsync'd write)."""
        await self.drain()
        await asyncio.to_thread(self._kv.write, [(b"meta:sync", b"")], (), True)

    async def close(self) -> None:
        """Stop Dreamers, drain the write queue, close the DB. Idempotent."""
        if self._closed:
            return
        for d in list(self._dreamers):
            with contextlib.suppress(Exception):
                await d.stop()
        try:
            await self.drain()
        finally:
            if self._writer is not None and not self._writer.done():
                self._stopping = True
                self._wake.set()
                with contextlib.suppress(Exception):
                    await self._writer
            await asyncio.to_thread(self._stop_merger)
            self._closed = True
            self._kv.close()

    def close_sync(self) -> None:
        """Close from synchronous code (CLI). Pending async writes must have been drained."""
        if self._closed:
            return
        if self._pending or not self._idle.is_set():
            raise MemoryError_("close_sync() with queued writes: use `await close()`")
        if self._writer is not None:
            self._writer.cancel()
        self._stop_merger()
        self._closed = True
        self._kv.close()

    @property
    def closed(self) -> bool:
        return self._closed
