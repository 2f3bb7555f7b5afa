"""The planner's reply schema and normaliser for criteria checks."""

from __future__ import annotations

from agentui.llm.schema import schema_for
from agentui.roles.planner import PlanOut, without_example


def test_the_reply_schema_asks_for_the_criterion_before_its_check():
    # a grammar writes keys in the schema's order: the criterion must come first, or a small model
    # writes the criterion's words into the check
    crit = schema_for(PlanOut)["properties"]["task_criteria"]["items"]
    keys = list(crit["properties"])
    assert keys.index("criterion") < keys.index("verify") and "verify" in crit["required"]


def test_a_reply_names_the_check_verify_or_check():
    for key in ("verify", "check"):
        plan = PlanOut.model_validate({"task_criteria": [{"criterion": "the count", key: "wc -l < a.txt"}],
                                       "subtasks": [{"intent": "count", "success_criteria": ["printed"]}]})
        assert plan.task_criteria[0].check == "wc -l < a.txt"


def test_prose_or_a_placeholder_is_no_check():
    plan = PlanOut.model_validate({
        "task_criteria": [{"criterion": "the count", "verify": "the answer is the number of lines of a.txt"},
                          {"criterion": "another", "verify": "<a command that prints it>"},
                          {"criterion": "kept", "verify": "grep -c x a.txt"}],
        "subtasks": [{"intent": "count", "success_criteria": ["printed"]}]})
    dropped = without_example(plan, "How many lines of a.txt hold x?")
    assert [c.check for c in plan.task_criteria] == ["", "", "grep -c x a.txt"]
    assert len(dropped) == 2


def test_the_example_words_are_the_prompts_example():
    from agentui.roles.planner import EXAMPLE_WORDS, SYSTEM

    asked = SYSTEM.split("Example for ", 1)[1].split(":", 1)[0].casefold()
    assert all(w in asked for w in EXAMPLE_WORDS)


def test_what_a_plan_copies_from_the_example_goes():
    plan = PlanOut.model_validate({
        "task_criteria": [{"criterion": "the answer is the number of lines of server.log that contain ERROR",
                           "verify": "grep -c ERROR server.log"},
                          {"criterion": "the line count of server.log is given", "verify": "wc -l < server.log"}],
        "subtasks": [{"intent": "Count the ERROR lines with: grep -c ERROR server.log", "success_criteria": ["x"]},
                     {"intent": "Count the lines with: wc -l server.log", "success_criteria": ["y"]}]})
    dropped = without_example(plan, "How many lines are in server.log?")
    assert [c.criterion for c in plan.task_criteria] == ["the line count of server.log is given"]
    assert [s.intent for s in plan.subtasks] == ["Count the lines with: wc -l server.log"]
    assert all(d.startswith("copied: ") for d in dropped) and len(dropped) == 3
    # a request that asks about errors keeps them
    plan = PlanOut.model_validate({"task_criteria": [{"criterion": "the error lines are counted",
                                                      "verify": "grep -ci error app.log"}],
                                   "subtasks": [{"intent": "grep -ci error app.log", "success_criteria": ["x"]}]})
    assert without_example(plan, "How many error lines does app.log have?") == []
