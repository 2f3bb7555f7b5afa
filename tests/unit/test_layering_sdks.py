"""#18: the ACP and MCP SDKs stay in their adapters (agentui/acp, agentui/mcp): the roles, the bus,
the runtime, the tools and the CLI never import them (the adapters import them lazily, on use)."""

from __future__ import annotations

import subprocess
import sys

CORE = ["agentui.contracts", "agentui.config", "agentui.paths", "agentui.bus", "agentui.cli",
        "agentui.llm", "agentui.memory", "agentui.tools", "agentui.roles", "agentui.runtime",
        "agentui.roles.executor", "agentui.roles.planner", "agentui.roles.ggs", "agentui.roles.perceiver",
        "agentui.mcp", "agentui.acp", "agentui.commands.mcp", "agentui.commands.acp", "agentui.tools.hooks",
        "agentui.tools.files", "agentui.tools.shell"]
SDKS = ("mcp", "mcp_types", "acp")


def _sdk_modules_after(mods: list[str], extra: str = "") -> str:
    code = (
        "import importlib, importlib.util, sys\n"
        f"for m in {mods!r}:\n"
        "    if importlib.util.find_spec(m) is not None: importlib.import_module(m)\n"
        f"{extra}\n"
        f"print(','.join(sorted(k for k in sys.modules if k.split('.')[0] in {SDKS!r})))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def test_core_never_imports_the_acp_or_mcp_sdk() -> None:
    assert _sdk_modules_after(CORE) == ""


def test_the_check_sees_an_sdk_import() -> None:
    assert "mcp" in _sdk_modules_after(CORE, "import mcp").split(",")
