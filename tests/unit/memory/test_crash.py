"""A writer SIGKILLed mid-burst: every id acknowledged after flush() survives; the DB reopens."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from agentui.clock import SystemClock
from agentui.ids import UuidIds
from agentui.memory import LevelDBMemory

CHILD = textwrap.dedent("""
    import asyncio, sys
    from agentui.clock import SystemClock
    from agentui.ids import UuidIds
    from agentui.memory import LevelDBMemory

    async def main(path):
        store = LevelDBMemory(path, SystemClock(), UuidIds(), queue_size=64)
        i = 0
        while True:
            batch = []
            for _ in range(200):
                m = store.new_megram(content=f"burst {i}", level="M", space="tool:crash",
                                     entity=f"path:{i % 13}", state="refine", f=0.1, sigma=0.5, k=0.5)
                i += 1
                if i % 3:
                    store.write(m)
                else:
                    await store.awrite(m)
                batch.append(m.id)
            await store.flush()
            sys.stdout.write("".join(x + "\\n" for x in batch))
            sys.stdout.flush()

    asyncio.run(main(sys.argv[1]))
""")


def test_sigkill_mid_burst_keeps_acknowledged(tmp_path) -> None:
    path = tmp_path / "crash.leveldb"
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True)
    acked: list[str] = []
    deadline = time.monotonic() + 60
    try:
        assert proc.stdout is not None
        while len(acked) < 3000 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            acked.append(line.strip())
        os.kill(proc.pid, signal.SIGKILL)
        # whatever the child flushed before dying was written in full lines after flush()
        rest = proc.stdout.read()
        acked.extend(x for x in rest.splitlines() if len(x) == 36)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert len(acked) >= 3000, "child did not produce enough acknowledged writes"
    store = LevelDBMemory(path, SystemClock(), UuidIds())
    try:
        for mid in acked:
            assert store.get(mid).id == mid
        st = store.stats()
        assert st["total"] >= len(acked)
        assert st["by_level"]["M"] == st["total"]
        # every index key agrees with a primary record
        total_idx = sum(store.query_mk_sync("tool:crash", f"path:{j}").count for j in range(13))
        assert total_idx == st["total"]
    finally:
        store.close_sync()
