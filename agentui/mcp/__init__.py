"""MCP servers as tools: an adapter at the edge, like the UI.

Only :mod:`agentui.mcp.client` imports the `mcp` SDK; the roles, the bus and the runtime see MCP
tools as ordinary `Tool`s in the registry (named `<server>.<tool>`), behind the same safety gate,
timeouts, output caps and task-log records as the built-in ones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentui.mcp.hub import McpHub, ServerReport

__all__ = ["McpHub", "ServerReport"]


def __getattr__(name: str) -> Any:  # lazy, so `import agentui.mcp` stays cheap
    if name in __all__:
        from agentui.mcp import hub

        return getattr(hub, name)
    raise AttributeError(name)
