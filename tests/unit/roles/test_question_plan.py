"""A question's plan keeps no step or criterion about a file the user never named (#13)."""

from __future__ import annotations

from pathlib import Path

from agentui.roles.planner import PlanOut, question_only


def _plan(task: list[str], *steps: tuple[str, list[str]]) -> PlanOut:
    return PlanOut.model_validate({
        "task_criteria": [{"criterion": c} for c in task],
        "subtasks": [{"intent": i, "success_criteria": [{"criterion": c} for c in cs], "sequence": n}
                     for n, (i, cs) in enumerate(steps, 1)]})


def test_what_a_question_plan_keeps(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "big.bin").write_text("x")
    ask = "Which port is configured in config.json?"
    p = _plan(["the port is reported", "the port is saved in port.txt"],
              ("Read config.json with: cat config.json", ["a number is reported", "e.g. 8080 is shown"]),
              ("Save it with: echo $P > out/port.txt", ["out/port.txt holds the port"]))
    assert question_only(p, ask, tmp_path) == ["Save it with: echo $P > out/port.txt", "the port is saved in port.txt"]
    assert [s.intent for s in p.subtasks] == ["Read config.json with: cat config.json"]
    assert [c.criterion for c in p.subtasks[0].success_criteria] == ["a number is reported", "e.g. 8080 is shown"]
    assert [c.criterion for c in p.task_criteria] == ["the port is reported"]
    # files the user named or the workspace has stay, and so does a plan that is all writes
    named = _plan(["big.bin is reported", "CONFIG.JSON is read"], ("List sizes with: ls -S > sizes.txt", ["done"]))
    assert question_only(named, "Which file is the largest? See config.json", tmp_path) == []
    assert [c.criterion for c in named.task_criteria] == ["big.bin is reported", "CONFIG.JSON is read"]
    # the only task criterion names a made-up file: the question itself is the criterion
    alone = _plan(["the count is written to count.txt"], ("Count with: wc -l config.json", ["a number"]))
    question_only(alone, "How many lines in config.json?", tmp_path)
    assert [c.criterion for c in alone.task_criteria] == [
        "the answer to the question is reported: How many lines in config.json?"]
