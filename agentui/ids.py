"""Injectable ID factories. IDs are assigned by the runtime, never by an LLM (v0.6 invariant).

Production uses random UUIDs; tests inject :class:`SeededIds` so runs are reproducible.
"""

from __future__ import annotations

import random
import threading
import uuid
from typing import Protocol


class IdFactory(Protocol):
    def new(self, kind: str) -> str:
        """A fresh, unique id. `kind` is a short prefix hint: task, subtask, msg, megram, req…"""
        ...


class UuidIds:
    """Random UUID4 strings (hex with dashes). `kind` is ignored: IDs stay opaque UUIDs."""

    def new(self, kind: str) -> str:
        return str(uuid.uuid4())


class SeededIds:
    """Deterministic UUID-shaped ids from a seeded PRNG, or readable `kind-000001` counters."""

    def __init__(self, seed: int = 0, *, readable: bool = False) -> None:
        self._rng = random.Random(seed)
        self._readable = readable
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def new(self, kind: str) -> str:
        with self._lock:
            if self._readable:
                n = self._counts.get(kind, 0) + 1
                self._counts[kind] = n
                return f"{kind}-{n:06d}"
            return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))
