"""What the live tests share: the real small model, a CPU-sized config, and a server process started,
awaited and always stopped (`llama_cpp.server` for the HTTP test). Importable without a model: the
process handling is tested hermetically in tests/unit/test_live_harness.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
MODEL_ALIAS = "qwen2.5-coder-0.5b"
# fewer executor steps and corrections, a time budget for ~2 cores
CPU_CONFIG = ("[llm]\nmax_tokens = 384\n[pipeline]\nexecutor_max_steps = 4\ncorrection_budget = 1\n"
              "[ggs]\ntime_budget_ms = 1200000\n")


def model_path(env_names: Sequence[str] = ("AGENTUI_LIVE_GGUF",)) -> str:
    """The GGUF named by the first set variable of `env_names`, else the verified fetched one."""
    for name in env_names:
        if os.environ.get(name):
            return os.environ[name]
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "fetch_model.py")], capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()[-1]


def cpu_config(where: Path) -> Path:
    path = where / "config.toml"
    path.write_text(CPU_CONFIG, encoding="utf-8")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve(argv: Sequence[str], ready_url: str, log_path: Path, *, name: str, up_within_s: float = 180,
          poll_s: float = 1.0, stop_within_s: float = 20) -> Iterator[subprocess.Popen[bytes]]:
    """Run `argv` (output to `log_path`, kept for a post-mortem) until GET `ready_url` answers 200;
    fail at once if it exits first, or after `up_within_s`. The process is stopped on the way out
    whatever happened (terminate, then kill)."""
    with log_path.open("w") as log:
        proc = subprocess.Popen(list(argv), stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + up_within_s
            while True:
                assert proc.poll() is None, f"{name} exited; see {log_path}"
                try:
                    if httpx.get(ready_url, timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < deadline, f"{name} did not come up within {up_within_s:g} s"
                time.sleep(poll_s)
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=stop_within_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def llama_server(gguf: str) -> Iterator[str]:
    """`python -m llama_cpp.server` on `gguf`, up and warm; yields its /v1 URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    # n_ctx 4096: the server's default 2048 is smaller than an executor prompt with tool output
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", MODEL_ALIAS,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096",
            "--n_threads", str(os.cpu_count() or 2), "--verbose", "False"]
    log_path = Path(tempfile.gettempdir()) / f"agentui-live-llama-server-{port}.log"
    with serve(argv, f"{url}/models", log_path, name="llama_cpp.server"):
        # up = answers a completion: the first one warms the model (page cache, kernels) and can
        # take longer than agentui's 10 s preflight on a busy 2-core machine
        httpx.post(f"{url}/chat/completions", timeout=180, json={
            "max_tokens": 1, "messages": [{"role": "user", "content": "ok"}]}).raise_for_status()
        yield url
