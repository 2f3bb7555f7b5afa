"""`agentui doctor` reports each MCP server: starts, tool count, latency (#18)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_doctor_reports_each_mcp_server(fakellm, tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    py = json.dumps(sys.executable)
    cfg.write_text(f'[mcp.servers.t]\ncommand = {py}\nargs = ["-m", "tests.mcpserver"]\ncwd = {json.dumps(str(ROOT))}\n'
                   f'[mcp.servers.bad]\ncommand = {py}\nargs = ["-m", "tests.mcpserver", "--crash-on-start"]\n'
                   f'cwd = {json.dumps(str(ROOT))}\n')
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "--config", str(cfg), "doctor", "--json",
                        "--data-dir", str(tmp_path / "d"), "--base-url", fakellm.base_url],
                       capture_output=True, text=True, timeout=90, env=dict(os.environ))
    out = json.loads(r.stdout)
    checks = {c["name"]: c for c in out["checks"]}
    assert checks["mcp t"]["ok"] and checks["mcp t"]["detail"].startswith("9 tools, protocol ")
    assert " s" in checks["mcp t"]["detail"]
    assert not checks["mcp bad"]["ok"] and "configured to crash on start" in checks["mcp bad"]["detail"]
    assert r.returncode == 1 and not out["ok"]
    assert checks["acp"]["ok"] and "ACP protocol version 1" in checks["acp"]["detail"]
    assert "agent-client-protocol 0.12." in checks["acp"]["detail"]
