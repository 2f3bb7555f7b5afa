"""Every bus payload of roles-v0.8 (with v0.7/v0.6 where v0.8 defers to them) as pydantic v2 models.

This module owns the contracts between roles (DESIGN §3). Rules:
- every model forbids extra fields (`extra="forbid"`): a schema drift is an error, not a guess;
- every closed set of the spec is an enum;
- IDs (task, subtask, megram, envelope) are assigned by the runtime, never by an LLM;
- anything written to disk goes through :func:`canonical_json` (sorted keys, UTF-8, no NaN).

Where this goes beyond the spec, the field says so in its description (e.g. structured tool-call
records instead of v0.6's "tool:command → last 120 chars" strings, so blocked_targets can match
real tool calls — a known failure of the original implementation).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

# ---------------------------------------------------------------------------------------------
# Closed sets
# ---------------------------------------------------------------------------------------------


class Role(StrEnum):
    """Bus endpoints. R1–R7 plus the human and the runtime (dispatcher, session)."""

    USER = "user"
    PERCEIVER = "perceiver"  # R1
    PLANNER = "planner"  # R2 (its dispatcher is code inside R2, v0.6 "Dispatcher" invariant)
    EXECUTOR = "executor"  # R3
    AGENT_VALIDATOR = "agent_validator"  # R4a
    META_VALIDATOR = "meta_validator"  # R4b
    MEMORY = "memory"  # R5
    AUDITOR = "auditor"  # R6
    GGS = "ggs"  # R7
    RUNTIME = "runtime"  # session bookkeeping: task start/cancel, LLM usage records
    SAFETY = "safety"  # the tool safety gate (asks the user before destructive effects)


ROLE_LABELS: dict[Role, str] = {
    Role.USER: "User",
    Role.PERCEIVER: "R1 Perceiver",
    Role.PLANNER: "R2 Planner",
    Role.EXECUTOR: "R3 Executor",
    Role.AGENT_VALIDATOR: "R4a Agent-Validator",
    Role.META_VALIDATOR: "R4b Meta-Validator",
    Role.MEMORY: "R5 Memory",
    Role.AUDITOR: "R6 Auditor",
    Role.GGS: "R7 GGS",
    Role.RUNTIME: "Runtime",
    Role.SAFETY: "Safety gate",
}


class MacroState(StrEnum):
    """GGS macro-states (v0.8 §R7) plus `accept` (D = 0 happy path) and `init` (no previous state)."""

    INIT = "init"
    ACCEPT = "accept"
    SUCCESS = "success"
    ABANDON = "abandon"
    BREAK_SYMMETRY = "break_symmetry"
    CHANGE_APPROACH = "change_approach"
    CHANGE_PATH = "change_path"
    REFINE = "refine"


class ActionDirective(StrEnum):
    """`PlanDirective.directive` — action macro-states only (v0.8)."""

    REFINE = "refine"
    CHANGE_PATH = "change_path"
    CHANGE_APPROACH = "change_approach"
    BREAK_SYMMETRY = "break_symmetry"


class TerminalDirective(StrEnum):
    """`FinalResult.directive` — always one of accept, success, abandon (v0.8 invariant)."""

    ACCEPT = "accept"
    SUCCESS = "success"
    ABANDON = "abandon"


class FailureClass(StrEnum):
    LOGICAL = "logical"
    ENVIRONMENTAL = "environmental"


class DirectiveFailureClass(StrEnum):
    LOGICAL = "logical"
    ENVIRONMENTAL = "environmental"
    MIXED = "mixed"


class Verdict(StrEnum):
    PASS = "pass"
    FAIL = "fail"


class CriterionMode(StrEnum):
    VERIFIABLE = "verifiable"
    PLAUSIBLE = "plausible"


class ExecutionStatus(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"


class OutcomeStatus(StrEnum):
    MATCHED = "matched"
    FAILED = "failed"


class Recommendation(StrEnum):
    REPLAN = "replan"
    ABANDON = "abandon"


class Level(StrEnum):
    """MKCT pyramid layers (v0.8 §6a)."""

    M = "M"
    K = "K"
    C = "C"
    T = "T"


class MemoryAction(StrEnum):
    """Derived action of the dual-channel potentials (v0.8 §6d)."""

    EXPLOIT = "Exploit"
    AVOID = "Avoid"
    CAUTION = "Caution"
    IGNORE = "Ignore"


class Urgency(StrEnum):
    """∇L-sign urgency modulation (v0.8 §R7, implemented as DESIGN §3 asks)."""

    LOW = "low"  # ∇L < -ε: improving
    NORMAL = "normal"  # |∇L| < ε
    HIGH = "high"  # ∇L > ε: worsening


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"


class AuditKind(StrEnum):
    """Anomalies R6 detects (roles-v0.6 §R6 with the v0.7/v0.8 additions)."""

    BOUNDARY_VIOLATION = "boundary_violation"
    DUPLICATE_SUBTASK_ID = "duplicate_subtask_id"
    FAN_IN_INCOMPLETE = "fan_in_incomplete"
    EXCESSIVE_RETRIES = "excessive_retries"
    DRIFT = "drift"
    CONVERGENCE_FAILURE = "convergence_failure"
    GGS_THRASHING = "ggs_thrashing"
    BUDGET_OVERRUN = "budget_overrun"
    PARSE_REPAIR_RATE = "parse_repair_rate"
    TOOL_ERROR_RATE = "tool_error_rate"
    STALLED_TASK = "stalled_task"


class ConfirmationChoice(StrEnum):
    """The user's answer to the safety gate. Broader scopes store the request's patterns."""

    APPROVE = "approve"  # once: this call only
    DENY = "deny"
    TASK = "task"  # this call and later ones matching its patterns, until the task ends
    SESSION = "session"  # … until agentui exits
    PROJECT = "project"  # … always in this workspace (appended to the project allow-list file)
    ALWAYS = "always"  # old name of TASK, kept so older clients still parse


# ---------------------------------------------------------------------------------------------
# Base
# ---------------------------------------------------------------------------------------------


class Contract(BaseModel):
    """Base of every bus payload: strict, no extra fields, enums serialised as their values."""

    model_config = ConfigDict(extra="forbid", use_enum_values=False, validate_default=True, defer_build=True)

    def to_json(self) -> str:
        return canonical_json(self.model_dump(mode="json"))


# ---------------------------------------------------------------------------------------------
# R1 Perceiver
# ---------------------------------------------------------------------------------------------


class UserInput(Contract):
    """Free text typed by the user (user → R1). `history` is the last few turns of the session."""

    task_id: str
    text: str
    history: list[str] = Field(default_factory=list)


class Constraints(Contract):
    scope: str | None = None
    deadline: str | None = None  # ISO 8601


class TaskSpec(Contract):
    """R1 → R2 (v0.7 §R1). `raw_input` is verbatim, never rephrased."""

    task_id: str
    intent: str
    constraints: Constraints = Field(default_factory=Constraints)
    raw_input: str
    history: list[str] = Field(default_factory=list, description=(
        "The session's last turns (what was asked and what came of it), so a follow-up "
        "(\"and how many words?\") can be planned; bounded by the runtime"))


class ClarificationRequest(Contract):
    """R1 → user: asked only when no reasonable interpretation exists (max 2 rounds)."""

    request_id: str
    task_id: str
    question: str
    round: int = Field(ge=1, le=2)


class ClarificationAnswer(Contract):
    """user → R1. An empty answer means "proceed with your best interpretation"."""

    request_id: str
    task_id: str
    answer: str = ""


class PerceiverReply(Contract):
    """R1 fast path → user: greetings and short conversational questions, no pipeline."""

    task_id: str
    text: str


# ---------------------------------------------------------------------------------------------
# R2 Planner
# ---------------------------------------------------------------------------------------------


class Criterion(Contract):
    """Structured criterion `{criterion, mode}` (deferred in v0.7, implemented here: feeds D's k/N)."""

    criterion: str = Field(min_length=1)
    mode: CriterionMode = CriterionMode.VERIFIABLE
    check: str = Field(default="", max_length=300, description=(
        "A read-only shell command whose output shows whether the criterion holds; the validators "
        "run it through the safety gate before they judge. Empty: no check."))


class SubTask(Contract):
    """R2 → R3 (v0.7 §R2). `subtask_id` is assigned by the runtime after parsing, never by the LLM."""

    subtask_id: str
    parent_task_id: str
    intent: str
    success_criteria: list[Criterion] = Field(min_length=1)
    context: str = ""
    deadline: str | None = None
    sequence: int = Field(default=1, ge=0)
    tools: list[str] = Field(
        default_factory=list,
        description="Tools the plan intends this subtask to use; checked by R2's plan validator.",
    )


class DispatchManifest(Contract):
    """R2 → R4b: what to fan in and the task-level criteria R4b verifies the merged result against."""

    task_id: str
    subtask_ids: list[str]
    task_spec: TaskSpec | None = None
    dispatched_at: str
    task_criteria: list[Criterion] = Field(default_factory=list)
    round: int = Field(default=0, ge=0, description="0 = first plan; n = n-th replan")
    planner_error: str | None = Field(
        default=None, description="set (with no subtasks) when R2 could not produce a valid plan"
    )
    planner_error_kind: Literal["plan", "model_output"] | None = Field(
        default=None, description="model_output: the model's replies were unusable, not the plan wrong"
    )
    planner_output_cut: str | None = Field(
        default=None, description="with model_output: why the last reply was unusable — invalid, length, "
        "runaway:<how> or deadline (the advice depends on it)"
    )
    memory_ids: list[str] = Field(default_factory=list, description=(
        "the Megrams whose lessons the plan's prompt showed, most relevant first (`agentui memory show ID`)"))


# ---------------------------------------------------------------------------------------------
# R3 Executor / R4a Agent-Validator
# ---------------------------------------------------------------------------------------------


class ToolCallRecord(Contract):
    """One tool call, recorded by code (never by the LLM).

    `target` is the normalised input that failed or succeeded (command, path, query) — the unit of
    GGS `blocked_targets`. `evidence` is the head+tail-capped output the LLMs see; the full output
    goes to the task log under `log_ref`.
    """

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    target: str = ""
    ok: bool
    exit_code: int | None = None
    evidence: str = ""
    error: str | None = None
    duration_s: float = Field(default=0.0, ge=0)
    log_ref: str | None = None
    writes: list[str] = Field(default_factory=list, description=(
        "paths the call wrote, moved or removed, as the safety gate read it before it ran"))


class ExecutionResult(Contract):
    """R3 → R4a (v0.6 §R3)."""

    subtask_id: str
    attempt: int = Field(default=1, ge=1)
    status: ExecutionStatus
    output: Any = None
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    infeasible_reason: str | None = None
    model_output_cut: str | None = Field(default=None, description=(
        "the executor's replies were still unusable after the re-ask: why they were cut "
        "(length, loop, deadline, schema) — the model's output failed, not the approach"))


class CorrectionSignal(Contract):
    """R4a → R3 (v0.6 §R4a): the fast loop's directed correction."""

    subtask_id: str
    attempt_number: int = Field(ge=1)
    failed_criterion: str
    failure_class: FailureClass
    what_was_wrong: str
    what_to_do: str


class CriterionVerdict(Contract):
    criterion: str
    mode: CriterionMode = CriterionMode.VERIFIABLE
    verdict: Verdict
    failure_class: FailureClass | None = None  # None iff verdict == pass
    evidence: str = ""

    @model_validator(mode="after")
    def _class_iff_fail(self) -> CriterionVerdict:
        if self.verdict == Verdict.PASS:
            self.failure_class = None
        elif self.failure_class is None:
            raise ValueError("a failed criterion needs a failure_class (logical | environmental)")
        return self


class FailedCriterion(Contract):
    criterion: str
    failure_class: FailureClass


class GapAttempt(Contract):
    attempt: int = Field(ge=1)
    failed_criteria: list[FailedCriterion] = Field(default_factory=list)


class SubTaskOutcome(Contract):
    """R4a → R4b (v0.6 §R4a). `status` is code-aggregated: one failed criterion = failed."""

    subtask_id: str
    parent_task_id: str
    status: OutcomeStatus
    output: Any = None
    failure_reason: str | None = None
    criteria_verdicts: list[CriterionVerdict] = Field(default_factory=list)
    gap_trajectory: list[GapAttempt] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(
        default_factory=list,
        description="Structured records of the last attempt's tool calls (for blocked_tools/targets).",
    )
    intent: str = ""
    sequence: int = 1
    model_output_cut: str | None = Field(default=None, description=(
        "set when the last attempt failed only because the executor's replies were unusable"))
    changes: list[str] = Field(default_factory=list, description=(
        "workspace paths successful calls of any attempt wrote, moved or removed, as code found them"))


# ---------------------------------------------------------------------------------------------
# R4b Meta-Validator
# ---------------------------------------------------------------------------------------------


class ReplanRequest(Contract):
    """R4b → R7 (v0.7 §R4b), with full outcome data for the gradient."""

    task_id: str
    intent: str = Field(default="", description="TaskSpec.intent, so GGS can tag its Megrams (v0.8 §6b)")
    gap_summary: str
    answer: str | None = Field(default=None, description="R4b's single answer, when it judged the result")
    failed_subtasks: list[str] = Field(default_factory=list)
    correction_count: int = Field(default=0, ge=0)
    elapsed_ms: int = Field(default=0, ge=0)
    outcomes: list[SubTaskOutcome] = Field(default_factory=list)
    recommendation: Recommendation = Recommendation.REPLAN
    task_criteria_verdicts: list[CriterionVerdict] = Field(
        default_factory=list,
        description="R4b's per-criterion verification of task_criteria (so a failed task criterion "
        "reaches GGS as D > 0, never as D = 0).",
    )
    reason: Literal["gate", "task_criteria", "fan_in_timeout", "meta_validator_error", "model_output",
                    "verification_output"] = "gate"
    output_cut: str | None = Field(default=None, description=(
        "reason=model_output: DispatchManifest.planner_output_cut; reason=verification_output: why "
        "R4b's own reply was unusable"))


class OutcomeSummary(Contract):
    """R4b → R7 when every subtask matched and the merged result passed task_criteria."""

    task_id: str
    intent: str = Field(default="", description="TaskSpec.intent, so GGS can tag its Megrams (v0.8 §6b)")
    summary: str
    answer: str | None = Field(default=None, description="The single answer R4b named (see FinalResult.answer)")
    merged_output: Any = None
    outcomes: list[SubTaskOutcome] = Field(default_factory=list)
    task_criteria_verdicts: list[CriterionVerdict] = Field(default_factory=list)
    elapsed_ms: int = Field(default=0, ge=0)


# ---------------------------------------------------------------------------------------------
# R7 GGS
# ---------------------------------------------------------------------------------------------


class Loss(Contract):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    D: float = Field(ge=0.0, le=1.0)
    P: float = Field(ge=0.0, le=1.0)
    Omega: float = Field(ge=0.0)
    L: float


class PlanDirective(Contract):
    """R7 → R2 (v0.8 §R7), action macro-states only."""

    task_id: str
    loss: Loss
    prev_directive: MacroState
    directive: ActionDirective
    blocked_tools: list[str] = Field(default_factory=list)
    blocked_targets: list[str] = Field(default_factory=list)
    failed_criterion: str = ""
    failure_class: DirectiveFailureClass = DirectiveFailureClass.MIXED
    budget_pressure: float = 0.0
    grad_l: float = 0.0
    rationale: str = ""
    urgency: Urgency = Urgency.NORMAL
    round: int = Field(default=1, ge=1, description="replan round this directive opens")
    steps_passed: bool = Field(default=False, description=(
        "extension: every subtask of the round passed its criteria; the task criteria failed"))


class FinalResult(Contract):
    """R7 → user (v0.8 §R7). GGS is its sole emitter on every path."""

    task_id: str
    summary: str
    answer: str | None = Field(default=None, description=(
        "The single answer the request asks for (a number, a name, a path, yes/no), as R4b named it "
        "and a check confirmed; None when the request asks for none or the task is not done."))
    output: Any = None
    loss: Loss
    grad_l: float = 0.0
    replans: int = Field(default=0, ge=0)
    prev_directive: MacroState = MacroState.INIT
    directive: TerminalDirective
    next_moves: list[str] = Field(
        default_factory=list, description="On abandon: 2–3 concrete next moves (graceful failure)."
    )
    partial_result: Any = None


# ---------------------------------------------------------------------------------------------
# R5 Memory (MKCT)
# ---------------------------------------------------------------------------------------------


class Megram(Contract):
    """⟨ID, Level, created_at, last_recalled_at, space, entity, content, state, f, sigma, k⟩ (v0.8 §6b)."""

    id: str
    level: Level = Level.M
    created_at: str  # RFC 3339, UTC
    last_recalled_at: str | None = None
    space: str
    entity: str
    content: str
    state: str  # the macro-state that produced it (or "manual", "consolidated", "negative_feedback")
    f: float = Field(ge=0.0, le=1.0)
    sigma: float = Field(ge=-1.0, le=1.0)
    k: float = Field(ge=0.0)


class SOPRecord(Contract):
    """A C-level SOP or Constraint served to R2 by QueryC."""

    id: str
    space: str
    entity: str
    content: str
    sigma: float
    f: float
    created_at: str
    last_recalled_at: str | None = None

    @property
    def is_constraint(self) -> bool:
        return self.sigma < 0


class Potentials(Contract):
    """Live dual-channel convolution for one tag pair (v0.8 §6d)."""

    attention: float = 0.0
    decision: float = 0.0
    action: MemoryAction = MemoryAction.IGNORE
    count: int = Field(default=0, ge=0, description="Megrams the potentials were computed over")


class MegramWritten(Contract):
    """memory → runtime notice that a batch of Megrams is durable (lets the UI refresh)."""

    ids: list[str]


# ---------------------------------------------------------------------------------------------
# R6 Auditor
# ---------------------------------------------------------------------------------------------


class AuditEvent(Contract):
    event_id: str
    ts: str
    kind: AuditKind
    severity: Severity
    task_id: str | None = None
    message: str
    evidence: list[str] = Field(default_factory=list, description="ids of the envelopes involved")
    details: dict[str, Any] = Field(default_factory=dict)


class AuditReport(Contract):
    report_id: str
    ts: str
    trigger: Literal["periodic", "on_demand"]
    window_start: str | None = None
    window_end: str
    messages_seen: int = 0
    tasks_seen: int = 0
    events_by_kind: dict[str, int] = Field(default_factory=dict)
    events: list[AuditEvent] = Field(default_factory=list)
    stats: dict[str, Any] = Field(default_factory=dict)
    summary: str = ""


# ---------------------------------------------------------------------------------------------
# Safety gate (human in the loop) and runtime bookkeeping
# ---------------------------------------------------------------------------------------------


class FileDiff(Contract):
    """What a file write would change, shown with its confirmation: a unified diff (bounded, each
    line sanitized) and, when they fit, the whole text before and after (an ACP client draws its
    own diff from them). `old_text` is None for a new file, and both are None when the text is not
    carried whole (too large, binary): `diff` then says so."""

    path: str = Field(description="the file as the user knows it: relative to the workspace")
    abs_path: str = ""
    diff: str
    new_file: bool = False
    binary: bool = False
    old_text: str | None = None
    new_text: str | None = None
    added: int = 0
    removed: int = 0


class ConfirmationRequest(Contract):
    """safety → user: an effect the allow-list does not cover needs an explicit yes.

    Every text field is sanitized (no ANSI or control characters). `patterns` is what "always for
    this project" stores (shown in the button); `scopes` lists the answers offered besides deny;
    `human_only` (a secret) is never answered by --yes; `escalation` asks to run outside the sandbox;
    `caution` marks the planner's go-ahead question, which runs no command; `change` is a file
    write's diff, shown above the answers.
    """

    request_id: str
    task_id: str
    subtask_id: str | None = None
    tool: str
    command: str
    reasons: list[str] = Field(min_length=1)
    cwd: str = ""
    patterns: list[str] = Field(default_factory=list)
    scopes: list[str] = Field(default_factory=lambda: ["once"])
    writes: list[str] = Field(default_factory=list)
    network: list[str] = Field(default_factory=list)
    human_only: bool = False
    sandboxed: bool = False
    escalation: bool = False
    caution: bool = Field(default=False, description=(
        "memory's Caution band asks whether to go ahead with a plan (v0.8 §R2), not the gate about a "
        "command: --yes and an unattended tree run give the go-ahead; an approval of it approves no command"))
    change: FileDiff | None = None


AnsweredBy = Literal["user", "yes", "unconfined", "unattended", "error", "timeout"]
"""Who answered a ConfirmationRequest: a person (TTY, TUI, ACP client), `--yes` (inside the OS
sandbox, or memory's Caution go-ahead), `--unconfined`, nobody (non-interactive: denied; a tree
run's go-ahead for memory's Caution), a prompt that failed (denied), or an
ACP client that did not answer within `acp.permission_timeout_s` (denied)."""


class ConfirmationDecision(Contract):
    """user → safety. Anything but an approve-scope is a denial (an environmental failure)."""

    request_id: str
    task_id: str
    decision: ConfirmationChoice
    answered_by: AnsweredBy = "user"


class ApprovalRecord(Contract):
    """One safety-gate outcome as the Auditor logs it: every approval with its scope and pattern.

    The gate publishes it (safety → user) for outcomes no question preceded: a pattern already on
    record (task/session/project), the hard deny-list, nobody to ask, a remembered tool rule. For
    asked ones the Auditor builds it from the ConfirmationRequest/ConfirmationDecision pair.
    """

    task_id: str
    subtask_id: str | None = None
    tool: str
    command: str = Field(description="what the prompt showed (sanitized, one line)")
    decision: Literal["approved", "denied", "refused"]  # refused: the hard deny-list
    scope: Literal["once", "task", "session", "project"] | None = None
    patterns: list[str] = Field(default_factory=list,
                                description="the patterns stored (task/session/project) or that covered it")
    by: Literal["user", "yes", "unconfined", "unattended", "error", "timeout", "stored", "hard-deny", "memory-rule"]
    reasons: list[str] = Field(default_factory=list)
    cwd: str = ""
    sandboxed: bool = False
    escalation: bool = False
    request_id: str | None = None
    ts: str | None = Field(default=None, description="set by the Auditor: when the outcome was on the bus")
    evidence: list[str] = Field(default_factory=list, description="set by the Auditor: the envelope ids")


class TaskStarted(Contract):
    task_id: str
    text: str
    workspace: str = ""


class TaskCancelled(Contract):
    task_id: str
    reason: str = "cancelled by user"


class LLMUsage(Contract):
    """One LLM call's accounting (runtime records it for the cost table and R6's repair rate)."""

    role: Role
    model: str = ""
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    latency_s: float = Field(default=0.0, ge=0)
    ok: bool = True
    parse_repairs: int = Field(default=0, ge=0)
    error: str | None = None
    failure: Literal["output", "infra"] | None = Field(
        default=None, description="output: the reply was unusable (a parse failure); infra: the endpoint failed")
    cut: str | None = Field(default=None, description="length | runaway:<how> | deadline | invalid")
    cost_usd: float | None = Field(default=None, ge=0, description="the call's cost as the endpoint reported "
                                   "it; None when it did not")


class LLMDelta(Contract):
    """A role's reply text as it is generated, throttled by the runtime (a few per second per call):
    `text` continues the previous LLMDelta of the same task, role and `call`; `fresh` marks a call's
    first. The call's result still arrives as the usual message: this is a display, not a contract."""

    role: Role
    call: int = Field(default=0, ge=0, description="which call of the role (parallel calls stay apart)")
    text: str = ""
    fresh: bool = False
    done: bool = Field(default=False, description="the call's reply is complete (or the call failed)")
    chars: int = Field(default=0, ge=0, description="characters of the reply so far")
    skipped: int = Field(default=0, ge=0, description="characters left out before `text` to keep it short")


PAYLOAD_TYPES: dict[str, type[Contract]] = {
    cls.__name__: cls
    for cls in (
        UserInput,
        TaskSpec,
        ClarificationRequest,
        ClarificationAnswer,
        PerceiverReply,
        SubTask,
        DispatchManifest,
        ExecutionResult,
        CorrectionSignal,
        SubTaskOutcome,
        ReplanRequest,
        OutcomeSummary,
        PlanDirective,
        FinalResult,
        Megram,
        MegramWritten,
        AuditEvent,
        AuditReport,
        ConfirmationRequest,
        ConfirmationDecision,
        ApprovalRecord,
        TaskStarted,
        TaskCancelled,
        LLMUsage,
        LLMDelta,
    )
}


# ---------------------------------------------------------------------------------------------
# Envelope
# ---------------------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Envelope:
    """`{id, ts, task_id, sender, receiver, type, payload}` — what travels on the bus.

    A plain slotted dataclass rather than a pydantic model: the payload is already validated, and
    the bus must move ≥ 100k envelopes/s (DESIGN §8). `from_dict` validates everything.
    """

    id: str
    ts: str
    task_id: str | None
    sender: Role
    receiver: Role
    type: str
    payload: Contract = field(compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ts": self.ts,
            "task_id": self.task_id,
            "sender": self.sender.value,
            "receiver": self.receiver.value,
            "type": self.type,
            "payload": self.payload.model_dump(mode="json"),
        }

    def to_json(self) -> str:
        return canonical_json(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Envelope:
        missing = {"id", "ts", "sender", "receiver", "type", "payload"} - data.keys()
        if missing:
            raise ValueError(f"envelope is missing {sorted(missing)}")
        extra = data.keys() - {"id", "ts", "task_id", "sender", "receiver", "type", "payload"}
        if extra:
            raise ValueError(f"envelope has unknown fields {sorted(extra)}")
        type_name = data["type"]
        model = PAYLOAD_TYPES.get(type_name)
        if model is None:
            raise ValueError(f"unknown payload type {type_name!r}")
        return cls(
            id=str(data["id"]),
            ts=str(data["ts"]),
            task_id=data.get("task_id"),
            sender=Role(data["sender"]),
            receiver=Role(data["receiver"]),
            type=type_name,
            payload=model.model_validate(data["payload"]),
        )

    @classmethod
    def from_json(cls, line: str) -> Envelope:
        return cls.from_dict(json.loads(line))


# ---------------------------------------------------------------------------------------------
# Canonical JSON
# ---------------------------------------------------------------------------------------------


def _reject_nan(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        raise ValueError("canonical JSON has no NaN or Infinity")
    if isinstance(obj, dict):
        for v in obj.values():
            _reject_nan(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            _reject_nan(v)
    return obj


def canonical_json(obj: Any) -> str:
    """Sorted keys, no insignificant whitespace, UTF-8 text (not \\u escapes), NaN refused."""
    if isinstance(obj, BaseModel):
        obj = obj.model_dump(mode="json")
    try:
        return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        _reject_nan(obj)
        raise
