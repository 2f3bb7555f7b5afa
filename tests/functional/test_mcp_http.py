"""MCP over Streamable HTTP from a real server process (tests/mcpserver --http) that requires an auth
header (#18): the header comes from config with ${VAR} expansion, so the secret stays out of the file."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentui.config import ConfigError, McpServerConfig, load_config
from agentui.mcp import McpHub
from agentui.tools import ToolContext, default_registry
from tests.mcpserver.process import http_server as running

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t-token-for-tests"


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    with running(tmp_path, "--require-header", f"Authorization: Bearer {SECRET}") as base:
        yield base + "/mcp"


async def test_auth_headers_from_config_reach_the_http_server(http_server, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("AGENTUI_TEST_MCP_TOKEN", SECRET)
    cfg = McpServerConfig(url=http_server, headers={"Authorization": "Bearer ${AGENTUI_TEST_MCP_TOKEN}"},
                          allow=["add"], startup_timeout_s=20)
    hub = McpHub({"web": cfg})
    reg = default_registry()
    assert await asyncio.wait_for(hub.attach(reg), 30) == []
    try:
        [report] = hub.reports
        assert report.ok and "add" in report.tools and "echo" in report.tools
        rec = await reg.call("web.add", {"a": 2, "b": 40}, ToolContext(workspace=tmp_path, timeout_s=20))
        assert rec.ok and rec.evidence == "42"
    finally:
        await hub.aclose()


async def test_a_missing_or_wrong_header_is_one_clear_problem(http_server, monkeypatch) -> None:
    monkeypatch.delenv("AGENTUI_TEST_MCP_UNSET", raising=False)
    monkeypatch.setenv("AGENTUI_TEST_MCP_TOKEN", "not-the-token-7q2")
    hub = McpHub({
        "none": McpServerConfig(url=http_server, startup_timeout_s=20),
        "wrong": McpServerConfig(url=http_server, headers={"Authorization": "Bearer ${AGENTUI_TEST_MCP_TOKEN}"},
                                 startup_timeout_s=20),
        "unset": McpServerConfig(url=http_server, headers={"Authorization": "Bearer ${AGENTUI_TEST_MCP_UNSET}"},
                                 startup_timeout_s=20)})
    reg = default_registry()
    problems = await asyncio.wait_for(hub.attach(reg), 60)
    await hub.aclose()
    assert len(problems) == 3 and not any(n.startswith(("none.", "wrong.", "unset.")) for n in reg.names())
    by = {p.split("'")[1]: p for p in problems}
    assert "401" in by["none"] or "nauthorized" in by["none"], by["none"]
    assert "401" in by["wrong"] or "nauthorized" in by["wrong"], by["wrong"]
    assert "${AGENTUI_TEST_MCP_UNSET}, which is not set" in by["unset"]
    assert "not-the-token-7q2" not in " ".join(problems)  # the header's value is never echoed


def test_headers_are_checked_when_the_config_loads(tmp_path) -> None:
    def load(body: str):  # noqa: ANN202
        f = tmp_path / "config.toml"
        f.write_text(body)
        return load_config(f, env={})

    ok = load('[mcp.servers.w]\nurl = "http://h/mcp"\nheaders = { Authorization = "Bearer ${TOKEN}" }\n')
    assert ok.config.mcp.servers["w"].headers == {"Authorization": "Bearer ${TOKEN}"}
    for body, why in (('[mcp.servers.s]\ncommand = "x"\nheaders = { A = "b" }\n', "sent to a `url` server only"),
                      ('[mcp.servers.w]\nurl = "http://h"\nheaders = { "Bad Name" = "b" }\n', "header name"),
                      ('[mcp.servers.w]\nurl = "http://h"\nheaders = { A = "b\\r\\nX: y" }\n', "line break")):
        with pytest.raises(ConfigError) as e:
            load(body)
        assert why in str(e.value)


def test_mcp_add_writes_headers_and_list_never_prints_their_values(tmp_path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    base = [sys.executable, "-m", "agentui.cli", "--config", str(cfg), "--data-dir", str(tmp_path / "d"), "mcp"]
    p = subprocess.run([*base, "add", "--url", "http://127.0.0.1:9/mcp", "--header",
                        "Authorization: Bearer ${MY_TOKEN}", "--header", "X-Team=core", "web"],
                       capture_output=True, text=True, timeout=60, env=env)
    assert p.returncode == 0, p.stderr
    text = cfg.read_text()
    assert 'headers = { "Authorization" = "Bearer ${MY_TOKEN}", "X-Team" = "core" }' in text
    p = subprocess.run([*base, "list", "--no-connect", "--json"], capture_output=True, text=True, timeout=60, env=env)
    [row] = json.loads(p.stdout)["servers"]
    assert row["headers"] == ["Authorization", "X-Team"] and "core" not in p.stdout
    p = subprocess.run([*base, "add", "--header", "A: b", "s", "--", "echo"], capture_output=True, text=True,
                       timeout=60, env=env)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "url" in p.stderr
