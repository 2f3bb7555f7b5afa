"""Issue #14: the audit log records every approval with its scope and pattern, and remembered
`tool:` rules reach the gate (#13 item 8). A real Runtime on a real bus, the fake LLM over HTTP,
real tools, real LevelDB memory, the real `agentui audit` and `agentui memory remember` CLIs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from agentui.clock import SystemClock
from agentui.contracts import ConfirmationChoice
from agentui.ids import UuidIds
from agentui.memory import open_memory
from agentui.roles.auditor import AuditLog
from agentui.tools.answers import Answer, auto
from agentui.tools.sandbox import detect
from tests.functional.pipeline import call, finish, merge, perceive, plan, run_task, sub, verdicts

FAST = {"ggs": {"time_budget_ms": 10**9}}


def cli(data, *args):
    return subprocess.run([sys.executable, "-m", "agentui.cli", "--data-dir", str(data), *args],
                          capture_output=True, text=True, env=dict(os.environ), timeout=60)


def _script(fake, *commands: str) -> None:
    fake.script("perceiver", [perceive("tidy the repo")])
    fake.script("planner", [plan(["it is tidy"], sub("tidy the repo", "the repo is tidy", tools=["shell"]))])
    fake.script("executor", [*(call("shell", command=c) for c in commands), finish("tidy")])
    fake.script("agent_validator", [verdicts("pass", quote="tidy")])
    fake.script("meta_validator", [merge("tidy", "pass")])


async def test_every_gate_outcome_reaches_the_audit_log(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("keep")
    sandboxed = detect().active

    async def person(req):  # noqa: ANN001, ANN202 - a person at the prompt, or --yes for `npm test`
        if req.command == "git init -q":
            return ConfirmationChoice.PROJECT
        if req.command == "npm test":
            return auto(req, yes=True, unconfined=False) or Answer(ConfirmationChoice.DENY, "unattended")
        return ConfirmationChoice.DENY

    _script(fakellm, "git init -q", "git init --quiet", "make build", "cp a.txt /opt/agentui-audit-test/a.txt",
            "npm test")
    r = await run_task(fakellm, tmp_path, "tidy the repo", confirm=person, **FAST)
    # (how the task ends does not matter here: `make build` was denied, the replan has no script)
    records = AuditLog(tmp_path / "data" / "audit").approvals()
    got = [(a.command, a.decision, a.scope, a.by, a.patterns) for a in records]
    assert got == [
        ("git init -q", "approved", "project", "user", ["git init"]),  # asked; the pattern it stored
        ("git init --quiet", "approved", "project", "stored", ["git init"]),  # the project allow-list answered
        ("make build", "denied", None, "user", []),
        ("cp a.txt /opt/agentui-audit-test/a.txt", "refused", None, "hard-deny", []),
        ("npm test", "approved", "once", "yes", []) if sandboxed else ("npm test", "denied", None, "unattended", []),
    ]
    assert {a.task_id for a in records} == {r.end.task_id} and all(a.tool == "shell" and a.ts for a in records)
    assert all(a.subtask_id for a in records) and all(a.evidence for a in records)
    assert "writes outside the workspace" in records[3].reasons[0]

    shown = cli(tmp_path / "data", "audit", "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert [(a["command"], a["decision"], a["scope"], a["by"]) for a in doc["approvals"]] == \
        [(c, d, s, b) for c, d, s, b, _ in got]
    assert doc["approvals"][0]["patterns"] == ["git init"] and doc["approvals_by_decision"]["refused"] == 1
    assert doc["events_by_kind"].get("approval") is None  # approvals are records, not anomalies
    text = cli(tmp_path / "data", "audit", "--task", r.end.task_id[:8])
    assert text.returncode == 0, text.stderr
    assert "approvals 5:" in text.stdout and "[pattern: git init]" in text.stdout
    assert "refused" in text.stdout and "hard-deny" in text.stdout and "by stored" in text.stdout
    # an id no task here has is an error, not "none recorded" (a known task without approvals:
    # test_newcomer_cli.test_audit_for_an_unknown_task_says_so)
    unknown = cli(tmp_path / "data", "audit", "--task", "nosuchtask")
    assert unknown.returncode == 2 and "none recorded" not in unknown.stdout
    assert unknown.stderr.strip().startswith("agentui audit: no task 'nosuchtask' in ")
    assert len(unknown.stderr.strip().splitlines()) == 1 and "Traceback" not in unknown.stderr


async def test_remembered_tool_rules_reach_the_gate(fakellm, tmp_path):
    data = tmp_path / "data"
    out = cli(data, "memory", "remember", "--space", "tool:shell", "never: git init")
    assert out.returncode == 0 and "the safety gate refuses every shell command matching `git init`" in out.stdout
    out = cli(data, "memory", "remember", "--space", "tool:shell", "ask: cat")
    assert out.returncode == 0 and "asks a person before every shell command matching `cat`" in out.stdout
    out = cli(data, "memory", "remember", "--space", "tool:shell", "keep commits small")
    assert out.returncode == 0 and "only the executor's prompt shows it" in out.stdout
    out = cli(data, "memory", "--json", "remember", "--space", "tool:shell", "never: git push")
    assert out.returncode == 0 and "refuses" in json.loads(out.stdout)["gate"]
    assert "gate" not in json.loads(cli(data, "memory", "--json", "remember", "a user rule").stdout)

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("keep")
    asked = []

    async def yes(req):  # noqa: ANN001, ANN202 - `agentui run --yes --unconfined`: approves all it may
        asked.append(req.command)
        return auto(req, yes=True, unconfined=True) or Answer(ConfirmationChoice.DENY, "unattended")

    _script(fakellm, "git init -q", "cat a.txt", "head -c 2 a.txt")
    mem = open_memory(data / "memory.leveldb", SystemClock(), UuidIds())
    r = await run_task(fakellm, tmp_path, "tidy the repo", confirm=yes, memory=mem, **FAST)
    assert not (ws / ".git").exists()  # never: refused, whatever the answer would have been
    assert asked == ["cat a.txt"]  # ask: a person was asked; --unconfined cannot answer it
    results = [c for e in r.of("ExecutionResult") for c in e.tool_calls]
    assert [c.ok for c in results] == [False, False, True] and "keep" not in results[1].evidence
    assert "a remembered rule for shell says 'never: git init'" in (results[0].error or "")
    records = AuditLog(data / "audit").approvals()
    assert [(a.command, a.decision, a.by) for a in records] == [
        ("git init -q", "refused", "memory-rule"), ("cat a.txt", "denied", "unattended")]
    executor_prompt = fakellm.calls("executor")[0]["messages"][1]["content"]
    assert "keep commits small" in executor_prompt  # free text still reaches the executor
