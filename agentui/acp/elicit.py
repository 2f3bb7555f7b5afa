"""An MCP server's form (elicitation) passed on to the editor, when the editor declares ACP's
(unstable) `elicitation.form` capability: the checked form goes out as ACP `elicitation/create`
for the session, and the editor's accept, decline or cancel goes back to the server. An editor
that does not declare it is never asked; the hub then declines, and says so."""

from __future__ import annotations

import asyncio
from typing import Any

from agentui.mcp.elicit import Answer, Elicitation, schema_of


def editor_shows_forms(client_caps: Any) -> bool:
    elicitation = getattr(client_caps, "elicitation", None)
    return getattr(elicitation, "form", None) is not None


async def ask_editor(conn: Any, session_id: str, req: Elicitation, timeout_s: float = 0) -> Answer:
    """The editor's answer; no answer within `timeout_s` (0: none), or an error, is `cancel`."""
    from acp.schema import ElicitationFormSessionMode

    mode = ElicitationFormSessionMode.model_validate({"sessionId": session_id,
                                                      "requestedSchema": schema_of(req.fields)})
    asked = conn.create_elicitation(message=f"MCP server '{req.server}' asks: {req.message}", mode=mode)
    try:
        resp = await (asyncio.wait_for(asked, timeout_s) if timeout_s > 0 else asked)
    except Exception:  # noqa: BLE001 - an editor that fails or never answers: the server hears cancel
        return Answer("cancel")
    action = getattr(resp, "action", "cancel")
    if action == "accept":
        return Answer("accept", dict(getattr(resp, "content", None) or {}))
    return Answer("decline" if action == "decline" else "cancel")
