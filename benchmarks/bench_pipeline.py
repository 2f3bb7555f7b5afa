"""Orchestration overhead per task (DESIGN §8: < 50 ms, LLM and tool time excluded).

A whole task — R1, R2, dispatcher, R3, R4a, R4b, GGS, memory write, Auditor, task log and bus
recording — runs on the real Runtime with an in-process backend that answers instantly, so what
is left of the wall time is orchestration. Two shapes: first-try accept, and a change_path replan.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from _report import report

from agentui.config import Config
from agentui.llm import ChatResult, LLMPool
from agentui.runtime import Runtime

ACCEPT = {
    "perceiver": [{"kind": "task", "intent": "count the txt files"}],
    "planner": [{"task_criteria": [{"criterion": "a count"}],
                 "subtasks": [{"intent": "count", "success_criteria": [{"criterion": "a number"}]}]}],
    "executor": [{"tool": "finish", "output": "2"}],
    "agent_validator": [{"verdicts": [{"verdict": "pass"}]}],
    "meta_validator": [{"merged_output": "2", "summary": "2", "verdicts": [{"verdict": "pass"}]}],
}
REPLAN = {
    **ACCEPT,
    "planner": ACCEPT["planner"] * 2,
    "executor": [{"tool": "infeasible", "output": "no such file"}, {"tool": "finish", "output": "2"}],
}


class Instant:
    url = "instant:"
    model = "instant"
    format_mode = "json_object_schema"

    def __init__(self, script: dict[str, list]) -> None:
        self.queues = {k: list(v) for k, v in script.items()}
        self.llm_seconds = 0.0

    async def complete(self, messages, *, role, max_tokens, temperature, response_format, timeout_s=None):  # noqa: ANN001
        t0 = time.perf_counter()
        q = self.queues[role]
        reply = q.pop(0) if len(q) > 1 else q[0]
        res = ChatResult(text=json.dumps(reply), finish_reason="stop", prompt_tokens=100, completion_tokens=10)
        self.llm_seconds += time.perf_counter() - t0
        return res

    async def list_models(self, *, timeout_s):  # noqa: ANN001
        return ["instant"]

    async def aclose(self) -> None:
        pass


async def one(script: dict[str, list], tmp: Path) -> float:
    cfg = Config.model_validate({"pipeline": {"correction_budget": 0}, "ggs": {"time_budget_ms": 10**9},
                                 "memory": {"dreamer_interval_s": 0}})
    backend = Instant(script)
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    rt = Runtime(cfg, workspace=ws, data_dir=tmp / "data", pool=LLMPool(cfg, backend=backend))
    await rt.start()
    t0 = time.perf_counter()
    end = await rt.run_task("how many txt files?", timeout=30)
    wall = time.perf_counter() - t0
    stats = rt.task_stats(end.task_id)
    await rt.stop()
    assert end.final is not None, end
    return wall - backend.llm_seconds - stats["tool_seconds"]


async def main() -> None:
    for name, script, rounds in (("accept", ACCEPT, 1), ("replan", REPLAN, 2)):
        samples = []
        with tempfile.TemporaryDirectory() as d:
            for i in range(25):
                sub = Path(d) / str(i)
                sub.mkdir()
                samples.append(await one(script, sub))
        med = statistics.median(samples[5:]) * 1000  # after warm-up
        report(f"pipeline.overhead_{name}", med, "ms/task", "<", 50 * rounds)


if __name__ == "__main__":
    asyncio.run(main())
