"""Memory's Caution band is a pause, not a wall: `run --yes` is the go-ahead for it (logged as such),
and that go-ahead approves no command the safety gate asks about. A real `agentui run` process, the
fake LLM over HTTP, a real LevelDB store in the data dir."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

from agentui.clock import SystemClock
from agentui.ids import UuidIds
from agentui.memory import ENV_LOCAL, intent_space, open_memory
from agentui.tools.answers import auto
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts


def _mixed_record(data, intent: str) -> None:
    async def seed() -> None:
        mem = open_memory(data / "memory.leveldb", SystemClock(), UuidIds())
        space = intent_space(intent)
        mem.remember('worked (accept) for "count files": 1 step(s) [shell]', level="M", space=space,
                     entity=ENV_LOCAL, sigma=1.0, f=0.9, k=0.05)
        mem.remember('failed (abandon) for "count files": avoid glob `**/*.txt` (no usable result)', level="M",
                     space=space, entity=ENV_LOCAL, sigma=-1.0, f=0.9, k=0.05)
        await mem.close()

    asyncio.run(seed())


def _run(fake, ws, data, *flags):
    env = {**os.environ, "AGENTUI_BASE_URL": fake.base_url}
    return subprocess.run([sys.executable, "-m", "agentui.cli", "run", "--json", *flags, "--workspace", str(ws),
                           "--data-dir", str(data), "how many txt files are there?"],
                          capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)


def _log(data, tid):
    return [json.loads(x) for x in (data / "tasks" / f"{tid}.jsonl").read_text().splitlines()]


def _script(fake, command: str, answer: str) -> None:
    fake.script("perceiver", [perceive("count files")])
    fake.script("planner", [plan(["the count is given"], sub(f"Count with: {command}", "a number", tools=["shell"]),
                                 checks=[command])])
    fake.script("executor", [call("shell", command=command), finish(answer)])
    fake.script("agent_validator", [verdicts("pass", quote=answer)])
    fake.script("meta_validator", [merge(answer, "pass")])


def test_yes_is_the_go_ahead_for_a_caution_band(fakellm, tmp_path):
    ws, data = tmp_path / "ws", tmp_path / "d"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    _mixed_record(data, "count files")
    _script(fakellm, "ls *.txt | wc -l", "1")
    r = _run(fakellm, ws, data, "--yes")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["final"]["directive"] == "accept"
    log = _log(data, doc["task_id"])
    [cal] = [x for x in log if x["kind"] == "memory_calibration"]
    assert cal["potentials"]["action"] == "Caution"
    assert [(x["go_ahead"], x["by"]) for x in log if x["kind"] == "memory_caution"] == [(True, "yes")]


def test_without_yes_an_unattended_run_still_stops_at_caution(fakellm, tmp_path):
    ws, data = tmp_path / "ws", tmp_path / "d"
    ws.mkdir()
    _mixed_record(data, "count files")
    _script(fakellm, "ls *.txt | wc -l", "1")
    r = _run(fakellm, ws, data)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["final"]["summary"].startswith("Abandoned: you did not confirm going ahead.")
    assert fakellm.calls("executor") == []


def test_the_caution_go_ahead_approves_no_command_the_gate_asks_about(fakellm, tmp_path):
    ws, data = tmp_path / "ws", tmp_path / "d"
    ws.mkdir()
    _mixed_record(data, "count files")
    # a secret path: the gate asks a person whatever --yes says
    _script(fakellm, "cat ~/.ssh/id_rsa | wc -l", "1")
    r = _run(fakellm, ws, data, "--yes")
    doc = json.loads(r.stdout)
    log = _log(data, doc["task_id"])
    assert [(x["go_ahead"], x["by"]) for x in log if x["kind"] == "memory_caution"] == [(True, "yes")]
    gate = [x["decision"] for x in log if x["kind"] in ("approval", "confirmation") and x["tool"] == "shell"]
    assert gate and not {"approve", "approved"} & set(gate)
    tool = [x for x in log if x["kind"] == "tool" and x["tool"] == "shell"]
    assert tool and all(not x["ok"] and "refused by the safety gate" in x["error"] for x in tool)


def test_auto_answers_caution_only_with_yes_and_never_a_command_by_it():
    from agentui.contracts import ConfirmationRequest

    caution = ConfirmationRequest(request_id="r", task_id="t", tool="plan", command="count", reasons=["mixed"],
                                  caution=True)
    assert auto(caution, yes=True, unconfined=False).by == "yes"
    assert auto(caution, yes=False, unconfined=False) is None
    # the same tool and command, asked by the gate (not sandboxed): --yes gives no answer
    gate = caution.model_copy(update={"caution": False})
    assert auto(gate, yes=True, unconfined=False) is None
