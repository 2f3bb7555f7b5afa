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
