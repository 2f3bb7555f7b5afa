from __future__ import annotations

import asyncio
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from agentui.clock import FakeClock, iso
from agentui.contracts import Level, MacroState, MemoryAction
from agentui.ids import SeededIds
from agentui.memory import (
    AmbiguousId,
    InMemoryMemory,
    LevelDBMemory,
    MemoryInUse,
    MemoryService,
    intent_space,
    open_memory,
)
from agentui.memory.store import MemoryError_, esc, unesc

from .helpers import mg


def test_protocol_conformance(mem, clock, ids) -> None:
    assert isinstance(mem, MemoryService)
    assert isinstance(InMemoryMemory(clock, ids), MemoryService)
    assert isinstance(open_memory(None, clock, ids), InMemoryMemory)


@pytest.fixture(params=["leveldb", "dict"])
def any_mem(request, tmp_path, clock, ids):
    store = LevelDBMemory(tmp_path / "m", clock, ids) if request.param == "leveldb" else InMemoryMemory(clock, ids)
    yield store
    if not store.closed:
        store.close_sync()


async def test_write_flush_query_mk(any_mem, clock) -> None:
    for _ in range(3):
        any_mem.write(mg(any_mem, MacroState.ABANDON))
    await any_mem.flush()
    p = await any_mem.query_mk("tool:shell", "path:/tmp/x")
    assert p.count == 3
    assert p.attention == pytest.approx(2.85)
    assert p.decision == pytest.approx(-2.85)
    assert p.action == MemoryAction.AVOID
    clock.advance(14 * 86400)
    p = await any_mem.query_mk("tool:shell", "path:/tmp/x")
    assert p.attention == pytest.approx(2.85 * math.exp(-0.7))
    assert (await any_mem.query_mk("tool:shell", "path:/other")).action == MemoryAction.IGNORE


async def test_query_c_stamps_recall(any_mem, clock) -> None:
    rule = any_mem.remember("always run tests with -q", Level.C, "tool:shell", "path:/repo", sigma=1.0)
    any_mem.write(mg(any_mem, MacroState.SUCCESS, "tool:shell", "path:/repo"))
    await any_mem.flush()
    assert any_mem.get(rule.id).last_recalled_at is None
    clock.advance(3600)
    sops = await any_mem.query_c("tool:shell", "path:/repo")
    assert [s.id for s in sops] == [rule.id]
    assert sops[0].last_recalled_at == iso(clock.now())
    again = any_mem.get(rule.id)
    assert again.last_recalled_at == iso(clock.now())
    assert again.content == rule.content  # the record itself is untouched (append-only)
    # C entries are not part of the M/K potentials
    assert (await any_mem.query_mk("tool:shell", "path:/repo")).count == 1


async def test_recall_resets_decay_clock(any_mem, clock) -> None:
    # A K entry whose last_recalled_at is later than created_at decays from the recall.
    created = iso(clock.now())
    clock.advance(10 * 86400)
    recalled = iso(clock.now())
    clock.advance(14 * 86400)
    m = any_mem.new_megram(content="k", level=Level.K, space="s", entity="e", state="success",
                           f=0.8, sigma=1.0, k=0.05, created_at=created, last_recalled_at=recalled)
    any_mem.write_many([m])
    p = await any_mem.query_mk("s", "e")
    assert p.attention == pytest.approx(0.8 * math.exp(-0.05 * 14))


async def test_negative_feedback_recent_get_list_stats_forget(any_mem, clock) -> None:
    bp = any_mem.remember("use rg not grep", Level.C, "tool:search", "path:/src", sigma=1.0)
    cons = any_mem.remember("never rm -rf /", Level.C, "tool:shell", "path:/", sigma=-1.0)
    neg = await any_mem.record_negative_feedback(bp.id, "rg missing on this host")
    assert neg.sigma < 0 and (neg.space, neg.entity) == (bp.space, bp.entity) and neg.level == Level.M
    pos = await any_mem.record_negative_feedback(cons.id, "it was fine")
    assert pos.sigma > 0
    clock.advance(1)
    last = mg(any_mem, MacroState.SUCCESS, intent_space("部署 服务"), "env:local")
    any_mem.write_many([last])
    recent = await any_mem.query_recent(2)
    assert recent[0].id == last.id and len(recent) == 2
    assert any_mem.get(last.id) == last
    st = any_mem.stats()
    assert st["total"] == 5 and st["by_level"]["C"] == 2 and st["by_level"]["M"] == 3
    assert st["tag_pairs"] == 3
    assert [m.id for m in any_mem.list(level=Level.C)] == [bp.id, cons.id]
    assert [m.id for m in any_mem.list(space="tool:search", entity="path:/src")] == [bp.id, neg.id]
    assert [m.id for m in any_mem.list(space="tool:shell")] == [cons.id, pos.id]
    with pytest.raises(AmbiguousId):
        any_mem.forget("megram-")
    with pytest.raises(KeyError):
        any_mem.get("nope")
    gone = any_mem.forget(bp.id)
    assert gone.id == bp.id
    with pytest.raises(KeyError):
        any_mem.get(bp.id)
    assert any_mem.stats()["total"] == 4
    assert await any_mem.query_c("tool:search", "path:/src") == []
    assert bp.id not in {m.id for m in await any_mem.query_recent(10)}


def test_escaping_roundtrip_and_separation(mem) -> None:
    for t in ["a:b", "a\\b", "%3A", "x%y:z\\", "C:\\Users\\me", "path:/a:b:c"]:
        assert unesc(esc(t)) == t
        assert ":" not in esc(t)
    # ("tool:a", "path:b:c") and ("tool:a:path", "b:c") must not collide
    m1 = mg(mem, MacroState.ABANDON, "tool:a", "path:b:c")
    m2 = mg(mem, MacroState.SUCCESS, "tool:a:path", "b:c")
    mem.write_many([m1, m2])
    assert mem.query_mk_sync("tool:a", "path:b:c").count == 1
    assert mem.query_mk_sync("tool:a:path", "b:c").count == 1
    assert [m.id for m in mem.list(space="tool:a")] == [m1.id]
    assert [m.id for m in mem.list(space="tool:a", entity="path:b:c")] == [m1.id]


def test_unicode_tags_distinct(mem) -> None:
    zh, em = intent_space("修复登录页面"), intent_space("🚀 发布")
    assert zh != em and zh != "intent:" and em != "intent:"
    mem.write_many([mg(mem, MacroState.SUCCESS, zh, "env:local"), mg(mem, MacroState.ABANDON, em, "env:local")])
    assert mem.query_mk_sync(zh, "env:local").decision > 0
    assert mem.query_mk_sync(em, "env:local").decision < 0
    assert mem.stats()["tag_pairs"] == 2


async def test_reopen_keeps_everything(tmp_path, clock) -> None:
    path = tmp_path / "m"
    a = LevelDBMemory(path, clock, SeededIds(1))
    written = []
    for i in range(50):
        written.append(mg(a, MacroState.SUCCESS, "tool:x", f"path:{i}"))
        clock.advance(1)
    for m in written:
        await a.awrite(m)
    rule = a.remember("rule", Level.C, "tool:x", "path:0")
    a.query_c_sync("tool:x", "path:0")
    await a.close()
    assert not (path / "agentui.pid").exists()
    b = LevelDBMemory(path, clock, SeededIds(2))
    try:
        assert b.stats()["total"] == 51
        for m in written:
            assert b.get(m.id) == m
        assert b.get(rule.id).last_recalled_at is not None
        recent = await b.query_recent(3)
        assert recent[0].id == rule.id and len(recent) == 3
    finally:
        await b.close()


def test_second_process_gets_memory_in_use(mem, tmp_path) -> None:
    code = textwrap.dedent(f"""
        from agentui.clock import SystemClock
        from agentui.ids import UuidIds
        from agentui.memory import LevelDBMemory, MemoryInUse
        try:
            LevelDBMemory({str(mem.path)!r}, SystemClock(), UuidIds())
        except MemoryInUse as e:
            print(e)
            raise SystemExit(3)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3, proc.stderr
    import os

    assert proc.stdout.strip() == f"memory is in use by PID {os.getpid()} ({mem.path})"


def test_second_opener_same_process(mem, clock, ids) -> None:
    with pytest.raises(MemoryInUse, match="in use by PID"):
        LevelDBMemory(mem.path, clock, ids)


async def test_backpressure_loses_nothing(tmp_path, clock) -> None:
    store = LevelDBMemory(tmp_path / "bp", clock, SeededIds(3), queue_size=4)
    ms = [mg(store, MacroState.REFINE, "tool:t", f"path:{i % 7}") for i in range(2000)]

    async def producer(chunk):
        for m in chunk:
            await store.awrite(m)

    await asyncio.gather(*(producer(ms[i::5]) for i in range(5)))
    # fire-and-forget writes beyond the queue size go to the overflow list, never dropped
    more = [mg(store, MacroState.SUCCESS, "tool:t", "path:ff") for _ in range(300)]
    for m in more:
        store.write(m)
    await store.close()
    again = LevelDBMemory(tmp_path / "bp", clock, SeededIds(4))
    try:
        assert again.stats()["total"] == 2300
        assert again.query_mk_sync("tool:t", "path:ff").count == 300
    finally:
        again.close_sync()


def test_write_without_loop_is_synchronous(mem) -> None:
    m = mg(mem, MacroState.ACCEPT)
    mem.write(m)
    assert mem.get(m.id) == m


def test_values_are_canonical_json(mem) -> None:
    m = mg(mem, MacroState.ACCEPT, intent_space("导出 报表"), "env:local", content="ünïcode ✓")
    mem.write_many([m])
    raw = mem._kv.get(f"megram:{m.id}".encode())
    assert raw.decode() == m.to_json()


def test_fake_clock_used(tmp_path) -> None:
    from datetime import UTC, datetime

    c = FakeClock(datetime(2030, 5, 1, tzinfo=UTC))
    s = InMemoryMemory(c, SeededIds(0))
    assert s.remember("x").created_at == "2030-05-01T00:00:00.000Z"


def test_fast_encoder_matches_canonical_json(mem) -> None:
    import random

    from agentui.memory.store import encode_megram

    rng = random.Random(5)
    alphabet = 'aZ:\\"\n\t\x00\x1f\u2028é中🚀 %/'
    for _ in range(300):
        txt = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 20)))
        m = mem.new_megram(content=txt, level=rng.choice(list(Level)), space="s" + txt, entity=txt,
                           state=txt, f=rng.random(), sigma=rng.uniform(-1, 1), k=rng.choice([0, 0.05, 1e-300, 7]),
                           last_recalled_at=rng.choice([None, "2026-01-01T00:00:00.000Z"]))
        assert encode_megram(m) == m.to_json()
    bad = mem.new_megram(content="x", level=Level.M, space="s", entity="e", state="s", f=0.1, sigma=0, k=0)
    bad.__dict__["k"] = float("inf")
    with pytest.raises(ValueError):
        encode_megram(bad)


async def test_query_mk_cache_invalidated_by_writes_and_deletes(mem) -> None:
    a = mg(mem, MacroState.ABANDON)
    mem.write_many([a])
    assert mem.query_mk_sync("tool:shell", "path:/tmp/x").count == 1
    mem.write(mg(mem, MacroState.ABANDON))  # queued: the async writer makes it visible
    await mem.drain()
    assert mem.query_mk_sync("tool:shell", "path:/tmp/x").count == 2
    mem.forget(a.id)
    assert mem.query_mk_sync("tool:shell", "path:/tmp/x").count == 1


async def test_bad_record_in_a_queued_batch_costs_only_itself(tmp_path, clock) -> None:
    store = LevelDBMemory(tmp_path / "salvage", clock, SeededIds(5))
    good = [mg(store, MacroState.ACCEPT, "tool:t", f"path:{i}") for i in range(200)]
    bad = good[0].model_copy(update={"id": "bad:id"})  # ':' is refused by the key schema
    for m in good[:100] + [bad] + good[100:]:
        store.write(m)
    with pytest.raises(MemoryError_, match="a memory write failed"):
        await store.drain()
    assert store.stats()["total"] == 200
    await store.drain()  # the error is reported once
    await store.close()


def _rows(raw: bytes) -> list[bytes]:
    return sorted(raw[i : i + 48] for i in range(0, len(raw), 48))


def assert_chunks_match_index(store) -> int:
    """A chunked pair's col: chunks hold exactly its idx: rows; other pairs have no col: keys.
    Returns the number of chunked pairs."""
    from agentui.memory.store import col_prefix, pair_prefix, unesc

    chunked = 0
    for space, entity in store.scan_index().pairs:
        idx = b"".join(store._kv.scan(pair_prefix(space, entity), keys=False))
        col = b"".join(store._kv.scan(col_prefix(space, entity), keys=False))
        if col_prefix(space, entity) in store._chunks.chunked:
            chunked += 1
            assert _rows(col) == _rows(idx), (space, entity)
        else:
            assert col == b"", (space, entity)
    for k in store._kv.scan(b"col:", values=False):  # no chunk outlives its pair's rows
        s, e, _ = k[4:].decode().split(":")
        assert store.query_mk_sync(unesc(s), unesc(e)).count or store.list(space=unesc(s), entity=unesc(e)), k
    return chunked


def _chunks(store, entity: str) -> int:
    from agentui.memory.store import col_prefix

    return sum(1 for _ in store._kv.scan(col_prefix("tool:t", entity), values=False))


@pytest.fixture
def small_chunks(monkeypatch):
    import agentui.memory.chunks as st

    monkeypatch.setattr(st, "CHUNK_AT", 20)


async def test_small_pairs_get_no_chunks(tmp_path, clock) -> None:
    store = LevelDBMemory(tmp_path / "small", clock, SeededIds(10))
    store.write_many([mg(store, MacroState.ABANDON, "tool:t", "path:0") for _ in range(100)])
    assert store.query_mk_sync("tool:t", "path:0").count == 100
    store.settle()
    assert _chunks(store, "path:0") == 0 and assert_chunks_match_index(store) == 0
    store.close_sync()


async def test_col_chunks_follow_every_mutation(tmp_path, clock, small_chunks) -> None:
    from agentui.memory import Dreamer
    from agentui.memory.chunks import COL_MERGE_AT

    store = LevelDBMemory(tmp_path / "col", clock, SeededIds(11))
    states = [MacroState.REFINE, MacroState.ABANDON, MacroState.SUCCESS, MacroState.CHANGE_PATH]
    store.write_many([mg(store, states[i % 4], "tool:t", f"path:{i % 5}") for i in range(300)])
    store.settle()  # 60 Megrams each > CHUNK_AT: every pair was chunked in the background
    assert _chunks(store, "path:0") == 1 and _chunks(store, "path:1") == 1
    assert assert_chunks_match_index(store) == 5
    for _ in range(COL_MERGE_AT + 8):  # one chunk per write batch: drain after each
        store.write(mg(store, MacroState.ABANDON, "tool:t", "path:0"))
        await store.drain()
    assert _chunks(store, "path:0") == COL_MERGE_AT + 9
    assert_chunks_match_index(store)
    before = store.query_mk_sync("tool:t", "path:0")
    store.settle()
    assert _chunks(store, "path:0") == 1  # merged in the background
    store.clear_cache()
    assert store.query_mk_sync("tool:t", "path:0") == before
    victim = store.list(space="tool:t", entity="path:3")[0]
    store.forget(victim.id)
    assert store.query_mk_sync("tool:t", "path:3").count == 59
    assert_chunks_match_index(store)
    clock.advance(86400 * 30)
    rep = await Dreamer(store, clock).run_once()  # consolidation (supersede) + GC
    assert rep.deleted > 0 and rep.consolidated > 0 and rep.chunked == 0  # all chunked already
    assert assert_chunks_match_index(store) == 5
    for space, entity in store.scan_index().pairs:  # the chunk answer equals the idx answer
        store.clear_cache()
        ids, cols = store.pair_columns(space, entity)
        assert store.query_mk_sync(space, entity).count == int((cols["lvl"] <= 1).sum())
    await store.close()


async def test_query_chunks_a_big_pair_of_an_older_store(tmp_path, clock, monkeypatch) -> None:
    import agentui.memory.chunks as st

    monkeypatch.setattr(st, "CHUNK_AT", 1000)
    store = LevelDBMemory(tmp_path / "old", clock, SeededIds(15))
    store.write_many([mg(store, MacroState.ABANDON, "tool:t", "path:0") for _ in range(50)])
    store.close_sync()
    monkeypatch.setattr(st, "CHUNK_AT", 20)
    again = LevelDBMemory(tmp_path / "old", clock, SeededIds(16))
    assert _chunks(again, "path:0") == 0
    assert again.query_mk_sync("tool:t", "path:0").count == 50  # from idx:, chunking queued
    again.settle()
    assert _chunks(again, "path:0") == 1 and assert_chunks_match_index(again) == 1
    again.clear_cache()
    assert again.query_mk_sync("tool:t", "path:0").count == 50
    again.close_sync()


async def test_chunked_pairs_survive_reopen(tmp_path, clock, small_chunks) -> None:
    path = tmp_path / "re"
    store = LevelDBMemory(path, clock, SeededIds(12))
    store.write_many([mg(store, MacroState.ABANDON, "tool:t", "path:0") for _ in range(30)])
    store.close_sync()  # waits for the background chunking
    again = LevelDBMemory(path, clock, SeededIds(13))
    again.write_many([mg(again, MacroState.SUCCESS, "tool:t", "path:0") for _ in range(5)])
    assert _chunks(again, "path:0") == 2  # the reopened store still appends chunks for the pair
    assert assert_chunks_match_index(again) == 1
    assert again.query_mk_sync("tool:t", "path:0").count == 35
    again.close_sync()


async def test_gc_after_a_concurrent_chunk_replacement_rescans(tmp_path, clock, small_chunks) -> None:
    """The Dreamer's GC reuses its snapshot's rows only if no chunk was replaced since; a merge or
    forget in between sends it down the rescan path, and the chunks still match the index."""
    store = LevelDBMemory(tmp_path / "race", clock, SeededIds(14))
    store.write_many([mg(store, MacroState.REFINE, "tool:t", f"path:{i % 2}") for i in range(60)])
    store.settle()  # both pairs grew past CHUNK_AT: chunked
    store.write_many([mg(store, MacroState.ABANDON, "tool:t", "path:0") for _ in range(3)])
    scan = store.scan_index(chunks=True)
    rows = np.nonzero(scan.cols["f"] <= 0.1)[0]  # the refine rows
    store.forget(store.list(space="tool:t", entity="path:0")[0].id)  # a replacement after the scan
    store.write_many([mg(store, MacroState.SUCCESS, "tool:t", "path:1")])  # an append after it
    assert store.delete_entries(scan, rows) == rows.size
    assert assert_chunks_match_index(store) == 2
    assert store.query_mk_sync("tool:t", "path:1").count == 1
    assert store.query_mk_sync("tool:t", "path:0").count == 3
    store.close_sync()
