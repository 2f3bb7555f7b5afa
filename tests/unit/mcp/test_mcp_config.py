"""`[mcp.servers.<name>]` in config.toml and `agentui mcp add|remove` editing it in place (#18)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from agentui.config import ConfigError, load_config
from agentui.mcp.configfile import ConfigEditError, add_server, remove_server

ORIGINAL = (
    '# my settings\n[llm]\nmodel = "m"  # keep me\n\n[mcp.servers.keep]\ncommand = "k"\n\n[ui]\ntheme = "light"\n'
)


def test_servers_load_with_defaults(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text('[mcp.servers.gh]\ncommand = "npx"\nargs = ["-y", "srv"]\nenv = { TOKEN = "${GH}" }\n'
                 '[mcp.servers.web]\nurl = "http://localhost:9/mcp"\nallow = ["search"]\n')
    cfg = load_config(f, env={}).config
    gh, web = cfg.mcp.servers["gh"], cfg.mcp.servers["web"]
    assert gh.command == "npx" and gh.args == ["-y", "srv"] and gh.env == {"TOKEN": "${GH}"} and gh.allow == []
    assert web.url and web.allow == ["search"] and web.enabled and web.startup_timeout_s == 15


@pytest.mark.parametrize(("body", "needle"), [
    ('[mcp.servers.x]\nargs = ["a"]\n', "exactly one of `command`"),
    ('[mcp.servers.x]\ncommand = "a"\nurl = "http://h"\n', "exactly one of `command`"),
    ('[mcp.servers."a.b"]\ncommand = "a"\n', "must be letters"),
    ('[mcp.servers.x]\ncommand = "a"\ncolour = 1\n', "unknown key"),
])
def test_bad_server_config_names_the_problem(tmp_path: Path, body: str, needle: str) -> None:
    f = tmp_path / "c.toml"
    f.write_text(body)
    with pytest.raises(ConfigError, match="mcp") as e:
        load_config(f, env={})
    assert needle in str(e.value)


def test_add_then_remove_keeps_every_other_line(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text(ORIGINAL)
    add_server(f, "fs", {"command": "npx", "args": ["-y", "server \"fs\""], "env": {"A": "1"}, "allow": ["read"],
                         "url": None, "timeout_s": 5.0})
    data = tomllib.loads(f.read_text())
    assert data["mcp"]["servers"]["fs"] == {"command": "npx", "args": ["-y", 'server "fs"'], "env": {"A": "1"},
                                            "allow": ["read"], "timeout_s": 5.0}
    assert f.read_text().startswith(ORIGINAL.rstrip("\n"))
    remove_server(f, "fs")
    assert f.read_text() == ORIGINAL
    remove_server(f, "keep")
    assert tomllib.loads(f.read_text()) == {"llm": {"model": "m"}, "ui": {"theme": "light"}}
    assert "# keep me" in f.read_text()


def test_add_refuses_duplicates_and_invalid_entries_without_touching_the_file(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text(ORIGINAL)
    with pytest.raises(ConfigEditError, match="already exists"):
        add_server(f, "keep", {"command": "x"})
    with pytest.raises(ConfigEditError, match="exactly one of"):
        add_server(f, "new", {"command": "x", "url": "http://h"})
    with pytest.raises(ConfigEditError, match="no MCP server 'nope'"):
        remove_server(f, "nope")
    assert f.read_text() == ORIGINAL


def _cli(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentui.cli", "--config", str(config), "mcp", *args],
                          capture_output=True, text=True, timeout=90, cwd=Path(__file__).resolve().parents[3])


def test_cli_add_list_remove(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text("")
    p = _cli("add", "--allow", "echo", "--env", "K=V", "t", sys.executable, "-m", "tests.mcpserver", config=f)
    assert p.returncode == 0, p.stderr
    p = _cli("list", config=f)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "t.echo — runs without asking" in p.stdout and "t.add — asks first" in p.stdout
    p = _cli("add", "t", "x", config=f)
    assert p.returncode == 2 and "already exists" in p.stderr and "Traceback" not in p.stderr
    p = _cli("add", "u", config=f)
    assert p.returncode == 2 and "give a command" in p.stderr
    p = _cli("add", "--env", "nokey", "u", "cmd", config=f)
    assert p.returncode == 2 and "KEY=VALUE" in p.stderr
    p = _cli("add", "bad", str(tmp_path / "missing-binary"), config=f)
    assert p.returncode == 0
    p = _cli("list", config=f)
    assert p.returncode == 1 and "bad:" in p.stdout and "FAILED" in p.stdout and "No such file" in p.stdout
    assert _cli("remove", "bad", config=f).returncode == 0
    p = _cli("remove", "bad", config=f)
    assert p.returncode == 2 and "no MCP server 'bad'" in p.stderr
    p = _cli("list", "--no-connect", "--json", config=f)
    assert p.returncode == 0 and '"name": "t"' in p.stdout and '"ok": null' in p.stdout


@pytest.mark.parametrize(("url", "needle"), [("http://", "has no host"), ("ftp://x/mcp", "is not an http(s) URL"),
                                             ("http://127.0.0.1:99999/mcp", "invalid port")])
def test_cli_add_refuses_a_bad_url_without_touching_the_file(tmp_path: Path, url: str, needle: str) -> None:
    """Found by an outside tester: `mcp add --url http://` was written (exit 0); only `mcp list`
    failed later (#15)."""
    f = tmp_path / "config.toml"
    f.write_text("# mine\n")
    p = _cli("add", "--url", url, "srv", config=f)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert needle in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert f.read_text() == "# mine\n"
