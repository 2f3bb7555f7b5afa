"""What a Megram says: lessons in tools, commands and targets (memory/lessons.py)."""

from __future__ import annotations

from pathlib import Path

from agentui.contracts import OutcomeStatus, SubTaskOutcome, ToolCallRecord
from agentui.memory import lessons


def _call(tool, target, ok=True, evidence="", error=None, exit_code=None):  # noqa: ANN001, ANN202
    return ToolCallRecord(tool=tool, target=target, ok=ok, evidence=evidence, error=error, exit_code=exit_code)


def _outcome(seq, *calls, status=OutcomeStatus.MATCHED):  # noqa: ANN001, ANN202
    return SubTaskOutcome(subtask_id=f"s{seq}", parent_task_id="t", status=status, sequence=seq,
                          tool_calls=list(calls), intent="As a student, you are required to do it")


def test_an_sop_is_the_plan_shape_and_the_calls_that_worked_with_what_they_replaced(tmp_path: Path):
    ws = tmp_path
    outcomes = [_outcome(2, _call("shell", "wc -l < a.txt")),
                _outcome(1, _call("read_file", str(ws / "a.txt")), _call("shell", "ls", ok=False, error="x"))]
    text = lessons.sop("accept", "count lines", outcomes, ws, {"file_search:a.txt": "searches names, not text"})
    assert text == (
        'worked (accept) for "count lines": 2 step(s) [read_file → shell]; calls that worked: '
        "read_file `a.txt`; shell `wc -l < a.txt`; instead of: file_search `a.txt` (searches names, not text)"
    )
    assert "student" not in text  # never the request, nor a step's wording


def test_a_failure_names_the_failed_calls_and_their_first_line_then_other_dead_ends():
    bad = _call(
        "shell", "du -cb d/*.ext", ok=False, evidence="du: cannot access 'd/*.ext'\n0 total", error="exit code 1"
    )
    text = lessons.failure("abandon", "sum size", [_outcome(1, bad, status=OutcomeStatus.FAILED)],
                           {"shell:du -cb d/*.ext": "", "glob:**/*.ext": ""})
    assert text == ('failed (abandon) for "sum size": avoid shell `du -cb d/*.ext` (du: cannot access \'d/*.ext\'); '
                    "glob `**/*.ext` (no usable result)")


def test_a_failure_without_failed_calls_says_the_result_was_judged_wrong():
    text = lessons.failure("abandon", "count files", [_outcome(1, _call("shell", "ls | wc -l"))], {},
                           classes=["logical"])
    assert text == ('failed (abandon) for "count files": no call failed, but the result was judged wrong '
                    "(logical) after shell; plan a different method")


def test_a_micro_event_is_one_call_and_why():
    c = _call("read_file", "/w/settings.ini", ok=False, error="no such file: settings.ini")
    assert lessons.micro("change_path", "read files", c, Path("/w")) == \
        'change_path: read_file `settings.ini` failed (no such file: settings.ini) while doing "read files"'
