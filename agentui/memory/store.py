"""R5 storage: the MKCT Megram store on LevelDB (v0.8 §6f), plus a dict-backed twin for tests.

Key schema (every tag is escaped so ':' separates fields unambiguously)::

    megram:<id>                    → canonical Megram JSON (primary record, never rewritten)
    idx:<space>:<entity>:<id>      → packed 6×float64 (level, f, σ, k, created, t_ref)
    lvl:<level>:<id>               → ""
    recall:<id>                    → RFC 3339 (last_recalled_at; stamped by QueryC hits)
    sup:<id>                       → id of the record that supersedes it (extension, see below)
    col:<space>:<entity>:<chunk>   → packed rows of the pair (extension: QueryMK's summary index)

Deviations from §6f, deliberate:
- ``idx:`` values carry the numeric columns QueryMK and the Dreamer need, so a tag pair's
  potentials are one prefix scan + one ``numpy.frombuffer`` — no JSON is parsed on the hot path.
  They are written once with the record and never change (the record is immutable too).
- ``col:`` keys, for big pairs only: the pair's ``idx:`` values concatenated. QueryMK on a pair
  with more than ``CHUNK_AT`` Megrams reads its chunks (a handful of values) instead of one
  ``idx:`` entry per Megram (~0.5 µs each in LevelDB+plyvel: 5 ms for 10k). The pair's first
  chunk is built from ``idx:`` in the background (the pair becomes *chunked*) when it grows past
  that in this process, when a query finds it that big, or by the Dreamer; from then on every write
  batch appends one chunk per chunked pair it touches, in the same atomic batch as the records;
  more than ``COL_MERGE_AT`` chunks are merged in the background; a deletion (GC, ``forget``)
  rebuilds the pair's chunk in the same batch. So a chunked pair's chunks hold exactly its
  ``idx:`` rows, and small pairs cost no extra key per write. Chunk changes other than appends
  hold one lock and read from a LevelDB snapshot; this process is the only writer (the LOCK),
  so the set of chunked pairs is kept in memory (read from the ``col:`` keys at open).
- No time index (a 4th key per Megram costs ~30% of write throughput): QueryRecent serves the
  last ``RECENT`` Megrams written by this process from a ring, seeded once from a numpy pass over
  the ``idx:`` values (newest ``created_at`` first) when the store was not empty at open.
- Append-only is kept literally: a record's bytes are never rewritten. Trust Bankruptcy appends a
  new K-level copy and writes ``sup:<old_id>``; a superseded record is hidden from QueryC,
  ``list()`` and the Dreamer, and still shows in ``get()``. Only ``recall:`` and ``sup:`` are
  mutable metadata. Records are deleted only by the Dreamer's GC and by ``forget()``.

Tag escaping: ``%`` → ``%25``, ``:`` → ``%3A``, ``\\`` → ``%5C`` (``%`` is the escape char).

Modules: ``keys`` (key schema, codec), ``kv`` (LevelDB / dict backends), ``writequeue`` (the async
write queue and close), ``chunks`` (QueryMK summary chunks, column cache), ``queries`` (reads);
this one composes them and holds the write batch and the edits.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from agentui.clock import Clock, iso
from agentui.contracts import Level, Megram, Potentials, SOPRecord
from agentui.ids import IdFactory

from .chunks import CHUNK_AT, COL_MERGE_AT, MK_CACHE, _Chunks
from .errors import (
    AmbiguousId,
    MemoryClosed,
    MemoryDamaged,
    MemoryError_,
    MemoryInUse,
    MemoryUnavailable,
)
from .files import PID_FILE
from .keys import (
    _LVL_PREFIX,
    CODE_LEVEL,
    IDX_DTYPE,
    LEVEL_CODE,
    _k_lvl,
    _k_megram,
    _k_recall,
    _k_sup,
    _merged_chunk_key,
    _prefixes_cached,
    _record_keys,
    col_prefix,
    encode_megram,
    epoch,
    esc,
    pair_prefix,
    to_days,
    unesc,
)
from .kv import _KV, _DictKV, _LevelKV
from .queries import RECENT, IndexScan, _Queries
from .writequeue import BATCH_MAX, INLINE_MAX, _Stoppable, _WriteQueue

__all__ = [
    "BATCH_MAX", "CHUNK_AT", "CODE_LEVEL", "COL_MERGE_AT", "IDX_DTYPE", "INLINE_MAX", "LEVEL_CODE",
    "MK_CACHE", "PID_FILE", "RECENT", "AmbiguousId", "InMemoryMemory", "IndexScan", "LevelDBMemory",
    "MemoryClosed", "MemoryDamaged", "MemoryError_", "MemoryInUse", "MemoryUnavailable", "col_prefix", "encode_megram",
    "epoch", "esc",
    "open_memory", "pair_prefix", "to_days", "unesc",
]


class _Store:
    """Shared implementation over a :class:`_KV`. Use :class:`LevelDBMemory` / :class:`InMemoryMemory`.

    Composed of three parts: the chunks and column cache (:class:`_Chunks`), the reads
    (:class:`_Queries`) and the write queue with the close path (:class:`_WriteQueue`); this class
    holds the write batch and the edits and forwards the rest."""

    path: Path | None

    def __init__(self, kv: _KV, clock: Clock, ids: IdFactory, queue_size: int = 1024) -> None:
        self._kv = kv
        self.clock = clock
        self.ids = ids
        self._dreamers: list[_Stoppable] = []  # running Dreamers, stopped by close()
        self.written = 0  # Megrams made durable since open (any path)
        self._chunks = _Chunks(kv, lambda: self.closed)
        self._reads = _Queries(kv, clock, self._chunks)
        self._queue = _WriteQueue(kv, self.write_many, self._chunks.stop_merger, self._dreamers, queue_size)

    # -- reads (queries.py) -------------------------------------------------------------------

    def resolve(self, id_or_prefix: str) -> str:
        return self._reads.resolve(id_or_prefix)

    def get(self, id_or_prefix: str) -> Megram:
        return self._reads.get(id_or_prefix)

    def load(self, mid: str, *, recall: bool = True) -> Megram | None:
        """The Megram with exactly this id, or None; ``recall``: with its last recall stamp."""
        return self._reads.load(mid, recall=recall)

    def superseded_by(self, mid: str) -> str | None:
        return self._reads.superseded_by(mid)

    def superseded_ids(self) -> set[str]:
        return self._reads.superseded_ids()

    def list(
        self, level: Level | str | None = None, space: str | None = None, entity: str | None = None,
        *, include_superseded: bool = False,
    ) -> builtins.list[Megram]:
        return self._reads.list(level, space, entity, include_superseded=include_superseded)

    def stats(self) -> dict[str, Any]:
        return self._reads.stats()

    def pair_columns(self, space: str, entity: str) -> tuple[builtins.list[str], np.ndarray]:
        return self._reads.pair_columns(space, entity)

    def query_mk_sync(self, space: str, entity: str) -> Potentials:
        return self._reads.query_mk_sync(space, entity)

    def query_c_sync(self, space: str, entity: str) -> builtins.list[SOPRecord]:
        return self._reads.query_c_sync(space, entity)

    def query_recent_sync(self, limit: int = 20) -> builtins.list[Megram]:
        return self._reads.query_recent_sync(limit)

    async def query_mk(self, space: str, entity: str) -> Potentials:
        return self._reads.query_mk_sync(space, entity)

    async def query_c(self, space: str, entity: str) -> builtins.list[SOPRecord]:
        return self._reads.query_c_sync(space, entity)

    async def query_recent(self, limit: int = 20) -> builtins.list[Megram]:
        return await self._reads.query_recent(limit)

    def scan_index(self, *, chunks: bool = False) -> IndexScan:
        return self._reads.scan_index(chunks=chunks)

    # -- chunks and cache (chunks.py) ---------------------------------------------------------

    def settle(self) -> None:
        self._chunks.settle()

    def chunk_pairs(self, pairs: Iterable[tuple[str, str]]) -> int:
        return self._chunks.chunk_pairs(pairs)

    def clear_cache(self) -> None:
        self._chunks.clear_cache()

    # -- write queue and close (writequeue.py) ------------------------------------------------

    def write(self, m: Megram) -> None:
        self._queue.write(m)

    async def awrite(self, m: Megram) -> None:
        await self._queue.awrite(m)

    async def drain(self) -> None:
        await self._queue.drain()

    async def flush(self) -> None:
        await self._queue.flush()

    async def close(self) -> None:
        await self._queue.close()

    def close_sync(self) -> None:
        self._queue.close_sync()

    @property
    def closed(self) -> bool:
        return self._queue.closed

    # -- write path ---------------------------------------------------------------------------

    def write_many(
        self, megrams: Iterable[Megram], *, sync: bool = False, supersede: dict[str, str] | None = None
    ) -> int:
        """Synchronous batched append (CLI, bench, Dreamer). One atomic WriteBatch per call;
        ``supersede`` (old id → new id) marks are part of the same batch."""
        if self.closed:
            raise MemoryClosed("memory is closed")
        puts: list[tuple[bytes, bytes]] = []
        mids: list[str] = []
        pairs: dict[tuple[str, str], list[bytes]] = {}  # chunked pairs: [chunk key, rows...]
        grown: dict[tuple[str, str], int] = {}  # other pairs: Megrams added
        with self._chunks.lock:  # the chunked set cannot change between encoding and writing
            chunked = self._chunks.chunked
            for m in megrams:
                keys = _record_keys(m)
                puts += keys
                mids.append(m.id)
                pair = (m.space, m.entity)
                rows = pairs.get(pair)
                if rows is not None:
                    rows.append(keys[1][1])
                elif pair in grown:
                    grown[pair] += 1
                else:
                    cp = _prefixes_cached(*pair)[1]
                    if cp in chunked:  # a chunk's key is its first Megram's id
                        pairs[pair] = [cp + m.id.encode(), keys[1][1]]
                    else:
                        grown[pair] = 1
            for rows in pairs.values():
                puts.append((rows[0], b"".join(rows[1:])))
            if supersede:
                puts.extend((_k_sup(old), new.encode()) for old, new in supersede.items())
            if mids:
                self._kv.write(puts, sync=sync)
        if mids:
            self._chunks.invalidate([*pairs, *grown])
            self.written += len(mids)
            self._reads.note_written(mids)
            self._chunks.note_growth(grown)
        return len(mids)

    # -- edits --------------------------------------------------------------------------------

    def new_megram(
        self, *, content: str, level: Level | str, space: str, entity: str, state: str,
        f: float, sigma: float, k: float, created_at: str | None = None,
        last_recalled_at: str | None = None,
    ) -> Megram:
        return Megram(
            id=self.ids.new("megram"), level=Level(level), created_at=created_at or iso(self.clock.now()),
            last_recalled_at=last_recalled_at, space=space, entity=entity, content=content, state=state,
            f=f, sigma=sigma, k=k,
        )

    def remember(
        self, content: str, level: Level | str = Level.C, space: str = "manual", entity: str = "env:local",
        *, sigma: float = 1.0, f: float = 1.0, k: float | None = None,
    ) -> Megram:
        """Hand-written memory (``agentui memory remember``); C/T entries are timeless (k=0)."""
        level = Level(level)
        if k is None:
            k = 0.0 if level in (Level.C, Level.T) else 0.05
        m = self.new_megram(content=content, level=level, space=space, entity=entity, state="manual",
                            f=f, sigma=sigma, k=k)
        self.write_many([m], sync=True)
        return m

    def record_negative_feedback_sync(self, rule_id: str, content: str) -> Megram:
        """Append an M-level Megram that contradicts the rule, with the rule's tags.

        For a Best Practice (σ>0) that is a negative-σ Megram (σ=−1), as §6f words it; for a
        Constraint (σ<0) the contradicting evidence is positive (σ=+1) — otherwise "this constraint
        is stale" would reinforce it. Trust Bankruptcy then weighs it against the rule."""
        rule = self.get(rule_id)
        sigma = -1.0 if rule.sigma >= 0 else 1.0
        m = self.new_megram(content=f"negative feedback on {rule.id}: {content}", level=Level.M,
                            space=rule.space, entity=rule.entity, state="negative_feedback",
                            f=0.85, sigma=sigma, k=0.05)
        self.write_many([m])
        return m

    async def record_negative_feedback(self, rule_id: str, content: str) -> Megram:
        return self.record_negative_feedback_sync(rule_id, content)

    def _delete_keys(self, m: Megram) -> builtins.list[bytes]:
        return [
            _k_megram(m.id), pair_prefix(m.space, m.entity) + m.id.encode(), _k_lvl(m.level, m.id),
            _k_recall(m.id), _k_sup(m.id),
        ]

    def forget(self, id_prefix: str) -> Megram:
        """Hard delete one Megram and all its index keys; an ambiguous prefix is an error."""
        m = self.get(id_prefix)
        dels = self._delete_keys(m)
        with self._chunks.lock:
            puts, cdels = self._chunks.rebuild_chunks([(m.space, m.entity)], {dels[1]})
            self._kv.write(puts, dels + cdels, sync=True)
            self._chunks.replace_gen += 1
        self._chunks.invalidate([(m.space, m.entity)])
        return m

    def supersede(self, old_id: str, new: Megram) -> None:
        """Append `new` and mark `old_id` superseded by it, atomically."""
        self.write_many([new], supersede={old_id: new.id})

    def delete_entries(self, scan: IndexScan, rows: np.ndarray) -> int:
        """GC: hard delete the given rows of an :class:`IndexScan` (keys rebuilt from the columns).

        Each row's keys go in the same atomic batch. ``recall:`` / ``sup:`` deletes are issued
        only for ids that have one (both are rare, and a LevelDB delete of a missing key still
        writes a tombstone)."""
        meta = {k.split(b":", 1)[1] for k in self._kv.scan(b"recall:", values=False)}
        meta.update(k.split(b":", 1)[1] for k in self._kv.scan(b"sup:", values=False))
        lvl_prefix = [_LVL_PREFIX[CODE_LEVEL[c]] for c in range(len(CODE_LEVEL))]
        codes = scan.cols["lvl"][rows].astype(np.int64).tolist()
        pair_of = (np.searchsorted(scan.starts, rows, side="right") - 1).tolist()
        idx_keys = scan.idx_keys
        ids = scan.ids
        dels: list[bytes] = []
        gone: set[bytes] = set()
        pairs: dict[int, list[int]] = {}
        rows_l = rows.tolist()

        ends = np.append(scan.starts[1:], scan.cols.size)

        chunks = self._chunks

        def commit() -> None:  # the rows, and their pairs' rebuilt chunks, in one batch
            with chunks.lock:
                if scan.chunk_keys is not None and scan.gen == chunks.replace_gen:
                    # no chunk was replaced (or a pair chunked) since the scan's snapshot: a
                    # chunked pair's new chunk is its rows in the scan minus the deleted ones and
                    # replaces the chunks listed then (chunks appended since hold only newer rows)
                    cputs: builtins.list[tuple[bytes, bytes]] = []
                    cdels: builtins.list[bytes] = []
                    for p, prow in pairs.items():
                        sp, en = scan.pairs[p]
                        cp = col_prefix(sp, en)
                        if cp not in chunks.chunked:
                            continue
                        s, e = int(scan.starts[p]), int(ends[p])
                        keep = np.ones(e - s, dtype=bool)
                        keep[np.asarray(prow, dtype=np.int64) - s] = False
                        cdels += scan.chunk_keys[p]
                        if keep.any():
                            cputs.append((_merged_chunk_key(cp), scan.cols[s:e][keep].tobytes()))
                else:
                    cputs, cdels = chunks.rebuild_chunks([scan.pairs[p] for p in pairs], gone)
                self._kv.write(cputs, dels + cdels)
                chunks.replace_gen += 1
                if scan.gen >= 0 and scan.gen + 1 == chunks.replace_gen:
                    scan.gen = chunks.replace_gen  # our own replacement: the other pairs are intact

        for r, code, p in zip(rows_l, codes, pair_of, strict=True):
            if p not in pairs and len(dels) >= 60_000:  # cut between pairs only
                commit()
                dels, gone, pairs = [], set(), {}
            bid = ids[r].encode()
            dels += (b"megram:" + bid, idx_keys[r], lvl_prefix[code] + bid)
            gone.add(idx_keys[r])
            pairs.setdefault(p, []).append(r)
            if bid in meta:
                dels += (b"recall:" + bid, b"sup:" + bid)
        if dels:
            commit()
        chunks.invalidate()
        return len(rows_l)


class LevelDBMemory(_Store):
    """Production store on LevelDB (plyvel). One process at a time: a second opener gets
    :class:`MemoryInUse` naming the PID in ``<path>/agentui.pid``."""

    def __init__(self, path: str | os.PathLike[str], clock: Clock, ids: IdFactory, queue_size: int = 1024,
                 *, read_only: bool = False) -> None:
        self.path = Path(path)
        kv = _LevelKV(self.path, read_only=read_only)
        self.note = kv.note  # read_only: why a copy was read, if one was
        try:
            super().__init__(kv, clock, ids, queue_size)
        except Exception as e:  # the first reads found a damaged table: say so, close, never a traceback
            kv.close()
            from .leveldb import binding, classify

            if isinstance(e, binding().Error):
                raise classify(self.path, e) from e
            raise


class InMemoryMemory(_Store):
    """Same interface and behaviour, dict-backed (tests; ``--no-memory`` style runs)."""

    def __init__(self, clock: Clock, ids: IdFactory, queue_size: int = 1024) -> None:
        self.path = None
        super().__init__(_DictKV(), clock, ids, queue_size)


def open_memory(
    path: str | os.PathLike[str] | None, clock: Clock, ids: IdFactory, queue_size: int = 1024,
    *, read_only: bool = False,
) -> LevelDBMemory | InMemoryMemory:
    """LevelDB at `path`, or an in-memory store when `path` is None. `read_only`: on a full or
    read-only disk, read a scratch copy instead of failing (its writes raise MemoryUnavailable)."""
    if path is None:
        return InMemoryMemory(clock, ids, queue_size)
    return LevelDBMemory(path, clock, ids, queue_size, read_only=read_only)
