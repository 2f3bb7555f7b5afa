"""agentui.history over real task logs and recordings written by a real Runtime (fake LLM over HTTP)."""

from __future__ import annotations

import json

from agentui.history import find_task, list_tasks, load_envelopes, replay_file
from tests.fakellm import Reply
from tests.functional.pipeline import call, finish, merge, perceive, plan, run_task, sub, verdicts

FAST = {"ggs": {"time_budget_ms": 10**9}}


def _happy(fake):
    fake.script("perceiver", [perceive("count the txt files")])
    fake.script(
        "planner", [plan(["the count"], sub("count .txt files", "a number", tools=["shell"]), checks=["echo 2"])]
    )
    fake.script("executor", [call("shell", command="echo 2"), finish("2")])
    fake.script("agent_validator", [verdicts("pass", quote="2")])  # a pass quotes what the tool printed (#13)
    fake.script("meta_validator", [merge("2", "pass", summary="2 txt files")])


async def test_lists_a_finished_task_with_goal_outcome_cost_and_workspace(fakellm, tmp_path):
    _happy(fakellm)
    r = await run_task(fakellm, tmp_path, "how many txt files?", **FAST)
    recs = list_tasks(tmp_path / "data")
    assert [x.task_id for x in recs] == [r.end.task_id]
    rec = recs[0]
    assert rec.goal == "how many txt files?"
    assert rec.outcome == "accept" and rec.summary == "2 txt files"
    assert rec.workspace == str((tmp_path / "ws").resolve())
    assert rec.llm_calls == r.stats["llm_calls"] == 6
    assert rec.prompt_tokens == r.stats["prompt_tokens"] > 0 and rec.tool_calls == 1
    assert rec.wall_s > 0 and rec.started and rec.ended >= rec.started
    assert rec.log is not None and rec.recording is not None
    envs = load_envelopes(rec)
    assert envs[0].type == "TaskStarted" and envs[-1].type in {"FinalResult", "LLMUsage", "Megram", "AuditEvent"}
    assert any(e.type == "FinalResult" for e in envs)
    assert find_task(tmp_path / "data", rec.task_id).goal == rec.goal
    assert find_task(tmp_path / "data", "task-nope") is None


async def test_a_reply_task(fakellm, tmp_path):
    fakellm.script("perceiver", [Reply.json({"kind": "chat", "reply": "A list is mutable; a tuple is not."})])
    r = await run_task(fakellm, tmp_path, "what is the difference between a python list and a tuple?", **FAST)
    recs = list_tasks(tmp_path / "data")
    assert recs[0].task_id == r.end.task_id and recs[0].outcome == "reply"
    assert recs[0].summary.startswith("A list is mutable") and recs[0].llm_calls == 1


def test_damaged_lines_recording_only_and_replay_file(tmp_path):
    data = tmp_path / "data"
    (data / "recordings").mkdir(parents=True)
    started = {"id": "m1", "ts": "2026-01-01T00:00:01.000Z", "task_id": "t1", "sender": "runtime",
               "receiver": "user", "type": "TaskStarted",
               "payload": {"task_id": "t1", "text": "say hi", "workspace": "/w"}}
    usage = {"id": "m2", "ts": "2026-01-01T00:00:03.500Z", "task_id": "t1", "sender": "perceiver",
             "receiver": "runtime", "type": "LLMUsage",
             "payload": {"role": "perceiver", "prompt_tokens": 10, "completion_tokens": 5, "latency_s": 2.0}}
    (data / "recordings" / "t1.bus.jsonl").write_text(
        json.dumps(started) + "\n{not json\n" + json.dumps(usage) + "\n", encoding="utf-8")
    # an older task with only a task log (and a cancel)
    (data / "tasks").mkdir()
    old = dict(started, ts="2025-12-31T00:00:00.000Z", task_id="t0",
               payload={"task_id": "t0", "text": "older", "workspace": "/v"})
    (data / "tasks" / "t0.jsonl").write_text(
        json.dumps({"kind": "envelope", "ts": old["ts"], "envelope": old}) + "\n"
        + json.dumps({"kind": "end", "ts": "2025-12-31T00:00:09.000Z", "cancelled": True,
                      "reason": "aborted from the UI", "stats": {"llm_calls": 0, "wall_s": 9.0}}) + "\n",
        encoding="utf-8")
    recs = list_tasks(data)
    assert [r.task_id for r in recs] == ["t1", "t0"]
    t1, t0 = recs
    assert t1.goal == "say hi" and t1.outcome == "unfinished" and t1.llm_calls == 1 and t1.tokens == 15
    assert t1.wall_s == 2.5 and t1.by_role["perceiver"]["seconds"] == 2.0
    assert t0.outcome == "cancelled" and t0.summary == "aborted from the UI" and t0.wall_s == 9.0
    assert [e.type for e in load_envelopes(t1)] == ["TaskStarted", "LLMUsage"]
    assert replay_file(t1, tmp_path / "scratch") == t1.recording
    p = replay_file(t0, tmp_path / "scratch")
    assert p is not None and p.read_text(encoding="utf-8").count("\n") == 1
    assert len(list_tasks(data, limit=1)) == 1
    assert list_tasks(tmp_path / "nothing-here") == []


async def test_a_tasks_session_turns_are_the_turns_it_was_given_then_its_own(fakellm, tmp_path):
    """To continue a session from its last task: the earlier turns that task saw, then its own."""
    from agentui.history import session_turns
    from agentui.ids import SeededIds
    from agentui.llm import LLMPool
    from agentui.runtime import Runtime
    from tests.functional.pipeline import config_for

    (tmp_path / "ws").mkdir()
    cfg = config_for(fakellm, tmp_path / "data", **FAST)
    _happy(fakellm)
    _happy(fakellm)
    async with Runtime(cfg, workspace=tmp_path / "ws", data_dir=tmp_path / "data", pool=LLMPool(cfg),
                       ids=SeededIds(7, readable=True)) as rt:
        first = await rt.run_task("how many txt files?", timeout=30)
        second = await rt.run_task("and now?", timeout=30)
        live = rt.history
    assert session_turns(find_task(tmp_path / "data", first.task_id)) == ["how many txt files? → answer: 2"]
    assert session_turns(find_task(tmp_path / "data", second.task_id)) == live == [
        "how many txt files? → answer: 2", "and now? → answer: 2"]
