"""The ACP modes' answers, MCP prompt calls and annotation decisions, case by case."""

from __future__ import annotations

from pathlib import Path

from agentui.acp.modes import ACCEPT_EDITS, ASK, SANDBOXED_AUTO, preset_answer, prompt_call
from agentui.contracts import ConfirmationChoice, ConfirmationRequest
from agentui.mcp.annotations import Hints, decide
from agentui.mcp.client import PromptInfo


def req(**kw) -> ConfirmationRequest:  # noqa: ANN003
    base = {"request_id": "r", "task_id": "t", "tool": "write_file", "command": "notes.txt",
            "reasons": ["overwrites an existing file: notes.txt"], "writes": ["notes.txt"]}
    return ConfirmationRequest(**{**base, **kw})


def test_accept_edits_takes_only_an_overwrite_inside_the_workspace(tmp_path: Path) -> None:
    ws = str(tmp_path)
    assert preset_answer(ACCEPT_EDITS, req(), ws).choice is ConfirmationChoice.APPROVE
    assert preset_answer(ASK, req(), ws) is None
    assert preset_answer(ACCEPT_EDITS, req(writes=["../out.txt"]), ws) is None
    assert (
        preset_answer(ACCEPT_EDITS, req(reasons=["writes .git/hooks/pre-commit (code there runs later)"]), ws) is None
    )
    assert preset_answer(ACCEPT_EDITS, req(human_only=True), ws) is None  # a secret
    assert preset_answer(ACCEPT_EDITS, req(tool="shell", command="rm x", writes=[]), ws) is None


def test_sandboxed_auto_approves_what_run_yes_approves_and_nothing_else(tmp_path: Path) -> None:
    ws = str(tmp_path)
    shell = {"tool": "shell", "command": "make", "reasons": ["runs make"], "writes": []}
    assert preset_answer(SANDBOXED_AUTO, req(**shell, sandboxed=True), ws).by == "yes"
    assert preset_answer(SANDBOXED_AUTO, req(**shell, sandboxed=False), ws) is None  # no sandbox, or an MCP tool
    assert preset_answer(SANDBOXED_AUTO, req(**shell, sandboxed=True, escalation=True), ws) is None
    assert preset_answer(SANDBOXED_AUTO, req(**shell, sandboxed=True, human_only=True), ws) is None


def test_prompt_calls_take_named_arguments_or_the_rest_for_a_single_one() -> None:
    review = ("t", PromptInfo("review", "", [("file", True)]))
    two = ("t", PromptInfo("pair", "", [("a", True), ("b", False)]))
    prompts = [review, two]
    assert prompt_call("/t.review file=a.py", prompts) == (review, {"file": "a.py"})
    assert prompt_call("/t.review the main module", prompts) == (review, {"file": "the main module"})
    assert prompt_call("/t.review", prompts) == (review, "/t.review needs file=…")
    assert prompt_call('/t.pair a="x y" b=2', prompts) == (two, {"a": "x y", "b": "2"})
    assert "takes a=…, b=…" in prompt_call("/t.pair c=1", prompts)[1]
    assert prompt_call("/t.other", prompts) is None and prompt_call("review", prompts) is None


def test_annotations_never_grant_more_than_the_user_did() -> None:
    ro, destructive, both = Hints(read_only=True), Hints(destructive=True), Hints(read_only=True, destructive=True)
    assert decide("x", "s", ro, allowed=False, trust_read_only=True).ask is False
    assert decide("x", "s", ro, allowed=False, trust_read_only=False).ask is True
    assert decide("x", "s", Hints(), allowed=False, trust_read_only=True).ask is True  # no hint: asks
    d = decide("x", "s", destructive, allowed=True, trust_read_only=True)
    assert d.ask and d.once_only  # destructive asks even when allow-listed
    assert decide("x", "s", both, allowed=False, trust_read_only=True).ask is True
    assert decide("x", "s", Hints(), allowed=True, trust_read_only=False).ask is False
