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



class MemoryDamaged(MemoryError_):
    """The store's files are damaged; nothing was opened or changed (``agentui memory repair``)."""


class MemoryUnavailable(MemoryError_):
    """The store cannot be opened here: not a directory, no permission, read-only, disk full.
    ``errno`` is the OS error behind it, when there is one."""

    def __init__(self, message: str, errno: int | None = None) -> None:
        super().__init__(message)
        self.errno = errno
