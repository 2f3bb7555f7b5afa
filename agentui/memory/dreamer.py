"""Dreamer — offline consolidation, trust bankruptcy and GC (v0.8 §6e, DESIGN §6).

One pass (:meth:`Dreamer.run_once`):

1. *Consolidation* — per tag pair over its live M/K Megrams: ``M_att ≥ 5 ∧ M_dec ≥ 3`` → a Best
   Practice, ``M_att ≥ 5 ∧ M_dec ≤ −3`` → a Constraint: one new C-level Megram (k = 0), its text
   from ``distil(kind, evidence)`` (the brain LLM) or a deterministic template. Skipped when a live
   C entry of the same sign was created after the pair's newest evidence (nothing new to learn).
   A new C entry supersedes older live C entries of the same sign for that pair.
2. *Trust bankruptcy* — a live C entry is weighed only against the M/K evidence created after it,
   with the sign of the entry: a Constraint is bankrupted when that later evidence's M_dec > 0, a
   Best Practice when it is < 0. A bankrupted entry is superseded by a K-level copy with k = 0.05
   (same created_at / last_recalled_at: it decays as if it had never been immune).
3. *GC* — M/K entries whose own attention |f|·exp(−kΔt) < 0.1 are hard-deleted.

The scan and the writes run in a worker thread; ``distil`` is awaited on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from agentui.clock import Clock, iso
from agentui.contracts import Level, Megram

from . import chunks as chunks_mod
from .potentials import SECONDS_PER_DAY
from .quantize import DEMOTED_K
from .store import LEVEL_CODE, IndexScan, _Store, to_days

if TYPE_CHECKING:
    from agentui.llm import LLMPool

log = logging.getLogger(__name__)

CONSOLIDATE_ATTENTION = 5.0
CONSOLIDATE_DECISION = 3.0
GC_ATTENTION = 0.1
EVIDENCE_FOR_DISTIL = 20  # most-weighted Megrams handed to the LLM
RULES_PER_BATCH = 2048  # template rules per atomic write

BEST_PRACTICE = "best_practice"
CONSTRAINT = "constraint"

Distil = Callable[[str, list[Megram]], Awaitable[str]]

_M = LEVEL_CODE[Level.M]
_K = LEVEL_CODE[Level.K]
_C = LEVEL_CODE[Level.C]


@dataclass
class DreamReport:
    consolidated: int = 0
    bankrupted: int = 0
    deleted: int = 0
    scanned: int = 0
    chunked: int = 0  # pairs given a QueryMK summary chunk (see store.CHUNK_AT)
    new_ids: list[str] = field(default_factory=list)
    demoted_ids: list[str] = field(default_factory=list)


@dataclass
class _Plan:
    consolidate: list[tuple[str, int, list[str], list[str]]]  # kind, pair index, evidence ids, same-sign C ids
    bankrupt: list[tuple[str, str]]  # (C id, reason)
    gc_rows: np.ndarray
    scan: IndexScan
    big_pairs: list[tuple[str, str]] = field(default_factory=list)


def template_rule(kind: str, evidence: list[Megram]) -> str:
    """Deterministic rule text when no LLM is available (or it failed)."""
    head = evidence[0] if evidence else None
    where = f"{head.space} / {head.entity}" if head else "this tag pair"
    # long enough to keep a lesson's calls (lessons.py), not only its opening words
    examples = "; ".join(dict.fromkeys(m.content.strip()[:160] for m in evidence if m.content.strip()))
    lead = "Best practice" if kind == BEST_PRACTICE else "Constraint — avoid"
    text = f"{lead}: {where} ({len(evidence)} outcomes)"
    return f"{text}: {examples[:400]}" if examples else text


def llm_distiller(pool: LLMPool) -> Distil:
    """The Dreamer's rule writer on the brain tier (v0.8 §6e): one sentence from the evidence.
    ``pool`` is an :class:`agentui.llm.LLMPool` (its ``dreamer`` role). An empty or cut-off reply
    raises, so the Dreamer falls back to :func:`template_rule`."""

    async def distil(kind: str, evidence: list[Megram]) -> str:
        lines = "\n".join(f"- {m.content[:200]}" for m in evidence[:12])
        what = "best practice to follow" if kind == BEST_PRACTICE else "constraint (what to avoid)"
        res = await pool.for_role("dreamer").chat([
            {"role": "system", "content": "You distil an agent's past outcomes into one reusable rule."},
            {"role": "user", "content": f"Past outcomes:\n{lines}\n\nWrite one sentence: the {what} "
                                        "these outcomes teach. No preamble."}], max_tokens=120)
        text = res.text.strip()
        if not text or res.finish_reason == "length":
            raise ValueError("empty or cut-off rule")
        return text[:400]

    return distil


class Dreamer:
    def __init__(
        self,
        store: _Store,
        clock: Clock,
        distil: Distil | None = None,
        *,
        debounce_s: float = 5.0,
    ) -> None:
        self.store = store
        self.clock = clock
        self.distil = distil
        self.debounce_s = debounce_s
        self._lock = asyncio.Lock()
        self._debounce: asyncio.Task[None] | None = None
        self._timer: asyncio.Task[None] | None = None
        self.last_report: DreamReport | None = None
        store._dreamers.append(self)

    # -- one pass -----------------------------------------------------------------------------

    def _plan(self, now_days: float) -> _Plan:
        scan = self.store.scan_index(chunks=True)
        sup = self.store.superseded_ids()
        cols = scan.cols
        n = cols.size
        if n == 0:
            return _Plan([], [], np.empty(0, dtype=np.int64), scan)
        live = np.ones(n, dtype=bool)
        if sup:
            live = np.fromiter((i not in sup for i in scan.ids), dtype=bool, count=n)
        mk = (cols["lvl"] <= _K) & live
        dt = np.maximum(now_days - cols["tref"] / SECONDS_PER_DAY, 0.0)
        w = np.abs(cols["f"]) * np.exp(-cols["k"] * dt)
        w_mk = np.where(mk, w, 0.0)
        d_mk = cols["sigma"] * cols["f"] * np.exp(-cols["k"] * dt)
        d_mk = np.where(mk, d_mk, 0.0)
        starts = scan.starts
        att = np.add.reduceat(w_mk, starts)
        dec = np.add.reduceat(d_mk, starts)
        ends = np.append(starts[1:], n)
        gc_rows = np.nonzero(mk & (w < GC_ATTENTION))[0]

        # pairs holding a live C entry need a closer look (rare); the rest only need thresholds
        c_rows = np.nonzero((cols["lvl"] == _C) & live)[0]
        pair_of_c = np.searchsorted(starts, c_rows, side="right") - 1
        c_by_pair: dict[int, list[int]] = {}
        for r, p in zip(c_rows.tolist(), pair_of_c.tolist(), strict=True):
            c_by_pair.setdefault(p, []).append(r)

        bankrupt: list[tuple[str, str]] = []
        bankrupt_pairs: set[int] = set()
        for p, rows in c_by_pair.items():
            s, e = int(starts[p]), int(ends[p])
            seg_mk = mk[s:e]
            for r in rows:
                later = seg_mk & (cols["created"][s:e] > cols["created"][r])
                later_dec = float(d_mk[s:e][later].sum())
                sign = cols["sigma"][r]
                if (sign < 0 and later_dec > 0) or (sign > 0 and later_dec < 0):
                    bankrupt.append((scan.ids[r], f"later evidence M_dec={later_dec:+.3f}"))
                    bankrupt_pairs.add(p)

        consolidate: list[tuple[str, int, list[str], list[str]]] = []
        cand = np.nonzero((att >= CONSOLIDATE_ATTENTION) & (np.abs(dec) >= CONSOLIDATE_DECISION))[0]
        for p in cand.tolist():
            if p in bankrupt_pairs:
                continue  # let the demotion settle before re-learning this pair
            kind = BEST_PRACTICE if dec[p] > 0 else CONSTRAINT
            s, e = int(starts[p]), int(ends[p])
            seg = np.arange(s, e)
            ev = seg[mk[s:e]]
            newest = float(cols["created"][ev].max())
            same_sign = [
                r for r in c_by_pair.get(p, [])
                if (cols["sigma"][r] > 0) == (kind == BEST_PRACTICE) and cols["sigma"][r] != 0
            ]
            if any(float(cols["created"][r]) >= newest for r in same_sign):
                continue
            top = ev[np.argsort(-w[ev], kind="stable")[:EVIDENCE_FOR_DISTIL]]
            consolidate.append((kind, p, [scan.ids[i] for i in top.tolist()], [scan.ids[r] for r in same_sign]))
        sizes = np.diff(np.append(starts, n))
        big = [scan.pairs[p] for p in np.nonzero(sizes > chunks_mod.CHUNK_AT)[0].tolist()]
        return _Plan(consolidate, bankrupt, gc_rows, scan, big)

    def _bankrupt(self, cid: str) -> str | None:
        m = self.store.load(cid)
        if m is None or self.store.superseded_by(cid) is not None:
            return None
        copy = self.store.new_megram(
            content=m.content, level=Level.K, space=m.space, entity=m.entity, state="demoted",
            f=m.f, sigma=m.sigma, k=DEMOTED_K, created_at=m.created_at, last_recalled_at=m.last_recalled_at,
        )
        self.store.supersede(cid, copy)
        return copy.id

    def _evidence(self, ids: list[str]) -> list[Megram]:
        return [m for m in (self.store.load(i, recall=False) for i in ids) if m is not None]

    async def _rule_text(self, kind: str, evidence: list[Megram]) -> str:
        if self.distil is not None:
            try:
                text = (await self.distil(kind, evidence)).strip()
                if text:
                    return text
            except Exception:
                log.exception("dreamer: distil(%s) failed; using the template", kind)
        return template_rule(kind, evidence)

    async def _consolidate(self, plan: _Plan, rep: DreamReport) -> None:
        """One C-level rule per candidate pair. Evidence is loaded in one worker-thread call; rules
        go to disk in atomic batches (each with its supersede marks) — one per rule when an LLM
        writes them (each costs seconds; a kill loses at most the one being distilled), chunks of
        ``RULES_PER_BATCH`` with the template."""
        ev_sets = await asyncio.to_thread(lambda: [self._evidence(c[2]) for c in plan.consolidate])
        per_batch = 1 if self.distil is not None else RULES_PER_BATCH
        rules: list[Megram] = []
        marks: dict[str, str] = {}

        def write() -> None:
            self.store.write_many(rules, supersede=marks)

        for (kind, p, _ev_ids, same_sign), evidence in zip(plan.consolidate, ev_sets, strict=True):
            space, entity = plan.scan.pairs[p]
            text = await self._rule_text(kind, evidence)
            rule = self.store.new_megram(
                content=text, level=Level.C, space=space, entity=entity, state="consolidated",
                f=max((m.f for m in evidence), default=1.0), sigma=1.0 if kind == BEST_PRACTICE else -1.0,
                k=0.0, created_at=iso(self.clock.now()),
            )
            rules.append(rule)
            marks.update(dict.fromkeys(same_sign, rule.id))
            rep.consolidated += 1
            rep.new_ids.append(rule.id)
            log.debug("dreamer: consolidated %s for (%s, %s) → %s", kind, space, entity, rule.id)
            if len(rules) >= per_batch:
                await asyncio.to_thread(write)
                rules, marks = [], {}
        if rules:
            await asyncio.to_thread(write)
        log.info("dreamer: %d rules consolidated", len(plan.consolidate))

    async def run_once(self) -> DreamReport:
        async with self._lock:
            await self.store.drain()
            now = self.clock.now()
            plan = await asyncio.to_thread(self._plan, to_days(now))
            rep = DreamReport(scanned=int(plan.scan.cols.size))
            # downward flow first: bankruptcies are judged on the evidence as it stood
            for cid, why in plan.bankrupt:
                new_id = await asyncio.to_thread(self._bankrupt, cid)
                if new_id is not None:
                    rep.bankrupted += 1
                    rep.demoted_ids.append(new_id)
                    log.info("dreamer: trust bankruptcy of %s (%s) → K %s", cid, why, new_id)
            if plan.consolidate:
                await self._consolidate(plan, rep)
            if plan.gc_rows.size:
                rep.deleted = await asyncio.to_thread(self.store.delete_entries, plan.scan, plan.gc_rows)
            if plan.big_pairs:
                rep.chunked = await asyncio.to_thread(self.store.chunk_pairs, plan.big_pairs)
            self.last_report = rep
            return rep

    # -- background triggers ------------------------------------------------------------------

    async def _safe_run(self) -> None:
        try:
            await self.run_once()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("dreamer pass failed")

    def schedule(self, delay_s: float | None = None) -> None:
        """Debounced trigger (after a FinalResult): one pass `delay_s` after the last call."""
        delay = self.debounce_s if delay_s is None else delay_s
        if self._debounce is not None and not self._debounce.done():
            self._debounce.cancel()

        async def later() -> None:
            await asyncio.sleep(delay)
            await self._safe_run()

        self._debounce = asyncio.get_running_loop().create_task(later(), name="dreamer-debounce")

    def start_timer(self, interval_s: float) -> None:
        """Run a pass every `interval_s` seconds in the background (0 or less: disabled)."""
        if interval_s <= 0 or (self._timer is not None and not self._timer.done()):
            return

        async def loop() -> None:
            while True:
                await asyncio.sleep(interval_s)
                await self._safe_run()

        self._timer = asyncio.get_running_loop().create_task(loop(), name="dreamer-timer")

    async def stop(self) -> None:
        for t in (self._debounce, self._timer):
            if t is not None and not t.done():
                t.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await t
        self._debounce = self._timer = None
        with contextlib.suppress(ValueError):
            self.store._dreamers.remove(self)
