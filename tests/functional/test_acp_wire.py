"""A misbehaving ACP client never stops `agentui acp`, and each bad line gets the JSON-RPC 2.0 answer
the specification asks for: -32700 with id null for a line that is not JSON; -32600 for a batch, a
non-object, an id that is an object or a boolean (id null), a `jsonrpc` other than "2.0", a bad
method or params; -32602 for a non-integer protocol version. An over-size line is answered, not
dropped silently, and the line after it is still served. `initialize` answers agentui's own
protocol version whatever the client asks; unknown auth and mode ids are refused. Stderr never
carries a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentui.acp.wire import MAX_LINE

ROOT = Path(__file__).resolve().parents[2]


def run_acp(tmp_path: Path, lines: list[str]) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([sys.executable, "-m", "agentui.cli", "--data-dir", str(tmp_path / "d"), "acp"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=120, cwd=str(ROOT),
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    return p


def test_bad_lines_get_the_json_rpc_error_answers_and_the_agent_keeps_serving(tmp_path) -> None:
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
        '{"jsonrpc":"2.0","id":10,"method":"session/new","params":{"cwd":' + json.dumps(str(tmp_path))
        + ',"mcpServers":[]}}',
        '{"jsonrpc":"2.0","id":11,"method":"session/list","params":{}}',
        '{"jsonrpc":"2.0","id":12,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}',
        '{"jsonrpc":"2.0","id":13,"method":"initialize","params":{"protocolVersion":"1.0"}}',
        '{"jsonrpc":"1.0","id":14,"method":"session/list","params":{}}',
        '{"id":15,"method":"session/list","params":{}}',
        '[{"jsonrpc":"2.0","id":16,"method":"session/list","params":{}}]',
        '{"jsonrpc":"2.0","id":17,"method":"initialize","params":{"protocolVersion":99}}',
        '{"jsonrpc":"2.0","id":18,"method":"initialize","params":{"protocolVersion":0}}',
        '{"jsonrpc":"2.0","id":19,"method":"authenticate","params":{"methodId":"nope"}}',
        '{"jsonrpc":"2.0","id":"x","result":{}}',  # a response to nothing: no answer
    ]
    p = run_acp(tmp_path, lines)
    out = [json.loads(x) for x in p.stdout.splitlines()]
    answers = {m["id"]: m for m in out if m.get("id") is not None}
    nulls = [m for m in out if "id" in m and m["id"] is None]
    assert all(m["jsonrpc"] == "2.0" for m in out)
    assert answers[1]["result"]["protocolVersion"] == 1
    assert answers[7]["error"]["code"] == -32600 and answers[8]["error"]["code"] == -32600
    assert answers[9]["error"]["code"] == -32601
    assert answers[10]["result"]["sessionId"] and "sessions" in answers[11]["result"]
    assert answers[12]["error"]["code"] == -32602 and "absolute" in json.dumps(answers[12]["error"])
    assert answers[13]["error"]["code"] == -32602  # "1.0" is not an integer (the SDK alone read it as 1)
    assert answers[14]["error"]["code"] == -32600 and "2.0" in answers[14]["error"]["data"]
    assert answers[15]["error"]["code"] == -32600  # no `jsonrpc` at all
    assert answers[17]["result"]["protocolVersion"] == 1 and answers[18]["result"]["protocolVersion"] == 1
    assert answers[19]["error"]["code"] == -32602 and "nope" in json.dumps(answers[19]["error"])
    assert set(answers) == {1, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17, 18, 19}
    # garbage → parse error; [1,2], the object id, the boolean id, 42, {"jsonrpc"} and the batch → invalid
    assert [m["error"]["code"] for m in nulls] == [-32700, -32600, -32600, -32600, -32600, -32600, -32600]
    assert "batch" in nulls[1]["error"]["data"] and "batch" in nulls[-1]["error"]["data"]
    assert len([ln for ln in p.stderr.splitlines() if ln.startswith("agentui acp: ignored a message")]) == 12


def test_an_over_size_line_is_answered_and_the_next_line_is_served(tmp_path) -> None:
    huge = '{"jsonrpc":"2.0","id":1,"method":"session/list","params":{"x":"' + "a" * (MAX_LINE + 10) + '"}}'
    p = run_acp(tmp_path, [huge, '{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}'])
    out = [json.loads(x) for x in p.stdout.splitlines()]
    assert out[0]["id"] is None and out[0]["error"]["code"] == -32600 and "longer than" in out[0]["error"]["data"]
    assert out[1]["id"] == 2 and "sessions" in out[1]["result"]
    assert "refused a message longer than" in p.stderr


def test_unknown_mode_and_config_values_are_refused_and_known_ones_taken(tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    lines = [
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}',
        '{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":' + json.dumps(str(ws)) + ',"mcpServers":[]}}',
    ]
    # the session id is only known after the answer: the process is run once to learn the id shape
    first = run_acp(tmp_path, lines)
    new = next(json.loads(x) for x in first.stdout.splitlines() if json.loads(x).get("id") == 2)["result"]
    assert new["modes"]["currentModeId"] == "ask"
    assert [m["id"] for m in new["modes"]["availableModes"]] == ["ask", "accept-edits", "sandboxed-auto"]
    assert [o["id"] for o in new["configOptions"]] == ["brain_model", "tool_model"]
    sid = new["sessionId"]
    lines = [
        lines[0],
        '{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":' + json.dumps(sid)
        + ',"cwd":' + json.dumps(str(ws)) + ',"mcpServers":[]}}',
        '{"jsonrpc":"2.0","id":3,"method":"session/set_mode","params":{"sessionId":' + json.dumps(sid)
        + ',"modeId":"yolo"}}',
        '{"jsonrpc":"2.0","id":4,"method":"session/set_mode","params":{"sessionId":' + json.dumps(sid)
        + ',"modeId":"accept-edits"}}',
        '{"jsonrpc":"2.0","id":5,"method":"session/set_mode","params":{"sessionId":"nope","modeId":"ask"}}',
        '{"jsonrpc":"2.0","id":6,"method":"session/set_config_option","params":{"sessionId":' + json.dumps(sid)
        + ',"configId":"temperature","value":"1"}}',
        '{"jsonrpc":"2.0","id":7,"method":"session/set_config_option","params":{"sessionId":' + json.dumps(sid)
        + ',"configId":"brain_model","value":"no-such-model"}}',
    ]
    p = run_acp(tmp_path, lines)
    answers = {m["id"]: m for m in map(json.loads, p.stdout.splitlines()) if "id" in m}
    assert answers[2]["result"]["modes"]["currentModeId"] == "ask"
    assert answers[3]["error"]["code"] == -32602 and "yolo" in json.dumps(answers[3]["error"])
    assert "error" not in answers[4]
    assert answers[5]["error"]["code"] == -32602
    assert answers[6]["error"]["code"] == -32602 and answers[7]["error"]["code"] == -32602
