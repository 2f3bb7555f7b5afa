"""A scripted fake LLM for hand-driven (tmux) adversarial runs of issue 38.

python heldout/issue38/scripted_server.py --port P [--load S] [--each S] [--log FILE]
--load S: every completion before S seconds after start waits until then (a model loading)
--each S: every completion is delayed S seconds (a busy / slow server); /v1/models stays fast.
Goals understood (by keyword in the request text): "words" -> wc -w notes.txt, "lines" -> wc -l,
"write" -> write_file notes.txt, "other" -> write_file other.txt.
"""
from __future__ import annotations

import argparse
import json
import re
import threading
import time

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for tests.*

from tests.fakellm.server import FakeLLM, Reply  # noqa: E402
from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts  # noqa: E402

T0 = time.monotonic()


def text_of(req):
    return "\n".join(str(m.get("content", "")) for m in req.get("messages", []))


def goal_kind(req):
    t = text_of(req)
    m = re.findall(r"(?:User message:\n|Request \(verbatim\): |User request \(verbatim\): |Subtask: )(.*)", t)
    low = (m[-1] if m else t).lower()
    for k in ("append", "sedit", "sleepy", "other", "write", "words", "lines"):
        if k in low:
            return k
    return "lines"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--load", type=float, default=0)
    ap.add_argument("--each", type=float, default=0)
    ap.add_argument("--log", default="/tmp/adv/requests.jsonl")
    ap.add_argument("--chunk", type=float, default=0.0)
    a = ap.parse_args()
    fake = FakeLLM(port=a.port)
    lock = threading.Lock()

    def delayed(r: Reply) -> Reply:
        wait = max(0.0, a.load - (time.monotonic() - T0)) + a.each
        r.delay_s = wait
        if a.chunk:
            r.chunk_delay_s = a.chunk
        return r

    def log(req):
        with lock, open(a.log, "a") as f:
            f.write(json.dumps({"t": round(time.monotonic() - T0, 2), "role": req.get("_role"),
                                "stream": req.get("stream"), "text": text_of(req)[:6000]}) + "\n")

    def resp(req):
        log(req)
        role = req.get("_role")
        k = goal_kind(req)
        cmd = {"words": "wc -w notes.txt", "lines": "wc -l notes.txt",
               "sleepy": "sleep 8; wc -l notes.txt", "append": "echo appended >> notes.txt",
               "sedit": "sed -i s/six/SIX/ notes.txt"}.get(k)
        if role == "runtime":
            return delayed(Reply.text("ok"))
        if role == "perceiver":
            return delayed(perceive({"words": "count the words in notes.txt", "lines": "count lines of notes.txt",
                                     "write": "write hello into notes.txt", "sleepy": "count lines slowly", "append": "append a line to notes.txt",
                                     "sedit": "edit notes.txt in place",
                                     "other": "write hi into other.txt"}[k]))
        if role == "planner":
            if cmd:
                return delayed(plan(["the count is given"], sub(cmd, "a number", tools=["shell"]), checks=[cmd]))
            fn = "other.txt" if k == "other" else "notes.txt"
            return delayed(plan([f"{fn} written"], sub(f"write {fn}", "written", tools=["write_file"])))
        if role == "executor":
            n_msgs = len(req.get("messages", []))
            ms = re.search(r"Subtask: ((?:sleep 8; )?wc -[lw] \S+|echo appended >> notes.txt|sed -i s/six/SIX/ notes.txt)", text_of(req))
            if ms:
                cmd = ms.group(1)
            if n_msgs <= 2:
                if cmd:
                    return delayed(call("shell", command=cmd))
                fn = "other.txt" if k == "other" else "notes.txt"
                return delayed(call("write_file", path=fn, content="hello\nnew line\n"))
            t = text_of(req)
            m = re.findall(r"(\d+) notes\.txt", t)
            return delayed(finish(m[-1] if m else "written"))
        if role == "agent_validator":
            t = text_of(req)
            m = re.findall(r"(\d+) notes\.txt", t)
            return delayed(verdicts("pass", quote=m[-1] if m else "written"))
        if role == "meta_validator":
            t = text_of(req)
            m = re.findall(r"(\d+) notes\.txt", t)
            n = m[-1] if m else "?"
            if k == "words":
                return delayed(merge(n, "pass", summary="word count", answer=f"notes.txt has {n} words"))
            if k == "lines":
                return delayed(merge(n, "pass", summary="line count", answer=f"notes.txt has {n} lines"))
            return delayed(merge("written", "pass", summary="file written", answer="the file was written"))
        return delayed(Reply.json({"ok": True}))

    fake.responder("*", resp)
    fake.start()
    print(fake.base_url, flush=True)
    ev = threading.Event()
    try:
        ev.wait()
    except KeyboardInterrupt:
        pass
    fake.stop()


if __name__ == "__main__":
    main()
