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
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import json
import logging
import math
import os
import struct
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from json.encoder import encode_basestring as _es
from pathlib import Path
from typing import Any

import numpy as np

from agentui.clock import Clock, iso, parse_iso
from agentui.contracts import Level, Megram, Potentials, SOPRecord
from agentui.ids import IdFactory

from .potentials import SECONDS_PER_DAY, action_for, potentials

log = logging.getLogger(__name__)

PID_FILE = "agentui.pid"
BATCH_MAX = 512  # Megrams per WriteBatch on the async path
INLINE_MAX = 64  # larger batches are written from a worker thread
RECENT = 4096  # ids QueryRecent keeps in memory
MK_CACHE = 256  # tag pairs whose QueryMK columns stay in memory
COL_MERGE_AT = 32  # chunks of one pair before QueryMK merges them into one
CHUNK_AT = 256  # a pair with more Megrams than this gets col: chunks (see the module docstring)

LEVEL_CODE: dict[Level, float] = {Level.M: 0.0, Level.K: 1.0, Level.C: 2.0, Level.T: 3.0}
CODE_LEVEL: dict[int, Level] = {int(v): k for k, v in LEVEL_CODE.items()}
IDX_DTYPE = np.dtype(
    [("lvl", "<f8"), ("f", "<f8"), ("sigma", "<f8"), ("k", "<f8"), ("created", "<f8"), ("tref", "<f8")]
)
_PACK = struct.Struct("<6d")
_ENC = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class MemoryError_(Exception):
    """Base of the memory errors (named with a trailing _ so the builtin stays visible)."""


class MemoryInUse(MemoryError_):
    """Another process holds the LevelDB lock."""


class AmbiguousId(MemoryError_, ValueError):
    """An id prefix matched more than one Megram."""


class MemoryClosed(MemoryError_):
    """A write after close()."""


# ---------------------------------------------------------------------------------------------
# Keys and values
# ---------------------------------------------------------------------------------------------


def esc(tag: str) -> str:
    return tag.replace("%", "%25").replace(":", "%3A").replace("\\", "%5C")


def unesc(tag: str) -> str:
    return tag.replace("%5C", "\\").replace("%3A", ":").replace("%25", "%")


def pair_prefix(space: str, entity: str) -> bytes:
    return f"idx:{esc(space)}:{esc(entity)}:".encode()


def col_prefix(space: str, entity: str) -> bytes:
    return f"col:{esc(space)}:{esc(entity)}:".encode()


def _k_megram(mid: str) -> bytes:
    return f"megram:{mid}".encode()


def _k_lvl(level: Level | str, mid: str) -> bytes:
    return f"lvl:{Level(level).value}:{mid}".encode()


def _k_recall(mid: str) -> bytes:
    return f"recall:{mid}".encode()


def _k_sup(mid: str) -> bytes:
    return f"sup:{mid}".encode()


_LVL_PREFIX = {lv: f"lvl:{lv.value}:".encode() for lv in Level}


def epoch(ts: str) -> float:
    """Seconds since the epoch of an RFC 3339 timestamp (``datetime.fromisoformat`` is C code and
    takes the trailing ``Z`` since 3.11; a naive timestamp keeps :func:`parse_iso`'s meaning)."""
    d = datetime.fromisoformat(ts)
    if d.tzinfo is None:
        return parse_iso(ts).timestamp()
    return d.timestamp()


def to_days(dt: datetime) -> float:
    return dt.timestamp() / SECONDS_PER_DAY


_FIELDS = frozenset(Megram.model_fields)


_NUMS: dict[float, str] = {}


def _num(x: float) -> str:
    out = _NUMS.get(x)
    if out is not None:
        return out
    if x != x or x in (math.inf, -math.inf):
        raise ValueError(f"non-finite number in a Megram: {x!r}")
    out = repr(float(x))
    if len(_NUMS) < 4096:
        _NUMS[x] = out
    return out


_TAGS: dict[str, str] = {}


def _es_tag(s: str) -> str:
    """JSON string of a frequently repeated value (tags, states, levels), memoised."""
    out = _TAGS.get(s)
    if out is None:
        if len(_TAGS) > 65536:
            _TAGS.clear()
        out = _TAGS[s] = _es(s)
    return out


def encode_megram(m: Megram) -> str:
    """Canonical JSON (sorted keys, UTF-8): byte-identical to ``Megram.to_json()``, ~4× faster."""
    d = m.__dict__
    if d.keys() != _FIELDS:  # the contract grew a field: take the slow, generic path
        return _ENC.encode(d)
    lr = d["last_recalled_at"]
    return (
        f'{{"content":{_es(d["content"])},"created_at":{_es(d["created_at"])},'
        f'"entity":{_es_tag(d["entity"])},"f":{_num(d["f"])},"id":{_es(d["id"])},"k":{_num(d["k"])},'
        f'"last_recalled_at":{"null" if lr is None else _es(lr)},"level":{_es_tag(d["level"])},'
        f'"sigma":{_num(d["sigma"])},"space":{_es_tag(d["space"])},"state":{_es_tag(d["state"])}}}'
    )


_PREFIXES: dict[tuple[str, str], tuple[bytes, bytes]] = {}


def _prefixes_cached(space: str, entity: str) -> tuple[bytes, bytes]:
    """(idx:, col:) prefixes of a tag pair, memoised."""
    key = (space, entity)
    p = _PREFIXES.get(key)
    if p is None:
        if len(_PREFIXES) > 65536:
            _PREFIXES.clear()
        p = _PREFIXES[key] = (pair_prefix(space, entity), col_prefix(space, entity))
    return p


_CHUNK_SEQ = iter(range(1 << 62))


def _merged_chunk_key(cprefix: bytes) -> bytes:
    """A fresh chunk key for a merged/rebuilt chunk ('~' sorts after every Megram id)."""
    return cprefix + f"~{time.time_ns():x}.{os.getpid():x}.{next(_CHUNK_SEQ):x}".encode()


def _record_keys(m: Megram) -> list[tuple[bytes, bytes]]:
    if ":" in m.id or not m.id:
        raise ValueError(f"megram id must be non-empty and contain no ':' ({m.id!r})")
    created = epoch(m.created_at)
    tref = max(created, epoch(m.last_recalled_at)) if m.last_recalled_at else created
    level = m.level
    mid = m.id
    bid = mid.encode()
    value = _PACK.pack(LEVEL_CODE[level], m.f, m.sigma, m.k, created, tref)
    return [
        (b"megram:" + bid, encode_megram(m).encode()),
        (_prefixes_cached(m.space, m.entity)[0] + bid, value),
        (_LVL_PREFIX[level] + bid, b""),
    ]


# ---------------------------------------------------------------------------------------------
# Key-value backends
# ---------------------------------------------------------------------------------------------


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


class _LevelSnap(_KV):
    def __init__(self, snap: Any) -> None:
        self._s = snap

    def get(self, key: bytes) -> bytes | None:
        return self._s.get(key)

    def scan(self, prefix, *, reverse=False, keys=True, values=True):  # type: ignore[no-untyped-def]
        return self._s.iterator(prefix=prefix, reverse=reverse, include_key=keys, include_value=values)

    def close(self) -> None:
        self._s.close()


class _LevelKV(_KV):
    def __init__(self, path: Path) -> None:
        import plyvel

        path.mkdir(parents=True, exist_ok=True)
        pid_file = path / PID_FILE
        try:
            # bloom filters: point lookups that miss (recall:, sup:) skip SST reads
            self._db = plyvel.DB(str(path), create_if_missing=True, bloom_filter_bits=10,
                                 lru_cache_size=64 << 20)
        except plyvel.IOError as e:
            if "lock" not in str(e).lower():
                raise
            try:
                pid = pid_file.read_text().strip() or "?"
            except OSError:
                pid = "?"
            raise MemoryInUse(f"memory is in use by PID {pid} ({path})") from e
        self._pid_file = pid_file
        pid_file.write_text(f"{os.getpid()}\n")

    def write(self, puts, deletes=(), sync=False) -> None:  # type: ignore[no-untyped-def]
        with self._db.write_batch(sync=sync) as wb:  # one atomic batch
            for k in deletes:
                wb.delete(k)
            for k, v in puts:
                wb.put(k, v)

    def get(self, key: bytes) -> bytes | None:
        return self._db.get(key)

    def snapshot(self) -> _KV:
        return _LevelSnap(self._db.snapshot())

    def scan(self, prefix, *, reverse=False, keys=True, values=True):  # type: ignore[no-untyped-def]
        return self._db.iterator(prefix=prefix, reverse=reverse, include_key=keys, include_value=values)

    def close(self) -> None:
        if not self._db.closed:
            self._db.close()
            with contextlib.suppress(OSError):
                self._pid_file.unlink()


class _DictKV(_KV):
    """Sorted in-process dict with LevelDB's prefix-scan semantics (tests, --no-memory runs)."""

    def __init__(self) -> None:
        self._d: dict[bytes, bytes] = {}
        self._keys: list[bytes] = []
        self._lock = threading.Lock()

    def write(self, puts, deletes=(), sync=False) -> None:  # type: ignore[no-untyped-def]
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

    def scan(self, prefix, *, reverse=False, keys=True, values=True):  # type: ignore[no-untyped-def]
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


# ---------------------------------------------------------------------------------------------
# The store
# ---------------------------------------------------------------------------------------------


@dataclass
class IndexScan:
    """Every ``idx:`` entry, in key order (so each tag pair is one contiguous run)."""

    ids: list[str]
    idx_keys: list[bytes]
    pairs: list[tuple[str, str]]  # one per run
    starts: np.ndarray  # start offset of each run (len(pairs))
    cols: np.ndarray  # IDX_DTYPE, one row per entry
    # with scan_index(chunks=True): each pair's col: keys in the same snapshot, and the chunk
    # replacement generation the snapshot was taken at
    chunk_keys: list[list[bytes]] | None = None
    gen: int = -1


class _Store:
    """Shared implementation over a :class:`_KV`. Use :class:`LevelDBMemory` / :class:`InMemoryMemory`."""

    def __init__(self, kv: _KV, clock: Clock, ids: IdFactory, queue_size: int = 1024) -> None:
        self._kv = kv
        self.clock = clock
        self.ids = ids
        self._queue_size = queue_size
        self._pending: deque[Megram] = deque()
        # replaced by _ensure_writer inside the running loop
        self._wake, self._space, self._idle = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._idle.set()
        self._stopping = False
        self._writer: asyncio.Task[None] | None = None
        self._write_error: BaseException | None = None
        self._closed = False
        self._dreamers: list[Any] = []
        self.written = 0  # Megrams made durable since open (any path)
        self._recent: deque[str] = deque(maxlen=RECENT)
        # QueryMK column cache per tag pair (only this process writes: the LevelDB LOCK)
        self._mk_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._gen = 0
        # col: chunk *replacement* (merge, rebuild after a deletion) is serialised by this lock and
        # reads its inputs from a snapshot; appending a chunk (write_many) and reading need no lock
        self._chunk_lock = threading.Lock()
        self._replace_gen = 0
        self._merger: Any = None  # ThreadPoolExecutor for background chunk merges
        self._merging: set[tuple[str, str]] = set()
        self._growth: dict[tuple[str, str], int] = {}  # Megrams added per unchunked pair
        self._chunked: set[bytes] = {k[: k.rfind(b":") + 1] for k in self._kv.scan(b"col:", values=False)}
        self._recent_seeded = next(iter(self._kv.scan(b"megram:", values=False)), None) is None

    # -- write path ---------------------------------------------------------------------------

    def write_many(
        self, megrams: Iterable[Megram], *, sync: bool = False, supersede: dict[str, str] | None = None
    ) -> int:
        """Synchronous batched append (CLI, bench, Dreamer). One atomic WriteBatch per call;
        ``supersede`` (old id → new id) marks are part of the same batch."""
        if self._closed:
            raise MemoryClosed("memory is closed")
        puts: list[tuple[bytes, bytes]] = []
        mids: list[str] = []
        pairs: dict[tuple[str, str], list[bytes]] = {}  # chunked pairs: [chunk key, rows...]
        grown: dict[tuple[str, str], int] = {}  # other pairs: Megrams added
        with self._chunk_lock:  # the chunked set cannot change between encoding and writing
            chunked = self._chunked
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
            self._invalidate([*pairs, *grown])
            self.written += len(mids)
            self._recent.extend(mids)
            self._note_growth(grown)
        return len(mids)

    def _note_growth(self, grown: dict[tuple[str, str], int]) -> None:
        """A pair that grew past ``CHUNK_AT`` in this process is chunked in the background, so
        its next QueryMK reads one value instead of scanning idx:."""
        counts = self._growth
        if len(counts) > 100_000:
            counts.clear()
        for pair, n in grown.items():
            c = counts.get(pair, 0) + n
            if c > CHUNK_AT:
                counts.pop(pair, None)
                self._merge_later(*pair)
            else:
                counts[pair] = c

    # The write queue: a deque the GGS appends to and one writer task that takes up to
    # ``BATCH_MAX`` Megrams per atomic WriteBatch. ``awrite`` waits while ``queue_size`` Megrams
    # are pending (backpressure); ``write`` never waits and never drops (it may run past the bound,
    # which is what the old overflow list did). Three events instead of an ``asyncio.Queue``: no
    # coroutine, no per-item ``task_done``, and the writer takes a whole batch at once.

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
            except Exception as e:  # surfaced by drain()/flush()/close()
                log.exception("memory write of %s failed", getattr(m, "id", "?"))
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

    def _stop_merger(self) -> None:
        if self._merger is not None:
            self._merger.shutdown(wait=True)
            self._merger = None

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

    # -- reads --------------------------------------------------------------------------------

    def _load(self, mid: str, *, recall: bool = True) -> Megram | None:
        raw = self._kv.get(_k_megram(mid))
        if raw is None:
            return None
        m = Megram.model_validate_json(raw)
        rec = self._kv.get(_k_recall(mid)) if recall else None
        if rec is not None:
            m = m.model_copy(update={"last_recalled_at": rec.decode()})
        return m

    def _superseded(self) -> dict[str, str]:
        return {k[4:].decode(): v.decode() for k, v in self._kv.scan(b"sup:")}

    def resolve(self, id_or_prefix: str) -> str:
        if not id_or_prefix:
            raise KeyError("empty id")
        if self._kv.get(_k_megram(id_or_prefix)) is not None:
            return id_or_prefix
        found: list[str] = []
        for k in self._kv.scan(_k_megram(id_or_prefix), values=False):
            found.append(k[7:].decode())
            if len(found) > 1:
                raise AmbiguousId(f"id prefix {id_or_prefix!r} is ambiguous ({found[0]}, {found[1]}, …)")
        if not found:
            raise KeyError(f"no megram {id_or_prefix!r}")
        return found[0]

    def get(self, id_or_prefix: str) -> Megram:
        m = self._load(self.resolve(id_or_prefix))
        assert m is not None
        return m

    def superseded_by(self, mid: str) -> str | None:
        v = self._kv.get(_k_sup(mid))
        return v.decode() if v is not None else None

    def list(
        self,
        level: Level | str | None = None,
        space: str | None = None,
        entity: str | None = None,
        *,
        include_superseded: bool = False,
    ) -> list[Megram]:
        if space is not None and entity is not None:
            ids = [k[len(pair_prefix(space, entity)) :].decode() for k in self._kv.scan(pair_prefix(space, entity), values=False)]
        elif space is not None:
            p = f"idx:{esc(space)}:".encode()
            ids = [k.rsplit(b":", 1)[1].decode() for k in self._kv.scan(p, values=False)]
        elif level is not None:
            p = f"lvl:{Level(level).value}:".encode()
            ids = [k[len(p) :].decode() for k in self._kv.scan(p, values=False)]
        else:
            ids = [k[7:].decode() for k in self._kv.scan(b"megram:", values=False)]
        sup = {} if include_superseded else self._superseded()
        out: list[Megram] = []
        for mid in ids:
            if mid in sup:
                continue
            m = self._load(mid)
            if m is None:
                continue
            if level is not None and m.level != Level(level):
                continue
            if entity is not None and m.entity != entity:
                continue
            out.append(m)
        out.sort(key=lambda m: (m.created_at, m.id))
        return out

    def stats(self) -> dict[str, Any]:
        by_level = {lv.value: 0 for lv in Level}
        for k in self._kv.scan(b"lvl:", values=False):
            by_level[k[4:5].decode()] += 1
        pairs = 0
        last: bytes | None = None
        for k in self._kv.scan(b"idx:", values=False):
            p = k[: k.rfind(b":")]
            if p != last:
                pairs += 1
                last = p
        sup = sum(1 for _ in self._kv.scan(b"sup:", values=False))
        return {"total": sum(by_level.values()), "by_level": by_level, "tag_pairs": pairs, "superseded": sup}

    def pair_columns(self, space: str, entity: str) -> tuple[list[str], np.ndarray]:
        p = pair_prefix(space, entity)
        keys: list[bytes] = []
        vals: list[bytes] = []
        for k, v in self._kv.scan(p):
            keys.append(k)
            vals.append(v)
        cols = np.frombuffer(b"".join(vals), dtype=IDX_DTYPE)
        return [k[len(p) :].decode() for k in keys], cols

    def _mk_columns(self, space: str, entity: str) -> np.ndarray:
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
        if cp in self._chunked:
            vals = list(self._kv.scan(cp, keys=False))
            if len(vals) > COL_MERGE_AT:
                self._merge_later(space, entity)
            return b"".join(vals)
        vals = list(self._kv.scan(ip, keys=False))
        if len(vals) > CHUNK_AT:
            self._merge_later(space, entity)  # builds the first chunk from idx:
        return b"".join(vals)

    def _merge_later(self, space: str, entity: str) -> None:
        from concurrent.futures import ThreadPoolExecutor

        with self._chunk_lock:
            if (space, entity) in self._merging or self._closed:
                return
            self._merging.add((space, entity))
            if self._merger is None:
                self._merger = ThreadPoolExecutor(1, thread_name_prefix="memory-merge")
        try:
            self._merger.submit(self._merge, space, entity)
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
            with self._chunk_lock:
                if self._closed:
                    return
                if cp not in self._chunked:
                    raw = b"".join(self._kv.scan(ip, keys=False))
                    if raw:
                        self._kv.write([(_merged_chunk_key(cp), raw)])
                        self._chunked.add(cp)
                        self._replace_gen += 1
                    return
                keys, vals = [], []
                for k, v in self._kv.scan(cp):
                    keys.append(k)
                    vals.append(v)
                if len(keys) > 1:
                    self._kv.write([(_merged_chunk_key(cp), b"".join(vals))], keys)
                    self._replace_gen += 1
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
            with self._chunk_lock:
                if self._closed:
                    return done
                puts = []
                for space, entity in todo[i : i + 256]:
                    ip, cp = _prefixes_cached(space, entity)
                    if cp in self._chunked:
                        continue
                    raw = b"".join(self._kv.scan(ip, keys=False))
                    if raw:
                        puts.append((_merged_chunk_key(cp), raw))
                        self._chunked.add(cp)
                if puts:
                    self._kv.write(puts)
                    self._replace_gen += 1
                    done += len(puts)
        return done

    def _rebuild_chunks(self, pairs: Iterable[tuple[str, str]], gone: set[bytes]) -> tuple[list, list]:
        """(puts, deletes) that replace each chunked pair's chunks by one built from its idx: rows
        minus the idx keys in `gone`. Call with ``_chunk_lock`` held (no write batch runs
        meanwhile); write in one batch with the deletion itself, then bump ``_replace_gen``."""
        puts: list[tuple[bytes, bytes]] = []
        dels: list[bytes] = []
        for space, entity in pairs:
            ip, cp = _prefixes_cached(space, entity)
            if cp not in self._chunked:
                continue
            dels += self._kv.scan(cp, values=False)
            raw = b"".join([v for k, v in self._kv.scan(ip) if k not in gone])
            if raw:
                puts.append((_merged_chunk_key(cp), raw))
            else:
                self._chunked.discard(cp)
        return puts, dels

    def _invalidate(self, pairs: Iterable[tuple[str, str]] | None = None) -> None:
        with self._cache_lock:
            self._gen += 1
            if pairs is None:
                self._mk_cache.clear()
            else:
                for p in pairs:
                    self._mk_cache.pop(p, None)

    def clear_cache(self) -> None:
        self._invalidate()

    def query_mk_sync(self, space: str, entity: str) -> Potentials:
        """Live dual-channel potentials over the pair's M and K Megrams (numpy; no JSON parsed)."""
        cols = self._mk_columns(space, entity)
        if cols.size == 0:
            return Potentials()
        now = to_days(self.clock.now())
        att, dec = potentials(cols["f"], cols["sigma"], cols["k"], cols["tref"] / SECONDS_PER_DAY, now)
        return Potentials(attention=att, decision=dec, action=action_for(att, dec), count=int(cols.size))

    def query_c_sync(self, space: str, entity: str) -> list[SOPRecord]:
        """C-level SOPs/Constraints of the pair; every hit gets ``recall:<id>`` = now."""
        ids, cols = self.pair_columns(space, entity)
        hits = [mid for mid, c in zip(ids, cols, strict=True) if c["lvl"] == LEVEL_CODE[Level.C]]
        if not hits:
            return []
        now = iso(self.clock.now())
        out: list[SOPRecord] = []
        stamps: list[tuple[bytes, bytes]] = []
        for mid in hits:
            if self._kv.get(_k_sup(mid)) is not None:
                continue
            m = self._load(mid)
            if m is None:
                continue
            stamps.append((_k_recall(mid), now.encode()))
            out.append(
                SOPRecord(
                    id=m.id, space=m.space, entity=m.entity, content=m.content, sigma=m.sigma, f=m.f,
                    created_at=m.created_at, last_recalled_at=now,
                )
            )
        if stamps:
            self._kv.write(stamps)
        out.sort(key=lambda r: (r.sigma >= 0, r.created_at))  # constraints first
        return out

    def _seed_recent(self) -> None:
        """Prepend the newest (by created_at) Megrams already on disk to the in-memory ring."""
        scan = self.scan_index()
        n = scan.cols.size
        keep = min(n, RECENT)
        if keep:
            created = scan.cols["created"]
            top = np.argpartition(-created, keep - 1)[:keep] if keep < n else np.arange(n)
            top = top[np.argsort(created[top], kind="stable")]
            seen = set(self._recent)
            old = [scan.ids[i] for i in top.tolist() if scan.ids[i] not in seen]
            ring = old + list(self._recent)
            self._recent.clear()
            self._recent.extend(ring[-RECENT:])
        self._recent_seeded = True

    def query_recent_sync(self, limit: int = 20) -> list[Megram]:
        """The most recently written Megrams, newest first (seeded by created_at after a reopen)."""
        if not self._recent_seeded:
            self._seed_recent()
        out: list[Megram] = []
        for mid in reversed(list(self._recent)):
            m = self._load(mid)
            if m is not None:
                out.append(m)
                if len(out) >= limit:
                    return out
        if len(self._recent) == RECENT:  # the ring overflowed and deletes thinned it: rescan
            self._recent.clear()
            self._seed_recent()
            return self.query_recent_sync(limit) if len(self._recent) < RECENT else out
        return out

    async def query_mk(self, space: str, entity: str) -> Potentials:
        return self.query_mk_sync(space, entity)

    async def query_c(self, space: str, entity: str) -> list[SOPRecord]:
        return self.query_c_sync(space, entity)

    async def query_recent(self, limit: int = 20) -> list[Megram]:
        if not self._recent_seeded:
            await asyncio.to_thread(self._seed_recent)
        return self.query_recent_sync(limit)

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

    def _delete_keys(self, m: Megram) -> list[bytes]:
        return [
            _k_megram(m.id), pair_prefix(m.space, m.entity) + m.id.encode(), _k_lvl(m.level, m.id),
            _k_recall(m.id), _k_sup(m.id),
        ]

    def forget(self, id_prefix: str) -> Megram:
        """Hard delete one Megram and all its index keys; an ambiguous prefix is an error."""
        m = self.get(id_prefix)
        dels = self._delete_keys(m)
        with self._chunk_lock:
            puts, cdels = self._rebuild_chunks([(m.space, m.entity)], {dels[1]})
            self._kv.write(puts, dels + cdels, sync=True)
            self._replace_gen += 1
        self._invalidate([(m.space, m.entity)])
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

        def commit() -> None:  # the rows, and their pairs' rebuilt chunks, in one batch
            with self._chunk_lock:
                if scan.chunk_keys is not None and scan.gen == self._replace_gen:
                    # no chunk was replaced (or a pair chunked) since the scan's snapshot: a
                    # chunked pair's new chunk is its rows in the scan minus the deleted ones and
                    # replaces the chunks listed then (chunks appended since hold only newer rows)
                    cputs, cdels = [], []
                    for p, prow in pairs.items():
                        sp, en = scan.pairs[p]
                        cp = col_prefix(sp, en)
                        if cp not in self._chunked:
                            continue
                        s, e = int(scan.starts[p]), int(ends[p])
                        keep = np.ones(e - s, dtype=bool)
                        keep[np.asarray(prow, dtype=np.int64) - s] = False
                        cdels += scan.chunk_keys[p]
                        if keep.any():
                            cputs.append((_merged_chunk_key(cp), scan.cols[s:e][keep].tobytes()))
                else:
                    cputs, cdels = self._rebuild_chunks([scan.pairs[p] for p in pairs], gone)
                self._kv.write(cputs, dels + cdels)
                self._replace_gen += 1
                if scan.gen >= 0 and scan.gen + 1 == self._replace_gen:
                    scan.gen = self._replace_gen  # our own replacement: the other pairs are intact

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
        self._invalidate()
        return len(rows_l)

    def scan_index(self, *, chunks: bool = False) -> IndexScan:
        """Every idx entry with its columns; tag pairs come out as contiguous runs (key order).
        Written as comprehensions: this walks every Megram in the store (the Dreamer's pass).
        ``chunks=True``: read from one snapshot and list each pair's col: keys too (for GC)."""
        if not chunks:
            return self._scan_index(self._kv)
        with self._chunk_lock:
            gen = self._replace_gen
            snap = self._kv.snapshot()
        try:
            scan = self._scan_index(snap)
            where = {col_prefix(sp, en): i for i, (sp, en) in enumerate(scan.pairs)}
            ck: list[list[bytes]] = [[] for _ in scan.pairs]
            for k in snap.scan(b"col:", values=False):
                i = where.get(k[: k.rfind(b":") + 1])
                if i is not None:
                    ck[i].append(k)
        finally:
            snap.close()
        scan.chunk_keys, scan.gen = ck, gen
        return scan

    def _scan_index(self, kv: _KV) -> IndexScan:
        items = list(kv.scan(b"idx:"))
        keys = [k for k, _ in items]
        cols = np.frombuffer(b"".join([v for _, v in items]), dtype=IDX_DTYPE)
        del items
        parts = [k.rpartition(b":") for k in keys]
        ids = [p[2].decode() for p in parts]
        pre = [p[0] for p in parts]
        del parts
        starts = [i for i in range(1, len(pre)) if pre[i] != pre[i - 1]]
        if pre:
            starts.insert(0, 0)
        pairs: list[tuple[str, str]] = []
        for i in starts:
            sp, en = pre[i][4:].decode().split(":")
            pairs.append((unesc(sp), unesc(en)))
        return IndexScan(ids=ids, idx_keys=keys, pairs=pairs, starts=np.asarray(starts, dtype=np.int64), cols=cols)

    def superseded_ids(self) -> set[str]:
        return set(self._superseded())


class LevelDBMemory(_Store):
    """Production store on LevelDB (plyvel). One process at a time: a second opener gets
    :class:`MemoryInUse` naming the PID in ``<path>/agentui.pid``."""

    def __init__(self, path: str | os.PathLike[str], clock: Clock, ids: IdFactory, queue_size: int = 1024) -> None:
        self.path = Path(path)
        super().__init__(_LevelKV(self.path), clock, ids, queue_size)


class InMemoryMemory(_Store):
    """Same interface and behaviour, dict-backed (tests; ``--no-memory`` style runs)."""

    def __init__(self, clock: Clock, ids: IdFactory, queue_size: int = 1024) -> None:
        self.path = None
        super().__init__(_DictKV(), clock, ids, queue_size)


def open_memory(
    path: str | os.PathLike[str] | None, clock: Clock, ids: IdFactory, queue_size: int = 1024
) -> LevelDBMemory | InMemoryMemory:
    """LevelDB at `path`, or an in-memory store when `path` is None."""
    if path is None:
        return InMemoryMemory(clock, ids, queue_size)
    return LevelDBMemory(path, clock, ids, queue_size)
