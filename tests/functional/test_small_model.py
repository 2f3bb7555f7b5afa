"""Issue #13 items 10–12 over the fake LLM with real tools: the executor's prompt stays within the
design budget at step 8, common tool-call shapes run, a repeated call ends in an answer."""

from __future__ import annotations

import json

from tests.fakellm import Reply
from tests.functional.pipeline import finish, merge, perceive, plan, run_task, sub, verdicts

FAST = {"ggs": {"time_budget_ms": 10**9}}


def _prompt_tokens(req) -> int:
    return sum(len(str(m.get("content", ""))) for m in req["messages"]) // 4  # the fake server's count


async def test_executor_prompt_stays_within_budget_at_step_8(fakellm, tmp_path):
    fakellm.script("perceiver", [perceive("inspect the numbers")])
    fakellm.script("planner", [plan(["the numbers are inspected"],
                                    sub("print seven long number lists, then report the last", "the last list is shown",
                                        mode="plausible"))])
    steps = [Reply.json({"tool": "shell", "args": {"command": f"seq {i} {i + 3000}"}}) for i in range(1, 8)]
    fakellm.script("executor", [*steps, finish("3007")])
    fakellm.script("agent_validator", [verdicts("pass", quote="3007")])
    fakellm.script("meta_validator", [merge("3007", "pass")])
    r = await run_task(fakellm, tmp_path, "inspect", **FAST)
    calls = fakellm.calls("executor")
    assert len(calls) == 8
    sizes = [_prompt_tokens(c) for c in calls]
    assert sizes[7] <= 1500, sizes  # the design budget per call (was ~3,000 here and growing)
    assert sizes[7] - sizes[1] < 400, sizes  # flat: earlier steps are one line each
    last_prompt = "\n".join(m["content"] for m in calls[7]["messages"])
    assert "seq 1 3001" in last_prompt  # the first step is still there, as one line
    log = (tmp_path / "data" / "tasks" / f"{r.final.task_id}.jsonl").read_text().splitlines()
    full = [json.loads(x) for x in log if json.loads(x)["kind"] == "tool"]
    assert len(full) == 7 and all(len(x["full_output"]) > 10000 for x in full)  # the full output is kept
    assert r.final.directive.value == "accept"


async def test_common_tool_call_shapes_run(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("alpha\n")
    fakellm.script("perceiver", [perceive("look around")])
    fakellm.script("planner", [plan(["looked"], sub("look around", "the files are shown", mode="plausible"))])
    fakellm.script("executor", [
        Reply.json({"tool": "shell", "command": "echo top-level"}),
        Reply.json({"name": "shell", "arguments": json.dumps({"command": "echo named"})}),
        Reply.json({"tool": "shell", "args": "echo bare"}),
        Reply.json({"tool": "read_file", "path": "a.txt"}),
        finish("alpha"),
    ])
    fakellm.script("agent_validator", [verdicts("pass", quote="alpha")])
    fakellm.script("meta_validator", [merge("alpha", "pass")])
    r = await run_task(fakellm, tmp_path, "look", **FAST)
    [res] = r.of("ExecutionResult")
    assert [(c.tool, c.ok) for c in res.tool_calls] == [("shell", True)] * 3 + [("read_file", True)]
    assert [c.evidence.strip() for c in res.tool_calls] == ["top-level", "named", "bare", "alpha"]


async def test_repeated_call_with_the_answer_beside_it_finishes(fakellm, tmp_path):
    # the 1.5B executor sent the same call 12 times with its answer in an `output` field beside it
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "stock.log").write_text("a\nb\nc\nd\n")
    fakellm.script("perceiver", [perceive("count the lines of stock.log")])
    fakellm.script(
        "planner",
        [plan(["the count is given"], sub("count lines in stock.log", "the line count is reported", tools=["shell"]))],
    )
    call = {"tool": "shell", "args": {"command": "wc -l < stock.log"}}
    fakellm.responder("executor", lambda r: Reply.json({**call, "output": "4"} if len(r["messages"]) > 2 else call))
    fakellm.script("agent_validator", [verdicts("pass", quote="4")])
    fakellm.script("meta_validator", [merge("4", "pass")])
    r = await run_task(fakellm, tmp_path, "lines?", **FAST)
    assert len(fakellm.calls("executor")) == 2  # not 8 steps of the same call
    [res] = r.of("ExecutionResult")
    assert res.status.value == "completed" and res.output == "4" and len(res.tool_calls) == 1
    assert r.final.directive.value == "accept"


async def test_executor_gets_the_subtask_tools_with_the_intent_command_first(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "stock.log").write_text("ERROR a\nok\nERROR b\n")
    fakellm.script("perceiver", [perceive("count ERROR lines in stock.log")])
    fakellm.script("planner", [plan(["the count is given"], sub(
        "Count the ERROR lines with: grep ERROR stock.log | wc -l", "the count is reported",
        tools=["file_search", "shell"]))])
    fakellm.script("executor", [Reply.json({"tool": "shell", "args": {"command": "grep ERROR stock.log | wc -l"}}),
                                finish("2")])
    fakellm.script("agent_validator", [verdicts("pass", quote="2")])
    fakellm.script("meta_validator", [merge("2", "pass")])
    r = await run_task(fakellm, tmp_path, "errors?", **FAST)
    prompt = fakellm.calls("executor")[0]["messages"][1]["content"]
    tools = [ln.split("(")[0][2:] for ln in prompt.splitlines() if ln.startswith("- ") and "(" in ln][:2]
    assert tools == ["shell", "file_search"]
    assert 'Start with: {"tool": "shell", "args": {"command": "grep ERROR stock.log | wc -l"}}' in prompt
    # one short line a tool: what it is for, not who is asked (#13: 155 tokens a call before)
    assert "- shell(command): run a bash command in the workspace; returns its output" in prompt
    assert "ask the user" not in prompt and "Destructive" not in prompt
    schema = str(fakellm.calls("executor")[0].get("response_format", ""))
    assert "glob" not in schema and "read_file" not in schema  # only the subtask's tools are offered
    assert r.final.directive.value == "accept"
