"""Live over HTTP (#12): a real OpenAI-compatible server process (llama-cpp-python's
`python -m llama_cpp.server`, from the `local` extra) on the real 0.5B model, and `agentui run`
with the DEFAULT configuration — no tuned config file.

It must end in a valid FinalResult before its deadline, with no endpoint failure; and right after
it the server must be idle: a one-token completion answers within a few seconds (no orphaned
generation left running by an abandoned or cut reply).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from agentui.contracts import FinalResult
from tests.live.harness import MODEL_ALIAS, llama_server

pytestmark = pytest.mark.live

TASK_DEADLINE_S = (
    900  # the task's own --timeout (the in-process live tests allow 900 s too); the process gets a minute more
)
IDLE_ANSWER_S = 5.0


@pytest.fixture(scope="module")
def server(gguf: str) -> Iterator[str]:
    pytest.importorskip("llama_cpp.server.app", reason="needs llama-cpp-python[server] (make test-live)")
    with llama_server(gguf) as url:
        yield url


def test_http_server_default_config_ends_in_final_result_and_leaves_it_idle(tmp_path: Path, server: str) -> None:
    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    env = {**os.environ, "AGENTUI_BASE_URL": server, "AGENTUI_CONFIG": str(tmp_path / "absent.toml")}
    env.pop("AGENTUI_PROVIDER", None)
    env.pop("AGENTUI_MODEL", None)
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "agentui.cli", "run", "--json", "--yes", "--timeout", str(TASK_DEADLINE_S),
         "--workspace", str(ws), "--data-dir", str(data), "How many lines does notes.txt have?"],
        capture_output=True, text=True, timeout=TASK_DEADLINE_S + 60, env=env, stdin=subprocess.DEVNULL,
    )
    wall = time.monotonic() - t0
    assert proc.returncode in (0, 1), f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    doc = json.loads(proc.stdout)
    assert "infra_failure" not in doc and "cancelled" not in doc, doc
    fr = FinalResult.model_validate(doc["final"])
    assert fr.directive.value in ("accept", "success", "abandon")
    stats = doc["stats"]
    assert stats["llm_calls"] > 0 and stats["completion_tokens"] > 0
    # no orphaned generation: the server answers a one-token completion at once
    t1 = time.monotonic()
    r = httpx.post(f"{server}/chat/completions", timeout=IDLE_ANSWER_S, json={
        "model": MODEL_ALIAS, "max_tokens": 1, "stream": False,
        "messages": [{"role": "user", "content": "ok"}]})
    idle_answer = time.monotonic() - t1
    assert r.status_code == 200 and idle_answer < IDLE_ANSWER_S
    print(f"\nlive-http: {fr.directive.value} in {wall:.0f} s; calls {stats['llm_calls']}, "
          f"tokens {stats['prompt_tokens']}+{stats['completion_tokens']}, parse failures "
          f"{stats['parse_failures']}, runaways cut {stats['runaways_cut']}; idle answer {idle_answer:.2f} s")
