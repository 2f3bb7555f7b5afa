"""Bus envelopes → ACP `session/update` payloads.

R2's plan becomes an ACP plan (one entry per subtask, re-sent whole when it changes), each tool
call a `tool_call` when it starts and a `tool_call_update` when it ends (live: :func:`tool_start`,
:func:`tool_end`; a replay sends each recorded call whole), R1's reading, GGS's directive with
its rationale and the executor's and R4b's text while it is generated thought chunks, the
FinalResult (or R1's reply) the agent message, each LLM call a `usage_update`. The same mapping
replays a loaded session from its bus recordings.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from acp import helpers as h
from acp.schema import Cost, Usage, UsageUpdate

from agentui.contracts import (
    ROLE_LABELS,
    DispatchManifest,
    Envelope,
    ExecutionResult,
    FinalResult,
    LLMDelta,
    LLMUsage,
    OutcomeStatus,
    PerceiverReply,
    PlanDirective,
    Role,
    SubTask,
    SubTaskOutcome,
    TaskCancelled,
    TaskSpec,
    TaskStarted,
    ToolCallRecord,
)
from agentui.tools.hooks import ToolEvent
from agentui.tools.safety import one_line, sanitize

KINDS = {"shell": "execute", "read_file": "read", "write_file": "edit", "glob": "search",
         "file_search": "search", "web_search": "fetch", "applescript": "execute", "shortcuts": "execute"}


# what an editor shows is sanitized like the gate's questions: no escapes or control characters
# (a terminal client such as Toad would otherwise interpret them)
def _user(text: str) -> Any:
    return h.update_user_message_text(sanitize(text))


def _thought(text: str) -> Any:
    return h.update_agent_thought_text(sanitize(text))


def message_text(text: str) -> Any:
    return h.update_agent_message_text(sanitize(text))


def tool_kind(tool: str) -> str:
    return KINDS.get(tool, "other")


def _show(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)


_YES_ADVICE = "(or pass --yes to approve inside the sandbox)"
_EDITOR_ADVICE = "(or switch this session to the Sandboxed auto mode to approve inside the sandbox)"


def editor_advice(move: str, *, timed_out: bool = False) -> str:
    """A next move as advice for someone in an editor: no command-line flags, and a permission
    request nobody answered is not called a denial."""
    move = move.replace(_YES_ADVICE, _EDITOR_ADVICE).replace("pass --yes", "use the Sandboxed auto mode")
    if timed_out and move.startswith("You denied "):
        move = "Nobody answered the permission request for " + move[len("You denied "):]
    return move


def final_text(f: FinalResult, *, timed_out: bool = False) -> str:
    """The agent message for a task's end: the single answer first, when there is one."""
    head = f.summary if f.directive.value in ("accept", "success") else (
        f"{f.directive.value} after {f.replans} replan(s): {f.summary}")
    parts = [f"Answer: {f.answer}", head] if f.answer else [head]
    body = _show(f.output)
    if body and body.strip() not in (f.summary.strip(), (f.answer or "").strip()):
        parts.append(body)
    if f.partial_result not in (None, "", {}, []):
        parts.append("Partial result: " + _show(f.partial_result))
    parts.extend(f"→ {editor_advice(m, timed_out=timed_out)}" for m in f.next_moves)
    return "\n\n".join(parts)


@dataclass
class Tokens:
    prompt: int = 0
    completion: int = 0
    calls: int = 0

    def usage(self) -> Usage:
        return Usage(total_tokens=self.prompt + self.completion, input_tokens=self.prompt,
                     output_tokens=self.completion)


@dataclass
class Mapper:
    """Per session: keeps the current plan so each change re-sends it whole (ACP replaces plans)."""

    subtasks: dict[str, str] = field(default_factory=dict)  # subtask_id → intent
    plan: dict[str, str] = field(default_factory=dict)  # subtask_id in the current plan → status
    failed: set[str] = field(default_factory=set)
    tokens: dict[str, Tokens] = field(default_factory=dict)  # per task
    window: Callable[[str], int] = lambda _model: 0  # model → its context window (0: unknown)
    cut: dict[str, bool] = field(default_factory=dict)  # task → a reply hit its token budget
    refused: dict[str, bool] = field(default_factory=dict)  # task → the hard deny-list refused a call
    timed_out: set[str] = field(default_factory=set)  # tasks with a permission request nobody answered
    answered: set[str] = field(default_factory=set)  # tasks with a permission request someone denied
    memory: Any = None  # the store the plans' Megrams are read from (None: they are named by id only)
    lessons: list[dict[str, str]] = field(default_factory=list)  # the current plan's Megrams, for `_meta`
    ended: set[str] = field(default_factory=set)  # tasks whose turn is over (no live text after it)
    # the session's cost: the sum of what the endpoint reported, shown only while every call that got
    # an answer reported one (a partial sum would understate it; an estimate would be invented)
    cost_usd: float = 0.0
    cost_reported: bool = False
    cost_unknown: bool = False

    def count_cost(self, p: LLMUsage) -> None:
        if not (p.prompt_tokens or p.completion_tokens):  # no answer came back: nothing was billed
            return
        if p.cost_usd is None:
            self.cost_unknown = True
        else:
            self.cost_usd += p.cost_usd
            self.cost_reported = True

    def cost(self) -> Cost | None:
        if self.cost_unknown or not self.cost_reported:
            return None
        return Cost(amount=round(self.cost_usd, 6), currency="USD")

    def _plan_update(self) -> Any:
        """ACP v1 plan entries end as "completed" only; a failed one says so in its `_meta`
        (`{"agentui": {"status": "failed"}}`) and a thought names it when it fails. A plan made with
        memory carries its Megrams in the plan's own `_meta` (`{"agentui": {"memory": [...]}}`)."""
        entries = []
        for sid, status in self.plan.items():
            entry = h.plan_entry(self.subtasks.get(sid, sid), status=status)
            if sid in self.failed:
                entry.field_meta = {"agentui": {"status": "failed"}}
            entries.append(entry)
        update = h.update_plan(entries)
        if self.lessons:
            update.field_meta = {"agentui": {"memory": self.lessons}}
        return update

    def _used(self, ids: list[str]) -> list[Any]:
        """The thought that names the Megrams a plan was made with, one line each, and their `_meta`
        entries (id, level, space, lesson; the lesson is empty for one no longer in memory)."""
        from agentui.describe import megram_brief, used_megrams

        self.lessons = []
        lines = []
        for mid, m in used_megrams(self.memory, ids) if self.memory is not None else []:
            self.lessons.append({"id": mid, "level": m.level.value if m else "", "space": m.space if m else "",
                                 "lesson": m.content if m else ""})
            lines.append(f"\n- {mid} {megram_brief(m, 120)}" if m else f"\n- {mid} (no longer in memory)")
        if not ids:
            return []
        return [_thought(f"R2 planned with memory {', '.join(ids)} (agentui memory show ID; "
                         f"forget ID drops a bad lesson){':' if lines else ''}{''.join(lines)}")]

    def stop_reason(self, task_id: str, final: FinalResult | None) -> str:
        """ACP's stop reason for a task that ended without success: `refusal` when the hard
        deny-list refused a call it needed, `max_tokens` when a reply hit its token budget."""
        if final is None or final.directive.value != "abandon":
            return "end_turn"
        if self.refused.get(task_id):
            return "refusal"
        if self.cut.get(task_id):
            return "max_tokens"
        return "end_turn"

    def updates(self, env: Envelope, *, replay: bool = False) -> list[Any]:
        p = env.payload
        tid = env.task_id or ""
        if isinstance(p, LLMDelta):
            return self._delta(p, tid, replay)
        if isinstance(p, FinalResult | PerceiverReply | TaskCancelled):
            self.ended.add(tid)
        if isinstance(p, TaskStarted):
            return [_user(p.text)] if replay else []
        if isinstance(p, TaskSpec):
            return [_thought(f"R1 understood: {p.intent}")]
        if isinstance(p, SubTask) and env.receiver == Role.EXECUTOR:
            self.subtasks[p.subtask_id] = p.intent
            return []
        if isinstance(p, DispatchManifest):
            if p.planner_error:
                return [_thought(f"R2 could not plan: {p.planner_error}")]
            self.plan = {sid: "pending" for sid in p.subtask_ids}
            self.failed -= set(p.subtask_ids)
            used = self._used(p.memory_ids)
            return [*used, self._plan_update()]
        if isinstance(p, ExecutionResult):
            if any((c.error or "").startswith("refused by the safety gate (hard deny-list") for c in p.tool_calls):
                self.refused[tid] = True
            # live, each call streamed as it starts and ends (stream.py); a replay has only the records
            out = [self._tool_call(p.subtask_id, p.attempt, i, rec)
                   for i, rec in enumerate(p.tool_calls, 1)] if replay else []
            if p.subtask_id in self.plan and self.plan[p.subtask_id] == "pending":
                self.plan[p.subtask_id] = "in_progress"
                out.append(self._plan_update())
            return out
        if isinstance(p, SubTaskOutcome):
            if p.subtask_id not in self.plan:
                return []
            self.plan[p.subtask_id] = "completed"
            if p.status == OutcomeStatus.FAILED:
                self.failed.add(p.subtask_id)
                return [self._plan_update(), _thought(f"Step failed: {self.subtasks.get(p.subtask_id, p.subtask_id)}")]
            return [self._plan_update()]
        if isinstance(p, PlanDirective):
            loss = p.loss
            return [_thought(
                f"GGS {p.prev_directive.value} → {p.directive.value} (D={loss.D:.2f} P={loss.P:.2f} "
                f"Ω={loss.Omega:.2f}, round {p.round}): {p.rationale}")]
        if isinstance(p, FinalResult):
            return [message_text(final_text(p, timed_out=tid in self.timed_out and tid not in self.answered))]
        if isinstance(p, PerceiverReply):
            return [message_text(p.text)]
        if isinstance(p, TaskCancelled):
            return [message_text(f"Cancelled: {p.reason}")] if replay else []
        if isinstance(p, LLMUsage):
            self.count_cost(p)
        if isinstance(p, LLMUsage) and not replay:
            return [self._usage(p, tid)]
        return []

    def _usage(self, p: LLMUsage, tid: str) -> UsageUpdate:
        t = self.tokens.setdefault(tid, Tokens())
        t.prompt += p.prompt_tokens
        t.completion += p.completion_tokens
        t.calls += 1
        if p.cut == "length":
            self.cut[tid] = True
        # `used` = this call's context, `size` = the model's window (0 when it is not known)
        return UsageUpdate(session_update="usage_update", used=p.prompt_tokens + p.completion_tokens,
                           size=self.window(p.model), cost=self.cost(),
                           field_meta={"agentui": {"role": p.role.value, "task_prompt_tokens": t.prompt,
                                                   "task_completion_tokens": t.completion,
                                                   "task_llm_calls": t.calls}})

    def _delta(self, p: LLMDelta, tid: str, replay: bool) -> list[Any]:
        """A role's reply as it is generated: thought chunks (the message is the task's answer); a
        loaded session shows what came of it, not the typing."""
        if replay or tid in self.ended or not p.text:
            return []
        return [_thought((f"\n{ROLE_LABELS.get(p.role, p.role.value)}: " if p.fresh else "") + p.text)]

    def _tool_call(self, subtask_id: str, attempt: int, i: int, rec: ToolCallRecord) -> Any:
        title = f"{rec.tool} {rec.target}".strip()
        text = rec.evidence if rec.ok else "\n".join(x for x in (rec.error or "", rec.evidence) if x)
        return h.start_tool_call(
            f"{subtask_id}-a{attempt}-{i}", one_line(title, 200), kind=tool_kind(rec.tool),  # type: ignore[arg-type]
            status="completed" if rec.ok else "failed",
            content=[h.tool_content(h.text_block(sanitize(text) or "(no output)"))],
            raw_input=rec.args, raw_output={"ok": rec.ok, "exit_code": rec.exit_code, "error": rec.error,
                                            "duration_s": round(rec.duration_s, 3), "log_ref": rec.log_ref})


def _locations(tool: str, target: str) -> list[Any] | None:
    from acp.schema import ToolCallLocation

    return [ToolCallLocation(path=target)] if tool in ("read_file", "write_file") and target else None


def tool_start(ev: ToolEvent) -> Any:
    """A call starting: shown at once, in progress (a permission request refers to its id)."""
    return h.start_tool_call(ev.call_id, one_line(f"{ev.tool} {ev.target}".strip(), 200), kind=tool_kind(ev.tool),  # type: ignore[arg-type]
                             status="in_progress", raw_input=ev.args, locations=_locations(ev.tool, ev.target))


def tool_end(ev: ToolEvent, *, old_text: str | None = None, terminal: str | None = None,
             whole: bool = False) -> Any:
    """A call ended: its status and content — a diff for a file write, the terminal it ran in, or
    its (capped) output as text. `whole`: the client never saw it start, so it is sent as a
    complete `tool_call` rather than an update."""
    rec = ev.record
    assert rec is not None
    text = rec.evidence if rec.ok else "\n".join(x for x in (rec.error or "", rec.evidence) if x)
    content: list[Any] = []
    if rec.tool == "write_file" and rec.ok and ev.target and isinstance(rec.args.get("content"), str):
        new = rec.args["content"]
        if rec.args.get("append"):
            new = (old_text or "") + new
        content.append(h.tool_diff_content(ev.target, new, old_text))
    if terminal:
        content.append(h.tool_terminal_ref(terminal))
    if not content or not rec.ok:
        content.append(h.tool_content(h.text_block(sanitize(text) or "(no output)")))
    status = "completed" if rec.ok else "failed"
    raw_output = {"ok": rec.ok, "exit_code": rec.exit_code, "error": rec.error,
                  "duration_s": round(rec.duration_s, 3), "log_ref": rec.log_ref}
    if whole:
        return h.start_tool_call(ev.call_id, one_line(f"{ev.tool} {ev.target}".strip(), 200), kind=tool_kind(ev.tool),  # type: ignore[arg-type]
                                 status=status, content=content, raw_input=ev.args, raw_output=raw_output,
                                 locations=_locations(ev.tool, ev.target))
    return h.update_tool_call(ev.call_id, status=status, content=content, raw_output=raw_output)
