"""`agentui run` and the project's own MCP servers (`.agentui/mcp.toml`): a real `agentui run`
subprocess, the fake LLM over HTTP and the real test MCP server (tests/mcpserver, stdio). A trusted
file's server is offered to the plan and called; an untrusted one is never started, and one stderr
line gives the command that trusts it (the same notice as the terminal UI's)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts
from tests.functional.test_run_cli import _env, _run

ROOT = str(Path(__file__).resolve().parents[2])


def _project(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A workspace (its name has a space, as a pasted command must survive) whose project file
    defines `proj`: the test server behind a shell line that leaves a mark when it starts."""
    ws = tmp_path / "my project"
    (ws / ".agentui").mkdir(parents=True)
    started, calls = tmp_path / "started.txt", tmp_path / "calls.txt"
    line = (f"echo started >> {shlex.quote(str(started))}; "
            f"exec {shlex.quote(sys.executable)} -m tests.mcpserver --marker {shlex.quote(str(calls))}")
    (ws / ".agentui" / "mcp.toml").write_text(
        f"[mcp.servers.proj]\ncommand = '/bin/sh'\nargs = ['-c', {json.dumps(line)}]\n"
        f"cwd = {json.dumps(ROOT)}\nallow = ['add']\n")
    return ws, started, calls


def _script_add(fake) -> None:  # noqa: ANN001
    fake.script("perceiver", [perceive("add two numbers with the project's server")])
    fake.script("planner", [plan(["the sum is reported"], sub("add 20 and 22", "a number is reported",
                                                                 tools=["proj.add"]))])
    fake.script("executor", [call("proj.add", a=20, b=22), finish("42")])
    fake.script("agent_validator", [verdicts("pass", quote="42")])
    fake.script("meta_validator", [merge("42", "pass", summary="42")])


def _trust_cmd(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentui.cli", *argv], capture_output=True, text=True,
                          timeout=60, cwd=ROOT, env={**_env(), "PYTHONPATH": ROOT})


def test_run_uses_the_trusted_project_files_server(fakellm, tmp_path):
    ws, started, calls = _project(tmp_path)
    p = _trust_cmd(["mcp", "trust", "--workspace", str(ws)])
    assert p.returncode == 0 and "trusted" in p.stdout, p.stderr
    _script_add(fakellm)
    r = _run(["--json", "--workspace", str(ws), "add 20 and 22"], {**_env(fakellm), "PYTHONPATH": ROOT},
             cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "not used until you trust it" not in r.stderr
    assert "proj.add" in fakellm.calls("planner")[0]["messages"][-1]["content"]  # offered to the plan
    doc = json.loads(r.stdout)
    assert doc["final"]["directive"] == "accept" and doc["final"]["output"] == "42"
    assert started.read_text().split() == ["started"] and calls.read_text().split() == ["add"]
    log = Path(_env()["AGENTUI_DATA_DIR"]) / "tasks" / f"{doc['task_id']}.jsonl"
    [rec] = [x for x in map(json.loads, log.read_text().splitlines()) if x["kind"] == "tool"]
    assert rec["tool"] == "proj.add" and rec["ok"] and rec["full_output"] == "42"


def test_run_never_starts_an_untrusted_project_file_and_says_how_to_trust_it(fakellm, tmp_path):
    ws, started, calls = _project(tmp_path)
    _script_add(fakellm)
    r = _run(["--json", "--workspace", str(ws), "add 20 and 22"], {**_env(fakellm), "PYTHONPATH": ROOT},
             cwd=ROOT, timeout=120)
    assert not started.exists() and not calls.exists()  # its command never ran
    assert "proj.add" not in fakellm.calls("planner")[0]["messages"][-1]["content"]
    [line] = [x for x in r.stderr.splitlines() if "mcp.toml" in x]
    prefix = (f"warning: the project file {ws / '.agentui' / 'mcp.toml'} defines MCP servers (proj) that are not "
              "used until you trust it: ")
    assert line.startswith(prefix), r.stderr
    # the command in the line, pasted into a shell, trusts this file (the path with a space stays one word)
    argv = shlex.split(line[len(prefix):])
    assert argv[:3] == ["agentui", "mcp", "trust"], line
    p = _trust_cmd(argv[1:])
    assert p.returncode == 0 and f"trusted {ws / '.agentui' / 'mcp.toml'}" in p.stdout, p.stderr
