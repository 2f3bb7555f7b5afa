"""config.toml written by the settings screen: other keys kept, secrets refused, validated first;
API keys through a keychain tool (a real subprocess: a stand-in `secret-tool` on PATH)."""

from __future__ import annotations

import os
import stat
import tomllib

import pytest

from agentui.config import ConfigError, load_config
from agentui.config_write import (
    SecretInConfig,
    detect_servers,
    dumps_toml,
    key_account,
    read_api_key,
    store_api_key,
    write_config,
)


def test_merges_keeps_other_keys_and_removes_emptied_ones(tmp_path):
    f = tmp_path / "config.toml"
    f.write_text('data_dir = "/tmp/x"\n[ggs]\nmax_replans = 2\n[llm]\nmodel = "old"\n'
                 '[llm.brain]\nmodel = "big"\n[ui]\ntheme = "dark"\n', encoding="utf-8")
    write_config(f, {"llm.base_url": "http://127.0.0.1:11434/v1", "llm.model": "qwen", "llm.brain.model": "",
                     "ui.theme": "light", "tools.workspace": "/w"})
    doc = tomllib.loads(f.read_text(encoding="utf-8"))
    assert doc == {"data_dir": "/tmp/x", "ggs": {"max_replans": 2},
                   "llm": {"model": "qwen", "base_url": "http://127.0.0.1:11434/v1"},
                   "ui": {"theme": "light"}, "tools": {"workspace": "/w"}}
    loaded = load_config(f, env={})
    assert loaded.config.llm.base_url == "http://127.0.0.1:11434/v1" and loaded.config.ggs.max_replans == 2


def test_never_writes_an_api_key_and_never_writes_an_invalid_file(tmp_path):
    f = tmp_path / "config.toml"
    f.write_text("[ggs]\nmax_replans = 2\n", encoding="utf-8")
    before = f.read_text(encoding="utf-8")
    with pytest.raises(SecretInConfig):
        write_config(f, {"llm.api_key": "sk-secret"})
    with pytest.raises(SecretInConfig):
        write_config(f, {"llm.brain.api_key": "sk-secret"})
    with pytest.raises(ConfigError):
        write_config(f, {"ggs.max_replans": 0})  # must be >= 1
    with pytest.raises(ConfigError):
        write_config(f, {"llm.nonsense": "x"})
    assert f.read_text(encoding="utf-8") == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".config-")]  # no temp file left


def test_toml_round_trip_of_awkward_strings():
    doc = {"a": 'quote " and \\ back', "n": 3, "x": 1.5, "b": True, "l": ["p", "q"], "t": {"u": "tab\there"},
           "weird key": "ü"}
    assert tomllib.loads(dumps_toml(doc)) == doc


def _fake_secret_tool(tmp_path, monkeypatch):
    """A stand-in for libsecret's CLI with the same arguments, storing into a file."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    store = tmp_path / "secrets"
    script = bindir / "secret-tool"
    script.write_text(
        "#!/bin/sh\n"
        f'STORE="{store}"\n'
        'cmd="$1"; shift\n'
        'if [ "$cmd" = store ]; then shift; key="$*"; val=$(cat); echo "$key=$val" >> "$STORE"; exit 0; fi\n'
        'if [ "$cmd" = lookup ]; then key="$*"; [ -f "$STORE" ] || exit 1; '
        'line=$(grep -F "$key=" "$STORE" | tail -1); [ -n "$line" ] || exit 1; printf "%s" "${line#*=}"; exit 0; fi\n'
        "exit 2\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return store


def test_api_key_goes_to_the_keychain_and_comes_back(tmp_path, monkeypatch):
    store = _fake_secret_tool(tmp_path, monkeypatch)
    acct = key_account("https://api.example.com/v1")
    assert acct == "api.example.com"
    assert read_api_key(acct, tool="secret-tool") is None
    where = store_api_key(acct, "sk-abc123", tool="secret-tool")
    assert "keyring" in where
    assert read_api_key(acct, tool="secret-tool") == "sk-abc123"
    assert "sk-abc123" in store.read_text()  # it went through the tool's stdin, not argv


def test_no_keychain_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH
    from agentui.config_write import keychain_tool

    assert keychain_tool() is None
    with pytest.raises(RuntimeError, match="AGENTUI_API_KEY"):
        store_api_key("x", "sk")


async def test_detect_servers_lists_models_and_skips_closed_ports(fakellm):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    found = await detect_servers((("fake", fakellm.base_url), ("closed", f"http://127.0.0.1:{port}/v1")),
                                 timeout_s=2.0)
    assert [f.name for f in found] == ["fake"] and "fake-model" in found[0].models


def test_settings_names_environment_variables_that_override_the_file():
    from agentui.ui.settings import env_overrides

    env = {"AGENTUI_BASE_URL": "http://x/v1", "OPENAI_MODEL": "m", "AGENTUI_TOOL_MODEL": ""}
    assert env_overrides(["llm.base_url", "llm.model", "llm.tool.model", "ui.theme"], env) == [
        "AGENTUI_BASE_URL", "OPENAI_MODEL"]
    assert env_overrides(["ui.theme"], env) == []
