"""Key-value backends of the Megram store: LevelDB (plyvel) and a sorted dict twin for tests."""

from __future__ import annotations

import bisect
import contextlib
import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .errors import MemoryUnavailable
from .files import PID_FILE


class _KV:
    def write(self, puts: Iterable[tuple[bytes, bytes]], deletes: Iterable[bytes] = (), sync: bool = False) -> None:
        raise NotImplementedError

    def get(self, key: bytes) -> bytes | None:
        raise NotImplementedError

    def scan(
        self, prefix: bytes, *, reverse: bool = False, keys: bool = True, values: bool = True
    ) -> Iterator[Any]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def snapshot(self) -> _KV:
        """A read-only, point-in-time view (``scan``/``get``; ``close`` releases it)."""
        raise NotImplementedError


def _checked(path: Path, it: Iterator[Any]) -> Iterator[Any]:
    """A LevelDB scan whose read errors (a block failing its checksum) are MemoryDamaged."""
    from .leveldb import binding, classify

    try:
        yield from it
    except binding().Error as e:
        raise classify(path, e) from e


def _get(path: Path, src: Any, key: bytes) -> bytes | None:
    from .leveldb import binding, classify

    try:
        value: bytes | None = src.get(key, verify_checksums=True)  # a flipped byte is an error, never data
        return value
    except binding().Error as e:
        raise classify(path, e) from e


class _LevelSnap(_KV):
    def __init__(self, snap: Any, path: Path) -> None:
        self._s = snap
        self._path = path

    def get(self, key: bytes) -> bytes | None:
        return _get(self._path, self._s, key)

    def scan(
        self, prefix: bytes, *, reverse: bool = False, keys: bool = True, values: bool = True
    ) -> Iterator[Any]:
        from .leveldb import scan

        return _checked(self._path, scan(self._s, prefix, reverse=reverse, keys=keys, values=values))

    def close(self) -> None:
        self._s.close()


class _LevelKV(_KV):
    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        from .leveldb import NO_WRITE, open_copy, open_db

        self._path = path
        self._pid_file = pid_file = path / PID_FILE
        self._copy: Path | None = None  # read_only on a full / read-only disk: a scratch copy
        try:
            # bloom filters: point lookups that miss (recall:, sup:) skip SST reads
            self._db = open_db(path, bloom_filter_bits=10, lru_cache_size=64 << 20)
        except MemoryUnavailable as e:
            if not read_only or e.errno not in NO_WRITE:
                raise
            self._db, self._copy = open_copy(path, e)
            self.note = (f"{str(e).split(';')[0]}: read from a copy of the store; nothing can be written "
                         "to it until that changes (or use a writable --data-dir)")
            return
        self.note = ""
        try:
            pid_file.write_text(f"{os.getpid()}\n")
        except OSError as e:  # LevelDB opened, yet a small file cannot be written: disk full
            from .leveldb import describe_os_error

            self.close()
            raise MemoryUnavailable(describe_os_error(e.errno, path, str(e))) from e

    def write(self, puts: Iterable[tuple[bytes, bytes]], deletes: Iterable[bytes] = (), sync: bool = False) -> None:
        if self._copy is not None:
            raise MemoryUnavailable(self.note)
        with self._db.write_batch(sync=sync) as wb:  # one atomic batch
            for k in deletes:
                wb.delete(k)
            for k, v in puts:
                wb.put(k, v)

    def get(self, key: bytes) -> bytes | None:
        return _get(self._path, self._db, key)

    def snapshot(self) -> _KV:
        return _LevelSnap(self._db.snapshot(), self._path)

    def scan(
        self, prefix: bytes, *, reverse: bool = False, keys: bool = True, values: bool = True
    ) -> Iterator[Any]:
        from .leveldb import scan

        return _checked(self._path, scan(self._db, prefix, reverse=reverse, keys=keys, values=values))

    def close(self) -> None:
        from .leveldb import close_copy, close_db, flush_log

        if self._copy is not None:
            close_copy(self._db, self._copy)
        elif not self._db.closed:
            flush_log(self._db)
            close_db(self._path, self._db)
            with contextlib.suppress(OSError):
                self._pid_file.unlink()


class _DictKV(_KV):
    """Sorted in-process dict with LevelDB's prefix-scan semantics (tests, --no-memory runs)."""

    def __init__(self) -> None:
        self._d: dict[bytes, bytes] = {}
        self._keys: list[bytes] = []
        self._lock = threading.Lock()

    def write(self, puts: Iterable[tuple[bytes, bytes]], deletes: Iterable[bytes] = (), sync: bool = False) -> None:
        with self._lock:
            for k in deletes:
                if self._d.pop(k, None) is not None:
                    i = bisect.bisect_left(self._keys, k)
                    del self._keys[i]
            for k, v in puts:
                if k not in self._d:
                    bisect.insort(self._keys, k)
                self._d[k] = v

    def get(self, key: bytes) -> bytes | None:
        return self._d.get(key)

    def snapshot(self) -> _KV:
        snap = _DictKV()
        with self._lock:
            snap._d = dict(self._d)
            snap._keys = list(self._keys)
        return snap

    def scan(
        self, prefix: bytes, *, reverse: bool = False, keys: bool = True, values: bool = True
    ) -> Iterator[Any]:
        with self._lock:
            i = bisect.bisect_left(self._keys, prefix)
            sel = []
            while i < len(self._keys) and self._keys[i].startswith(prefix):
                k = self._keys[i]
                sel.append((k, self._d[k]))
                i += 1
        if reverse:
            sel.reverse()
        for k, v in sel:
            if keys and values:
                yield k, v
            elif keys:
                yield k
            else:
                yield v

    def close(self) -> None:
        pass

