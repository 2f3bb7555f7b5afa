"""The executor's and R4b's reply text reaches the bus while it is generated (LLMDelta): throttled,
in order, starting over on each call, and the task's result is the same as from a server that
does not stream at all."""

from __future__ import annotations

import json

from agentui.contracts import LLMDelta, Role
from agentui.roles.audit_core import ALLOWED_ROUTES
from tests.fakellm import FakeLLM, Reply
from tests.functional.pipeline import perceive, plan, run_task, sub, verdicts

FAST = {"ggs": {"time_budget_ms": 10**9}}
STEP = {"tool": "shell", "args": {"command": "echo 2"}}
FINISH = {"tool": "finish", "output": "there are 2 txt files in the workspace, counted with a shell command"}
MERGE = {"merged_output": "2", "answer": "2", "summary": "2 txt files", "verdicts": [{"verdict": "pass"}]}


def script(fake: FakeLLM, delay: float) -> None:
    fake.script("perceiver", [perceive("count the txt files")])
    fake.script("planner", [plan(["the answer is the count"], sub("count .txt files", "a number is reported",
                                                                   tools=["shell"]), checks=["printf '2\\n'"])])
    fake.script("executor", [Reply.stream(STEP, chunk_delay_s=delay), Reply.stream(FINISH, chunk_delay_s=delay)])
    fake.script("agent_validator", [verdicts("pass", quote="2")])
    fake.script("meta_validator", [Reply.stream(MERGE, chunk_delay_s=delay)])


def texts(envs: list, role: Role) -> list[str]:
    """Each call's text as the LLMDelta events rebuild it, in the order the calls began."""
    out: dict[int, str] = {}
    for e in envs:
        if e.type == "LLMDelta" and e.payload.role == role:
            assert e.payload.fresh == (e.payload.call not in out)
            out[e.payload.call] = out.get(e.payload.call, "") + e.payload.text
    return list(out.values())


async def test_streamed_replies_reach_the_bus_in_order_and_the_result_is_unchanged(fakellm, tmp_path):
    script(fakellm, 0.01)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    r = await run_task(fakellm, tmp_path / "a", "how many txt files?", **FAST)
    deltas = [e for e in r.envelopes if e.type == "LLMDelta"]
    assert {e.payload.role for e in deltas} == {Role.EXECUTOR, Role.META_VALIDATOR}  # the two streamed roles
    assert texts(r.envelopes, Role.EXECUTOR) == [json.dumps(STEP), json.dumps(FINISH)]
    assert texts(r.envelopes, Role.META_VALIDATOR) == [json.dumps(MERGE)]
    for role in (Role.EXECUTOR, Role.META_VALIDATOR):
        mine = [e.payload for e in deltas if e.payload.role == role]
        # throttled: far fewer events than the server sent pieces (4 characters each)
        assert len(mine) < sum(len(t) for t in texts(r.envelopes, role)) / 4 / 2
        assert sum(p.done for p in mine) == len(texts(r.envelopes, role))  # each call says it ended
        assert all(isinstance(p, LLMDelta) and not p.skipped for p in mine)
    # the executor's text of a step is on the bus before the step's result
    types = [e.type if e.type != "LLMDelta" else e.payload.role.value for e in r.envelopes]
    assert types.index("executor") < types.index("ExecutionResult")
    last_r4b = max(i for i, t in enumerate(types) if t == "meta_validator")
    assert last_r4b < types.index("FinalResult"), " ".join(types[19:])
    assert all((e.sender, e.receiver, e.type) in ALLOWED_ROUTES for e in deltas)
    assert r.audit_kinds == []

    with FakeLLM(stream="ignore") as plain:  # the same replies, each whole: nothing to stream
        script(plain, 0.0)
        p = await run_task(plain, tmp_path / "b", "how many txt files?", **FAST)
    assert not [e for e in p.envelopes if e.type == "LLMDelta"]
    keep = ("directive", "output", "answer", "summary", "replans")
    assert {k: getattr(r.final, k) for k in keep} == {k: getattr(p.final, k) for k in keep}
    assert r.stats["llm_calls"] == p.stats["llm_calls"] and r.types() == p.types()
