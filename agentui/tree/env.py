"""What an iteration needs before it may start: a usable LLM endpoint and the user's memory store.

Checked before anything is written : with no usable endpoint a step neither
runs nor commits, it says what `agentui run` says. The memory is the persistent MKCT store of the
data dir, as `agentui run` opens it, so what one node taught helps the next: in use by another
agentui → a temporary memory and a warning; damaged or unusable → refuse (never recreate it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentui.clock import Clock
from agentui.ids import IdFactory


class NotReady(Exception):
    """No usable LLM endpoint, data dir or memory store: no iteration ran, nothing was committed."""

    def __init__(self, message: str, *, llm: bool = True) -> None:
        super().__init__(message)
        self.llm = llm  # False: the data dir or memory store is the problem


@dataclass
class AgentEnv:
    pool: Any
    memory: Any
    owns_memory: bool
    memory_kind: str  # "data dir" | "shared" (the TUI's open store) | "temporary"
    warnings: list[str] = field(default_factory=list)

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self.pool.aclose()
        if self.owns_memory:
            with contextlib.suppress(Exception):
                await self.memory.close()


async def _accepts(url: str) -> bool:
    """Whether the endpoint's host takes a TCP connection (up, if perhaps busy) within 3 s."""
    import asyncio
    from urllib.parse import urlsplit

    u = urlsplit(url)
    if not u.hostname:
        return False
    port = u.port or (443 if u.scheme == "https" else 80)
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(u.hostname, port), 3.0)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()
    return True


async def _wait_while_busy(pool: Any, bad: list[Any], budget: float,
                           tell: Callable[[str, float], None] | None) -> list[Any]:
    """Ask again until every endpoint lists its models or `budget` seconds pass; the last failures."""
    import asyncio
    import time

    for r in bad:
        if tell is not None:
            tell(r.url, budget)
    end = time.monotonic() + budget
    while bad and time.monotonic() < end:
        await asyncio.sleep(min(1.0, max(0.0, end - time.monotonic())))
        left = end - time.monotonic()
        if left <= 0:
            break
        bad = [r for r in await pool.preflight(timeout_s=min(10.0, max(1.0, left)), completion=False) if not r.ok]
    return bad


class ReadOnlyMemory:
    """The user's store for a tree run with memory = "read-only": what earlier work taught is
    recalled, nothing this run learns is written (GGS's Megrams, the Dreamer's consolidation)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.dropped = 0

    def __getattr__(self, name: str) -> Any:  # reads, drain, flush and close reach the store
        return getattr(self._inner, name)

    def write(self, m: Any) -> None:
        self.dropped += 1

    async def awrite(self, m: Any) -> None:
        self.dropped += 1

    def write_many(self, megrams: list[Any], *, sync: bool = False) -> int:
        self.dropped += len(megrams)
        return 0

    def supersede(self, old_id: str, new: Any) -> None:
        self.dropped += 1

    async def record_negative_feedback(self, rule_id: str, content: str) -> None:
        self.dropped += 1

    def record_negative_feedback_sync(self, rule_id: str, content: str) -> None:
        self.dropped += 1


async def open_env(config: Any, *, clock: Clock, ids: IdFactory, preflight: bool = True,
                   memory: Any = None, wait_busy: Callable[[str, float], None] | None = None,
                   memory_mode: str = "read-write", idle_cap_s: float | None = None) -> AgentEnv:
    """The pool, preflighted: the endpoint must list its models within 10 s — not `agentui run`'s
    tiny completion too, which a server busy with the TUI's own task can miss; a model that then
    fails is a runner error of the iteration. A server that accepts the connection but does not
    answer is busy (llama.cpp's Python server holds even its model list while it generates): like
    `agentui run`, the step waits for it, up to `llm.idle_wait_s` and never longer than `idle_cap_s`
    (the iteration's own budget), `wait_busy(url, seconds)` told first. Then the memory (`memory`
    when the caller holds the store open already). Raises NotReady."""
    from agentui.llm import LLMError, LLMPool
    from agentui.memory import MemoryDamaged, MemoryInUse, MemoryUnavailable, open_memory
    from agentui.paths import DataDirError, DataLayout

    if config is None:
        raise NotReady("no LLM is configured (no agent configuration was given)")
    layout = DataLayout(config.data_path())
    if memory is None:
        try:
            layout.check()
        except DataDirError as e:
            raise NotReady(str(e), llm=False) from None
    try:
        pool = LLMPool(config)
    except LLMError as e:
        raise NotReady(str(e)) from None
    if preflight:
        bad = [r for r in await pool.preflight(timeout_s=10.0, completion=False) if not r.ok]
        budget = min(float(config.llm.idle_wait_s), idle_cap_s if idle_cap_s is not None else float("inf"))
        if bad and budget > 0 and all([await _accepts(r.url) for r in bad]):
            bad = await _wait_while_busy(pool, bad, budget, wait_busy)
        if bad:
            await pool.aclose()
            raise NotReady("; ".join(r.error or f"{r.url} gave no answer" for r in bad))
    if memory_mode == "off":  # a throw-away store: nothing recalled, nothing kept
        return AgentEnv(pool, open_memory(None, clock, ids), owns_memory=True, memory_kind="off")
    if memory is not None:
        if memory_mode == "read-only":
            return AgentEnv(pool, ReadOnlyMemory(memory), owns_memory=False, memory_kind="shared, read-only")
        return AgentEnv(pool, memory, owns_memory=False, memory_kind="shared")
    try:
        mem = open_memory(layout.memory_db, clock, ids)
        if memory_mode == "read-only":
            return AgentEnv(pool, ReadOnlyMemory(mem), owns_memory=True, memory_kind="data dir, read-only")
        return AgentEnv(pool, mem, owns_memory=True, memory_kind="data dir")
    except MemoryInUse as e:
        return AgentEnv(pool, open_memory(None, clock, ids), owns_memory=True, memory_kind="temporary",
                        warnings=[f"{e}; this iteration uses a temporary memory"])
    except (MemoryDamaged, MemoryUnavailable) as e:
        await pool.aclose()
        raise NotReady(str(e), llm=False) from None
