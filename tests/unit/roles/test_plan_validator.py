"""The code plan validator on its own: which plans may run, and what the planner is re-asked."""

from __future__ import annotations

from typing import Any

from agentui.contracts import ActionDirective, Loss, MacroState, PlanDirective, TaskSpec
from agentui.roles.actions import REPEATED_PLAN
from agentui.roles.plan_schema import PlanOut, PlanState
from agentui.roles.plan_validator import COPIED_EXAMPLE, NO_CHECK, plan_problem, reask


def _plan(*steps: tuple[str, list[str]], check: str = "") -> PlanOut:
    return PlanOut.model_validate({
        "task_criteria": [{"criterion": "the count is given", "verify": check}],
        "subtasks": [{"intent": i, "success_criteria": ["done"], "tools": t} for i, t in steps]})


def _state(**kw: Any) -> PlanState:
    return PlanState(spec=TaskSpec(task_id="t", intent="x", raw_input="x"), **kw)


def _directive(d: ActionDirective, *, steps_passed: bool = False) -> PlanDirective:
    return PlanDirective(task_id="t", loss=Loss(D=1, P=1, Omega=0.3, L=0.9), prev_directive=MacroState.INIT,
                         directive=d, steps_passed=steps_passed)


def test_unknown_tool_names_mean_any_tool_and_a_blocked_one_is_refused() -> None:
    plan = _plan(("count the files", ["shell", "made_up_tool"]))
    assert plan_problem(plan, _state(), {"shell", "read_file"}) is None
    assert plan.subtasks[0].tools == ["shell"]
    assert plan_problem(plan, _state(blocked_tools={"shell"}), None) == "subtask 1 uses blocked tool(s) shell"


def test_a_blocked_command_again_is_refused_a_blocked_path_may_be_reached_another_way() -> None:
    st = _state(blocked_targets=["shell:cat secret.txt", "read_file:notes.txt"])
    assert plan_problem(_plan(("run cat secret.txt", ["shell"])), st, None) == \
        "subtask 1 repeats the blocked target 'cat secret.txt' with shell"
    assert plan_problem(_plan(("read notes.txt", ["read_file"])), st, None) == \
        "subtask 1 repeats the blocked target 'notes.txt' with read_file"
    assert plan_problem(_plan(("read notes.txt with head", ["read_file", "shell"])), st, None) is None


def test_what_memory_says_must_not_be_done_is_refused() -> None:
    st = _state(memory_constraints=[("shell", "rm -rf build", "never delete the build folder")])
    assert plan_problem(_plan(("clean up: rm -rf build", [])), st, None) == (
        "subtask 1 uses shell on 'rm -rf build', which memory says must not be done (never delete the build folder)")
    assert plan_problem(_plan(("clean up: rm -rf build", ["write_file"])), st, None) is None


def test_break_symmetry_refuses_the_previous_plan_unless_something_new_is_blocked() -> None:
    last = _plan(("Count the files: ls | wc -l", ["shell"]))
    st = _state(last_plan=last, directive=_directive(ActionDirective.BREAK_SYMMETRY))
    assert plan_problem(_plan(("count the FILES: ls | wc -l.", ["shell"])), st, None) == REPEATED_PLAN
    assert plan_problem(_plan(("Count with: find . -type f | wc -l", ["shell"])), st, None) is None
    st.blocked_tools = {"glob"}  # blocked since the last plan: the same steps run another way
    assert plan_problem(_plan(("Count the files: ls | wc -l", ["shell"])), st, None) is None
    passed = _state(last_plan=last, directive=_directive(ActionDirective.BREAK_SYMMETRY, steps_passed=True))
    assert plan_problem(_plan(("Count the files: ls | wc -l", ["shell"])), passed, None) is None
    refine = _state(last_plan=last, directive=_directive(ActionDirective.REFINE))
    assert plan_problem(_plan(("Count the files: ls | wc -l", ["shell"])), refine, None) is None


def test_a_copied_example_and_a_missing_check_are_each_asked_once() -> None:
    bare, checked = _plan(("count", [])), _plan(("count", []), check="ls | wc -l")
    copied = ["copied: grep -c ERROR app.log"]
    assert reask(None, None, checked, copied, more=True, asks_value=True) == COPIED_EXAMPLE
    assert reask(None, COPIED_EXAMPLE, checked, copied, more=True, asks_value=True) is None
    assert reask(None, COPIED_EXAMPLE, bare, copied, more=True, asks_value=True) == NO_CHECK
    assert reask(None, None, bare, [], more=True, asks_value=True) == NO_CHECK
    assert reask(None, NO_CHECK, bare, copied, more=True, asks_value=True) is None
    assert reask(None, None, bare, [], more=True, asks_value=False) is None  # no value asked: no check needed
    assert reask(None, None, bare, copied, more=False, asks_value=True) is None  # no re-ask left: it runs
    assert reask("subtask 1 uses blocked tool(s) shell", None, bare, copied, more=True, asks_value=True) == \
        "subtask 1 uses blocked tool(s) shell"
