"""`agentui run` names the lessons a plan was made with on its stderr progress: each Megram's id
(what `agentui memory forget` takes), level, space and the lesson's first words. A real
subprocess, the fake LLM over HTTP, a real LevelDB store in the data dir."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from agentui.clock import SystemClock
from agentui.ids import UuidIds
from agentui.memory import ENV_LOCAL, open_memory
from agentui.memory.workkind import request_space
from agentui.paths import DataLayout
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts

REQUEST = "how many txt files are here?"
LESSON = ("worked (accept) for \"count files\": 1 step(s) [shell]; calls that worked: shell `ls *.txt | wc -l`; "
          "instead of glob `**/*.txt` (no usable result)")


def _seed(data) -> tuple[str, str, str]:  # noqa: ANN001
    async def go() -> tuple[str, str, str]:
        mem = open_memory(DataLayout(data).memory_db, SystemClock(), UuidIds())
        space = request_space(REQUEST)
        assert space is not None
        used = mem.remember(LESSON, level="C", space=space, entity=ENV_LOCAL, sigma=1.0)
        gone = mem.remember("failed (abandon) for \"count files\": avoid find / -name '*.txt'", level="C",
                            space=space, entity=ENV_LOCAL, sigma=-1.0)
        mem.forget(gone.id)  # forgotten before the run: never named
        await mem.close()
        return used.id, gone.id, space

    return asyncio.run(go())


def test_run_names_the_lessons_its_plan_used(fakellm, tmp_path):
    ws, data = tmp_path / "ws", tmp_path / "d"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    used, gone, space = _seed(data)
    fakellm.script("perceiver", [perceive("count the txt files")])
    fakellm.script("planner", [plan(["the count is given"], sub("count .txt files", "a number", tools=["shell"]),
                                    checks=["ls *.txt | wc -l"])])
    fakellm.script("executor", [call("shell", command="ls *.txt | wc -l"), finish("1")])
    fakellm.script("agent_validator", [verdicts("pass", quote="1")])
    fakellm.script("meta_validator", [merge("1", "pass", summary="1 txt file")])
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "run", "--workspace", str(ws), "--data-dir", str(data),
                        REQUEST], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                       env={**os.environ, "AGENTUI_BASE_URL": fakellm.base_url})
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    at = next(i for i, x in enumerate(lines) if "DispatchManifest" in x)
    assert lines[at].endswith(f"planned with memory {used}")
    assert lines[at + 1] == f"  memory {used} C {space}: {LESSON[:99]}…"
    assert gone not in r.stderr
