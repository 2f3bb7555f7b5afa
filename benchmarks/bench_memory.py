"""Memory budgets (DESIGN §8): batched Megram writes ≥ 50k/s with zero lost (counted after reopen);
QueryMK for one tag pair holding 10k Megrams in a store of 1M < 10 ms (written 10 at a time, as the
GGS does: the pair is chunked once it passes CHUNK_AT and then gains one col: chunk per write, so
the first query reads ~1,000 chunks and queues their merge; later ones read the merged chunk with
the in-process cache cleared each time — 200 of them, so p99 is not the maximum); a Dreamer pass
over 1M Megrams < 30 s. Write figures are the best of two runs (the machine is shared).

The 1M store takes a while to build on a small machine; ``AGENTUI_BENCH_MEMORY_TOTAL`` overrides
its size (default 1_000_000).
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _report import report  # noqa: E402

from agentui.clock import FakeClock, iso  # noqa: E402
from agentui.contracts import MacroState  # noqa: E402
from agentui.ids import UuidIds  # noqa: E402
from agentui.memory import Dreamer, LevelDBMemory, megram_params  # noqa: E402

TOTAL = int(os.environ.get("AGENTUI_BENCH_MEMORY_TOTAL", "1000000"))
HOT = 10_000  # Megrams in the queried tag pair
WRITE_N = 200_000
CHUNK = 20_000
STATES = list(MacroState)[1:]  # everything but init
NOW = datetime(2026, 3, 1, tzinfo=UTC)


def megrams(store: LevelDBMemory, n: int, rng: random.Random, pairs: int, hot: bool = False):
    out = []
    for i in range(n):
        state = rng.choice(STATES)
        f, s, k = megram_params(state)
        created = iso(NOW - timedelta(seconds=rng.uniform(0, 30 * 86400)))
        if hot:
            space, entity = "tool:shell", "path:/hot/pair"
        else:
            j = rng.randrange(pairs)
            space, entity = f"tool:t{j % 50}", f"path:/p/{j}"
        out.append(store.new_megram(content=f"{state} #{i}", level="M", space=space, entity=entity,
                                    state=str(state.value), f=f, sigma=s, k=k, created_at=created))
    return out


def bench_writes(root: Path, run: int) -> float:
    rng = random.Random(1)
    clock = FakeClock(NOW)
    store = LevelDBMemory(root / f"writes{run}", clock, UuidIds())
    t0 = time.perf_counter()
    data = megrams(store, WRITE_N, rng, pairs=5000)
    print(f"# built {WRITE_N} Megram objects in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    t0 = time.perf_counter()
    for i in range(0, WRITE_N, CHUNK):
        store.write_many(data[i : i + CHUNK])
    store.close_sync()
    rate = WRITE_N / (time.perf_counter() - t0)
    again = LevelDBMemory(root / f"writes{run}", clock, UuidIds())
    total = again.stats()["total"]
    again.close_sync()
    assert total == WRITE_N, f"lost writes: {total} != {WRITE_N}"
    return rate


async def bench_async_writes(root: Path) -> float:
    rng = random.Random(2)
    clock = FakeClock(NOW)
    store = LevelDBMemory(root / "awrites", clock, UuidIds())
    n = 100_000
    data = megrams(store, n, rng, pairs=5000)
    t0 = time.perf_counter()
    for m in data:
        await store.awrite(m)
    await store.flush()
    rate = n / (time.perf_counter() - t0)
    await store.close()
    again = LevelDBMemory(root / "awrites", clock, UuidIds())
    total = again.stats()["total"]
    again.close_sync()
    assert total == n, f"lost writes: {total} != {n}"
    return rate


def build_big(root: Path) -> tuple[LevelDBMemory, FakeClock, float]:
    rng = random.Random(3)
    clock = FakeClock(NOW)
    store = LevelDBMemory(root / "big", clock, UuidIds())
    t0 = time.perf_counter()
    hot = megrams(store, HOT, rng, pairs=1, hot=True)
    for i in range(0, HOT, 10):  # as the GGS writes them: a few at a time
        store.write_many(hot[i : i + 10])
    left = TOTAL - HOT
    pairs = max(1, (TOTAL - HOT) // 100)
    while left > 0:
        n = min(50_000, left)
        store.write_many(megrams(store, n, rng, pairs=pairs))
        left -= n
    return store, clock, time.perf_counter() - t0


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="agentui-bench-mem-") as tmp:
        root = Path(tmp)
        rate = max(bench_writes(root, run) for run in range(2))
        report("memory.write_batched", rate, "megrams/s", ">=", 50_000)
        arate = max([await bench_async_writes(root / f"a{run}") for run in range(2)])
        report("memory.write_async_queue", arate, "megrams/s", ">=", 50_000)

        store, clock, build_s = build_big(root)
        print(f"# built a store of {TOTAL} Megrams in {build_s:.1f} s", file=sys.stderr)
        t0 = time.perf_counter()
        store.query_mk_sync("tool:shell", "path:/hot/pair")  # ~1,000 chunks; queues their merge
        first = (time.perf_counter() - t0) * 1000
        report("memory.query_mk_first", first, "ms", "<", 10)
        t0 = time.perf_counter()
        store.settle()
        print(f"# background merge of the hot pair's chunks: {time.perf_counter() - t0:.2f} s", file=sys.stderr)
        for cached in (False, True):
            lat = []
            for _ in range(200):
                if not cached:
                    store.clear_cache()  # a full prefix scan + numpy every time
                t0 = time.perf_counter()
                p = store.query_mk_sync("tool:shell", "path:/hot/pair")
                lat.append((time.perf_counter() - t0) * 1000)
            assert p.count == HOT, p
            lat.sort()
            name = "query_mk_cached" if cached else "query_mk"
            report(f"memory.{name}_p50", lat[len(lat) // 2], "ms", "<", 10)
            report(f"memory.{name}_p99", lat[int(len(lat) * 0.99)], "ms", "<", 10)

        dreamer = Dreamer(store, clock)
        t0 = time.perf_counter()
        rep = await dreamer.run_once()
        dt = time.perf_counter() - t0
        print(f"# dreamer: scanned {rep.scanned}, consolidated {rep.consolidated}, "
              f"bankrupted {rep.bankrupted}, deleted {rep.deleted}", file=sys.stderr)
        report("memory.dreamer_pass", dt, "s", "<", 30)
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
