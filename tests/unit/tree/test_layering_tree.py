"""DESIGN §2 for the tree runner: its core modules never import textual (only agentui/ui/tree.py does)."""

from __future__ import annotations

import subprocess
import sys

MODULES = ["agentui.tree", "agentui.tree.runner", "agentui.tree.agent", "agentui.tree.git", "agentui.tree.guard",
           "agentui.tree.layout", "agentui.tree.lock", "agentui.tree.edit", "agentui.tree.acp_executor",
           "agentui.tree.transitions", "agentui.tree.view", "agentui.commands.tree"]


def test_tree_core_never_imports_textual() -> None:
    code = (
        "import importlib, sys\n"
        f"for m in {MODULES!r}: importlib.import_module(m)\n"
        "bad = sorted(k for k in sys.modules if k == 'textual' or k.startswith('textual.'))\n"
        "sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
