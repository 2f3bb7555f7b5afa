"""`python -m tests.fakellm [--port N] [--script FILE]`: run the fake server by hand.

FILE is JSON: {"role": [reply, …], "*": reply}; a reply is any JSON value (sent as the content),
or {"fault": "<kind>"} for a fault. With no script every role gets `{"ok": true}`.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading

from tests.fakellm.server import FakeLLM, Reply


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m tests.fakellm")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--script")
    args = ap.parse_args()
    fake = FakeLLM(port=args.port)
    default: object = {"ok": True}
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            spec = json.load(f)
        for role, replies in spec.items():
            if role == "*":
                default = replies
                continue
            fake.script(role, [Reply.fault(r["fault"]) if isinstance(r, dict) and "fault" in r
                               else Reply.json(r) for r in replies])
    fake.responder("*", lambda _req: Reply.json(default))
    fake.start()
    print(fake.base_url, flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    fake.stop()


if __name__ == "__main__":
    main()
