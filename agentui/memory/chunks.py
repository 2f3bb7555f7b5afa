"""QueryMK's summary chunks (``col:`` keys) and column cache, a part of ``store._Store`` (the
module docstring of store.py says when a pair is chunked)."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from agentui.contracts import Level

from .keys import IDX_DTYPE, LEVEL_CODE, _merged_chunk_key, _prefixes_cached
from .kv import _KV

log = logging.getLogger("agentui.memory.store")

MK_CACHE = 256  # tag pairs whose QueryMK columns stay in memory
COL_MERGE_AT = 32  # chunks of one pair before QueryMK merges them into one
CHUNK_AT = 256  # a pair with more Megrams than this gets col: chunks (see store.py's docstring)


class _Chunks:
    """The ``col:`` chunks of big pairs and the QueryMK column cache. Only this process writes (the
    LevelDB LOCK), so the set of chunked pairs lives in memory; ``closed`` tells whether the store is
    closed (background merges then do nothing)."""

    def __init__(self, kv: _KV, closed: Callable[[], bool]) -> None:
        self._kv = kv
        self._closed = closed
        # QueryMK column cache per tag pair
        self._mk_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._gen = 0
        # col: chunk *replacement* (merge, rebuild after a deletion) is serialised by this lock and
        # reads its inputs from a snapshot; appending a chunk (write_many) and reading need no lock
        self.lock = threading.Lock()
        self.replace_gen = 0
        self._merger: ThreadPoolExecutor | None = None  # background chunk merges
        self._merging: set[tuple[str, str]] = set()
        self._growth: dict[tuple[str, str], int] = {}  # Megrams added per unchunked pair
        self.chunked: set[bytes] = {k[: k.rfind(b":") + 1] for k in kv.scan(b"col:", values=False)}

    def note_growth(self, grown: dict[tuple[str, str], int]) -> None:
        """A pair that grew past ``CHUNK_AT`` in this process is chunked in the background, so
        its next QueryMK reads one value instead of scanning idx:."""
        counts = self._growth
        if len(counts) > 100_000:
            counts.clear()
        for pair, n in grown.items():
            c = counts.get(pair, 0) + n
            if c > CHUNK_AT:
                counts.pop(pair, None)
                self.merge_later(*pair)
            else:
                counts[pair] = c

    def stop_merger(self) -> None:
        if self._merger is not None:
            self._merger.shutdown(wait=True)
            self._merger = None

    def mk_columns(self, space: str, entity: str) -> np.ndarray:
        key = (space, entity)
        cols = self._mk_cache.get(key)
        if cols is not None:
            return cols
        gen = self._gen
        raw = self._pair_rows(space, entity)
        cols = np.frombuffer(raw, dtype=IDX_DTYPE)
        cols = cols[cols["lvl"] <= LEVEL_CODE[Level.K]]
        with self._cache_lock:
            if gen == self._gen:  # no write raced the scan: safe to cache
                self._mk_cache[key] = cols
                while len(self._mk_cache) > MK_CACHE:
                    self._mk_cache.popitem(last=False)
        return cols

    def _pair_rows(self, space: str, entity: str) -> bytes:
        """The packed idx rows of a pair: from its col: chunks when it is chunked (many chunks →
        a background merge: the query never waits for a write, which LevelDB may stall while it
        compacts), else from idx: — and a pair found bigger than ``CHUNK_AT`` becomes chunked."""
        ip, cp = _prefixes_cached(space, entity)
        if cp in self.chunked:
            vals = list(self._kv.scan(cp, keys=False))
            if len(vals) > COL_MERGE_AT:
                self.merge_later(space, entity)
            return b"".join(vals)
        vals = list(self._kv.scan(ip, keys=False))
        if len(vals) > CHUNK_AT:
            self.merge_later(space, entity)  # builds the first chunk from idx:
        return b"".join(vals)

    def merge_later(self, space: str, entity: str) -> None:
        with self.lock:
            if (space, entity) in self._merging or self._closed():
                return
            self._merging.add((space, entity))
            if self._merger is None:
                self._merger = ThreadPoolExecutor(1, thread_name_prefix="memory-merge")
            merger = self._merger
        try:
            merger.submit(self._merge, space, entity)
        except RuntimeError:  # shut down by a concurrent close
            self._merging.discard((space, entity))

    def settle(self) -> None:
        """Wait for the background chunk merges queued so far (tests, benchmarks)."""
        if self._merger is not None:
            self._merger.submit(lambda: None).result()

    def _merge(self, space: str, entity: str) -> None:
        """Merge a chunked pair's chunks into one, or make a pair chunked (its first chunk built
        from idx:). Holds the chunk lock, so no write batch runs in between."""
        ip, cp = _prefixes_cached(space, entity)
        try:
            with self.lock:
                if self._closed():
                    return
                if cp not in self.chunked:
                    raw = b"".join(self._kv.scan(ip, keys=False))
                    if raw:
                        self._kv.write([(_merged_chunk_key(cp), raw)])
                        self.chunked.add(cp)
                        self.replace_gen += 1
                    return
                keys: list[bytes] = []
                vals: list[bytes] = []
                for k, v in self._kv.scan(cp):
                    keys.append(k)
                    vals.append(v)
                if len(keys) > 1:
                    self._kv.write([(_merged_chunk_key(cp), b"".join(vals))], keys)
                    self.replace_gen += 1
        except Exception:
            log.exception("memory: merging the chunks of (%s, %s) failed; they stay as they are", space, entity)
        finally:
            self._merging.discard((space, entity))

    def chunk_pairs(self, pairs: Iterable[tuple[str, str]]) -> int:
        """Give each pair (not chunked yet) its col: chunk now — the Dreamer does this for pairs
        it found bigger than ``CHUNK_AT``, so their first QueryMK does not scan idx:."""
        done = 0
        todo = list(pairs)
        for i in range(0, len(todo), 256):  # the lock is held per group, writes go on between
            with self.lock:
                if self._closed():
                    return done
                puts: list[tuple[bytes, bytes]] = []
                for space, entity in todo[i : i + 256]:
                    ip, cp = _prefixes_cached(space, entity)
                    if cp in self.chunked:
                        continue
                    raw = b"".join(self._kv.scan(ip, keys=False))
                    if raw:
                        puts.append((_merged_chunk_key(cp), raw))
                        self.chunked.add(cp)
                if puts:
                    self._kv.write(puts)
                    self.replace_gen += 1
                    done += len(puts)
        return done

    def rebuild_chunks(
        self, pairs: Iterable[tuple[str, str]], gone: set[bytes]
    ) -> tuple[list[tuple[bytes, bytes]], list[bytes]]:
        """(puts, deletes) that replace each chunked pair's chunks by one built from its idx: rows
        minus the idx keys in `gone`. Call with ``lock`` held (no write batch runs
        meanwhile); write in one batch with the deletion itself, then bump ``replace_gen``."""
        puts: list[tuple[bytes, bytes]] = []
        dels: list[bytes] = []
        for space, entity in pairs:
            ip, cp = _prefixes_cached(space, entity)
            if cp not in self.chunked:
                continue
            dels += self._kv.scan(cp, values=False)
            raw = b"".join([v for k, v in self._kv.scan(ip) if k not in gone])
            if raw:
                puts.append((_merged_chunk_key(cp), raw))
            else:
                self.chunked.discard(cp)
        return puts, dels

    def invalidate(self, pairs: Iterable[tuple[str, str]] | None = None) -> None:
        with self._cache_lock:
            self._gen += 1
            if pairs is None:
                self._mk_cache.clear()
            else:
                for p in pairs:
                    self._mk_cache.pop(p, None)

    def clear_cache(self) -> None:
        self.invalidate()

