"""The built-in tools, registered in one registry: the factory sits above the tools it builds, so
the registry module they all import never imports them back."""

from __future__ import annotations

import sys

from agentui.tools.files import GlobTool, ReadFileTool, WriteFileTool
from agentui.tools.macos import AppleScriptTool, ShortcutsTool
from agentui.tools.registry import ToolRegistry
from agentui.tools.search import FileSearchTool, WebSearchTool
from agentui.tools.shell import ShellTool


def default_registry(platform: str = sys.platform) -> ToolRegistry:
    """Every built-in tool; the macOS ones report themselves unavailable elsewhere."""
    registry = ToolRegistry()
    for tool in (
        ShellTool(),
        ReadFileTool(),
        WriteFileTool(),
        GlobTool(),
        FileSearchTool(platform=platform),
        WebSearchTool(),
        AppleScriptTool(platform=platform),
        ShortcutsTool(platform=platform),
    ):
        registry.register(tool)
    return registry
