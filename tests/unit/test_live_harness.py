"""The live tests' shared process handling (tests/live/harness.py), without a model: a real stdlib
HTTP server process stands in for `llama_cpp.server`."""

from __future__ import annotations

import os
import signal
import socket
import sys
from pathlib import Path

import httpx
import pytest

from agentui.config import load_config
from tests.live.harness import cpu_config, free_port, model_path, serve

# argv: port, seconds before listening, "ignore-term" or "", pid file
SERVER = """
import http.server, os, signal, sys, time
port, delay, mode, pid_file = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
open(pid_file, "w").write(str(os.getpid()))
if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("starting", flush=True)
time.sleep(delay)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def _argv(tmp_path: Path, port: int, delay: float = 0.0, mode: str = "") -> list[str]:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    return [sys.executable, str(script), str(port), str(delay), mode, str(tmp_path / "pid")]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _refused(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_free_port_is_bindable() -> None:
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_serve_waits_for_readiness_then_stops_the_process(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1/models"
    # the server listens only after 1.5 s: the first polls are refused, serve() keeps waiting
    with serve(_argv(tmp_path, port, delay=1.5), url, tmp_path / "log", name="fake", poll_s=0.1) as proc:
        assert proc.poll() is None
        assert httpx.get(url, timeout=5).status_code == 200
    assert proc.returncode == -signal.SIGTERM
    assert _refused(port)
    assert "starting" in (tmp_path / "log").read_text()  # the output is kept for a post-mortem


def test_serve_fails_at_once_when_the_process_exits(tmp_path: Path) -> None:
    argv = [sys.executable, "-c", "print('no such model'); raise SystemExit(3)"]
    with pytest.raises(AssertionError, match=r"fake exited; see .*log"):
        with serve(argv, f"http://127.0.0.1:{free_port()}/v1/models", tmp_path / "log", name="fake",
                   up_within_s=120, poll_s=0.1):
            pytest.fail("a process that exited is not up")
    assert "no such model" in (tmp_path / "log").read_text()


def test_serve_stops_a_process_that_never_comes_up(tmp_path: Path) -> None:
    port = free_port()
    with pytest.raises(AssertionError, match="fake did not come up within 1 s"):
        with serve(_argv(tmp_path, port, delay=600), f"http://127.0.0.1:{port}/v1/models", tmp_path / "log",
                   name="fake", up_within_s=1, poll_s=0.1):
            pytest.fail("never up")
    assert _gone(int((tmp_path / "pid").read_text()))  # stopped and reaped, not left running


def test_serve_stops_the_process_when_the_body_fails(tmp_path: Path) -> None:
    port = free_port()
    with pytest.raises(RuntimeError, match="the test failed"):
        with serve(_argv(tmp_path, port), f"http://127.0.0.1:{port}/v1/models", tmp_path / "log", name="fake",
                   poll_s=0.1) as proc:
            raise RuntimeError("the test failed")
    assert proc.returncode == -signal.SIGTERM
    assert _refused(port)


def test_serve_kills_a_process_that_ignores_terminate(tmp_path: Path) -> None:
    port = free_port()
    with serve(_argv(tmp_path, port, mode="ignore-term"), f"http://127.0.0.1:{port}/v1/models", tmp_path / "log",
               name="fake", poll_s=0.1, stop_within_s=0.5) as proc:
        pass
    assert proc.returncode == -signal.SIGKILL
    assert _gone(proc.pid)


def test_model_path_prefers_the_first_variable_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTUI_GGUF", "/models/b.gguf")
    assert model_path(("AGENTUI_LIVE_GGUF", "AGENTUI_GGUF")) == "/models/b.gguf"
    monkeypatch.setenv("AGENTUI_LIVE_GGUF", "/models/a.gguf")
    assert model_path(("AGENTUI_LIVE_GGUF", "AGENTUI_GGUF")) == "/models/a.gguf"


def test_cpu_config_is_a_valid_agentui_config(tmp_path: Path) -> None:
    cfg = load_config(cpu_config(tmp_path), env={}).config
    assert (cfg.llm.max_tokens, cfg.pipeline.executor_max_steps, cfg.pipeline.correction_budget,
            cfg.ggs.time_budget_ms) == (384, 4, 1, 1_200_000)
