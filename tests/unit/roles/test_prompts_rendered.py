"""Every role's prompt, rendered with fixed inputs, is byte for byte the recorded one: a change to a
prompt file, its loader or the code that builds a prompt around it is a change to what the model
sees, and shows here. `python tests/unit/roles/test_prompts_rendered.py --write` records them anew
(review the diff of the JSON file: it is what the model sees)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from agentui.bus import Bus
from agentui.config import Config
from agentui.contracts import (
    ActionDirective,
    Constraints,
    Loss,
    MacroState,
    PlanDirective,
    TaskSpec,
    UserInput,
)
from agentui.llm.schema import compact_schema_text, schema_for
from agentui.roles import agent_validator, executor, meta_validator
from agentui.roles.actions import Window
from agentui.roles.base import RoleContext
from agentui.roles.perceiver import Perceiver
from agentui.roles.planner import Planner, PlanOut, _Task
from agentui.tools import default_registry
from agentui.tree.agent import planner_messages
from agentui.tree.model import Node

RECORDED = Path(__file__).with_name("prompts_rendered.json")


def _ctx(workspace: Path) -> RoleContext:
    return RoleContext(bus=Bus(), config=Config(), tools=default_registry(), workspace=workspace)


def _plan() -> PlanOut:
    return PlanOut.model_validate({
        "task_criteria": [{"criterion": "the count is given", "verify": "ls | wc -l"}],
        "subtasks": [{"intent": "Count the files with: ls | wc -l", "success_criteria": ["a number"]},
                     {"intent": "Report it", "success_criteria": ["said"], "sequence": 2}]})


def _directive(d: ActionDirective, *, steps_passed: bool = False) -> PlanDirective:
    return PlanDirective(task_id="t", loss=Loss(D=1, P=1, Omega=0.3, L=0.9), prev_directive=MacroState.INIT,
                         directive=d, failed_criterion="the count is given", steps_passed=steps_passed,
                         rationale="the count was wrong", blocked_tools=["web_fetch"],
                         blocked_targets=["shell:ls -R", "read_file:notes.txt"])


def _planner_prompts(workspace: Path) -> dict[str, Any]:
    planner = Planner(_ctx(workspace))
    spec = TaskSpec(task_id="t", intent="count files in a folder", raw_input="How many files are in docs?",
                    constraints=Constraints(scope="docs"), history=["earlier: listed src"])
    out: dict[str, Any] = {}
    first = _Task(spec=spec, located=["docs/a.md"])
    out["planner.first"] = planner._messages(first, ["shell rm -rf"], ["use ls"], None)
    out["planner.problem"] = planner._messages(first, [], [], "subtask 1 uses blocked tool(s) shell")
    out["planner.short"] = planner._messages(first, ["shell rm -rf"], ["use ls"], None, short=True)
    for d in ActionDirective:
        for passed in (False, True):
            st = _Task(spec=spec, round=2, last_plan=_plan(), directive=_directive(d, steps_passed=passed),
                       blocked_tools={"web_fetch"}, blocked_targets=["shell:ls -R", "read_file:notes.txt"])
            out[f"planner.{d.value}{'.steps_passed' if passed else ''}"] = planner._messages(st, [], [], None)
    return out


def rendered(workspace: Path) -> dict[str, Any]:
    """Each role's prompt for fixed inputs: through its prompt-building code where a role has one
    to call, and its system prompt where the prompt is built inside a handler."""
    perceiver = Perceiver(_ctx(workspace))
    out: dict[str, Any] = {
        "perceiver": perceiver._messages(UserInput(task_id="t", text="count the files in docs",
                                                   history=["hello"]), ["the docs folder"]),
        **_planner_prompts(workspace),
        "executor": Window(executor.SYSTEM, "Subtask: count the files").messages(),
        "agent_validator.system": agent_validator.SYSTEM,
        "meta_validator.system": meta_validator.SYSTEM,
    }
    tree = Node(id="root", title="the app", goal="ship the app", acceptance=["it runs"])
    tree.children = [Node(id="root.1", order=0, title="the parser", goal="parse the input",
                          acceptance=["parses a.txt", "rejects b.txt"])]
    out["tree_planner"] = planner_messages(tree.children[0], tree, max_children=5)
    # the planner's reply schema: sent to the server, or written into the prompt where it is not
    out["planner.schema"] = schema_for(PlanOut)
    out["planner.schema_note"] = compact_schema_text(PlanOut, {"tools": ["shell", "read_file"]})
    return out


def test_every_prompt_is_the_recorded_one(tmp_path: Path) -> None:
    assert rendered(tmp_path) == json.loads(RECORDED.read_text(encoding="utf-8"))


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        RECORDED.write_text(json.dumps(rendered(Path(d)), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
