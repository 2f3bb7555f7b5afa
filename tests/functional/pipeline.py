"""Harness for whole-task tests: a real Runtime on a real bus, the fake LLM over HTTP, real tools
in a temporary workspace, real task logs. Only the model's replies are scripted."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentui.config import Config
from agentui.contracts import ConfirmationChoice, Envelope
from agentui.ids import SeededIds
from agentui.llm import LLMPool
from agentui.runtime import Runtime, TaskEnd
from tests.fakellm import FakeLLM, Reply


def perceive(intent: str) -> Reply:
    return Reply.json({"kind": "task", "intent": intent, "scope": None})


def plan(task_criteria: list[str], *subtasks: dict[str, Any], checks: list[str] | None = None) -> Reply:
    """A plan reply; `checks[i]` is task criterion i's check (a read-only shell command, run for real)."""
    checks = list(checks or [])
    crits = [{"criterion": c, **({"check": checks[i]} if i < len(checks) and checks[i] else {})}
             for i, c in enumerate(task_criteria)]
    return Reply.json({"task_criteria": crits, "subtasks": list(subtasks)})


def sub(intent: str, *criteria: str, seq: int = 1, tools: list[str] | None = None, mode: str = "verifiable") -> dict:
    return {"intent": intent, "success_criteria": [{"criterion": c, "mode": mode} for c in criteria],
            "sequence": seq, "tools": tools or []}


def call(tool: str, **args: Any) -> Reply:
    return Reply.json({"tool": tool, "args": args})


def finish(output: str) -> Reply:
    return Reply.json({"tool": "finish", "output": output})


def infeasible(why: str) -> Reply:
    return Reply.json({"tool": "infeasible", "output": why})


def verdicts(*vs: str, quote: str = "seen in the output") -> Reply:
    """'pass', 'pass:<evidence>', 'fail:logical', 'fail:environmental'. R4a keeps a verifiable pass
    only when its evidence is found in what the tools returned (#13): `quote` is that evidence."""
    out = []
    for v in vs:
        if v == "pass" or v.startswith("pass:"):
            out.append({"verdict": "pass", "evidence": v[5:] if v.startswith("pass:") else quote})
        else:
            out.append({"verdict": "fail", "failure_class": v.split(":")[1], "evidence": f"not met ({v})",
                        "what_to_do": "do it properly"})
    return Reply.json({"verdicts": out})


def merge(output: str, *vs: str, summary: str = "done", answer: str | None = None) -> Reply:
    """R4b's reply; `answer` (the single answer it names) defaults to `output`."""
    out = []
    for v in vs:
        out.append({"verdict": "pass"} if v == "pass" else
                   {"verdict": "fail", "failure_class": v.split(":")[1], "evidence": "merged result misses it"})
    return Reply.json({"merged_output": output, "answer": output if answer is None else answer,
                       "summary": summary, "verdicts": out})


@dataclass
class Run:
    end: TaskEnd
    envelopes: list[Envelope]
    stats: dict[str, Any]
    runtime: Runtime
    audit: list[Any] = field(default_factory=list)

    @property
    def audit_kinds(self) -> list[str]:
        return [e.kind.value for e in self.audit]

    def types(self, *, skip: tuple[str, ...] = ("LLMUsage", "LLMDelta", "TaskStarted", "Megram", "AuditEvent",
                                                 "AuditReport")) -> list[str]:
        return [e.type for e in self.envelopes if e.type not in skip]

    def of(self, type_: str) -> list[Any]:
        return [e.payload for e in self.envelopes if e.type == type_]

    @property
    def final(self):  # noqa: ANN201
        assert self.end.final is not None, f"no FinalResult: {self.end}"
        return self.end.final


def config_for(fake: FakeLLM, data: Path, **sections: dict[str, Any]) -> Config:
    doc: dict[str, Any] = {"data_dir": str(data), "llm": {"base_url": fake.base_url, "max_retries": 0,
                                                           "backoff_base_s": 0.0}}
    doc.setdefault("pipeline", {})["correction_budget"] = 0
    for k, v in sections.items():
        doc.setdefault(k, {}).update(v)
    return Config.model_validate(doc)


async def run_task(fake: FakeLLM, tmp: Path, text: str, *, timeout: float = 30, confirm: Any = None,
                   clarify: Any = None, memory: Any = None, ablation: str | None = None,
                   **sections: dict[str, Any]) -> Run:
    ws = tmp / "ws"
    ws.mkdir(exist_ok=True)
    cfg = config_for(fake, tmp / "data", **sections)

    async def deny(_req):  # noqa: ANN001, ANN202
        return ConfirmationChoice.DENY

    rt = Runtime(cfg, workspace=ws, data_dir=tmp / "data", pool=LLMPool(cfg), ids=SeededIds(7, readable=True),
                 memory=memory, confirm=confirm or deny, clarify=clarify, ablation=ablation)
    await rt.start()
    tap = rt.bus.tap("test")
    end = await rt.run_task(text, timeout=timeout)
    import asyncio

    await asyncio.sleep(0.05)
    envs = tap.drain()
    stats = rt.task_stats(end.task_id)
    await rt.stop()
    audit = list(rt.auditor.events) if rt.auditor is not None else []
    return Run(end=end, envelopes=envs, stats=stats, runtime=rt, audit=audit)
