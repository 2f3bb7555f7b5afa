#!/usr/bin/env python3
"""Build `demo/recording.jsonl`: one scripted task through the real Runtime (fake LLM over HTTP,
real tools in a temporary workspace) that hits an environmental wall, gets a change_path
directive from GGS, and is accepted on the second round. `make demo` replays it."""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentui.clock import FakeClock  # noqa: E402
from agentui.config import Config  # noqa: E402
from agentui.ids import SeededIds  # noqa: E402
from agentui.llm import LLMPool  # noqa: E402
from agentui.runtime import Runtime  # noqa: E402
from tests.fakellm import FakeLLM  # noqa: E402
from tests.functional.pipeline import call, finish, infeasible, merge, perceive, plan, sub, verdicts  # noqa: E402


async def main() -> None:
    # a fixed workspace path, so the recording (and the snapshots built on it) is reproducible
    tmp = Path(tempfile.gettempdir()) / "agentui-demo"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    with FakeLLM() as fake:
        ws = tmp / "ws"
        ws.mkdir()
        (ws / "config.ini").write_text("[server]\nport = 8080\n")
        fake.script("perceiver", [perceive("report the configured server port")])
        fake.script("planner", [
            plan(["the answer states the configured port"],
                 sub("Read settings.ini and report the port", "the port value is shown", tools=["read_file"])),
            plan(["the answer states the configured port"],
                 sub("Find the config file with glob and read the port from it", "the port value is shown")),
        ])
        fake.script("executor", [
            call("read_file", path="settings.ini"), infeasible("settings.ini does not exist"),
            call("glob", pattern="*.ini"), call("read_file", path="config.ini"), finish("port = 8080"),
        ])
        fake.script("agent_validator", [verdicts("pass")])
        fake.script("meta_validator", [merge("The server port is 8080 (config.ini).", "pass",
                                             summary="The configured port is 8080")])
        cfg = Config.model_validate({"llm": {"base_url": fake.base_url, "max_retries": 0},
                                     "pipeline": {"correction_budget": 0}, "ggs": {"time_budget_ms": 10**9},
                                     "memory": {"dreamer_interval_s": 0}})
        clock = FakeClock(step=0.35)
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
