"""agentui as an MCP client, against real server processes: it introduces itself as agentui with
its version and declares roots, answers `roots/list` with the workspace, keeps one server's SDK log
line out of another server's error, and `mcp add --startup-timeout` sets a server's start budget."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from agentui import __version__
from agentui.config import McpServerConfig
from agentui.mcp import McpHub
from agentui.tools import default_registry

ROOT = str(Path(__file__).resolve().parents[2])


def raw(*extra: str, **kw) -> McpServerConfig:  # noqa: ANN003
    return McpServerConfig(command=sys.executable, args=["-m", "tests.mcpserver.raw", *extra], cwd=ROOT, **kw)


def recorded(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


async def test_the_client_names_itself_declares_roots_and_answers_them_with_the_workspace(tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    log = tmp_path / "seen.jsonl"
    hub = McpHub({"r": raw("--record", str(log))}, cwd=str(ws))
    assert await asyncio.wait_for(hub.attach(default_registry()), 30) == []
    try:
        for _ in range(100):  # the server asks roots/list once initialized; the answer comes back
            if any(m.get("id") == "roots-1" for m in recorded(log)):
                break
            await asyncio.sleep(0.05)
    finally:
        await hub.aclose()
    seen = recorded(log)
    [init] = [m for m in seen if m.get("method") == "initialize"]
    assert init["params"]["clientInfo"]["name"] == "agentui"
    assert init["params"]["clientInfo"]["version"] == __version__
    assert "roots" in init["params"]["capabilities"]
    [roots] = [m for m in seen if m.get("id") == "roots-1"]
    assert roots["result"]["roots"] == [{"uri": ws.resolve().as_uri(), "name": "ws"}]


async def test_one_servers_sdk_log_line_stays_out_of_anothers_error(tmp_path) -> None:
    hub = McpHub({"noisy": raw("--log-and-crash", "this is not json-rpc"),
                  "quiet": raw("--exit-after", "1.5")})
    problems = await asyncio.wait_for(hub.attach(default_registry()), 30)
    await hub.aclose()
    noisy = next(p for p in problems if "'noisy'" in p)
    quiet = next(p for p in problems if "'quiet'" in p)
    assert "exiting as told" in quiet
    assert "parse" in noisy.lower() or "json" in noisy.lower()
    assert "parse" not in quiet.lower() and "json" not in quiet.lower(), quiet


def test_mcp_add_writes_the_startup_timeout(tmp_path) -> None:
    import subprocess

    from agentui.config import load_config

    f = tmp_path / "c.toml"
    f.write_text("")
    p = subprocess.run([sys.executable, "-m", "agentui.cli", "--config", str(f), "mcp", "add", "--startup-timeout",
                        "90", "slow", "--", "npx", "-y", "some-server"], capture_output=True, text=True, timeout=60,
                       cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert load_config(f).config.mcp.servers["slow"].startup_timeout_s == 90


async def test_a_server_gets_its_own_startup_timeout(tmp_path) -> None:
    hub = McpHub({"slow": raw("--exit-after", "5", startup_timeout_s=0.5), "fine": raw()})
    reg = default_registry()
    problems = await asyncio.wait_for(hub.attach(reg), 30)
    await hub.aclose()
    [slow] = problems
    assert "'slow' did not answer within 0.5 s" in slow and "fine.echo" in reg


async def test_annotations_are_a_hint_read_only_runs_only_if_trusted_and_destructive_always_asks(tmp_path) -> None:
    from agentui.contracts import ConfirmationChoice
    from agentui.tools import ToolContext

    asked: list[str] = []

    async def approve(req):  # noqa: ANN001, ANN202
        asked.append(req.tool)
        return ConfirmationChoice.APPROVE

    async def rules(tool: str) -> list[str]:  # a remembered rule still binds an unasked tool
        return ["never: *forbidden*"] if tool == "t.peek" else []

    hub = McpHub({"t": raw("--annotated", allow=["wipe"], trust_read_only=True),
                  "u": raw("--annotated")})
    reg = default_registry()
    assert await asyncio.wait_for(hub.attach(reg), 30) == []
    try:
        ctx = ToolContext(workspace=tmp_path, timeout_s=20, confirm=approve, rules=rules)
        rec = await reg.call("t.peek", {"text": "x"}, ctx)
        assert rec.ok and rec.evidence == "peek: x" and asked == []  # read-only, the server trusted
        rec = await reg.call("t.peek", {"text": "forbidden"}, ctx)
        assert not rec.ok and "refused" in rec.error and asked == []
        assert (await reg.call("t.wipe", {"text": "x"}, ctx)).ok and asked == ["t.wipe"]  # allow-listed, yet asks
        assert (await reg.call("t.lying", {"text": "x"}, ctx)).ok and asked[-1] == "t.lying"
        assert (await reg.call("t.echo", {"text": "x"}, ctx)).ok and asked[-1] == "t.echo"
        assert (await reg.call("u.peek", {"text": "x"}, ctx)).ok and asked[-1] == "u.peek"  # hints not trusted
    finally:
        await hub.aclose()


def test_mcp_list_says_which_tools_ask_by_their_annotations(tmp_path) -> None:
    import subprocess

    f = tmp_path / "c.toml"
    f.write_text(f"[mcp.servers.t]\ncommand = {json.dumps(sys.executable)}\n"
                 f"args = ['-m', 'tests.mcpserver.raw', '--annotated']\ncwd = {json.dumps(ROOT)}\n"
                 "trust_read_only = true\nallow = ['wipe']\n")
    p = subprocess.run([sys.executable, "-m", "agentui.cli", "--config", str(f), "mcp", "list"],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "t.peek — runs without asking [read-only]" in p.stdout
    assert "t.wipe — always asks (destructive)" in p.stdout and "t.echo — asks first" in p.stdout


async def test_a_tools_list_changed_notification_adds_the_new_tools(tmp_path) -> None:
    from agentui.tools import ToolContext

    hub = McpHub({"t": raw("--list-changed", allow=["grow", "grown"])})
    reg = default_registry()
    assert await asyncio.wait_for(hub.attach(reg), 30) == []
    try:
        assert "t.grown" not in reg
        ctx = ToolContext(workspace=tmp_path, timeout_s=20)
        assert (await reg.call("t.grow", {"text": "x"}, ctx)).ok
        for _ in range(100):
            if "t.grown" in reg:
                break
            await asyncio.sleep(0.05)
        rec = await reg.call("t.grown", {"text": "y"}, ctx)
        assert rec.ok and rec.evidence == "grown: y"
        assert any(s["name"] == "t.grown" for s in reg.specs())  # offered to new plans
    finally:
        await hub.aclose()


def _http_server(tmp_path: Path, *extra: str):  # noqa: ANN202
    """A tests.mcpserver HTTP process behind an auth header; yields its base URL."""
    from tests.mcpserver.process import http_server

    return http_server(tmp_path, "--require-header", "Authorization: Bearer tok", *extra)


async def test_a_401_to_a_configured_header_names_the_header_and_the_sign_in(tmp_path) -> None:
    with _http_server(tmp_path) as base:
        hub = McpHub({"web": McpServerConfig(url=base + "/mcp", headers={"Authorization": "Bearer wrong"},
                                             startup_timeout_s=20)})
        problems = await asyncio.wait_for(hub.attach(default_registry()), 30)
        await hub.aclose()
    [p] = problems
    assert "HTTP 401" in p and f"resource metadata: {base}/.well-known/oauth-protected-resource" in p
    assert "refused the `Authorization` header" in p and "`agentui mcp login web`" in p


async def test_the_legacy_sse_transport_with_an_auth_header(tmp_path) -> None:
    from agentui.tools import ToolContext

    with _http_server(tmp_path, "--sse") as base:
        hub = McpHub({"old": McpServerConfig(url=base + "/sse", transport="sse", allow=["add"],
                                             headers={"Authorization": "Bearer tok"}, startup_timeout_s=20)})
        reg = default_registry()
        try:
            assert await asyncio.wait_for(hub.attach(reg), 30) == []
            rec = await reg.call("old.add", {"a": 2, "b": 40}, ToolContext(workspace=tmp_path, timeout_s=20))
            assert rec.ok and rec.evidence == "42"
        finally:
            await hub.aclose()


async def test_the_reference_time_server_read_only_tools_run_unasked_once_its_hints_are_trusted(tmp_path) -> None:
    """`mcp-server-time` from PyPI marks its tools readOnlyHint: they ask by default, and run
    without asking once the server's read-only hints are trusted."""
    import importlib.util

    import pytest

    from agentui.contracts import ConfirmationChoice
    from agentui.tools import ToolContext

    if importlib.util.find_spec("mcp_server_time") is None:
        pytest.skip("mcp-server-time is not installed (make install)")
    asked: list[str] = []

    async def deny(req):  # noqa: ANN001, ANN202
        asked.append(req.tool)
        return ConfirmationChoice.DENY

    def time_server(**kw) -> McpServerConfig:  # noqa: ANN003
        return McpServerConfig(command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"],
                               startup_timeout_s=30, **kw)

    hub = McpHub({"time": time_server(trust_read_only=True), "plain": time_server()})
    reg = default_registry()
    assert await asyncio.wait_for(hub.attach(reg), 60) == []
    try:
        ctx = ToolContext(workspace=tmp_path, timeout_s=20, confirm=deny)
        rec = await reg.call("time.get_current_time", {"timezone": "Europe/London"}, ctx)
        assert rec.ok and "Europe/London" in rec.evidence and asked == []
        rec = await reg.call("plain.get_current_time", {"timezone": "Europe/London"}, ctx)
        assert not rec.ok and asked == ["plain.get_current_time"]  # not trusted: asked, and denied
    finally:
        await hub.aclose()
