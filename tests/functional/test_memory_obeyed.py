"""Issue #13 items 5–9: memory that is written is obeyed. Real LevelDB, the real CLI for
`remember`, the fake LLM over HTTP, real tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from agentui.clock import SystemClock
from agentui.contracts import ConfirmationChoice
from agentui.ids import UuidIds
from agentui.memory import ENV_LOCAL, intent_space, open_memory
from tests.functional.pipeline import (
    call,
    finish,
    infeasible,
    merge,
    perceive,
    plan,
    run_task,
    sub,
    verdicts,
)

FAST = {"ggs": {"time_budget_ms": 10**9}}


def checks_run(tmp_path) -> list[dict]:
    """The task-criterion checks code ran, as the task log recorded them."""
    return [d for f in sorted((tmp_path / "data" / "tasks").glob("*.jsonl"))
            for d in map(json.loads, f.read_text().splitlines()) if d.get("kind") == "check_result"]


def cli_memory(data, *args):
    return subprocess.run([sys.executable, "-m", "agentui.cli", "--data-dir", str(data), "memory", *args],
                          capture_output=True, text=True, env=dict(os.environ), timeout=60)


def _happy(fake, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    for name in ("a.txt", "b.txt"):
        (ws / name).write_text("x\n")
    fake.script("perceiver", [perceive("count the txt files")])
    # a question's plan carries a check that prints the answer, by another method than the step's
    fake.script("planner", [plan(["the count is given"], sub("count .txt files", "a number is reported",
                                                             tools=["shell"]), checks=["ls *.txt | wc -l"])])
    fake.script("executor", [call("shell", command="find . -name '*.txt' | wc -l"), finish("2")])
    fake.script("agent_validator", [verdicts("pass", quote="2")])
    fake.script("meta_validator", [merge("2", "pass")])


async def test_remembered_rule_reaches_the_next_planner_prompt(fakellm, tmp_path):
    r = cli_memory(tmp_path / "data", "remember", "always answer in French")
    assert r.returncode == 0, r.stderr
    r = cli_memory(tmp_path / "data", "remember", "--space", "tool:shell", "--avoid", "never pipe curl into sh")
    assert r.returncode == 0, r.stderr
    _happy(fakellm, tmp_path)
    mem = open_memory(tmp_path / "data" / "memory.leveldb", SystemClock(), UuidIds())
    res = await run_task(fakellm, tmp_path, "how many txt files?", memory=mem, **FAST)
    assert res.final.directive.value == "accept"
    # the answer R4b named, confirmed by the plan's own check that code ran through the gate
    assert res.final.answer == "2"
    assert [(c["command"], c["ran"], c["output"].strip()) for c in checks_run(tmp_path)] == \
        [("ls *.txt | wc -l", True, "2")]
    planner_prompt = fakellm.calls("planner")[0]["messages"][1]["content"]
    assert "always answer in French" in planner_prompt
    executor_prompt = fakellm.calls("executor")[0]["messages"][1]["content"]
    assert "never pipe curl into sh" in executor_prompt  # the subtask is offered shell


async def test_memory_constraint_is_enforced_by_the_plan_validator_and_the_executor(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "settings.ini").write_text("port=1\n")
    (ws / "config.ini").write_text("port=8080\n")
    mem = open_memory(tmp_path / "memory.leveldb", SystemClock(), UuidIds())
    # a consolidated Constraint (the Dreamer's output): read_file on settings.ini keeps failing
    mem.remember("Constraint — avoid: settings.ini is stale", level="C", space="tool:read_file",
                 entity=f"path:{ws / 'settings.ini'}", sigma=-1.0)
    fakellm.script("perceiver", [perceive("print the port")])
    fakellm.script("planner", [
        plan(["the port is printed"], sub("read settings.ini", "the port is shown", tools=["read_file"]),
             checks=["cut -d= -f2 settings.ini"]),
        plan(["the port is printed"], sub("read the port from a config file", "the port is shown",
                                          tools=["read_file"]), checks=["cut -d= -f2 config.ini"]),
    ])
    fakellm.script("executor", [call("read_file", path="settings.ini"), call("read_file", path="config.ini"),
                                finish("port=8080")])
    fakellm.script("agent_validator", [verdicts("pass", quote="port=8080")])
    fakellm.script("meta_validator", [merge("8080", "pass")])
    r = await run_task(fakellm, tmp_path, "which port?", memory=mem, **FAST)
    reask = fakellm.calls("planner")[1]["messages"][1]["content"]
    assert "memory says must not be done" in reask and "settings.ini" in reask
    assert [s.intent for s in r.of("SubTask")] == ["read the port from a config file"]
    ex = fakellm.calls("executor")[1]["messages"]
    assert any("memory says read_file on 'settings.ini' must not be done" in m["content"] for m in ex)
    [res] = r.of("ExecutionResult")
    assert [c.target for c in res.tool_calls] == [str(ws / "config.ini")]  # the refused call never ran
    assert r.final.directive.value == "accept" and r.final.answer == "8080"


def _mixed_record(mem, intent):
    space = intent_space(intent)
    mem.remember("accept: it worked", level="M", space=space, entity=ENV_LOCAL, sigma=1.0, f=0.9, k=0.05)
    mem.remember("abandon: it failed", level="M", space=space, entity=ENV_LOCAL, sigma=-1.0, f=0.9, k=0.05)


async def test_caution_asks_before_the_plan_runs_and_a_no_ends_the_task(fakellm, tmp_path):
    mem = open_memory(tmp_path / "memory.leveldb", SystemClock(), UuidIds())
    _mixed_record(mem, "count the txt files")
    _happy(fakellm, tmp_path)
    asked = []

    async def deny(req):
        asked.append(req)
        return ConfirmationChoice.DENY

    r = await run_task(fakellm, tmp_path, "how many txt files?", memory=mem, confirm=deny, **FAST)
    assert len(asked) == 1 and asked[0].tool == "plan" and "mixed record" in asked[0].reasons[0]
    assert r.final.directive.value == "abandon" and r.final.replans == 0
    assert fakellm.calls("executor") == []  # nothing ran
    assert len(fakellm.calls("planner")) == 1  # a "no" is not replanned
    # the summary says why, and blames no role that never ran (an outside tester, #13)
    assert r.final.summary.startswith("Abandoned: you did not confirm going ahead.") and "R4b" not in r.final.summary


async def test_caution_approved_proceeds(fakellm, tmp_path):
    mem = open_memory(tmp_path / "memory.leveldb", SystemClock(), UuidIds())
    _mixed_record(mem, "count the txt files")
    _happy(fakellm, tmp_path)

    async def approve(_req):
        return ConfirmationChoice.APPROVE

    r = await run_task(fakellm, tmp_path, "how many txt files?", memory=mem, confirm=approve, **FAST)
    assert [x.tool for x in r.of("ConfirmationRequest")] == ["plan"]
    assert r.final.directive.value == "accept"


async def test_relative_blocked_target_is_refused_by_the_plan_validator(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.ini").write_text("port=8080\n")
    fakellm.script("perceiver", [perceive("print the port from settings")])
    fakellm.script("planner", [
        plan(["the port is printed"], sub("read settings.ini", "the port is shown", tools=["read_file"]),
             checks=["cut -d= -f2 settings.ini"]),
        plan(["the port is printed"], sub("read settings.ini again", "the port is shown", tools=["read_file"]),
             checks=["cut -d= -f2 settings.ini"]),
        plan(["the port is printed"], sub("read config.ini", "the port is shown", tools=["read_file"]),
             checks=["cut -d= -f2 config.ini"]),
    ])
    fakellm.script("executor", [call("read_file", path="settings.ini"), infeasible("settings.ini does not exist"),
                                call("read_file", path="config.ini"), finish("port=8080")])
    fakellm.script("agent_validator", [verdicts("pass", quote="port=8080")])
    fakellm.script("meta_validator", [merge("8080", "pass")])
    r = await run_task(fakellm, tmp_path, "what port?", **FAST)
    reask = fakellm.calls("planner")[2]["messages"][1]["content"]
    assert "repeats the blocked target 'settings.ini' with read_file" in reask
    assert [s.intent for s in r.of("SubTask")] == ["read settings.ini", "read config.ini"]
    assert r.final.directive.value == "accept" and r.final.answer == "8080"


async def test_a_blocked_query_named_in_a_step_that_may_read_the_file_is_not_a_repeat(fakellm, tmp_path, monkeypatch):
    # wall-settings on the 1.5B model: web_search 'settings.ini' failed offline, and every
    # "Read settings.ini" plan after it — read_file among its tools — was rejected as repeating the
    # blocked target, to abandon. The step runs; the executor refuses the blocked call itself
    ws = tmp_path / "ws"
    (ws / "conf").mkdir(parents=True)
    (ws / "conf" / "settings.ini").write_text("[main]\nmode = turbo\n")
    read = sub("Read settings.ini and tell me the value of mode", "the value of mode is reported",
               tools=["read_file", "web_search"])
    fakellm.script("perceiver", [perceive("Read settings.ini and tell me the value of mode.")])
    fakellm.responder("planner", lambda _r: plan(["the value of mode is reported"], read))

    def executor(r):  # the web first, as the 1.5B executor did; then what the refusal leaves
        last = r["messages"][-1]["content"]
        if "mode = turbo" in last:
            return finish("turbo")
        if "is blocked for this task" in last or "REFUSED" in last:
            return call("read_file", path="conf/settings.ini")
        if "offline" in last or "could not reach" in last:
            return infeasible("offline")
        return call("web_search", query="settings.ini")
    fakellm.responder("executor", executor)
    fakellm.responder("agent_validator", lambda r: verdicts("pass", quote="mode = turbo")
                      if "mode = turbo" in r["messages"][-1]["content"] else verdicts("fail:environmental"))
    fakellm.responder("meta_validator", lambda _r: merge("turbo", "pass"))
    monkeypatch.setenv("AGENTUI_WEB_SEARCH_URL", "http://127.0.0.1:9/html/")  # offline, as on the bench

    async def approve(_req):
        return ConfirmationChoice.APPROVE
    r = await run_task(fakellm, tmp_path, "Read settings.ini and tell me the value of mode.", confirm=approve, **FAST)
    first = r.of("PlanDirective")[0]
    assert first.directive.value == "change_path" and "web_search:settings.ini" in first.blocked_targets
    assert len(fakellm.calls("planner")) == 2  # the replan ran; no re-ask for a repeated target
    assert all(not (m.planner_error or "") for m in r.of("DispatchManifest"))
    assert any("is blocked for this task" in c["messages"][-1]["content"] for c in fakellm.calls("executor"))
    assert r.final.directive.value == "accept" and "turbo" in str(r.final.output)


async def test_a_blocked_target_named_in_a_step_with_only_its_tool_is_still_a_repeat(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    fakellm.script("perceiver", [perceive("what is new on example.org?")])
    # each plan carries a check, so no plan is re-asked for one and the replies stay in step
    fakellm.script("planner", [
        plan(["news reported"], sub("web_search example.org news", "news shown", tools=["web_search"]),
             checks=["ls"]),
        plan(["news reported"], sub("web_search example.org news again", "news shown", tools=["web_search"]),
             checks=["ls"]),
        plan(["news reported"], sub("say it cannot be reached", "the reason is shown", tools=["read_file"]),
             checks=["ls"]),
    ])
    fakellm.script("executor", [call("web_search", query="example.org news"), infeasible("offline"),
                                finish("example.org cannot be reached offline")])
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", quote="offline"))
    fakellm.responder("meta_validator", lambda _r: merge("offline", "pass"))
    await run_task(fakellm, tmp_path, "what is new on example.org?", **FAST)
    reask = fakellm.calls("planner")[2]["messages"][1]["content"]
    assert "repeats the blocked target 'example.org news' with web_search" in reask


async def test_empty_search_becomes_a_blocked_target_when_its_criterion_failed(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("find the budget spreadsheet")])
    fakellm.responder("planner", lambda _r: plan(["the spreadsheet is found"],
                                                 sub("search for budget", "the path of the spreadsheet is given",
                                                     tools=["file_search"])))
    fakellm.responder("executor", lambda r: call("file_search", query="budget")
                      if len(r["messages"]) == 2 else finish("nothing found"))
    fakellm.responder("agent_validator", lambda _r: verdicts("fail:environmental"))
    r = await run_task(fakellm, tmp_path, "where is the budget?", ggs={"max_replans": 1, "time_budget_ms": 10**9})
    res = r.of("ExecutionResult")[0]
    assert res.tool_calls[0].ok and "no files matching" in res.tool_calls[0].evidence
    d = r.of("PlanDirective")[0]
    assert d.directive.value == "change_path" and d.blocked_targets == ["file_search:budget"]
    assert ("tool:file_search", "path:budget") in {(m.space, m.entity) for m in r.of("Megram")}


async def test_recovered_environmental_error_does_not_mask_a_logical_failure(fakellm, tmp_path):
    # the first call hit a missing file, the second worked, the answer was wrong: that is logical
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("a\nb\nc\n")
    fakellm.script("perceiver", [perceive("count the lines")])
    fakellm.responder("planner", lambda _r: plan(["the count is given"], sub("count lines", "the count is right",
                                                                            tools=["read_file"])))
    fakellm.responder("executor", lambda r: {2: call("read_file", path="note.txt"),
                                             4: call("read_file", path="notes.txt")}.get(len(r["messages"]),
                                                                                         finish("7")))
    fakellm.responder("agent_validator", lambda _r: verdicts("fail:logical"))
    r = await run_task(fakellm, tmp_path, "lines?", ggs={"max_replans": 1, "time_budget_ms": 10**9})
    v = r.of("SubTaskOutcome")[0].criteria_verdicts[0]
    assert v.failure_class.value == "logical"
    assert r.of("PlanDirective")[0].loss.P == 1.0


def test_memory_remember_default_space_is_the_one_every_plan_reads(tmp_path):
    from agentui.commands.memory import USER_SPACE as CLI_SPACE
    from agentui.roles.calibration import USER_SPACE

    assert CLI_SPACE == USER_SPACE


async def test_planner_uses_ggs_blocked_list_as_given(fakellm, tmp_path):
    # round 1 hits a missing file (change_path blocks it); round 2's answer is logically wrong
    # (change_approach: another method, no targets). R2 used to keep re-accumulating every target.
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "b.ini").write_text("port=1\n")
    (ws / "c.ini").write_text("port=8080\n")
    fakellm.script("perceiver", [perceive("print the port")])
    fakellm.script("planner", [
        plan(["the port is printed"], sub("read a.ini", "the port is shown", tools=["read_file"]),
             checks=["cut -d= -f2 a.ini"]),
        plan(["the port is printed"], sub("read b.ini", "the port is shown", tools=["read_file"]),
             checks=["cut -d= -f2 b.ini"]),
        plan(["the port is printed"], sub("grep the port with shell", "the port is shown", tools=["shell"]),
             checks=["cut -d= -f2 c.ini"]),
    ])
    fakellm.script("executor", [call("read_file", path="a.ini"), infeasible("a.ini does not exist"),
                                call("read_file", path="b.ini"), finish("port=1"),
                                call("shell", command="grep port= c.ini"), finish("port=8080")])
    fakellm.script("agent_validator", [verdicts("fail:logical"), verdicts("pass", quote="port=8080")])
    fakellm.script("meta_validator", [merge("8080", "pass")])
    r = await run_task(fakellm, tmp_path, "which port?", **FAST)
    ds = r.of("PlanDirective")
    assert [d.directive.value for d in ds][:2] == ["change_path", "change_approach"]  # v0.8: no targets
    assert ds[1].blocked_targets == []
    third = fakellm.calls("planner")[2]["messages"][1]["content"]
    assert "read_file:a.ini" not in third.split("Why:")[0]  # not in the MUST NOT list any more
    assert r.final.directive.value == "accept" and r.final.answer == "8080"
