"""Live end-to-end: the real pipeline on a real small model on the CPU (issue #7, DESIGN §4).

Run with `make test-live` (installs the `local` extra, fetches and verifies the model). The
assertions are about the system, not the model's luck: every run ends with a valid FinalResult
within its budget, the bus sequence is legal (the Auditor reports no boundary violation), token
accounting is non-zero and parse repairs are counted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentui.contracts import FinalResult, PerceiverReply
from tests.live.harness import cpu_config

pytestmark = pytest.mark.live

TASK_BUDGET_S = 900  # hard ceiling per task on 2 CPU cores

TASKS = [
    ("count-lines", "printf 'alpha\\nbeta\\ngamma\\n' > notes.txt", "How many lines does notes.txt have?"),
    ("write-file", "true", "Create a file hello.txt containing the text: Hello, world"),
    ("json-field", "echo '{\"port\": 8080}' > config.json", "Which port is configured in config.json?"),
]


@pytest.mark.parametrize(("name", "init", "task"), TASKS, ids=[t[0] for t in TASKS])
def test_live_task_ends_in_valid_final_result(tmp_path: Path, gguf: str, name: str, init: str, task: str) -> None:
    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    subprocess.run(["bash", "-c", init], cwd=ws, check=True)
    cfg = cpu_config(tmp_path)
    env = {**os.environ, "AGENTUI_PROVIDER": "local", "AGENTUI_GGUF": gguf, "AGENTUI_CONFIG": str(cfg)}
    t0 = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "agentui.cli", "run", "--json", "--yes", "--workspace", str(ws),
         "--data-dir", str(data), task],
        capture_output=True, text=True, timeout=TASK_BUDGET_S, env=env, stdin=subprocess.DEVNULL,
    )
    wall = time.monotonic() - t0
    assert proc.returncode in (0, 1), f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    doc = json.loads(proc.stdout)
    final = doc["final"]
    if "directive" in final:
        fr = FinalResult.model_validate(final)
        assert fr.directive.value in ("accept", "success", "abandon")
        assert (proc.returncode == 0) == (fr.directive.value != "abandon")
        if fr.directive.value == "abandon":
            assert fr.loss.D > 0 or fr.loss.Omega >= 0.8 or fr.next_moves
    else:
        PerceiverReply.model_validate(final)
    stats = doc["stats"]
    assert stats["llm_calls"] > 0
    assert stats["prompt_tokens"] > 0 and stats["completion_tokens"] > 0
    assert stats["by_role"], "per-role accounting is missing"
    # parse repairs are counted, consistently: the total equals the per-role sum
    assert stats["parse_repairs"] == sum(int(r["parse_repairs"]) for r in stats["by_role"].values())
    assert stats["llm_calls"] == sum(int(r["calls"]) for r in stats["by_role"].values())
    # every LLM exchange is in the task log, whole
    log = [json.loads(x) for x in (data / "tasks" / f"{doc['task_id']}.jsonl").read_text().splitlines()]
    llm = [r for r in log if r["kind"] == "llm"]
    assert len(llm) >= stats["llm_calls"] and all(r["messages"] for r in llm)
    assert wall < TASK_BUDGET_S

    # the bus sequence was legal: no boundary violation in the Auditor's log
    audit = subprocess.run([sys.executable, "-m", "agentui.cli", "audit", "--json", "--data-dir", str(data)],
                           capture_output=True, text=True, timeout=120, env=env)
    assert audit.returncode == 0, audit.stderr
    report = json.loads(audit.stdout)
    by_kind = report.get("events_by_kind", {})
    assert by_kind.get("boundary_violation", 0) == 0, report
    recordings = list((data / "recordings").glob("*.jsonl"))
    assert recordings, "the bus recording was not written"
