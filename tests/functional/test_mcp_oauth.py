"""Signing in to a remote MCP server that asks for OAuth (#40), end to end: real `agentui mcp`
processes against the test server in its OAuth mode (tests/mcpserver/oauth.py: its own
authorization server, dynamic registration, an /authorize that approves at once), with a stand-in
browser as BROWSER that follows the redirect to agentui's loopback callback."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

from tests.mcpserver.process import ROOT, http_server

BROWSER = f"{sys.executable} {ROOT / 'tests' / 'mcpserver' / 'browser.py'} %s"


def _agentui(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentui.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "BROWSER": BROWSER, **(env or {})})


def _marks(marker: Path) -> list[str]:
    return marker.read_text().split() if marker.exists() else []


def _add(url: str) -> None:
    added = _agentui("mcp", "add", "--url", url, "docs")
    assert added.returncode == 0, added.stderr


def _credentials() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "agentui" / "mcp-oauth" / "credentials.json"


def test_sign_in_once_then_every_start_uses_and_refreshes_it(tmp_path: Path) -> None:
    marker = tmp_path / "marks"
    with http_server(tmp_path, "--oauth", "--token-ttl", "3", "--marker", str(marker)) as base:
        _add(base + "/mcp")
        before = _agentui("mcp", "list")
        assert before.returncode == 1
        assert "HTTP 401" in before.stdout and "run `agentui mcp login docs`" in before.stdout
        assert _marks(marker) == []  # a failed start registers no client and asks nobody

        login = _agentui("mcp", "login", "docs")
        assert login.returncode == 0, login.stderr
        assert "signed in to docs" in login.stdout and "9 tools" in login.stdout
        assert f"{base}/authorize?" in login.stderr  # the address is always shown, browser or not
        assert _marks(marker) == ["oauth:register", "oauth:authorize", "oauth:token"]
        creds = _credentials()
        assert stat.S_IMODE(creds.stat().st_mode) == 0o600
        entry = json.loads(creds.read_text())[base + "/mcp"]
        assert entry["tokens"]["refresh_token"] and entry["client"]["client_id"]

        listed = _agentui("mcp", "list", "--json")
        assert listed.returncode == 0, listed.stdout
        [row] = json.loads(listed.stdout)["servers"]
        assert row["ok"] and "echo" in row["tools"]
        assert row["oauth"].startswith("signed in (access token valid")
        assert entry["tokens"]["access_token"] not in listed.stdout  # never shown
        assert "oauth:refresh" not in _marks(marker)  # still fresh: used as it is

        time.sleep(3.5)  # the access token expires; a new process knows it from the stored expiry
        again = _agentui("mcp", "list", "--json")
        assert again.returncode == 0, again.stdout
        assert _marks(marker).count("oauth:refresh") == 1
        assert "oauth:reject" not in _marks(marker)  # refreshed before use, never sent expired

        out = _agentui("mcp", "logout", "docs")
        assert out.returncode == 0 and "signed out of docs" in out.stdout
        assert base + "/mcp" not in json.loads(creds.read_text())
        after = _agentui("mcp", "list")
        assert after.returncode == 1 and "run `agentui mcp login docs`" in after.stdout


def test_a_refused_token_or_refresh_asks_for_a_new_sign_in_by_name(tmp_path: Path) -> None:
    marker = tmp_path / "marks"
    with http_server(tmp_path, "--oauth", "--marker", str(marker)) as base:
        _add(base + "/mcp")
        assert _agentui("mcp", "login", "docs").returncode == 0
        creds = _credentials()
        data = json.loads(creds.read_text())
        data[base + "/mcp"]["tokens"] = {"access_token": "revoked", "token_type": "Bearer"}  # no refresh token
        creds.write_text(json.dumps(data))
        listed = _agentui("mcp", "list")
        assert listed.returncode == 1
        assert "it asks for an OAuth sign-in: run `agentui mcp login docs`" in listed.stdout
        assert "oauth:reject" in _marks(marker)

        data[base + "/mcp"]["tokens"] = {"access_token": "old", "token_type": "Bearer", "refresh_token": "revoked"}
        data[base + "/mcp"]["expires_at"] = 1.0  # expired: the refresh is tried first, and refused
        creds.write_text(json.dumps(data))
        listed = _agentui("mcp", "list")
        assert listed.returncode == 1
        assert "it asks for an OAuth sign-in: run `agentui mcp login docs`" in listed.stdout
        assert _marks(marker).count("oauth:register") == 1  # only the sign-in registered a client


def test_a_refused_sign_in_and_a_browser_that_never_answers(tmp_path: Path) -> None:
    with http_server(tmp_path, "--oauth", "--deny") as base:
        _add(base + "/mcp")
        refused = _agentui("mcp", "login", "docs")
        assert refused.returncode == 1
        assert "refused by the authorization server: access_denied" in refused.stderr
        assert "Traceback" not in refused.stderr
        nobody = _agentui("mcp", "login", "--no-browser", "--timeout", "1", "docs")
        assert nobody.returncode == 1
        assert f"{base}/authorize?" in nobody.stderr  # what to open, by hand
        assert "no answer from the browser within 1 s" in nobody.stderr
    assert not _credentials().exists() or base + "/mcp" not in json.loads(_credentials().read_text())


def test_login_refuses_what_it_cannot_sign_in_to(tmp_path: Path) -> None:
    none = _agentui("mcp", "login", "nope")
    assert none.returncode == 2 and "no server 'nope'" in none.stderr
    assert _agentui("mcp", "add", "local", sys.executable, "-m", "tests.mcpserver").returncode == 0
    stdio = _agentui("mcp", "login", "local")
    assert stdio.returncode == 2 and "stdio server" in stdio.stderr
    header = _agentui("mcp", "add", "--url", "http://127.0.0.1:9/mcp", "--header", "Authorization: Bearer x", "h")
    assert header.returncode == 0, header.stderr
    own = _agentui("mcp", "login", "h")
    assert own.returncode == 2 and "its own `Authorization` header" in own.stderr
    assert _agentui("mcp", "logout", "local").returncode == 2


def test_a_trusted_project_server_can_be_signed_in_to(tmp_path: Path) -> None:
    ws = tmp_path / "proj"
    (ws / ".agentui").mkdir(parents=True)
    with http_server(tmp_path, "--oauth") as base:
        (ws / ".agentui" / "mcp.toml").write_text(f'[mcp.servers.team]\nurl = "{base}/mcp"\n', encoding="utf-8")
        untrusted = subprocess.run([sys.executable, "-m", "agentui.cli", "mcp", "login", "team"], cwd=ws,
                                   capture_output=True, text=True, timeout=60, env={**os.environ, "BROWSER": BROWSER})
        assert untrusted.returncode == 2 and "no server 'team'" in untrusted.stderr
        assert _agentui("mcp", "trust", "--workspace", str(ws)).returncode == 0
        login = subprocess.run([sys.executable, "-m", "agentui.cli", "mcp", "login", "team"], cwd=ws,
                               capture_output=True, text=True, timeout=120, env={**os.environ, "BROWSER": BROWSER})
        assert login.returncode == 0, login.stderr
        assert "signed in to team" in login.stdout


async def test_servers_starting_together_refresh_once_and_all_connect(tmp_path: Path) -> None:
    """Two connections to one signed-in server start at once with its access token expired: with
    rotating refresh tokens, two refreshes at once would leave one holding a spent token."""
    from agentui.config import McpServerConfig
    from agentui.mcp.hub import McpHub

    marker = tmp_path / "marks"
    with http_server(tmp_path, "--oauth", "--token-ttl", "2", "--marker", str(marker)) as base:
        _add(base + "/mcp")
        assert _agentui("mcp", "login", "docs").returncode == 0
        for _round in range(3):
            time.sleep(2.2)  # expired
            servers = {n: McpServerConfig(url=base + "/mcp", startup_timeout_s=30) for n in ("a", "b", "c")}
            hub = McpHub(servers)
            try:
                reports = await hub.start()
            finally:
                await hub.aclose()
            assert all(r.ok for r in reports), [r.detail for r in reports]
    assert 3 <= _marks(marker).count("oauth:refresh") <= 9 and _marks(marker).count("oauth:authorize") == 1


def test_processes_starting_together_refresh_once_and_all_connect(tmp_path: Path) -> None:
    marker = tmp_path / "marks"
    with http_server(tmp_path, "--oauth", "--token-ttl", "3", "--marker", str(marker)) as base:
        _add(base + "/mcp")
        assert _agentui("mcp", "login", "docs").returncode == 0
        for _round in range(1):
            time.sleep(3.5)  # expired: every process below finds it due for a refresh
            env = {**os.environ, "BROWSER": BROWSER}
            procs = [subprocess.Popen([sys.executable, "-m", "agentui.cli", "mcp", "list", "--json"],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                     for _ in range(4)]
            outs = [p.communicate(timeout=120) for p in procs]
            assert all(p.returncode == 0 for p in procs), [o[0][-300:] for o in outs]
        # each refresh used the newest refresh token (rotated each time): none was refused
        assert 1 <= _marks(marker).count("oauth:refresh") <= 4 and _marks(marker).count("oauth:authorize") == 1
