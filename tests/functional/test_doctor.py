"""`agentui doctor` as a user runs it: a real subprocess against the fake server / a closed port."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time


def _doctor(*args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "agentui.cli", "doctor", *args],
                          capture_output=True, text=True, env=env, timeout=60)


def test_doctor_passes_against_fake_server(fakellm, tmp_path):
    r = _doctor("--data-dir", str(tmp_path / "data"), env_extra={"AGENTUI_BASE_URL": fakellm.base_url})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all checks passed" in r.stdout
    assert "fake-model" in r.stdout
    assert "env AGENTUI_BASE_URL" in r.stdout
    assert (tmp_path / "data" / "memory.leveldb" / "CURRENT").is_file()


def test_doctor_json(fakellm, tmp_path):
    r = _doctor("--json", "--data-dir", str(tmp_path), "--base-url", fakellm.base_url)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["ok"] is True
    assert {c["name"].split()[0] for c in out["checks"]} == {"config", "data", "llm", "leveldb", "acp", "sandbox"}
    [sandbox] = [c for c in out["checks"] if c["name"] == "sandbox"]
    assert "OS sandbox" in sandbox["detail"]  # active, or says the gate is the only line
    assert out["sources"]["llm.base_url"] == "command line"


def test_doctor_closed_port_fails_fast_saying_what_to_set(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    t0 = time.monotonic()
    r = _doctor("--data-dir", str(tmp_path), env_extra={"AGENTUI_BASE_URL": f"http://127.0.0.1:{port}"})
    assert time.monotonic() - t0 < 15  # includes interpreter start-up; the check itself is ≤ 10 s
    assert r.returncode == 1
    assert "AGENTUI_BASE_URL" in r.stdout and f"127.0.0.1:{port}" in r.stdout


def test_doctor_without_any_llm_says_what_to_set(tmp_path):
    r = _doctor("--data-dir", str(tmp_path))
    assert r.returncode == 1
    assert "no LLM is configured" in r.stdout and "AGENTUI_BASE_URL" in r.stdout
