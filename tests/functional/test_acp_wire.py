"""A misbehaving ACP client never stops `agentui acp` (#18): lines that are not JSON, JSON that is
not an object (the SDK's receive loop died on a batch array), bad ids, methods and params are each
dropped with one stderr line (a bad request with an id gets an error answer), and the agent keeps
serving; stderr never carries a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bad_lines_are_dropped_and_the_agent_keeps_serving(tmp_path) -> None:
    lines = [
        "garbage",
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}',
        "[1,2]",
        '{"jsonrpc":"2.0","id":{"a":1},"method":"initialize","params":{"protocolVersion":1}}',
        '{"jsonrpc":"2.0","id":7,"method":["x"]}',
        '{"jsonrpc":"2.0","id":8,"method":"session/new","params":"str"}',
        '{"jsonrpc":"2.0","id":true,"method":"initialize","params":{"protocolVersion":1}}',
        "42",
        '{"jsonrpc":"2.0"}',
        '{"jsonrpc":"2.0","id":9,"method":"nope/nope","params":{}}',
        '{"jsonrpc":"2.0","id":10,"method":"session/new","params":{"cwd":' + json.dumps(str(tmp_path)) + ',"mcpServers":[]}}',
        '{"jsonrpc":"2.0","id":11,"method":"session/list","params":{}}',
        '{"jsonrpc":"2.0","id":12,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}',
        '{"jsonrpc":"2.0","id":13,"method":"initialize","params":{"protocolVersion":"1.0"}}',
    ]
    p = subprocess.run([sys.executable, "-m", "agentui.cli", "--data-dir", str(tmp_path / "d"), "acp"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=90, cwd=str(ROOT),
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    answers = {m["id"]: m for m in map(json.loads, p.stdout.splitlines())}
    assert answers[1]["result"]["protocolVersion"] == 1
    assert answers[7]["error"]["code"] == -32600 and answers[8]["error"]["code"] == -32600
    assert answers[9]["error"]["code"] == -32601
    assert answers[10]["result"]["sessionId"] and "sessions" in answers[11]["result"]
    assert answers[12]["error"]["code"] == -32602 and "absolute" in json.dumps(answers[12]["error"])
    assert answers[13]["error"]["code"] == -32602  # "1.0" is not an integer (the SDK alone read it as 1)
    assert set(answers) == {1, 7, 8, 9, 10, 11, 12, 13}
    assert "Traceback" not in p.stderr
    dropped = [ln for ln in p.stderr.splitlines() if ln.startswith("agentui acp: ignored a message")]
    assert len(dropped) == 9
