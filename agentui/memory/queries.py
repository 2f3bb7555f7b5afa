"""Reads of the Megram store: get/list/stats, QueryMK/QueryC/QueryRecent and the index scan
(a part of ``store._Store``)."""

from __future__ import annotations

import asyncio
import builtins
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agentui.clock import Clock, iso
from agentui.contracts import Level, Megram, Potentials, SOPRecord

from .chunks import _Chunks
from .errors import AmbiguousId
from .keys import (
    IDX_DTYPE,
    LEVEL_CODE,
    _k_megram,
    _k_recall,
    _k_sup,
    col_prefix,
    esc,
    pair_prefix,
    to_days,
    unesc,
)
from .kv import _KV
from .potentials import SECONDS_PER_DAY, action_for, potentials

RECENT = 4096  # ids QueryRecent keeps in memory


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


class _Queries:
    """Every read of the store. Holds the QueryRecent ring: the ids this process wrote last."""

    def __init__(self, kv: _KV, clock: Clock, chunks: _Chunks) -> None:
        self._kv = kv
        self.clock = clock
        self._chunks = chunks
        self._recent: deque[str] = deque(maxlen=RECENT)
        self._recent_seeded = next(iter(kv.scan(b"megram:", values=False)), None) is None

    def note_written(self, ids: Iterable[str]) -> None:
        self._recent.extend(ids)

    def load(self, mid: str, *, recall: bool = True) -> Megram | None:
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
        m = self.load(self.resolve(id_or_prefix))
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
            ids = [
                k[len(pair_prefix(space, entity)) :].decode()
                for k in self._kv.scan(pair_prefix(space, entity), values=False)
            ]
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
            m = self.load(mid)
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

    def pair_columns(self, space: str, entity: str) -> tuple[builtins.list[str], np.ndarray]:
        p = pair_prefix(space, entity)
        keys: list[bytes] = []
        vals: list[bytes] = []
        for k, v in self._kv.scan(p):
            keys.append(k)
            vals.append(v)
        cols = np.frombuffer(b"".join(vals), dtype=IDX_DTYPE)
        return [k[len(p) :].decode() for k in keys], cols

    def query_mk_sync(self, space: str, entity: str) -> Potentials:
        """Live dual-channel potentials over the pair's M and K Megrams (numpy; no JSON parsed)."""
        cols = self._chunks.mk_columns(space, entity)
        if cols.size == 0:
            return Potentials()
        now = to_days(self.clock.now())
        att, dec = potentials(cols["f"], cols["sigma"], cols["k"], cols["tref"] / SECONDS_PER_DAY, now)
        return Potentials(attention=att, decision=dec, action=action_for(att, dec), count=int(cols.size))

    def query_c_sync(self, space: str, entity: str) -> builtins.list[SOPRecord]:
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
            m = self.load(mid)
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

    def query_recent_sync(self, limit: int = 20) -> builtins.list[Megram]:
        """The most recently written Megrams, newest first (seeded by created_at after a reopen)."""
        if not self._recent_seeded:
            self._seed_recent()
        out: list[Megram] = []
        for mid in reversed(list(self._recent)):
            m = self.load(mid)
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

    async def query_c(self, space: str, entity: str) -> builtins.list[SOPRecord]:
        return self.query_c_sync(space, entity)

    async def query_recent(self, limit: int = 20) -> builtins.list[Megram]:
        if not self._recent_seeded:
            await asyncio.to_thread(self._seed_recent)
        return self.query_recent_sync(limit)

    def scan_index(self, *, chunks: bool = False) -> IndexScan:
        """Every idx entry with its columns; tag pairs come out as contiguous runs (key order).
        Written as comprehensions: this walks every Megram in the store (the Dreamer's pass).
        ``chunks=True``: read from one snapshot and list each pair's col: keys too (for GC)."""
        if not chunks:
            return self._scan_index(self._kv)
        with self._chunks.lock:
            gen = self._chunks.replace_gen
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

