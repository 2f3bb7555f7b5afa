"""The safety gate's confirmations as ACP `session/request_permission`.

allow once → approve, allow always → always for this task, reject once → deny, reject always →
deny and never ask again in this session. The request refers to the live tool call it is about;
a file write's request carries the change as ACP `diff` content (path, oldText, newText) when the
texts fit, else the unified diff as text. No answer (an error, a cancelled request, none within
`acp.permission_timeout_s`) is a denial, never a crash.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp import helpers as h
from acp.schema import PermissionOption, ToolCallUpdate

from agentui.acp.mapping import tool_kind
from agentui.contracts import ConfirmationChoice, ConfirmationRequest
from agentui.tools.answers import Answer

OPTIONS = [  # the gate's choices on ACP's four option kinds
    PermissionOption(option_id="approve", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="always", name="Allow for the rest of this task", kind="allow_always"),
    PermissionOption(option_id="deny", name="Deny", kind="reject_once"),
    PermissionOption(option_id="deny_always", name="Deny, and do not ask again in this session",
                     kind="reject_always"),
]


def _change_content(req: ConfirmationRequest) -> list[Any]:
    """A file write's change: ACP diff content the editor draws itself, or the bounded unified diff
    as text when the texts are not carried whole (too large, binary)."""
    c = req.change
    if c is None:
        return []
    if c.new_text is not None and (c.old_text is not None or c.new_file):
        return [h.tool_diff_content(c.abs_path or c.path, c.new_text, None if c.new_file else c.old_text)]
    return [h.tool_content(h.text_block(f"{c.path}:\n{c.diff}"))]


def _options(req: ConfirmationRequest) -> list[PermissionOption]:
    """The four options; a file write's "allow always" names the one file it covers."""
    if req.change is None or not req.patterns or "task" not in req.scopes:
        return OPTIONS
    shown = ", ".join(f'"{p}"' for p in req.patterns)
    return [o if o.kind != "allow_always" else PermissionOption(
        option_id=o.option_id, name=f"Allow {shown} for the rest of this task", kind=o.kind) for o in OPTIONS]


async def ask_permission(conn: Any, s: Any, req: ConfirmationRequest,
                         timeout_s: float = 0) -> ConfirmationChoice | Answer:
    """The client's answer; after `timeout_s` (0: none) without one, a denial by "timeout"."""
    key = (req.tool, req.command)
    if key in s.denied_always:
        return ConfirmationChoice.DENY
    live = s.stream.current.get((req.task_id, req.subtask_id)) if s.stream else None
    if s.stream is not None:
        await s.stream.flush()  # the client knows the tool call before it is asked about it
    call = ToolCallUpdate(
        tool_call_id=live or f"confirm-{req.request_id}", title=f"{req.tool}: {req.command}"[:200],
        kind=tool_kind(req.tool), status="pending",  # type: ignore[arg-type]
        raw_input={"tool": req.tool, "command": req.command, "cwd": req.cwd, "reasons": req.reasons},
        content=[*_change_content(req),
                 h.tool_content(h.text_block("Needs your confirmation: " + "; ".join(req.reasons)))])
    asked = conn.request_permission(session_id=s.id, tool_call=call, options=_options(req))
    try:
        resp = await (asyncio.wait_for(asked, timeout_s) if timeout_s > 0 else asked)
    except TimeoutError:  # an editor that never answers must not hold the task until cancel
        if s.stream is not None:  # said as a timeout, not as the user's denial
            s.stream.mapper.timed_out.add(req.task_id)
            if live:
                s.stream.timeouts[live] = timeout_s
        return Answer(ConfirmationChoice.DENY, "timeout")
    except Exception:  # noqa: BLE001 - no answer is a denial, never a crash
        return ConfirmationChoice.DENY
    outcome = getattr(resp, "outcome", None)
    choice = getattr(outcome, "option_id", None) if getattr(outcome, "outcome", "") == "selected" else None
    if choice == "approve":
        return ConfirmationChoice.APPROVE
    if choice == "always":
        return ConfirmationChoice.ALWAYS
    if choice == "deny_always":
        s.denied_always.add(key)
    if choice in ("deny", "deny_always") and s.stream is not None:
        s.stream.mapper.answered.add(req.task_id)
    return ConfirmationChoice.DENY
