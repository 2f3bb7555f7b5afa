"""A leaf worked by another agent over ACP (the Agent Client Protocol), instead of agentui's own
role pipeline: the tree config's `acp_command` is spawned in the repository, one session gets
the leaf's task as its prompt, and the turn's end maps onto the agent status model. The guard,
git policy and accounting stay the runner's.

| ACP turn ends with                  | agent status | attempt |
|-------------------------------------|--------------|---------|
| end_turn                            | done → guard | on guard fail |
| refusal, max_tokens, max_turn_requests | retry     | yes     |
| cancelled, the iteration timeout    | runner error | no      |
| the agent cannot start, dies or breaks the protocol | runner error (acp) | no |

The client offers no file system or terminal of its own (the agent works in the repository with
its own tools); a permission request is answered "allow" with --yes (or the injected confirm
handler's approval), "reject" otherwise. What the agent said is kept (capped) as the summary and in
acp.log in the iteration directory.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agentui.tree.agent import AgentOutcome

LOG_CAP = 200_000  # bytes of acp.log per iteration
SAY_CAP = 4000  # characters of the agent's messages kept for the summary

Approve = Callable[[str], Awaitable[bool]]


class _Client:
    """The client side the agent talks to: updates are logged, permissions answered."""

    def __init__(self, approve: Approve, log: Path) -> None:
        self.approve = approve
        self.said: list[str] = []
        self.log = log
        self.logged = 0

    def _write(self, doc: dict[str, Any]) -> None:
        line = json.dumps(doc, ensure_ascii=False, default=str) + "\n"
        if self.logged + len(line) > LOG_CAP:
            return
        self.logged += len(line)
        with self.log.open("a", encoding="utf-8") as fh:
            fh.write(line)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **_: Any) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        title = getattr(tool_call, "title", None) or "a tool call"
        ok = await self.approve(str(title))
        kinds = ("allow_once", "allow_always") if ok else ("reject_once", "reject_always")
        pick = next((o for k in kinds for o in options if getattr(o, "kind", None) == k), None)
        self._write({"permission": str(title), "allowed": ok, "option": getattr(pick, "option_id", None)})
        if pick is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(option_id=pick.option_id, outcome="selected"))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        kind = getattr(update, "session_update", type(update).__name__)
        doc: dict[str, Any] = {"update": kind}
        content = getattr(update, "content", None)
        text = getattr(content, "text", None)
        if isinstance(text, str):
            doc["text"] = text[:2000]
            if kind == "agent_message_chunk":
                self.said.append(text)
        title = getattr(update, "title", None)
        if title:
            doc["title"] = str(title)[:200]
        self._write(doc)

    def summary(self) -> str:
        return "".join(self.said).strip()[-SAY_CAP:]

    # no fs/terminal capability is offered: an agent that calls these anyway is told so
    async def write_text_file(self, *_: Any, **__: Any) -> Any:
        from acp import RequestError

        raise RequestError.method_not_found("fs/write_text_file")

    async def read_text_file(self, *_: Any, **__: Any) -> Any:
        from acp import RequestError

        raise RequestError.method_not_found("fs/read_text_file")

    async def create_terminal(self, *_: Any, **__: Any) -> Any:
        from acp import RequestError

        raise RequestError.method_not_found("terminal/create")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        from acp import RequestError

        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


async def run_acp(command: list[str], repo: Path, text: str, it: Path, *, timeout: float,
                  approve: Approve) -> AgentOutcome:
    """One ACP session on the leaf's task, within `timeout` seconds."""
    from acp import PROTOCOL_VERSION, spawn_agent_process
    from acp.schema import ClientCapabilities, Implementation

    from agentui import __version__

    if not command:
        return AgentOutcome(internal="acp", detail="executor = \"acp\" needs acp_command in the tree's config.toml")
    if timeout <= 0:
        return AgentOutcome(internal="timeout", detail="no time left for the ACP agent")
    client = _Client(approve, it / "acp.log")
    shown = " ".join(command)
    try:
        async with asyncio.timeout(timeout):
            async with spawn_agent_process(client, command[0], *command[1:], cwd=repo) as (conn, proc):
                try:
                    await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities(),
                                          client_info=Implementation(name="agentui-tree", title="agentui tree",
                                                                     version=__version__))
                    session = await conn.new_session(cwd=str(repo), mcp_servers=[])
                    from acp.helpers import text_block

                    resp = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
                finally:
                    with contextlib.suppress(ProcessLookupError):
                        proc.kill()
    except TimeoutError:
        return AgentOutcome(internal="timeout", detail=f"the ACP agent ({shown}) did not finish within the iteration",
                            summary=client.summary())
    except (OSError, ValueError) as e:
        return AgentOutcome(internal="acp", detail=f"the ACP agent ({shown}) could not start: {e}")
    except Exception as e:  # noqa: BLE001 — a dead agent or a protocol error is the run's problem, not the leaf's
        return AgentOutcome(internal="acp", detail=f"the ACP agent ({shown}) failed: {type(e).__name__}: {e}",
                            summary=client.summary())
    stop = str(getattr(resp, "stop_reason", "") or "")
    said = client.summary()
    if stop == "end_turn":
        return AgentOutcome(status="done", summary=said or "the ACP agent ended its turn")
    if stop in ("refusal", "max_tokens", "max_turn_requests"):
        return AgentOutcome(status="retry", summary=f"the ACP agent stopped ({stop}): {said}"[:SAY_CAP])
    return AgentOutcome(internal="acp", detail=f"the ACP agent's turn ended with {stop or 'no stop reason'}",
                        summary=said)
