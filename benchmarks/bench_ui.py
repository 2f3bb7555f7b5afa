"""TUI budgets (DESIGN §8): cold start to first paint < 1 s; under a 2,000 msgs/s bus flood for
10 s, keystroke → repaint p95 < 100 ms and peak RSS growth bounded (< 200 MB).

Both are measured at the app's display call (`App._display`, where a real terminal gets its bytes;
headless it is called all the same): first paint = the first screen update; keystroke → repaint =
from posting the key event (as the terminal driver does) to the first screen update after the
input holds the character."""

from __future__ import annotations

import asyncio
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from _report import report
from textual import events

from agentui.bus import Bus
from agentui.clock import FakeClock
from agentui.config import Config
from agentui.contracts import ExecutionResult, Role, SubTask
from agentui.ids import SeededIds
from agentui.ui.app import AgentApp

EMPTY = Path(tempfile.gettempdir()) / "agentui-bench-empty-recording.jsonl"
PAINTED_AT: list[float] = []  # wall-clock time of the first paint (for the subprocess figure)
RATE = 2000
SECONDS = 10


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_app() -> AgentApp:
    from agentui.memory import InMemoryMemory

    EMPTY.write_text("")
    clock = FakeClock(datetime(2026, 3, 1, tzinfo=UTC))
    ids = SeededIds(1, readable=True)
    return AgentApp(Config(), data_dir=Path("/tmp/agentui-bench-ui"), clock=clock, ids=ids, replay=EMPTY, speed=0,
                    animate=False, memory=InMemoryMemory(clock, ids))


def watch_paints(app: AgentApp) -> list[float]:
    """Record the time of every screen update the app sends to its driver."""
    painted: list[float] = []
    display = app._display

    def timed(screen, renderable):  # noqa: ANN001, ANN202
        if renderable is not None:
            painted.append(time.perf_counter())
        return display(screen, renderable)

    app._display = timed  # type: ignore[method-assign]
    return painted


async def cold_start(real: bool = False) -> float:
    """`real`: what `agentui` does on a first start — no replay, the LevelDB memory opened under a
    fresh data dir, no LLM configured (onboarding); no network (preflight off)."""
    t0 = time.perf_counter()
    if real:
        data = Path(tempfile.mkdtemp(prefix="agentui-bench-cold-"))
        app = AgentApp(Config(), data_dir=data, workspace=data, preflight=False)
    else:
        app = make_app()
    painted = watch_paints(app)
    async with app.run_test(size=(120, 36)) as pilot:
        while not painted:
            await pilot.pause(0.005)
    PAINTED_AT.append(time.time() - (time.perf_counter() - painted[0]))
    return painted[0] - t0


async def flood() -> tuple[float, float]:
    app = make_app()
    bus = Bus()
    envs = [
        bus.envelope(
            Role.PLANNER,
            Role.EXECUTOR,
            SubTask(
                subtask_id=f"s{i}", parent_task_id="t", intent=f"step {i}", success_criteria=[{"criterion": "done"}]
            ),
            task_id="t",
        )
        for i in range(500)
    ]
    envs += [bus.envelope(Role.EXECUTOR, Role.AGENT_VALIDATOR, ExecutionResult(subtask_id="s", status="completed",
                                                                               output="ok " * 20), task_id="t")
             for _ in range(500)]
    lat: list[float] = []
    painted = watch_paints(app)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        base = rss_mb()
        stop = False

        async def pump() -> None:
            i = 0
            t0 = time.perf_counter()
            while not stop:
                due = int((time.perf_counter() - t0) * RATE)
                while i < due:
                    app.on_envelope(envs[i % len(envs)])
                    i += 1
                await asyncio.sleep(0.005)

        task = asyncio.create_task(pump())
        end = time.perf_counter() + SECONDS
        inp = app.query_one("#task")
        while time.perf_counter() < end:
            before = inp.value
            t0 = time.perf_counter()
            # post the key the way the terminal driver does, then wait until the input has it
            # (Pilot.press waits for the app to go idle, which a continuous flood never allows)
            app.post_message(events.Key("x", "x"))
            while inp.value == before and time.perf_counter() - t0 < 10:
                await asyncio.sleep(0.001)
            handled = time.perf_counter()
            while not (painted and painted[-1] >= handled) and time.perf_counter() - t0 < 10:
                await asyncio.sleep(0.001)
            lat.append(painted[-1] - t0)
            if len(inp.value) > 50:
                inp.value = ""
            await asyncio.sleep(0.05)
        stop = True
        await task
        growth = rss_mb() - base
    p95 = statistics.quantiles(lat, n=20)[18] * 1000
    return p95, growth


def cold_start_process() -> float:
    """What a user waits for: a fresh interpreter (imports included) until the first paint."""
    t0 = time.time()
    out = subprocess.run([sys.executable, __file__, "--cold-child"], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1]) - t0


async def cold_child() -> None:
    await cold_start(real=True)
    print(PAINTED_AT[0])


async def main() -> None:
    report("ui.cold_start_process", cold_start_process(), "s", "<", 1.0)
    report("ui.cold_start_in_process", await cold_start(), "s", "<", 1.0)
    p95, growth = await flood()
    report("ui.keystroke_p95_under_flood", p95, "ms", "<", 100)
    report("ui.rss_growth_under_flood", growth, "MB", "<", 200)
    EMPTY.unlink(missing_ok=True)


if __name__ == "__main__":
    asyncio.run(cold_child() if sys.argv[1:] == ["--cold-child"] else main())
