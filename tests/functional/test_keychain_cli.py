"""An API key saved from Settings (the OS keychain) is used by `agentui run` and `agentui doctor`
as by the TUI (#17): a stand-in `secret-tool` on PATH, the fake LLM on a non-local-looking address."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from agentui.config_write import key_account, store_api_key
from tests.fakellm import FakeLLM
from tests.functional.test_run_cli import _script_happy
from tests.unit.test_config_write import _fake_secret_tool

KEY = "sk-from-the-keychain-7f3a"


@pytest.fixture
def remote_fake():
    try:  # 127.0.0.2 is loopback on Linux but not "127.0.0.1"/"localhost": the keychain is consulted
        fake = FakeLLM(host="127.0.0.2").start()
    except OSError:
        pytest.skip("127.0.0.2 is not a loopback address here")
    yield fake
    fake.stop()


def _cli(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "agentui.cli", *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=timeout)


def test_run_and_doctor_read_the_key_from_the_keychain(remote_fake, tmp_path, monkeypatch):
    _fake_secret_tool(tmp_path, monkeypatch)
    url = f"http://127.0.0.2:{remote_fake.port}/v1"
    store_api_key(key_account(url), KEY, tool="secret-tool")
    r = _cli("doctor", "--json", "--base-url", url, "--model", "fake-model")
    doc = json.loads(r.stdout)
    assert doc["sources"]["llm.api_key"] == "OS keychain (127.0.0.2)", doc["sources"]
    assert KEY not in r.stdout  # shown as its source, never as text
    assert {c["_auth"] for c in remote_fake.requests} == {f"Bearer {KEY}"}
    remote_fake.requests.clear()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    (ws / "b.txt").write_text("b")
    _script_happy(remote_fake)
    r = _cli("run", "--json", "--workspace", str(ws), "--base-url", url, "--model", "fake-model", "--data-dir",
             str(tmp_path / "d"), "how many txt files?", timeout=120)
    assert r.returncode == 0, r.stderr
    assert len(remote_fake.requests) >= 6 and {c["_auth"] for c in remote_fake.requests} == {f"Bearer {KEY}"}


def test_a_key_given_elsewhere_wins_and_local_endpoints_skip_the_keychain(fakellm, tmp_path, monkeypatch):
    store = _fake_secret_tool(tmp_path, monkeypatch)
    store_api_key(key_account(fakellm.base_url), KEY, tool="secret-tool")
    r = _cli("doctor", "--json", "--base-url", fakellm.base_url, "--model", "fake-model")
    assert "llm.api_key" not in json.loads(r.stdout)["sources"]  # 127.0.0.1: local servers need none
    assert {c["_auth"] for c in fakellm.requests} == {None}
    assert store.is_file()
