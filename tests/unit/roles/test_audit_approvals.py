"""R6's approval records (#14), fed recorded-style bus sequences: one record per gate outcome."""

from __future__ import annotations

from agentui.contracts import (
    ApprovalRecord,
    ConfirmationChoice,
    ConfirmationDecision,
    ConfirmationRequest,
    Envelope,
    Role,
)
from agentui.roles.audit_approvals import MAX_PENDING, ApprovalTracker
from agentui.roles.auditor import ALLOWED_ROUTES

R = Role


def env(n: int, sender: Role, receiver: Role, payload) -> Envelope:  # noqa: ANN001
    return Envelope(id=f"m{n}", ts=f"2026-01-01T00:00:0{n % 10}.000Z", task_id="t1", sender=sender,
                    receiver=receiver, type=type(payload).__name__, payload=payload)


def request(rid: str, **kw) -> ConfirmationRequest:  # noqa: ANN003
    return ConfirmationRequest(**{"request_id": rid, "task_id": "t1", "subtask_id": "s1", "tool": "shell",
                                  "command": "git commit -m x", "reasons": ["git commit is not read-only"],
                                  "patterns": ["git commit"], "scopes": ["once", "task", "session", "project"],
                                  **kw})


def test_a_project_answer_records_its_stored_pattern_and_who_answered() -> None:
    t = ApprovalTracker()
    assert t.observe(env(1, R.SAFETY, R.USER, request("q1"))) is None
    rec = t.observe(env(2, R.USER, R.SAFETY, ConfirmationDecision(request_id="q1", task_id="t1",
                                                                  decision=ConfirmationChoice.PROJECT)))
    assert rec is not None and (rec.decision, rec.scope, rec.patterns, rec.by) == \
        ("approved", "project", ["git commit"], "user")
    assert rec.command == "git commit -m x" and rec.subtask_id == "s1" and rec.evidence == ["m1", "m2"]
    assert rec.ts == "2026-01-01T00:00:02.000Z" and not t.pending


def test_once_stores_nothing_deny_is_denied_and_a_broader_answer_counts_once() -> None:
    t = ApprovalTracker()
    t.observe(env(1, R.SAFETY, R.USER, request("q1")))
    t.observe(env(2, R.SAFETY, R.USER, request("q2", scopes=["once"], human_only=True, patterns=[])))
    t.observe(env(3, R.SAFETY, R.USER, request("q3")))
    once = t.observe(env(4, R.USER, R.SAFETY, ConfirmationDecision(
        request_id="q1", task_id="t1", decision=ConfirmationChoice.APPROVE, answered_by="yes")))
    broad = t.observe(env(5, R.USER, R.SAFETY, ConfirmationDecision(
        request_id="q2", task_id="t1", decision=ConfirmationChoice.SESSION)))
    no = t.observe(env(6, R.USER, R.SAFETY, ConfirmationDecision(
        request_id="q3", task_id="t1", decision=ConfirmationChoice.DENY, answered_by="unattended")))
    assert (once.decision, once.scope, once.patterns, once.by) == ("approved", "once", [], "yes")
    assert (broad.decision, broad.scope, broad.patterns) == ("approved", "once", [])
    assert (no.decision, no.scope, no.by) == ("denied", None, "unattended")


def test_gate_records_pass_through_with_time_and_evidence() -> None:
    t = ApprovalTracker()
    rec = ApprovalRecord(task_id="t1", tool="shell", command="rm -rf ~", decision="refused", by="hard-deny",
                         reasons=["rm would delete your home"])
    got = t.observe(env(7, R.SAFETY, R.USER, rec))
    assert got is not None and got.ts == "2026-01-01T00:00:07.000Z" and got.evidence == ["m7"]
    assert t.observe(env(8, R.USER, R.PERCEIVER, rec)) is None  # only the gate speaks for the gate
    assert (R.SAFETY, R.USER, "ApprovalRecord") in ALLOWED_ROUTES


def test_pending_requests_are_bounded_and_an_unpaired_decision_is_still_recorded() -> None:
    t = ApprovalTracker()
    for i in range(MAX_PENDING + 10):
        t.observe(env(i, R.SAFETY, R.USER, request(f"q{i}")))
    assert len(t.pending) == MAX_PENDING and "q0" not in t.pending
    rec = t.observe(env(9, R.USER, R.SAFETY, ConfirmationDecision(request_id="q0", task_id="t1",
                                                                  decision=ConfirmationChoice.TASK)))
    assert rec is not None and rec.decision == "approved" and rec.tool == "?"
