"""A tiny ACP agent for the tree runner's tests, run as `python tests/acpagent/agent.py`.

On a prompt it looks for `<name>.txt` in the text, asks the client's permission to write it and,
when allowed, writes NAME (upper case) into the session's cwd and ends its turn. A prompt holding
REFUSE ends with `refusal`; HANG never answers (the client's timeout must stop it).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, run_agent
from acp.helpers import text_block, tool_content, update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallUpdate,
)


class TinyAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.cwd: dict[str, Path] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=min(protocol_version, PROTOCOL_VERSION),
                                  agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name="tiny", title="tiny", version="0"))

    async def authenticate(self, method_id: str, **_: Any) -> None:
        return None

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any) -> NewSessionResponse:
        sid = f"s{len(self.cwd) + 1}"
        self.cwd[sid] = Path(cwd)
        return NewSessionResponse(session_id=sid)

    async def prompt(self, prompt: list[Any], session_id: str, **_: Any) -> PromptResponse:
        text = "".join(getattr(b, "text", "") for b in prompt)
        if "HANG" in text:
            await asyncio.sleep(3600)
        if "REFUSE" in text:
            await self.say(session_id, "I will not do that.")
            return PromptResponse(stop_reason="refusal")
        m = re.search(r"\b([a-z0-9_]+\.txt)\b", text)
        if m is None:
            await self.say(session_id, "no file named")
            return PromptResponse(stop_reason="end_turn")
        name = m.group(1)
        call = ToolCallUpdate(tool_call_id="w1", title=f"write {name}", kind="edit", status="pending",
                              content=[tool_content(text_block(f"write {name}"))])
        resp = await self.conn.request_permission(session_id=session_id, tool_call=call, options=[
            PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
            PermissionOption(option_id="no", name="Deny", kind="reject_once")])
        outcome = resp.outcome
        if getattr(outcome, "outcome", "") != "selected" or outcome.option_id != "yes":
            await self.say(session_id, f"not allowed to write {name}")
            return PromptResponse(stop_reason="end_turn")
        (self.cwd[session_id] / name).write_text(name.upper())
        await self.say(session_id, f"wrote {name}")
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: Any) -> None:
        return None

    async def say(self, session_id: str, text: str) -> None:
        await self.conn.session_update(session_id=session_id, update=update_agent_message_text(text))


if __name__ == "__main__":
    asyncio.run(run_agent(TinyAgent()))
