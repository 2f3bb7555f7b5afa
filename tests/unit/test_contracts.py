"""agentui.contracts: every payload round-trips through canonical JSON; schemas are strict."""

from __future__ import annotations

import json
import math

import pytest
from pydantic import ValidationError

from agentui import contracts as c

LOSS = {"D": 0.5, "P": 1.0, "Omega": 0.2, "L": 0.68}
TOOLCALL = {"tool": "shell", "args": {"command": "ls"}, "target": "ls", "ok": False, "exit_code": 2,
            "evidence": "ls: x: No such file", "error": "exit 2", "duration_s": 0.01}
VERDICT = {"criterion": "file exists", "mode": "verifiable", "verdict": "fail",
           "failure_class": "environmental", "evidence": "No such file"}
OUTCOME = {"subtask_id": "s1", "parent_task_id": "t1", "status": "failed", "output": None,
           "failure_reason": "missing", "criteria_verdicts": [VERDICT],
           "gap_trajectory": [{"attempt": 1, "failed_criteria": [{"criterion": "file exists",
                                                                  "failure_class": "environmental"}]}],
           "tool_calls": [TOOLCALL]}
SPEC = {"task_id": "t1", "intent": "count files", "constraints": {"scope": "~/src", "deadline": None},
        "raw_input": "how many files in ~/src?"}

SAMPLES: dict[str, dict] = {
    "UserInput": {"task_id": "t1", "text": "hi", "history": ["earlier"]},
    "TaskSpec": SPEC,
    "ClarificationRequest": {"request_id": "r1", "task_id": "t1", "question": "Which file?", "round": 1},
    "ClarificationAnswer": {"request_id": "r1", "task_id": "t1", "answer": ""},
    "PerceiverReply": {"task_id": "t1", "text": "Hello!"},
    "SubTask": {"subtask_id": "s1", "parent_task_id": "t1", "intent": "list files",
                "success_criteria": [{"criterion": "a count is printed", "mode": "plausible"}],
                "context": "", "deadline": None, "sequence": 1, "tools": ["shell"]},
    "DispatchManifest": {"task_id": "t1", "subtask_ids": ["s1"], "task_spec": SPEC,
                         "dispatched_at": "2026-01-01T00:00:00.000Z",
                         "task_criteria": [{"criterion": "count given", "mode": "verifiable"}], "round": 0},
    "ExecutionResult": {"subtask_id": "s1", "attempt": 1, "status": "completed", "output": {"n": 3},
                        "tool_calls": [TOOLCALL], "infeasible_reason": None},
    "CorrectionSignal": {"subtask_id": "s1", "attempt_number": 1, "failed_criterion": "file exists",
                         "failure_class": "logical", "what_was_wrong": "wrong dir", "what_to_do": "use ~/src"},
    "SubTaskOutcome": OUTCOME,
    "ReplanRequest": {"task_id": "t1", "intent": "count files", "gap_summary": "1/1 failed",
                      "failed_subtasks": ["s1"], "correction_count": 2, "elapsed_ms": 1200,
                      "outcomes": [OUTCOME], "recommendation": "replan",
                      "task_criteria_verdicts": [VERDICT], "reason": "gate"},
    "OutcomeSummary": {"task_id": "t1", "intent": "count files", "summary": "3 files",
                       "merged_output": "3", "outcomes": [], "task_criteria_verdicts": [], "elapsed_ms": 5},
    "PlanDirective": {"task_id": "t1", "loss": LOSS, "prev_directive": "init", "directive": "change_path",
                      "blocked_tools": [], "blocked_targets": ["shell:ls x"], "failed_criterion": "file exists",
                      "failure_class": "environmental", "budget_pressure": 0.2, "grad_l": 0.0,
                      "rationale": "plateau", "urgency": "normal", "round": 1},
    "FinalResult": {"task_id": "t1", "summary": "done", "output": "3", "loss": LOSS, "grad_l": -0.1,
                    "replans": 1, "prev_directive": "change_path", "directive": "success",
                    "next_moves": [], "partial_result": None},
    "Megram": {"id": "m1", "level": "M", "created_at": "2026-01-01T00:00:00.000Z", "last_recalled_at": None,
               "space": "intent:count_files", "entity": "env:local", "content": "ok", "state": "accept",
               "f": 0.9, "sigma": 1.0, "k": 0.05},
    "MegramWritten": {"ids": ["m1"]},
    "AuditEvent": {"event_id": "e1", "ts": "2026-01-01T00:00:00.000Z", "kind": "boundary_violation",
                   "severity": "critical", "task_id": "t1", "message": "executor sent FinalResult",
                   "evidence": ["msg-1"], "details": {"sender": "executor"}},
    "AuditReport": {"report_id": "r1", "ts": "2026-01-01T00:00:00.000Z", "trigger": "on_demand",
                    "window_start": None, "window_end": "2026-01-01T00:00:00.000Z", "messages_seen": 3,
                    "tasks_seen": 1, "events_by_kind": {"drift": 1}, "events": [], "stats": {}, "summary": "ok"},
    "ConfirmationRequest": {"request_id": "q1", "task_id": "t1", "subtask_id": "s1", "tool": "shell",
                            "command": "rm -rf build", "reasons": ["rm deletes files"], "cwd": "/tmp/w"},
    "ConfirmationDecision": {"request_id": "q1", "task_id": "t1", "decision": "deny"},
    "ApprovalRecord": {"task_id": "t1", "tool": "shell", "command": "git commit -m x", "decision": "approved",
                       "scope": "project", "patterns": ["git commit"], "by": "user"},
    "TaskStarted": {"task_id": "t1", "text": "hi", "workspace": "/tmp/w"},
    "TaskCancelled": {"task_id": "t1", "reason": "user"},
    "LLMUsage": {"role": "planner", "model": "m", "prompt_tokens": 10, "completion_tokens": 5,
                 "latency_s": 0.2, "ok": True, "parse_repairs": 1, "error": None},
    "LLMDelta": {"role": "executor", "text": '{"tool": "sh', "fresh": True, "done": False, "chars": 12,
                 "skipped": 0},
}


def test_every_payload_type_has_a_sample() -> None:
    assert set(SAMPLES) == set(c.PAYLOAD_TYPES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_round_trip(name: str) -> None:
    model = c.PAYLOAD_TYPES[name]
    obj = model.model_validate(SAMPLES[name])
    text = obj.to_json()
    assert json.loads(text) == json.loads(c.canonical_json(json.loads(text)))
    back = model.model_validate_json(text)
    assert back == obj
    env = c.Envelope(id="m", ts="2026-01-01T00:00:00.000Z", task_id="t1", sender=c.Role.RUNTIME,
                     receiver=c.Role.USER, type=name, payload=obj)
    assert c.Envelope.from_json(env.to_json()).payload == obj


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_extra_fields_forbidden(name: str) -> None:
    with pytest.raises(ValidationError):
        c.PAYLOAD_TYPES[name].model_validate({**SAMPLES[name], "surprise": 1})


@pytest.mark.parametrize(
    ("name", "field", "bad"),
    [
        ("PlanDirective", "directive", "accept"),  # terminal directives never go to R2
        ("FinalResult", "directive", "refine"),  # FinalResult is accept | success | abandon only
        ("CorrectionSignal", "failure_class", "mixed"),
        ("SubTaskOutcome", "status", "completed"),
        ("Megram", "level", "X"),
        ("ConfirmationDecision", "decision", "maybe"),
        ("ConfirmationDecision", "answered_by", "someone"),
        ("ApprovalRecord", "scope", "forever"),
        ("ApprovalRecord", "by", "nobody"),
        ("ClarificationRequest", "round", 3),  # at most 2 rounds
    ],
)
def test_closed_sets_are_enforced(name: str, field: str, bad: object) -> None:
    with pytest.raises(ValidationError):
        c.PAYLOAD_TYPES[name].model_validate({**SAMPLES[name], field: bad})


def test_failed_verdict_needs_a_class_and_pass_clears_it() -> None:
    with pytest.raises(ValidationError):
        c.CriterionVerdict(criterion="x", verdict="fail")
    v = c.CriterionVerdict(criterion="x", verdict="pass", failure_class="logical")
    assert v.failure_class is None


def test_canonical_json_sorted_utf8_and_no_nan() -> None:
    assert c.canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    with pytest.raises(ValueError):
        c.canonical_json({"x": math.nan})
    with pytest.raises(ValidationError):
        c.Loss(D=math.nan, P=0, Omega=0, L=0)


def test_envelope_rejects_unknown_type_and_fields() -> None:
    base = {"id": "m", "ts": "t", "task_id": None, "sender": "user", "receiver": "perceiver",
            "type": "UserInput", "payload": SAMPLES["UserInput"]}
    assert c.Envelope.from_dict(base).payload.text == "hi"
    with pytest.raises(ValueError):
        c.Envelope.from_dict({**base, "type": "Nope"})
    with pytest.raises(ValueError):
        c.Envelope.from_dict({**base, "extra": 1})
    with pytest.raises(ValueError):
        c.Envelope.from_dict({**base, "sender": "mallory"})
