"""Tools the R3 executor calls (DESIGN §5), each behind the safety gate in :mod:`.safety`."""

from agentui.tools.approvals import Approvals, Scope, project_allowlist_path
from agentui.tools.builtin import default_registry
from agentui.tools.context import ConfirmFn, GateRequest, ToolContext
from agentui.tools.registry import Tool, ToolRegistry, cap_output, gate
from agentui.tools.safety import Assessment, Verdict, assess, assess_call, assess_read, assess_write
from agentui.tools.sandbox import sandbox_status

__all__ = [
    "Approvals",
    "Assessment",
    "ConfirmFn",
    "GateRequest",
    "Scope",
    "Verdict",
    "assess_call",
    "assess_read",
    "gate",
    "project_allowlist_path",
    "sandbox_status",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "assess",
    "assess_write",
    "cap_output",
    "default_registry",
]
