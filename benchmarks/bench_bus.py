"""Bus budgets (DESIGN §8): ≥ 100k msgs/s publish→deliver with 8 subscribers and a tap;
p99 publish→deliver latency < 1 ms at 1k msgs/s.

`bus.throughput` is wall-clock: on a shared machine it also measures the CPU share the process
got. `bus.throughput_cpu` divides by the process's CPU time instead — the bus's own cost, the
same figure on an idle machine — so a reader can tell a loaded machine from a slower bus (#15)."""

from __future__ import annotations

import asyncio
import time

from _report import report

from agentui.bus import Bus
from agentui.contracts import Role, TaskStarted
from agentui.gcpolicy import settle

settle()  # as `agentui run` and the UI do once their imports are done (#15)

N = 200_000
SUBS = 8


async def throughput() -> tuple[float, float]:
    bus = Bus()
    subs = [bus.subscribe(f"s{i}", types={"TaskStarted"}) for i in range(SUBS)]
    tap = bus.tap("tap")
    payload = TaskStarted(task_id="t", text="x")

    async def consume(src) -> int:
        n = 0
        async for _ in src:
            n += 1
            if n == N:
                break
        return n

    consumers = [asyncio.create_task(consume(s)) for s in [*subs, tap]]
    t0, c0 = time.perf_counter(), time.process_time()
    for _ in range(N):
        await bus.publish(Role.RUNTIME, Role.USER, payload, task_id="t")
    counts = await asyncio.gather(*consumers)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert all(c == N for c in counts), counts
    return N / dt, N / cpu


async def latency() -> tuple[float, float]:
    bus = Bus()
    subs = [bus.subscribe(f"s{i}", types={"TaskStarted"}) for i in range(SUBS)]
    bus.tap("tap")  # an idle observer must not matter
    lat: list[float] = []
    sent: dict[str, float] = {}
    total = 2000

    async def consume(sub, record: bool) -> None:
        n = 0
        async for env in sub:
            if record:
                lat.append(time.perf_counter() - sent[env.id])
            n += 1
            if n == total:
                return

    consumers = [asyncio.create_task(consume(s, i == SUBS - 1)) for i, s in enumerate(subs)]
    payload = TaskStarted(task_id="t", text="x")
    start = time.perf_counter()
    for i in range(total):  # 1k msgs/s, paced by absolute schedule
        delay = start + i / 1000 - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        env = bus.envelope(Role.RUNTIME, Role.USER, payload, "t")
        sent[env.id] = time.perf_counter()
        await bus.publish_envelope(env)
    await asyncio.gather(*consumers)
    lat.sort()
    return lat[len(lat) // 2] * 1000, lat[int(len(lat) * 0.99)] * 1000


async def main() -> None:
    runs = [await throughput() for _ in range(3)]
    report("bus.throughput", max(r[0] for r in runs), "msgs/s", ">=", 100_000)
    report("bus.throughput_cpu", max(r[1] for r in runs), "msgs/CPU-s", ">=", 100_000)
    p50, p99 = await latency()
    report("bus.latency_p50", p50, "ms", "<", 1)
    report("bus.latency_p99", p99, "ms", "<", 1)


if __name__ == "__main__":
    asyncio.run(main())
