"""Answers the world confirms: code never grants a pass, an answer must be printed by a check, and
a result nobody checked is not done. Whole tasks over the fake LLM with real tools and real checks;
`agentui run` for the exit code a script sees."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from agentui.contracts import ConfirmationChoice
from tests.functional.pipeline import call, finish, merge, perceive, plan, run_task, sub, verdicts

FAST = {"ggs": {"time_budget_ms": 10**9, "max_replans": 1}}


def _run_cli(fake, ws, data, task):
    env = {**os.environ, "AGENTUI_BASE_URL": fake.base_url, "AGENTUI_MODEL": "fake-model"}
    return subprocess.run([sys.executable, "-m", "agentui.cli", "run", "--json", "--workspace", str(ws),
                           "--data-dir", str(data), task], capture_output=True, text=True, env=env, timeout=300,
                          stdin=subprocess.DEVNULL)


# Each twist changes the answer; the step computes the untwisted value, R4b (rightly) fails it.
TWISTS = [
    ("What is the sum of the numbers in numbers.txt, squared?", "numbers.txt", "".join(f"{i}\n" for i in range(1, 11)),
     "paste -sd+ numbers.txt | bc", "55"),
    ("How many data rows in data.csv are for bob?", "data.csv", "name,n\nann,1\nbob,2\nbob,3\ncid,4\n",
     "tail -n +2 data.csv | wc -l", "4"),
    ("What is the first line of README.txt, reversed?", "README.txt", "Project Nimbus\nmore\n",
     "head -n 1 README.txt", "Project Nimbus"),
]


@pytest.mark.parametrize(("task", "name", "content", "command", "untwisted"), TWISTS)
def test_a_twisted_question_answered_untwisted_ends_not_done(fakellm, tmp_path, task, name, content, command,
                                                             untwisted):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / name).write_text(content)
    fakellm.script("perceiver", [perceive(task)])
    fakellm.responder("planner", lambda _r: plan(["the answer is given"], sub(f"Compute it with: {command}",
                                                                               "the value is printed",
                                                                               tools=["shell"]), checks=[command]))
    fakellm.responder("executor", lambda r: finish(untwisted) if "RESULT" in str(r["messages"][-1])
                      else call("shell", command=command))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", quote=untwisted))
    fakellm.responder("meta_validator", lambda _r: merge(untwisted, "fail:logical"))
    r = _run_cli(fakellm, ws, tmp_path / "data", task)
    doc = json.loads(r.stdout)
    assert r.returncode == 1, r.stderr
    assert doc["final"]["directive"] == "abandon" and doc["answer"] is None
    # the check ran (its output agrees with the untwisted answer), and still granted nothing
    assert (ws / name).read_text() == content


async def test_a_failed_step_that_carries_the_answer_is_never_success(fakellm, tmp_path):
    """Four steps, three pass, the last (the answer) fails: the task criteria were never checked,
    so they count as failed, and the task is not done — not "close enough"."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one two\nthree\n")
    # four parts of one round (the same sequence), the last of them failing
    steps = [sub(f"part {i}: run wc on a.txt", "a number is printed", seq=1, tools=["shell"]) for i in range(1, 5)]
    fakellm.script("perceiver", [perceive("add up lines and words")])
    fakellm.responder("planner", lambda _r: plan(["the total of lines plus words is given"], *steps,
                                                 checks=["wc -lw < a.txt"]))
    fakellm.responder("executor", lambda r: finish("2") if "RESULT" in str(r["messages"][-1])
                      else call("shell", command="wc -l < a.txt"))
    fakellm.responder("agent_validator", lambda r: verdicts(
        "fail:logical" if "part 4" in r["messages"][1]["content"] else "pass", quote="2"))
    r = await run_task(fakellm, tmp_path, "What is the total number of lines plus words in a.txt?",
                       pipeline={"correction_budget": 0}, **FAST)
    assert r.final.directive.value == "abandon" and r.final.answer is None
    first = r.of("ReplanRequest")[0]
    assert first.task_criteria_verdicts and all(v.verdict.value == "fail" for v in first.task_criteria_verdicts)
    assert not isinstance(r.final.output, dict)
    assert not r.of("OutcomeSummary")


async def test_a_format_only_criterion_cannot_accept_an_unconfirmed_answer(fakellm, tmp_path):
    """The planner's only criteria were "a number is reported"; the executor answered 3 (right: 6)
    and every validator passed a number. With no check the planner is asked once for one; without it
    no check printed the answer, and the task is not accepted."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.log").write_text("ERROR a\nerror b\nError c\nan error d\nERRORS e\nx error\nok\nError!\n")
    fakellm.script("perceiver", [perceive("count error lines")])
    fakellm.responder("planner", lambda _r: plan(["a number is reported", "the final answer is an integer"],
                                                 sub("Count with: grep -c error app.log", "a number is reported",
                                                     tools=["shell"])))
    fakellm.responder("executor", lambda r: finish("3") if "RESULT" in str(r["messages"][-1])
                      else call("shell", command="grep -c error app.log"))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", quote="3"))
    fakellm.responder("meta_validator", lambda _r: merge("3", "pass", "pass"))
    task = "How many lines of app.log contain the exact word error, case-insensitive?"
    r = await run_task(fakellm, tmp_path, task, **FAST)
    assert r.final.directive.value == "abandon"
    prompts = [c["messages"][1]["content"] for c in fakellm.calls("planner")]
    assert "no task criterion has a check" in prompts[1]  # asked once for a check
    reqs = r.of("ReplanRequest")
    assert any(v.criterion == "a check confirms the answer" and v.verdict.value == "fail"
               for q in reqs for v in q.task_criteria_verdicts)


async def test_a_check_that_prints_another_value_vetoes_the_pass(fakellm, tmp_path):
    """R4b passed 3 (what grep -c printed); the plan's own check (another method) printed 6: the pass is taken away,
    with the check's output as the evidence the replan sees."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.log").write_text("ERROR a\nerror b\nError c\nan error d\nERRORS e\nx error\nok\nError!\n")
    fakellm.script("perceiver", [perceive("count error lines")])
    fakellm.responder("planner", lambda _r: plan(["the answer is the number of lines with the word error"],
                                                 sub("Count with: grep -c error app.log", "a number is reported",
                                                     tools=["shell"]),
                                                 checks=["grep -ciw error app.log"]))
    fakellm.responder("executor", lambda r: finish("3") if "RESULT" in str(r["messages"][-1])
                      else call("shell", command="grep -c error app.log"))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", quote="3"))
    fakellm.responder("meta_validator", lambda _r: merge("3", "pass"))
    r = await run_task(fakellm, tmp_path, "How many lines of app.log contain the word error, in any case?", **FAST)
    assert r.final.directive.value == "abandon"
    [v] = [v for v in r.of("ReplanRequest")[0].task_criteria_verdicts if v.criterion == "a check confirms the answer"]
    assert v.verdict.value == "fail" and "check `grep -ciw error app.log` → exit 0: 6" in v.evidence
    # the replan order carries what the check printed
    assert "grep -ciw error app.log" in r.of("PlanDirective")[0].rationale


async def test_a_confirmed_answer_is_the_final_answer(fakellm, tmp_path):
    """Arithmetic the model did in its head stands once a check confirms it: R4b names 53, a check
    prints 53, the answer is 53 (not a dict of step outputs)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one two three\n" * 3 + "x\n" * 19 + "y y\n")
    fakellm.script("perceiver", [perceive("lines plus words")])
    fakellm.script("planner", [plan(["the answer is lines plus words of a.txt"],
                                    sub("Count lines and words with: wc -lw a.txt", "both counts are printed",
                                        tools=["shell"]),
                                    checks=["wc -lw < a.txt | awk '{print $1 + $2}'"])])
    fakellm.script("executor", [call("shell", command="wc -lw a.txt"), finish("23 lines and 30 words: 53")])
    fakellm.script("agent_validator", [verdicts("pass", quote="23")])
    fakellm.script("meta_validator", [merge("a.txt has 23 lines and 30 words; together 53", "pass", answer="53")])
    r = await run_task(fakellm, tmp_path, "What is the number of lines plus words in a.txt?", **FAST)
    assert r.final.directive.value == "accept" and r.final.answer == "53"
    [summary] = r.of("OutcomeSummary")
    assert any("check `wc -lw < a.txt | awk '{print $1 + $2}'` → exit 0: 53" in v.evidence
               for v in summary.task_criteria_verdicts)


async def test_a_check_the_gate_would_ask_about_never_runs_and_fails_its_criterion(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("keep\n")
    fakellm.script("perceiver", [perceive("make out.txt")])
    fakellm.responder("planner", lambda _r: plan(["out.txt holds ok"], sub("write ok to out.txt", "written",
                                                                             tools=["write_file"]),
                                                 checks=["cat out.txt; rm -f keep.txt"]))
    fakellm.responder("executor", lambda r: finish("done") if "RESULT" in str(r["messages"][-1])
                      else call("write_file", path="out.txt", content="ok\n"))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", quote="out.txt"))
    fakellm.responder("meta_validator", lambda _r: merge("wrote out.txt", "pass"))
    r = await run_task(fakellm, tmp_path, "Write ok into out.txt", confirm=_approve, **FAST)
    assert (ws / "keep.txt").exists(), "a check is never approved, by anyone"
    assert r.final.directive.value == "abandon"
    [v] = r.of("ReplanRequest")[0].task_criteria_verdicts
    assert v.verdict.value == "fail" and v.failure_class.value == "environmental"
    assert "could not run" in v.evidence


async def _approve(_req):  # noqa: ANN001, ANN202 - the user approves everything they are asked
    return ConfirmationChoice.APPROVE


async def test_a_follow_up_sees_the_previous_answer(fakellm, tmp_path):
    """A session, not a form: "and how many words?" after "how many lines does notes.txt have?"
    reaches the planner with the earlier turn and its answer, so the plan can name notes.txt."""
    from agentui.llm import LLMPool
    from agentui.runtime import Runtime
    from tests.functional.pipeline import config_for

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("one two\nthree\nfour five six\n")
    fakellm.script("perceiver", [perceive("count the lines of notes.txt"), perceive("count the words")])
    fakellm.script("planner", [plan(["the line count"], sub("wc -l < notes.txt", "a number", tools=["shell"]),
                                    checks=["grep -c '' notes.txt"]),
                               plan(["the word count"], sub("wc -w < notes.txt", "a number", tools=["shell"]),
                                    checks=["cat notes.txt | wc -w"])])
    fakellm.script("executor", [call("shell", command="wc -l < notes.txt"), finish("3"),
                                call("shell", command="wc -w < notes.txt"), finish("6")])
    fakellm.script("agent_validator", [verdicts("pass", quote="3"), verdicts("pass", quote="6")])
    fakellm.script("meta_validator", [merge("notes.txt has 3 lines", "pass", answer="3"),
                                      merge("notes.txt has 6 words", "pass", answer="6")])
    cfg = config_for(fakellm, tmp_path / "data", **FAST)
    rt = Runtime(cfg, workspace=ws, data_dir=tmp_path / "data", pool=LLMPool(cfg))
    await rt.start()
    try:
        first = await rt.run_task("How many lines does notes.txt have?", timeout=30)
        second = await rt.run_task("and how many words?", timeout=30)
    finally:
        await rt.stop()
    assert first.final.answer == "3" and second.final.answer == "6"
    prompt = fakellm.calls("planner")[1]["messages"][1]["content"]
    assert "Earlier in this session:\n- How many lines does notes.txt have? → answer: 3" in prompt


async def test_a_plan_that_copies_the_prompts_example_is_asked_again(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "server.log").write_text("a\nb\nc\n")
    copied = plan(["the answer is the number of lines of server.log that contain ERROR"],
                  sub("Count with: grep -c ERROR server.log", "the count is printed", tools=["shell"]),
                  checks=["grep -c ERROR server.log"])
    fixed = plan(["the answer is the number of lines of server.log"],
                 sub("Count with: wc -l < server.log", "the count is printed", tools=["shell"]),
                 checks=["grep -c '' server.log"])
    fakellm.script("perceiver", [perceive("count the lines of a file")])
    fakellm.script("planner", [copied, fixed])
    fakellm.script("executor", [call("shell", command="wc -l < server.log"), finish("3")])
    fakellm.script("agent_validator", [verdicts("pass", quote="3")])
    fakellm.script("meta_validator", [merge("server.log has 3 lines", "pass", answer="3")])
    r = await run_task(fakellm, tmp_path, "How many lines are in server.log?", **FAST)
    reask = fakellm.calls("planner")[1]["messages"][1]["content"]
    assert "the plan copies the example" in reask
    assert r.final.directive.value == "accept" and r.final.answer == "3"
    [crit] = r.of("DispatchManifest")[0].task_criteria
    assert "ERROR" not in crit.criterion and crit.check == "grep -c '' server.log"
