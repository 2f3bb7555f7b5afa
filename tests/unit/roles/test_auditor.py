"""Each R6 detector, fed recorded-style bus sequences: exactly the expected events, no others."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from agentui.bus import Bus
from agentui.clock import FakeClock
from agentui.config import Config
from agentui.contracts import (
    DispatchManifest,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMUsage,
    Loss,
    Megram,
    PlanDirective,
    ReplanRequest,
    Role,
    SubTask,
    SubTaskOutcome,
    ToolCallRecord,
)
from agentui.ids import SeededIds
from agentui.roles.auditor import AuditCore, AuditLog, Auditor

R = Role
CFG = Config()


class Feed:
    def __init__(self, cfg: Config = CFG) -> None:
        self.core = AuditCore(cfg, FakeClock(), SeededIds(1, readable=True))
        self.n = 0
        self.events = []

    def send(self, sender, receiver, payload, task="t1", now=0.0):
        self.n += 1
        env = Envelope(id=f"m{self.n}", ts="2026-01-01T00:00:00.000Z", task_id=task, sender=sender,
                       receiver=receiver, type=type(payload).__name__, payload=payload)
        self.events += self.core.observe(env, now)
        return env

    def tick(self, now):
        self.events += self.core.tick(now)

    @property
    def kinds(self):
        return [e.kind.value for e in self.events]


def sub(sid="s1"):
    return SubTask(subtask_id=sid, parent_task_id="t1", intent="x", success_criteria=[{"criterion": "c"}])


def final(**kw):
    return FinalResult(task_id="t1", summary="ok", loss=Loss(D=0, P=0, Omega=0, L=0), directive="accept", **kw)


def directive(d="change_path", D=1.0, grad=0.0, omega=0.2):
    return PlanDirective(task_id="t1", loss=Loss(D=D, P=0.0, Omega=omega, L=0.5), prev_directive="init",
                         directive=d, grad_l=grad)


def test_clean_sequence_has_no_events():
    f = Feed()
    f.send(
        R.USER, R.PERCEIVER, __import__("agentui.contracts", fromlist=["UserInput"]).UserInput(task_id="t1", text="x")
    )
    f.send(R.PLANNER, R.EXECUTOR, sub())
    f.send(R.PLANNER, R.META_VALIDATOR, DispatchManifest(task_id="t1", subtask_ids=["s1"], dispatched_at="x"))
    f.send(R.AGENT_VALIDATOR, R.META_VALIDATOR, SubTaskOutcome(subtask_id="s1", parent_task_id="t1", status="matched"))
    f.send(R.GGS, R.USER, final())
    f.tick(10_000)
    assert f.kinds == []


def test_boundary_violations():
    f = Feed()
    f.send(R.EXECUTOR, R.USER, final())  # only GGS may emit FinalResult
    m = Megram(id="m", created_at="2026-01-01T00:00:00.000Z", space="s", entity="e", content="c", state="accept",
               f=0.9, sigma=1, k=0.05)
    f.send(R.PLANNER, R.MEMORY, m)  # only GGS writes memory
    f.send(R.GGS, R.USER, final())
    assert f.kinds == ["boundary_violation", "boundary_violation", "boundary_violation"]
    assert f.events[2].message == "a second FinalResult for the same task"
    assert f.events[2].evidence == ["m1", "m3"]
    assert all(e.severity.value == "critical" for e in f.events)


def test_duplicate_subtask_ids():
    f = Feed()
    f.send(R.PLANNER, R.EXECUTOR, sub("s1"))
    f.send(R.PLANNER, R.EXECUTOR, sub("s2"))
    f.send(R.PLANNER, R.EXECUTOR, sub("s1"), task="t2")
    assert f.kinds == ["duplicate_subtask_id"] and f.events[0].evidence == ["m1", "m3"]


def test_fan_in_incomplete_after_timeout_once():
    cfg = Config.model_validate({"pipeline": {"fan_in_timeout_s": 60}, "audit": {"stall_timeout_s": 10_000}})
    f = Feed(cfg)
    f.send(R.PLANNER, R.META_VALIDATOR, DispatchManifest(task_id="t1", subtask_ids=["a", "b"], dispatched_at="x"))
    f.send(R.AGENT_VALIDATOR, R.META_VALIDATOR, SubTaskOutcome(subtask_id="a", parent_task_id="t1", status="matched"),
           now=5)
    f.tick(30)
    assert f.kinds == []
    f.tick(61)
    f.tick(120)
    assert f.kinds == ["fan_in_incomplete"] and f.events[0].details["missing"] == ["b"]


def test_excessive_retries():
    f = Feed(Config.model_validate({"pipeline": {"correction_budget": 1}}))
    for attempt in (1, 2, 3):
        f.send(R.EXECUTOR, R.AGENT_VALIDATOR, ExecutionResult(subtask_id="s1", attempt=attempt, status="completed"))
    assert f.kinds == ["excessive_retries"]


def test_drift_when_corrections_grow():
    f = Feed()
    for n in (0, 0, 2):
        f.send(R.META_VALIDATOR, R.GGS, ReplanRequest(task_id="t1", gap_summary="g", correction_count=n))
    assert f.kinds == ["drift"]


def test_convergence_failure_thrashing_and_budget_overrun():
    f = Feed()
    f.send(R.GGS, R.PLANNER, directive("break_symmetry", D=0.8))
    f.send(R.GGS, R.PLANNER, directive("break_symmetry", D=0.8))  # D did not decrease
    f.send(R.GGS, R.PLANNER, directive("break_symmetry", D=0.5))  # it did: no thrashing
    f.send(R.GGS, R.PLANNER, directive("refine", D=0.7, grad=0.3))  # rising loss
    f.send(R.GGS, R.PLANNER, directive("refine", D=0.7, omega=0.85))  # Ω ≥ θ without abandon
    assert f.kinds == ["ggs_thrashing", "convergence_failure", "budget_overrun"]


def test_parse_repair_rate_over_window_reports_once_per_crossing():
    f = Feed(Config.model_validate({"audit": {"window": 4, "parse_repair_rate": 0.5}}))
    for repairs in (1, 1, 1, 0, 1, 1):
        f.send(R.EXECUTOR, R.RUNTIME, LLMUsage(role="executor", parse_repairs=repairs))
    assert f.kinds == ["parse_repair_rate"]
    for _ in range(4):
        f.send(R.EXECUTOR, R.RUNTIME, LLMUsage(role="executor", parse_repairs=0))
    for _ in range(4):
        f.send(R.EXECUTOR, R.RUNTIME, LLMUsage(role="executor", parse_repairs=1))
    assert f.kinds == ["parse_repair_rate", "parse_repair_rate"]


def test_tool_error_rate_per_tool():
    f = Feed(Config.model_validate({"audit": {"window": 4, "tool_error_rate": 0.5}}))
    calls = [ToolCallRecord(tool="shell", ok=False), ToolCallRecord(tool="read_file", ok=True)] * 4
    f.send(R.EXECUTOR, R.AGENT_VALIDATOR, ExecutionResult(subtask_id="s", status="failed", tool_calls=calls))
    assert f.kinds == ["tool_error_rate"] and f.events[0].details["key"] == "shell"


def test_stalled_task():
    f = Feed(Config.model_validate({"audit": {"stall_timeout_s": 100}}))
    f.send(R.PLANNER, R.EXECUTOR, sub())
    f.tick(50)
    f.tick(101)
    f.tick(500)
    f.send(R.PLANNER, R.EXECUTOR, sub("s9"), task="t2", now=500)
    f.send(R.GGS, R.USER, final(), task="t2", now=501)
    f.tick(10_000)
    assert f.kinds == ["stalled_task"] and f.events[0].task_id == "t1"


async def test_auditor_on_the_bus_logs_and_survives_restart(tmp_path):
    bus = Bus()
    a = Auditor(bus, CFG, audit_dir=tmp_path / "audit", tick_s=0.05)
    seen = []
    a.channel.listen(seen.append)
    runner = asyncio.create_task(a.run())
    await bus.publish(R.EXECUTOR, R.USER, final(), task_id="t1")
    await asyncio.sleep(0.05)
    report = a.report()
    await bus.close()
    await runner
    await a.aclose()
    assert [e.kind.value for e in seen if hasattr(e, "kind")] == ["boundary_violation"]
    assert report.events_by_kind == {"boundary_violation": 1} and seen[-1] is report
    log = AuditLog(tmp_path / "audit")
    assert [e.kind.value for e in log.events()] == ["boundary_violation"]
    assert log.stats()["runs"] == 1 and log.stats()["totals"]["messages_seen"] == 1
    # a new process reports what the previous one saw
    env = {**os.environ, "AGENTUI_DATA_DIR": str(tmp_path)}
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "audit", "--json"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["events_by_kind"] == {"boundary_violation": 1} and doc["messages_seen"] == 1
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "audit"], capture_output=True, text=True, env=env,
                       timeout=60)
    assert "boundary_violation" in r.stdout and "executor→user FinalResult" in r.stdout


async def test_auditor_cannot_publish():
    bus = Bus()
    a = Auditor(bus, CFG)
    assert not hasattr(a, "bus") and not hasattr(a.tap, "publish")


async def test_auditor_defers_to_busy_roles_but_not_forever():
    """The Auditor audits when the roles' queues are empty; a role that never reads its queue
    delays it by at most max_defer_s — it cannot silence the Auditor."""
    bus = Bus()
    stuck = bus.subscribe("stuck", types={"FinalResult"})  # never read
    a = Auditor(bus, CFG, tick_s=3600)
    a.max_defer_s = 0.3
    seen = []
    a.channel.listen(seen.append)
    runner = asyncio.create_task(a.run())
    await bus.publish(R.EXECUTOR, R.USER, final(), task_id="t1")  # a boundary violation
    assert bus.backlog() == 1 and a.tap.bus_backlog() == 1
    await asyncio.sleep(0.1)
    assert seen == []  # deferring: a role still has work queued
    await asyncio.sleep(0.5)
    assert [e.kind.value for e in seen] == ["boundary_violation"]
    assert len(stuck._q) == 1
    await bus.close()
    await runner
