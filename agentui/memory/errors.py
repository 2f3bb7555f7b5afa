"""The memory store's errors."""

from __future__ import annotations


class MemoryError_(Exception):
    """Base of the memory errors (named with a trailing _ so the builtin stays visible)."""


class MemoryInUse(MemoryError_):
    """Another process holds the LevelDB lock."""


class AmbiguousId(MemoryError_, ValueError):
    """An id prefix matched more than one Megram."""


class MemoryClosed(MemoryError_):
    """A write after close()."""

