"""Bus envelopes → ACP session updates (#18): plan states, tool calls, thoughts, result, usage."""

from __future__ import annotations

from agentui.acp.agent import prompt_text
from agentui.acp.mapping import Mapper, final_text
from agentui.contracts import (
    Criterion,
    DispatchManifest,
    Envelope,
    ExecutionResult,
    ExecutionStatus,
    FinalResult,
    LLMUsage,
    Loss,
    OutcomeStatus,
    PlanDirective,
    Role,
    SubTask,
    SubTaskOutcome,
    TaskCancelled,
    ToolCallRecord,
)

LOSS = Loss(D=0.5, P=0.2, Omega=0.1, L=0.4)


def env(sender: Role, receiver: Role, payload, tid: str = "t1") -> Envelope:  # noqa: ANN001
    return Envelope(id="m", ts="2026-01-01T00:00:00.000Z", task_id=tid, sender=sender, receiver=receiver,
                    type=type(payload).__name__, payload=payload)


def test_plan_entries_follow_the_subtasks_through_a_round() -> None:
    m = Mapper()
    for sid, intent in (("s1", "list files"), ("s2", "count them")):
        assert m.updates(env(Role.PLANNER, Role.EXECUTOR, SubTask(
            subtask_id=sid, parent_task_id="t1", intent=intent, success_criteria=[Criterion(criterion="c")]))) == []
    [plan] = m.updates(env(Role.PLANNER, Role.META_VALIDATOR, DispatchManifest(
        task_id="t1", subtask_ids=["s1", "s2"], dispatched_at="x")))
    assert [(e.content, e.status) for e in plan.entries] == [("list files", "pending"), ("count them", "pending")]
    rec = ToolCallRecord(tool="shell", args={"command": "ls"}, target="ls", ok=False, exit_code=2,
                         error="ls: no such dir", evidence="")
    result = env(Role.EXECUTOR, Role.AGENT_VALIDATOR, ExecutionResult(
        subtask_id="s1", status=ExecutionStatus.FAILED, tool_calls=[rec]))
    [tool] = Mapper().updates(result, replay=True)  # a replay sends each recorded call whole
    assert tool.session_update == "tool_call" and tool.status == "failed" and tool.kind == "execute"
    assert tool.content[0].content.text == "ls: no such dir" and tool.raw_output["exit_code"] == 2
    [plan] = m.updates(result)  # live, the calls were streamed as they ran (stream.py)
    assert plan.entries[0].status == "in_progress"
    [plan, said] = m.updates(env(Role.AGENT_VALIDATOR, Role.META_VALIDATOR, SubTaskOutcome(
        subtask_id="s1", parent_task_id="t1", status=OutcomeStatus.FAILED)))
    # ACP v1 has no "failed" plan status: the entry ends, its _meta says failed, a thought names it
    assert (plan.entries[0].content, plan.entries[0].status) == ("list files", "completed")
    assert plan.entries[0].field_meta == {"agentui": {"status": "failed"}} and plan.entries[1].field_meta is None
    assert said.session_update == "agent_thought_chunk" and said.content.text == "Step failed: list files"


def test_a_plan_made_with_memory_names_its_megrams_in_a_thought() -> None:
    m = Mapper()
    thought, plan = m.updates(env(Role.PLANNER, Role.META_VALIDATOR, DispatchManifest(
        task_id="t1", subtask_ids=["s1"], dispatched_at="x", memory_ids=["m-1", "m-2"])))
    assert thought.content.text.startswith("R2 planned with memory m-1, m-2")
    assert "forget ID" in thought.content.text and plan.session_update == "plan"


def test_a_megram_forgotten_since_the_plan_is_named_as_gone() -> None:
    from agentui.clock import FakeClock
    from agentui.ids import SeededIds
    from agentui.memory import InMemoryMemory

    clock, ids = FakeClock(), SeededIds(1, readable=True)
    mem = InMemoryMemory(clock, ids)
    kept = mem.remember("use wc -l for line counts", space="intent:count_lines")
    m = Mapper(memory=mem)
    thought, plan = m.updates(env(Role.PLANNER, Role.META_VALIDATOR, DispatchManifest(
        task_id="t1", subtask_ids=["s1"], dispatched_at="x", memory_ids=[kept.id, "megram-gone"])))
    assert thought.content.text.splitlines()[1:] == [
        f"- {kept.id} C intent:count_lines: use wc -l for line counts", "- megram-gone (no longer in memory)"]
    assert plan.field_meta["agentui"]["memory"][1] == {"id": "megram-gone", "level": "", "space": "", "lesson": ""}
    # the next plan, made without memory, carries none
    [plan2] = m.updates(env(Role.PLANNER, Role.META_VALIDATOR, DispatchManifest(
        task_id="t1", subtask_ids=["s2"], dispatched_at="x", round=1)))
    assert plan2.field_meta is None


def test_directives_are_thoughts_and_the_final_result_is_the_message() -> None:
    m = Mapper()
    [thought] = m.updates(env(Role.GGS, Role.PLANNER, PlanDirective(
        task_id="t1", loss=LOSS, prev_directive="init", directive="change_path", rationale="ls failed twice")))
    assert thought.session_update == "agent_thought_chunk"
    assert (
        thought.content.text.startswith("GGS init → change_path (D=0.50 P=0.20")
        and "ls failed twice" in thought.content.text
    )
    final = FinalResult(task_id="t1", summary="could not list", loss=LOSS, directive="abandon", replans=2,
                        next_moves=["check the path"], output=None)
    [msg] = m.updates(env(Role.GGS, Role.USER, final))
    assert msg.session_update == "agent_message_chunk"
    assert msg.content.text == "abandon after 2 replan(s): could not list\n\n→ check the path"
    ok = FinalResult(task_id="t1", summary="3 files", loss=LOSS, directive="accept", output={"n": 3})
    assert final_text(ok).startswith("3 files\n\n{")
    answered = FinalResult(task_id="t1", summary="counted", answer="3", loss=LOSS, directive="accept", output="3")
    assert final_text(answered) == "Answer: 3\n\ncounted"  # the answer first, not repeated


def test_usage_updates_carry_the_task_totals_and_cancel_is_silent_live() -> None:
    m = Mapper()
    for n in (100, 50):
        [u] = m.updates(env(Role.PLANNER, Role.RUNTIME, LLMUsage(role=Role.PLANNER, prompt_tokens=n,
                                                                  completion_tokens=10)))
    assert u.session_update == "usage_update" and u.used == 60
    assert u.field_meta["agentui"]["task_prompt_tokens"] == 150 and u.field_meta["agentui"]["task_llm_calls"] == 2
    assert m.tokens["t1"].usage().total_tokens == 170
    cancelled = env(Role.RUNTIME, Role.USER, TaskCancelled(task_id="t1", reason="Esc"))
    assert m.updates(cancelled) == []
    assert m.updates(cancelled, replay=True)[0].content.text == "Cancelled: Esc"


def test_prompt_text_joins_text_and_resources() -> None:
    from acp import helpers as h

    blocks = [h.text_block("summarise"), h.resource_link_block("a.py", "file:///w/a.py"),
              h.resource_block(h.embedded_text_resource("file:///w/b.txt", "hello"))]
    assert prompt_text(blocks) == "summarise\n[file file:///w/a.py]\n[file:///w/b.txt]\nhello"


def test_a_live_call_starts_in_progress_and_ends_with_a_diff_or_its_output(tmp_path) -> None:  # noqa: ANN001
    from pathlib import Path

    from agentui.acp.mapping import tool_end, tool_start
    from agentui.tools.hooks import ToolEvent

    target = str(tmp_path / "notes.txt")
    ev = ToolEvent("t1/call-1", "write_file", {"path": "notes.txt", "content": "new\n"}, target, "t1", "s1",
                   Path(tmp_path))
    start = tool_start(ev)
    assert (start.session_update, start.tool_call_id, start.status, start.kind) == (
        "tool_call", "t1/call-1", "in_progress", "edit")
    assert start.locations[0].path == target
    rec = ToolCallRecord(tool="write_file", args=ev.args, target=target, ok=True, evidence="wrote 4 chars")
    end = tool_end(ToolEvent(**{**ev.__dict__, "record": rec}), old_text="old\n")
    assert end.session_update == "tool_call_update" and end.status == "completed"
    [diff] = end.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == ("diff", target, "old\n", "new\n")
    appended = rec.model_copy(update={"args": {**ev.args, "append": True}})
    [diff] = tool_end(ToolEvent(**{**ev.__dict__, "record": appended}), old_text="old\n").content
    assert diff.new_text == "old\nnew\n"
    failed = ToolCallRecord(tool="shell", args={"command": "false"}, target="false", ok=False, exit_code=1,
                            error="exit code 1", evidence="boom")
    end = tool_end(ToolEvent("t1/call-2", "shell", failed.args, "false", "t1", "s1", Path(tmp_path), failed),
                   terminal="term-1")
    assert end.status == "failed" and [c.type for c in end.content] == ["terminal", "content"]
    assert end.content[0].terminal_id == "term-1" and end.content[1].content.text == "exit code 1\nboom"


def test_what_an_editor_shows_has_no_escape_or_control_characters(tmp_path) -> None:  # noqa: ANN001
    from pathlib import Path

    from agentui.acp.mapping import tool_end, tool_start
    from agentui.tools.hooks import ToolEvent

    cmd = "rm -f victim.txt #\x1b[2K\r\x1b[1Als -la\u202e"
    ev = ToolEvent("t1/call-1", "shell", {"command": cmd}, cmd, "t1", "s1", Path(tmp_path))
    rec = ToolCallRecord(tool="shell", args=ev.args, target=cmd, ok=True, evidence="\x1b[31mred\x1b[0m\n")
    start, end = tool_start(ev), tool_end(ToolEvent(**{**ev.__dict__, "record": rec}))
    final = FinalResult(task_id="t1", summary="done \x1b]0;owned\x07", loss=LOSS, directive="accept")
    [msg] = Mapper().updates(env(Role.GGS, Role.USER, final))
    shown = [start.title, end.content[0].content.text, msg.content.text]
    assert "rm -f victim.txt" in start.title
    assert not any(c in "".join(shown) for c in ("\x1b", "\r", "\u202e", "\x07")), shown


def test_live_text_is_thought_chunks_until_the_turn_ends_and_never_in_a_replay() -> None:
    from agentui.contracts import LLMDelta

    m = Mapper()
    first = env(Role.EXECUTOR, Role.USER, LLMDelta(role=Role.EXECUTOR, call=1, text='{"tool": ', fresh=True, chars=9))
    more = env(Role.EXECUTOR, Role.USER, LLMDelta(role=Role.EXECUTOR, call=1, text='"finish"}', chars=18, done=True))
    assert [(u.session_update, u.content.text) for u in m.updates(first) + m.updates(more)] == [
        ("agent_thought_chunk", '\nR3 Executor: {"tool": '), ("agent_thought_chunk", '"finish"}')]
    assert Mapper().updates(first, replay=True) == []  # a loaded session shows what came of it
    m.updates(env(Role.RUNTIME, Role.USER, TaskCancelled(task_id="t1")))
    assert m.updates(more) == []  # late text of a finished turn is not sent after it
