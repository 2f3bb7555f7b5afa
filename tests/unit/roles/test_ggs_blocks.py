"""What a logical-failure directive blocks (#13): the failing steps' tools, but for the shell the
failing commands — the shell is where every command runs, not one kind of tool."""

from __future__ import annotations

from agentui.contracts import OutcomeStatus, SubTaskOutcome, ToolCallRecord
from agentui.roles.ggs import MAX_BLOCKED_COMMANDS, commands_of, tools_of


def _call(tool: str, target: str, ok: bool = True) -> ToolCallRecord:
    return ToolCallRecord(tool=tool, target=target, ok=ok)


def _outcome(status: OutcomeStatus, *calls: ToolCallRecord) -> SubTaskOutcome:
    return SubTaskOutcome(subtask_id="s", parent_task_id="t", status=status, tool_calls=list(calls))


def test_shell_is_never_a_blocked_tool_its_commands_are_blocked_targets():
    failing = _outcome(OutcomeStatus.FAILED, _call("shell", "wc -l data.csv"), _call("read_file", "data.csv"),
                       _call("shell", "wc -l data.csv"), _call("shell", "false", ok=False))
    assert tools_of([failing]) == ["read_file"]
    assert commands_of([failing]) == ["shell:wc -l data.csv", "shell:false"]  # once each, in call order


def test_only_failed_calls_when_asked_and_only_failing_steps():
    failing = _outcome(OutcomeStatus.FAILED, _call("shell", "ls"), _call("shell", "cat nope", ok=False),
                       _call("glob", "*.md"))
    passed = _outcome(OutcomeStatus.MATCHED, _call("shell", "echo ok"), _call("write_file", "a.txt"))
    assert commands_of([failing, passed], failed_calls_only=True) == ["shell:cat nope"]
    assert tools_of([failing, passed], failed_calls_only=True) == []
    assert tools_of([failing, passed]) == ["glob"]
    assert commands_of([passed]) == [] and tools_of([passed]) == []


def test_a_call_without_a_target_blocks_nothing_and_the_list_is_capped():
    many = [_call("shell", f"echo {i}") for i in range(MAX_BLOCKED_COMMANDS + 3)]
    failing = _outcome(OutcomeStatus.FAILED, _call("shell", ""), *many)
    got = commands_of([failing])
    assert len(got) == MAX_BLOCKED_COMMANDS and got[0] == "shell:echo 0"
