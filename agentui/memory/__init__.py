"""R5 Shared Memory: the MKCT Megram store, potentials and the Dreamer (v0.8 §6, DESIGN §6)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from agentui.contracts import Level, Megram, Potentials, SOPRecord

from .dreamer import BEST_PRACTICE, CONSTRAINT, Distil, Dreamer, DreamReport, template_rule
from .potentials import action_for, potentials, reference_potentials
from .quantize import MATRIX, megram_params
from .store import (
    AmbiguousId,
    InMemoryMemory,
    LevelDBMemory,
    MemoryClosed,
    MemoryDamaged,
    MemoryError_,
    MemoryInUse,
    MemoryUnavailable,
    open_memory,
)
from .tags import ENV_LOCAL, parse_blocked_target, path_entity, slug, tool_space
from .workkind import intent_space


@runtime_checkable
class MemoryService(Protocol):
    """The interface every role sees (v0.8 §6g). GGS is the only writer.

    Implementations: :class:`LevelDBMemory` (production), :class:`InMemoryMemory` (tests).
    """

    def write(self, m: Megram) -> None:
        """Fire-and-forget enqueue; never blocks, never drops."""
        ...

    async def awrite(self, m: Megram) -> None:
        """Enqueue with backpressure (waits for queue space)."""
        ...

    async def flush(self) -> None:
        """Everything enqueued so far is durable when this returns."""
        ...

    async def query_c(self, space: str, entity: str) -> list[SOPRecord]:
        """C-level SOPs / Constraints of the tag pair; stamps last_recalled_at."""
        ...

    async def query_mk(self, space: str, entity: str) -> Potentials:
        """Live dual-channel potentials over the pair's M/K Megrams."""
        ...

    async def query_recent(self, limit: int = 20) -> list[Megram]: ...

    async def record_negative_feedback(self, rule_id: str, content: str) -> Megram: ...

    async def close(self) -> None:
        """Drain the write queue, stop the Dreamer, close the store."""
        ...

    def write_many(self, megrams: list[Megram], *, sync: bool = False) -> int: ...

    def get(self, id_or_prefix: str) -> Megram: ...

    def list(
        self, level: Level | str | None = None, space: str | None = None, entity: str | None = None
    ) -> list[Megram]: ...

    def stats(self) -> dict[str, Any]: ...

    def forget(self, id_prefix: str) -> Megram: ...

    def remember(
        self, content: str, level: Level | str = Level.C, space: str = "manual", entity: str = ENV_LOCAL
    ) -> Megram: ...


__all__ = [
    "BEST_PRACTICE", "CONSTRAINT", "ENV_LOCAL", "MATRIX", "AmbiguousId", "Distil", "DreamReport",
    "Dreamer", "InMemoryMemory", "LevelDBMemory", "MemoryClosed", "MemoryDamaged", "MemoryError_", "MemoryInUse",
    "MemoryUnavailable",
    "MemoryService", "action_for", "intent_space", "megram_params", "open_memory", "parse_blocked_target",
    "path_entity", "potentials", "reference_potentials", "slug", "template_rule", "tool_space",
]
