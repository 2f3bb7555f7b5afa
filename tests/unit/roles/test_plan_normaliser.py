"""The plan normaliser on its own, without an LLM: a model's plan in, the plan that runs out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentui.contracts import ActionDirective, Loss, MacroState, PlanDirective, TaskSpec
from agentui.roles.plan_normaliser import (
    copies_example,
    one_step,
    steps_to_run,
    told_why,
    without_duplicates,
    without_example,
)
from agentui.roles.plan_prompt import EXAMPLE_WORDS, PROMPT
from agentui.roles.plan_schema import PlanOut, PlanState


def _plan(task: list[Any], *steps: dict[str, Any]) -> PlanOut:
    return PlanOut.model_validate({"task_criteria": task, "subtasks": list(steps)})


def _step(intent: str, *criteria: str, sequence: int = 1, tools: list[str] | None = None,
          context: str = "") -> dict[str, Any]:
    return {"intent": intent, "success_criteria": list(criteria), "sequence": sequence,
            "tools": tools or [], "context": context}


def test_the_example_words_come_from_the_planner_prompt_file() -> None:
    asked = PROMPT.example.split(":", 1)[0].casefold()
    assert asked.startswith("example for ") and all(w in asked for w in EXAMPLE_WORDS)


def test_a_word_of_the_example_is_copied_only_when_the_request_lacks_it() -> None:
    assert copies_example("grep -c ERROR app.log", "How many lines in server.log?")
    assert not copies_example("grep -c ERROR app.log", "How many error lines in app.log?")
    assert not copies_example("read myapp.log.1", "How many lines in server.log?")  # part of a name


def test_a_check_that_is_no_runnable_command_goes() -> None:
    plan = _plan([{"criterion": "the count", "verify": "no_such_program_xyz --count a.txt"},
                  {"criterion": "kept", "verify": "  wc   -l  <  a.txt "}],
                 _step("count the lines", "printed"))
    assert without_example(plan, "How many lines in a.txt?") == ["check: no_such_program_xyz --count a.txt"]
    assert [c.check for c in plan.task_criteria] == ["", "wc -l < a.txt"]  # spacing normalised


def test_a_plan_that_is_all_example_keeps_a_criterion_about_the_request() -> None:
    plan = _plan([{"criterion": "lines of app.log with ERROR are counted", "verify": "grep -c ERROR app.log"}],
                 _step("Count with: grep -c ERROR app.log", "count printed"))
    dropped = without_example(plan, "Sum the numbers in n.txt")
    want = ["the result does what the request asks: Sum the numbers in n.txt"]
    assert [c.criterion for c in plan.task_criteria] == want
    # the only step stays: a plan with no step cannot run, and the re-ask says what was copied
    assert len(plan.subtasks) == 1 and {d.split(": ")[0] for d in dropped} == {"copied"}


def test_repeated_steps_fold_into_the_first_in_the_planner_s_order() -> None:
    plan = _plan(["done"], _step("List the files: ls", "listed", sequence=2),
                 _step("Count them: ls | wc -l", "a number"),
                 _step("list the FILES: ls.", "listed", "nothing hidden is missed", sequence=3))
    assert without_duplicates(plan) == 1
    assert [s.intent for s in plan.subtasks] == ["List the files: ls", "Count them: ls | wc -l"]
    assert [c.criterion for c in plan.subtasks[0].success_criteria] == ["listed", "nothing hidden is missed"]
    # the same intent with another context is other work
    plan = _plan(["done"], _step("ls", "a", context="in src"), _step("ls", "b", context="in docs"))
    assert without_duplicates(plan) == 0 and len(plan.subtasks) == 2


def test_a_question_s_chain_of_steps_runs_as_one_numbered_step(tmp_path: Path) -> None:
    plan = _plan(["the count is given"],
                 _step("Find the logs: find . -name '*.log'", "the logs are listed", tools=["shell"]),
                 _step("Count their lines:\n  wc -l *.log", "the number of lines is reported", sequence=2,
                       tools=["read_file", "shell"], context="logs only"))
    steps, changes = steps_to_run(plan, "How many lines do the logs have?", tmp_path, question=True)
    assert len(steps) == 1
    assert steps[0].intent == "1. Find the logs: find . -name '*.log'\n2. Count their lines: wc -l *.log"
    assert steps[0].tools == ["shell", "read_file"] and steps[0].context == "logs only"
    assert ("plan_merged", {"steps": 2}) in changes


def test_parallel_parts_and_tasks_that_are_no_question_stay_apart(tmp_path: Path) -> None:
    parts = _plan(["both counted"], _step("count a: wc -l a.txt", "a number"),
                  _step("count b: wc -l b.txt", "a number"))
    steps, changes = steps_to_run(parts, "How many lines do a.txt and b.txt have?", tmp_path, question=True)
    assert len(steps) == 2 and changes == []
    chain = _plan(["written"], _step("write a.txt", "a.txt exists"),
                  _step("copy it to b.txt", "b.txt exists", sequence=2))
    steps, changes = steps_to_run(chain, "Write a.txt and copy it to b.txt", tmp_path, question=False)
    assert [s.intent for s in steps] == ["write a.txt", "copy it to b.txt"] and changes == []


def test_a_question_step_loses_its_process_criteria_and_the_change_is_recorded(tmp_path: Path) -> None:
    plan = _plan(["the count is given"], _step("wc -l < a.txt", "the file is read successfully",
                                               "the number of lines is reported"))
    steps, changes = steps_to_run(plan, "How many lines are in a.txt?", tmp_path, question=True)
    assert [c.criterion for c in steps[0].success_criteria] == ["the number of lines is reported"]
    assert changes == [("plan_process_criteria", {"dropped": ["the file is read successfully"]})]


def test_one_step_keeps_each_criterion_once() -> None:
    plan = _plan(["x"], _step("a", "printed", "exit 0"), _step("b", "printed", sequence=2))
    merged = one_step(plan.subtasks)
    assert [c.criterion for c in merged.success_criteria] == ["printed", "exit 0"] and merged.sequence == 1


def test_repeated_steps_are_told_why_only_after_all_steps_passed() -> None:
    last = _plan(["c"], _step("Write a.txt with: echo hi > a.txt", "a.txt holds hi"))
    directive = PlanDirective(task_id="t", loss=Loss(D=1, P=1, Omega=0.3, L=0.9), prev_directive=MacroState.INIT,
                              directive=ActionDirective.REFINE, failed_criterion="a.txt holds  hi\n!",
                              steps_passed=False)
    st = PlanState(spec=TaskSpec(task_id="t", intent="x", raw_input="x"), last_plan=last, directive=directive)
    again = _plan(["c"], _step("write a.txt with: echo hi > a.txt", "a.txt holds hi"), _step("new step", "y"))
    told_why(st, again)
    assert [s.context for s in again.subtasks] == ["", ""]
    st.directive = directive.model_copy(update={"steps_passed": True})
    told_why(st, again)
    told_why(st, again)  # told once
    assert again.subtasks[0].context == ("The final check rejected the last result of these steps on: a.txt holds "
                                         "hi !. Show in your output, from what the tools return, that it holds.")
    assert again.subtasks[1].context == ""
