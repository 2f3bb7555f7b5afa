"""R6's approval records: every safety-gate outcome, with its scope and pattern.

Read from the Auditor's tap like everything else: an `ApprovalRecord` the gate published (an
outcome no question preceded), or a ConfirmationRequest paired with its ConfirmationDecision (an
outcome someone — a person, `--yes`, nobody — answered). Pure code, fed envelopes, so tests replay
recorded bus sequences.
"""

from __future__ import annotations

from collections import OrderedDict

from agentui.contracts import (
    ApprovalRecord,
    ConfirmationDecision,
    ConfirmationRequest,
    Envelope,
    Role,
)

MAX_PENDING = 1024  # requests awaiting their decision (a cancelled task leaves some behind)
_SCOPE = {"approve": "once", "always": "task", "task": "task", "session": "session", "project": "project"}


class ApprovalTracker:
    """Turns gate traffic into ApprovalRecords (one per outcome)."""

    def __init__(self) -> None:
        self.pending: OrderedDict[str, tuple[ConfirmationRequest, str]] = OrderedDict()

    def observe(self, env: Envelope) -> ApprovalRecord | None:
        p = env.payload
        if isinstance(p, ApprovalRecord) and env.sender == Role.SAFETY:
            return p.model_copy(update={"ts": env.ts, "evidence": [env.id]})
        if isinstance(p, ConfirmationRequest) and env.sender == Role.SAFETY:
            self.pending[p.request_id] = (p, env.id)
            while len(self.pending) > MAX_PENDING:
                self.pending.popitem(last=False)
            return None
        if isinstance(p, ConfirmationDecision) and env.receiver == Role.SAFETY:
            req, req_env = self.pending.pop(p.request_id, (None, None))
            return _paired(p, req, [e for e in (req_env, env.id) if e], env.ts)
        return None


def _paired(d: ConfirmationDecision, req: ConfirmationRequest | None, evidence: list[str],
            ts: str) -> ApprovalRecord:
    scope = _SCOPE.get(d.decision.value)
    if req is not None and scope is not None and scope not in req.scopes:
        scope = "once"  # a broader answer than offered counts once (the runtime does the same)
    stored = list(req.patterns) if req is not None and scope in ("task", "session", "project") else []
    return ApprovalRecord(
        task_id=d.task_id, subtask_id=req.subtask_id if req else None, tool=req.tool if req else "?",
        command=req.command if req else "", decision="approved" if scope else "denied",
        scope=scope, patterns=stored, by=d.answered_by,
        reasons=list(req.reasons) if req else [], cwd=req.cwd if req else "",
        sandboxed=req.sandboxed if req else False, escalation=req.escalation if req else False,
        request_id=d.request_id, ts=ts, evidence=evidence)
