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
    assert r.returncode == 2  # an endpoint `run` cannot use is exit 2 there and here (#15)
    assert "AGENTUI_BASE_URL" in r.stdout and f"127.0.0.1:{port}" in r.stdout


def test_doctor_without_any_llm_says_what_to_set(tmp_path):
    r = _doctor("--data-dir", str(tmp_path))
    assert r.returncode == 2
    assert "no LLM is configured" in r.stdout and "AGENTUI_BASE_URL" in r.stdout


def test_doctor_model_the_server_does_not_have_is_bad_input(tmp_path):
    """Ollama/vLLM answer a completion for an unknown model with 404 "model not found": doctor's
    tiny completion catches it — exit 2, one line naming the model, the models the server has and
    the fix (#12 item 5; newcomer: `--model nosuch` reported all passed)."""
    from tests.fakellm import FakeLLM

    with FakeLLM(only_listed=True) as strict:
        r = _doctor("--data-dir", str(tmp_path), "--base-url", strict.base_url, "--model", "nosuch")
        assert r.returncode == 2, r.stdout + r.stderr
        assert "Traceback" not in r.stdout + r.stderr
        [line] = [x for x in r.stdout.splitlines() if x.startswith("✗")]
        assert "nosuch" in line and "fake-model" in line and "ollama pull nosuch" in line, line
        assert [c["model"] for c in strict.requests] == ["nosuch"]  # a real completion was asked
        ok = _doctor("--data-dir", str(tmp_path), "--base-url", strict.base_url, "--model", "fake-model")
        assert ok.returncode == 0, ok.stdout


def test_doctor_notes_a_model_missing_from_the_list_that_still_answers(fakellm, tmp_path):
    # llama.cpp's server answers any model name: not a failure, but said on the endpoint's line
    r = _doctor("--data-dir", str(tmp_path), "--base-url", fakellm.base_url, "--model", "nosuch")
    assert r.returncode == 0, r.stdout
    assert "nosuch is not in the server's model list" in " ".join(r.stdout.split())


def test_doctor_says_truthfully_whether_the_sandbox_is_active(fakellm, tmp_path):
    """The sandbox line follows the machine: active only when bwrap really runs here (#14)."""
    import shutil

    from agentui.tools.sandbox import detect

    def line(**env: str) -> str:
        r = _doctor("--json", "--data-dir", str(tmp_path), "--base-url", fakellm.base_url, env_extra=env)
        return next(c["detail"] for c in json.loads(r.stdout)["checks"] if c["name"] == "sandbox")

    here = detect() if sys.platform.startswith("linux") and shutil.which("bwrap") else None
    if here is not None and here.active:
        assert line().startswith("OS sandbox active (bubblewrap)")
    assert line(AGENTUI_SANDBOX="off").startswith("no OS sandbox (turned off by AGENTUI_SANDBOX=off)")
    if sys.platform.startswith("linux"):
        empty = tmp_path / "empty-bin"
        empty.mkdir()
        without_bwrap = line(PATH=str(empty))  # Landlock takes over where the kernel has it (#14)
        assert without_bwrap.startswith(("no OS sandbox (bubblewrap (bwrap) is not installed",
                                         "OS sandbox active (Landlock ABI")), without_bwrap
        assert "bubblewrap (bwrap) is not installed" in without_bwrap
