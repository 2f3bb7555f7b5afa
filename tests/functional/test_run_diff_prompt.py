"""`agentui run` at a terminal: a file write's question prints its unified diff before the menu
(a real subprocess whose stdin is a pseudo-terminal, the fake LLM over HTTP)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts


def test_the_terminal_prompt_prints_the_diff_of_a_write(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("keep\nold\n")
    fakellm.script("perceiver", [perceive("rewrite notes.txt")])
    fakellm.responder("planner", lambda _r: plan(["notes.txt says new"], sub("rewrite notes.txt", "notes.txt says new",
                                                                          tools=["write_file"])))
    fakellm.responder("executor", lambda r: call("write_file", path="notes.txt", content="keep\nnew\n")
                      if len(r["messages"]) == 2 else finish("could not"))
    fakellm.responder("agent_validator", lambda _r: verdicts("fail:environmental"))
    fakellm.responder("meta_validator", lambda _r: merge("nothing", "fail:environmental", summary="denied"))
    master, slave = os.openpty()
    try:
        os.write(master, b"d\n")  # the answer waits in the terminal until the prompt reads it: deny
        r = subprocess.run([sys.executable, "-m", "agentui.cli", "run", "--workspace", str(ws), "--data-dir",
                            str(tmp_path / "d"), "rewrite notes.txt"], stdin=slave, capture_output=True, text=True,
                           env={**os.environ, "AGENTUI_BASE_URL": fakellm.base_url}, timeout=90)
    finally:
        os.close(master)
        os.close(slave)
    lines = [ln.strip() for ln in r.stderr.splitlines()]
    at = lines.index("--- a/notes.txt")
    want = ["--- a/notes.txt", "+++ b/notes.txt", "@@ -1,2 +1,2 @@", "keep", "-old", "+new"]
    assert lines[at:at + 6] == want, r.stderr
    assert '[s] For this session: "write_file notes.txt"' in r.stdout and "[p]" not in r.stdout, r.stdout
    assert (ws / "notes.txt").read_text() == "keep\nold\n"
