#!/usr/bin/env python3
"""Build `demo/recording.jsonl`: one scripted task through the real Runtime (fake LLM over HTTP,
real tools in a temporary workspace) that hits an environmental wall, gets a change_path
directive from GGS, and is accepted on the second round. `make demo` replays it."""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentui.config import Config  # noqa: E402
from agentui.ids import SeededIds  # noqa: E402
from agentui.llm import LLMPool  # noqa: E402
from agentui.runtime import Runtime  # noqa: E402
from tests.fakellm import FakeLLM  # noqa: E402
from tests.functional.pipeline import call, finish, infeasible, merge, perceive, plan, sub, verdicts  # noqa: E402


class RecordedClock:
    """Timestamps from a fixed origin that advance in real time, so the recording's wall time and
    the roles' LLM latencies tell the same story (a stepping fake clock made the cost table show
    0.0 s per role against a 25.9 s wall)."""

    def __init__(self, start: datetime) -> None:
        self._start, self._t0 = start, time.monotonic()

    def now(self) -> datetime:
        return self._start + timedelta(seconds=time.monotonic() - self._t0)

    def monotonic(self) -> float:
        return time.monotonic()


def paced(replies: list, *delays: float) -> list:
    """A model's thinking time per reply (seconds), so the demo has a realistic pace."""
    for r, d in zip(replies, delays, strict=True):
        r.delay_s = d
    return replies


async def main() -> None:
    # a fixed workspace path, so the recording (and the snapshots built on it) is reproducible
    tmp = Path(tempfile.gettempdir()) / "agentui-demo"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    with FakeLLM() as fake:
        ws = tmp / "ws"
        ws.mkdir()
        (ws / "config.ini").write_text("[server]\nport = 8080\n")
        fake.script("perceiver", paced([perceive("report the configured server port")], 1.2))
        fake.script("planner", paced([
            plan(["the answer states the configured port"],
                 sub("Read settings.ini and report the port", "the port value is shown", tools=["read_file"])),
            plan(["the answer states the configured port"],
                 sub("Find the config file with glob and read the port from it", "the port value is shown")),
        ], 2.1, 1.8))
        fake.script("executor", paced([
            call("read_file", path="settings.ini"), infeasible("settings.ini does not exist"),
            call("glob", pattern="*.ini"), call("read_file", path="config.ini"), finish("port = 8080"),
        ], 0.9, 0.7, 0.8, 0.6, 0.7))
        fake.script("agent_validator", paced([verdicts("pass")], 0.9))
        fake.script("meta_validator", paced([merge("The server port is 8080 (config.ini).", "pass",
                                                   summary="The configured port is 8080")], 1.1))
        cfg = Config.model_validate({"llm": {"base_url": fake.base_url, "max_retries": 0},
                                     "pipeline": {"correction_budget": 0}, "ggs": {"time_budget_ms": 10**9},
                                     "memory": {"dreamer_interval_s": 0}})
        clock = RecordedClock(datetime(2026, 1, 1, tzinfo=UTC))
        rt = Runtime(cfg, workspace=ws, data_dir=tmp / "data", pool=LLMPool(cfg), clock=clock,
                     ids=SeededIds(2026, readable=True))
        end = await rt.run_task("What port is the server configured to use?", timeout=60)
        await rt.stop()
        assert end.final is not None and end.final.directive.value == "accept", end
        out = ROOT / "demo" / "recording.jsonl"
        out.parent.mkdir(exist_ok=True)
        shutil.copy(tmp / "data" / "recordings" / f"{end.task_id}.bus.jsonl", out)
    shutil.rmtree(tmp, ignore_errors=True)
    print(out)


if __name__ == "__main__":
    asyncio.run(main())
