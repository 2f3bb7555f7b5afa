"""A scripted fake LLM whose executor tries to read a file (the OAuth credentials file) and then,
separately, to call the OAuth-protected server's `echo` tool.

python heldout/oauth/fake_reader.py --log FILE --mode read_file|cat|echo --path PATH
Prints its base URL. Every request's text is appended to --log (to look for leaked tokens)."""
from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.fakellm.server import FakeLLM, Reply  # noqa: E402
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--mode", default="read_file")
    ap.add_argument("--path", required=True)
    ap.add_argument("--tool", default="docs3.echo")
    ap.add_argument("--command", help="with --mode cmd: the shell command to run")
    a = ap.parse_args()
    fake = FakeLLM(port=0)
    lock = threading.Lock()

    def text(req):
        return "\n".join(str(m.get("content", "")) for m in req.get("messages", []))

    def resp(req):
        with lock, open(a.log, "a") as f:
            f.write(json.dumps({"role": req.get("_role"), "text": text(req), "tools": req.get("tools")}) + "\n")
        role = req.get("_role")
        if role == "perceiver":
            return perceive("read the file")
        if role == "planner":
            tool = {"read_file": "read_file", "cat": "shell", "cmd": "shell", "echo": a.tool}[a.mode]
            return plan(["the file's text is shown"], sub("read the file", "its text", tools=[tool]))
        if role == "executor":
            if len(req.get("messages", [])) <= 2:
                if a.mode == "read_file":
                    return call("read_file", path=a.path)
                if a.mode == "cat":
                    return call("shell", command=f"cat {a.path}")
                if a.mode == "cmd":
                    return call("shell", command=a.command)
                return call(a.tool, text="hello from the fake model")
            return finish("done")
        if role == "agent_validator":
            return verdicts("pass", quote="done")
        if role == "meta_validator":
            return merge("done", "pass", summary="done", answer="done")
        return Reply.json({"ok": True})

    fake.responder("*", resp)
    fake.start()
    print(fake.base_url, flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
