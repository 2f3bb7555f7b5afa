from __future__ import annotations

import asyncio

import pytest

from agentui.contracts import Level, MacroState
from agentui.memory import BEST_PRACTICE, CONSTRAINT, Dreamer, LevelDBMemory

from .helpers import mg

S, E = "tool:shell", "path:/etc/shadow"


def burst(store, state, n, space=S, entity=E):
    store.write_many([mg(store, state, space, entity) for _ in range(n)])


async def test_constraint_consolidation_with_distil(mem, clock) -> None:
    calls = []

    async def distil(kind, evidence):
        calls.append((kind, len(evidence)))
        return "Never read /etc/shadow with the shell tool."

    burst(mem, MacroState.ABANDON, 6)  # att 5.7, dec -5.7
    d = Dreamer(mem, clock, distil)
    rep = await d.run_once()
    assert (rep.consolidated, rep.bankrupted, rep.deleted) == (1, 0, 0)
    assert calls == [(CONSTRAINT, 6)]
    sops = await mem.query_c(S, E)
    assert len(sops) == 1 and sops[0].is_constraint
    rule = mem.get(sops[0].id)
    assert rule.level == Level.C and rule.k == 0.0 and rule.state == "consolidated"
    assert rule.content == "Never read /etc/shadow with the shell tool."
    # no new evidence → not re-consolidated; and a fresh Constraint is NOT bankrupted by its own
    # (earlier) evidence
    clock.advance(60)
    rep = await d.run_once()
    assert (rep.consolidated, rep.bankrupted) == (0, 0)
    assert [s.id for s in await mem.query_c(S, E)] == [rule.id]


async def test_best_practice_template_when_distil_fails(mem, clock) -> None:
    async def broken(kind, evidence):
        raise RuntimeError("llm down")

    burst(mem, MacroState.ACCEPT, 4)
    burst(mem, MacroState.SUCCESS, 3)  # att 6.0, dec 6.0
    rep = await Dreamer(mem, clock, broken).run_once()
    assert rep.consolidated == 1
    (sop,) = await mem.query_c(S, E)
    assert sop.sigma == 1.0 and sop.content.startswith("Best practice")


async def test_below_thresholds_no_consolidation(mem, clock) -> None:
    burst(mem, MacroState.ABANDON, 3)
    burst(mem, MacroState.CHANGE_PATH, 10)  # att 2.85+3.0 ≥ 5 but dec -2.85 > -3
    rep = await Dreamer(mem, clock).run_once()
    assert rep.consolidated == 0
    # mixed signs: attention high, decision cancels out
    burst(mem, MacroState.SUCCESS, 6, entity="path:mixed")
    burst(mem, MacroState.ABANDON, 5, entity="path:mixed")
    assert (await Dreamer(mem, clock).run_once()).consolidated == 0


async def test_new_evidence_reconsolidates_and_supersedes(mem, clock) -> None:
    burst(mem, MacroState.ABANDON, 6)
    d = Dreamer(mem, clock)
    first = (await d.run_once()).new_ids[0]
    clock.advance(3600)
    burst(mem, MacroState.ABANDON, 1)
    rep = await d.run_once()
    assert rep.consolidated == 1 and rep.bankrupted == 0
    assert [s.id for s in await mem.query_c(S, E)] == rep.new_ids
    assert mem.superseded_by(first) == rep.new_ids[0]


async def test_constraint_bankrupted_by_later_positive_evidence(mem, clock) -> None:
    burst(mem, MacroState.ABANDON, 6)
    d = Dreamer(mem, clock)
    (cid,) = (await d.run_once()).new_ids
    clock.advance(86400)
    burst(mem, MacroState.SUCCESS, 1)  # later evidence with the opposite sign
    rep = await d.run_once()
    assert rep.bankrupted == 1 and rep.consolidated == 0
    assert await mem.query_c(S, E) == []
    demoted = mem.get(rep.demoted_ids[0])
    old = mem.get(cid)
    assert demoted.level == Level.K and demoted.k == 0.05 and demoted.sigma == old.sigma
    assert demoted.created_at == old.created_at
    assert mem.superseded_by(cid) == demoted.id
    assert cid not in {m.id for m in mem.list(level=Level.C)}


async def test_constraint_survives_later_negative_evidence(mem, clock) -> None:
    burst(mem, MacroState.ABANDON, 6)
    d = Dreamer(mem, clock)
    await d.run_once()
    clock.advance(86400)
    burst(mem, MacroState.CHANGE_APPROACH, 1)
    rep = await d.run_once()
    assert rep.bankrupted == 0


async def test_best_practice_bankrupted_by_negative_feedback(mem, clock) -> None:
    burst(mem, MacroState.ACCEPT, 7)
    d = Dreamer(mem, clock)
    (bp,) = (await d.run_once()).new_ids
    clock.advance(10)
    await mem.record_negative_feedback(bp, "the SOP no longer works")
    rep = await d.run_once()
    assert rep.bankrupted == 1
    assert await mem.query_c(S, E) == []


async def test_gc_deletes_faded_mk_only(mem, clock) -> None:
    burst(mem, MacroState.REFINE, 5)  # f=0.1 → below 0.1 as soon as any time passes
    burst(mem, MacroState.CHANGE_PATH, 2, entity="path:cp")  # 0.3·e^{-0.2Δt} < 0.1 after 5.5 days
    burst(mem, MacroState.ABANDON, 2, entity="path:ab")  # 0.95·e^{-0.05Δt} < 0.1 after 45 days
    mem.remember("timeless", Level.C, S, "path:c")
    d = Dreamer(mem, clock)
    assert (await d.run_once()).deleted == 0  # Δt = 0: refine sits exactly at 0.1
    clock.advance(3600)
    assert (await d.run_once()).deleted == 5
    clock.advance(5 * 86400)
    assert (await d.run_once()).deleted == 0
    clock.advance(86400)
    assert (await d.run_once()).deleted == 2
    clock.advance(40 * 86400)
    assert (await d.run_once()).deleted == 2
    st = mem.stats()
    assert st["total"] == 1 and st["by_level"]["C"] == 1
    assert mem.query_mk_sync(S, E).count == 0


async def test_schedule_debounced_and_timer_never_raise(mem, clock, caplog) -> None:
    burst(mem, MacroState.ABANDON, 6)
    d = Dreamer(mem, clock, debounce_s=0.05)
    runs = []
    orig = d.run_once

    async def counting():
        runs.append(1)
        return await orig()

    d.run_once = counting  # type: ignore[method-assign]
    for _ in range(5):
        d.schedule()
    await asyncio.sleep(0.3)
    assert len(runs) == 1
    assert d.last_report is not None and d.last_report.consolidated == 1

    async def boom():
        raise RuntimeError("kaboom")

    d.run_once = boom  # type: ignore[method-assign]
    d.start_timer(0.02)
    await asyncio.sleep(0.15)
    assert "dreamer pass failed" in caplog.text
    await mem.close()  # stops the Dreamer too
    assert d._timer is None


async def test_dreamer_on_reopened_store(tmp_path, clock, ids) -> None:
    a = LevelDBMemory(tmp_path / "m", clock, ids)
    burst(a, MacroState.SUCCESS, 7, entity="path:a:b")
    await a.close()
    b = LevelDBMemory(tmp_path / "m", clock, ids)
    rep = await Dreamer(b, clock).run_once()
    assert rep.consolidated == 1 and rep.scanned == 7
    (sop,) = await b.query_c(S, "path:a:b")
    assert sop.entity == "path:a:b" and sop.space == S
    await b.close()


@pytest.mark.parametrize("kind", [BEST_PRACTICE, CONSTRAINT])
def test_template_rule(kind, mem) -> None:
    from agentui.memory import template_rule

    text = template_rule(kind, [mg(mem, MacroState.ABANDON, content="boom")])
    assert S in text and "boom" in text


async def test_many_pairs_consolidate_in_chunks(mem, clock, monkeypatch) -> None:
    import agentui.memory.dreamer as dreamer_mod

    monkeypatch.setattr(dreamer_mod, "RULES_PER_BATCH", 3)  # 7 rules → batches of 3, 3, 1
    for i in range(7):
        burst(mem, MacroState.ABANDON, 6, entity=f"path:/p{i}")
    d = Dreamer(mem, clock)
    first = await d.run_once()
    assert first.consolidated == 7 and len(set(first.new_ids)) == 7
    for i in range(7):
        (sop,) = await mem.query_c(S, f"path:/p{i}")
        assert sop.is_constraint
    clock.advance(3600)
    for i in range(7):
        burst(mem, MacroState.ABANDON, 1, entity=f"path:/p{i}")
    second = await d.run_once()
    # each new rule superseded its pair's old rule, the marks written with the rules
    assert second.consolidated == 7
    for old, new in zip(first.new_ids, second.new_ids, strict=True):
        assert mem.superseded_by(old) == new
    assert mem.stats()["superseded"] == 7


async def test_gc_removes_recall_and_sup_metadata(mem, clock) -> None:
    burst(mem, MacroState.REFINE, 3)
    victims = [m.id for m in mem.list()]
    # metadata for one M row (not produced by our own paths today; GC must still clean it up)
    mem._kv.write([(f"recall:{victims[0]}".encode(), b"2026-01-01T00:00:00.000Z"),
                   (f"sup:{victims[1]}".encode(), b"x")])
    clock.advance(3600)
    rep = await Dreamer(mem, clock).run_once()
    assert rep.deleted == 2  # the superseded one is not live, so not GC'd
    assert mem._kv.get(f"recall:{victims[0]}".encode()) is None
    assert mem._kv.get(f"megram:{victims[0]}".encode()) is None
    assert mem._kv.get(f"megram:{victims[1]}".encode()) is not None


async def test_dreamer_chunks_big_pairs(mem, clock, monkeypatch) -> None:
    import agentui.memory.chunks as st
    from agentui.memory.store import col_prefix

    monkeypatch.setattr(st, "CHUNK_AT", 1000)  # written while the pair counted as small
    burst(mem, MacroState.CHANGE_PATH, 12, entity="path:big")
    burst(mem, MacroState.CHANGE_PATH, 4, entity="path:small")
    mem.settle()
    assert mem._chunks.chunked == set()
    monkeypatch.setattr(st, "CHUNK_AT", 10)
    rep = await Dreamer(mem, clock).run_once()
    assert rep.chunked == 1
    assert mem._chunks.chunked == {col_prefix(S, "path:big")}
    assert mem.query_mk_sync(S, "path:big").count == 12
