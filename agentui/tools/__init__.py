"""Tools the R3 executor calls (DESIGN §5), each behind the safety gate in :mod:`.safety`."""

from agentui.tools.registry import (
    ConfirmFn,
    Tool,
    ToolContext,
    ToolRegistry,
    cap_output,
    default_registry,
)
from agentui.tools.safety import Assessment, assess, assess_write

__all__ = [
    "Assessment",
    "ConfirmFn",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "assess",
    "assess_write",
    "cap_output",
    "default_registry",
]
