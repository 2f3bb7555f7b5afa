"""ACP probe (issue 38 items 4 and 5): available commands after session/new, and a write's
permission request carrying diff content. Usage: python acp_probe.py AGENTUI_BIN WORKSPACE"""
import json
import subprocess
import sys
import threading
import time

agentui, ws = sys.argv[1], sys.argv[2]
p = subprocess.Popen([agentui, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                     text=True, cwd=ws)
msgs = []


def reader():
    for line in p.stdout:
        try:
            m = json.loads(line)
        except ValueError:
            continue
        msgs.append(m)
        if m.get("method") == "session/request_permission":
            opts = m["params"]["options"]
            allow = next((o for o in opts if o["kind"].startswith("allow_once")), opts[0])
            send({"jsonrpc": "2.0", "id": m["id"], "result": {"outcome": {"outcome": "selected",
                                                                         "optionId": allow["optionId"]}}})
        elif "id" in m and "method" in m:  # other client requests: answer empty
            send({"jsonrpc": "2.0", "id": m["id"], "result": None})


def send(m):
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()


threading.Thread(target=reader, daemon=True).start()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False}}}})
time.sleep(2)
send({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": ws, "mcpServers": []}})
time.sleep(3)
sid = next((m["result"]["sessionId"] for m in msgs if m.get("id") == 2 and "result" in m), None)
print("session", sid)
cmds = [m for m in msgs if m.get("method") == "session/update"
        and m["params"]["update"].get("sessionUpdate") == "available_commands_update"]
print("available commands:", json.dumps(cmds[0]["params"]["update"]["availableCommands"]) if cmds else None)
send({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
      "params": {"sessionId": sid, "prompt": [{"type": "text", "text": (sys.argv[3] if len(sys.argv) > 3 else "write hello into notes.txt")}]}})
for _ in range(60):
    time.sleep(0.5)
    if any(m.get("id") == 3 for m in msgs):
        break
for m in msgs:
    if m.get("method") == "session/request_permission":
        tc = m["params"]["toolCall"]
        print("permission:", json.dumps(tc)[:900])
        print("options:", [o["kind"] + ":" + o["name"] for o in m["params"]["options"]])
diffs = [m for m in msgs if "diff" in json.dumps(m.get("params", {}))]
print("messages with diff content:", len(diffs))
for m in msgs:
    u = m.get("params", {}).get("update", {})
    if u.get("sessionUpdate") == "agent_message_chunk":
        print("agent says:", json.dumps(u.get("content"))[:300])
print("prompt result:", [m.get("result") or m.get("error") for m in msgs if m.get("id") == 3])
p.terminate()
