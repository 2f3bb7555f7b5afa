"""DESIGN §2: nothing outside agentui/ui/ imports textual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CORE = ["agentui.contracts", "agentui.config", "agentui.paths", "agentui.bus", "agentui.cli", "agentui.history"]
OPTIONAL_CORE = [
    "agentui.llm", "agentui.memory", "agentui.tools", "agentui.roles", "agentui.runtime",
]


def test_core_never_imports_textual() -> None:
    root = Path(__file__).resolve().parents[2] / "agentui"
    mods = list(CORE)
    for m in OPTIONAL_CORE:
        rel = m.split(".", 1)[1]
        if (root / rel).is_dir() or (root / f"{rel}.py").is_file():
            mods.append(m)
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        "bad = sorted(k for k in sys.modules if k == 'textual' or k.startswith('textual.'))\n"
        "print(','.join(bad))\n"
        "sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, f"core imported textual: {proc.stdout} {proc.stderr}"
