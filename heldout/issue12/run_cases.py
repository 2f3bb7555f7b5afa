#!/usr/bin/env python3
"""Adversarial black-box cases for issue #12 (the LLM path over HTTP).

    python3 run_cases.py /path/to/agentui [case-name-substring ...]

Each case starts its own misbehaving OpenAI-compatible server (fakesrv.py), runs
agentui against it with a fresh --data-dir under /tmp, and asserts on the exit
code, the JSON, stderr, what the server saw on the wire, the memory and the audit.
Prints `PASS name` / `FAIL name: reason` and `total: P/N`.
"""
from __future__ import annotations

import json
import os
import random
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakesrv import ClientGone, FakeServer, guess_reply  # noqa: E402

AGENTUI = None
CASE_TIMEOUT = 120
MODEL = "qwen2.5-coder:1.5b"

CHAT = json.dumps({"kind": "chat", "intent": "say hello", "reply": "hello there", "question": "",
                   "scope": None})
TASK = json.dumps({"kind": "task", "intent": "count the files in the workspace", "scope": None,
                   "reply": "", "question": ""})
PLAN = json.dumps({"task_criteria": [{"criterion": "the number of files is reported", "mode": "verifiable"}],
                   "subtasks": [{"intent": "Count the files with: ls | wc -l",
                                 "success_criteria": [{"criterion": "a number is reported", "mode": "verifiable"}],
                                 "sequence": 1, "tools": ["shell"], "context": ""}]})

# Fast timings so that every case fits in 120 s.
FAST = """
[llm]
read_timeout_s = 5
idle_timeout_s = 3
call_deadline_s = 40
idle_wait_s = 8
max_retries = 1
"""


class CaseFail(Exception):
    pass


def need(cond, msg):
    if not cond:
        raise CaseFail(msg)


# ---------------------------------------------------------------- helpers on the wire

def hold(h, rec, seconds, poll=0.05):
    """Keep the connection open, sending nothing, until `seconds` pass or the client closes.
    Records rec.t_disc when the client goes away."""
    end = time.monotonic() + seconds
    conn = h.connection
    while time.monotonic() < end:
        r, _, _ = select.select([conn], [], [], poll)
        if r:
            try:
                data = conn.recv(1, socket.MSG_PEEK)
            except (ConnectionResetError, OSError):
                data = b""
            if not data:
                rec.disconnected = True
                rec.t_disc = time.monotonic()
                raise ClientGone()
    return False


def rst(h, rec):
    """Abort the TCP connection with a RST."""
    import struct
    try:
        h.wfile.flush()
    except Exception:
        pass
    h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    for f in (h.rfile, h.wfile):
        try:
            f.close()   # drop the makefile references so that close() really closes (RST)
        except Exception:
            pass
    h.connection.close()
    rec.status = "RST"
    raise ClientGone()


def stream_until_gone(h, rec, tokens_iter, delay, planned):
    """Stream tokens from an iterator with `delay` between them; record when the client left."""
    rec.planned_tokens = planned
    h.start_sse(rec)
    try:
        for t in tokens_iter:
            h.sse_delta(rec, t)
            if delay:
                time.sleep(delay)
        h.sse_delta(rec, None, finish="stop")
        h.sse_done(rec)
    except ClientGone:
        rec.t_disc = time.monotonic()
        raise


def by_kind(table, default=None):
    """Responder dispatching on the request's role; value is a callable(h, rec) or a string reply."""
    def responder(h, rec):
        fn = table.get(rec.kind, table.get("*", default))
        if fn is None:
            return h.reply(rec, guess_reply(rec))
        if isinstance(fn, str):
            return h.reply(rec, fn)
        return fn(h, rec)
    return responder


def nth(calls):
    """Responder that changes with the number of calls of that kind: calls = [fn0, fn1, ...]
    (the last one repeats)."""
    counter = {"n": 0}
    lock = threading.Lock()

    def responder(h, rec):
        with lock:
            i = counter["n"]
            counter["n"] += 1
        fn = calls[min(i, len(calls) - 1)]
        if isinstance(fn, str):
            return h.reply(rec, fn)
        return fn(h, rec)
    return responder


def ok_probe(h, rec):
    h.reply(rec, "ok")


def err(status, body, headers=None, ctype="application/json"):
    def f(h, rec):
        h.send_json(status, body, rec, ctype=ctype, headers=headers)
    return f


WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
         "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def varied_words():
    """Never repeats an n-gram: a random walk over words with a counter."""
    rnd = random.Random(7)
    i = 0
    while True:
        i += 1
        yield f" {rnd.choice(WORDS)}{i}"


# ---------------------------------------------------------------- running agentui

class Result:
    def __init__(self, rc, out, err, elapsed):
        self.rc, self.out, self.err, self.elapsed = rc, out, err, elapsed
        self.json = None
        try:
            self.json = json.loads(out) if out.strip() else None
        except Exception:
            # doctor/run may print a line before the JSON; try the last JSON object
            for line in reversed(out.strip().splitlines()):
                try:
                    self.json = json.loads(line)
                    break
                except Exception:
                    pass

    def brief(self):
        return f"rc={self.rc} t={self.elapsed:.1f}s stdout={self.out[-400:]!r} stderr={self.err[-600:]!r}"


class Ctx:
    def __init__(self, name):
        self.name = name
        self.tmp = tempfile.mkdtemp(prefix=f"au12-{name}-")
        self.data = os.path.join(self.tmp, "data")
        self.ws = os.path.join(self.tmp, "ws")
        os.makedirs(self.ws)
        for i in range(3):
            open(os.path.join(self.ws, f"f{i}.txt"), "w").write("x\n")
        self.servers = []

    def server(self, responder, **kw):
        s = FakeServer(responder, **kw).start()
        self.servers.append(s)
        return s

    def cfg(self, text=""):
        p = os.path.join(self.tmp, "config.toml")
        open(p, "w").write(text)
        return p

    def env(self, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not (k.startswith("AGENTUI_") or k.startswith("OPENAI_"))}
        env["NO_PROXY"] = "127.0.0.1,localhost"
        env["no_proxy"] = "127.0.0.1,localhost"
        env.update(extra or {})
        return env

    def run(self, url, model=MODEL, cfg=FAST, task="say hello", env=None, timeout=CASE_TIMEOUT - 10,
            cmd="run", args=None):
        c = self.cfg(cfg)
        argv = [AGENTUI, cmd, "--config", c, "--data-dir", self.data]
        if url:
            argv += ["--base-url", url]
        if model:
            argv += ["--model", model]
        if cmd == "run":
            argv += ["--json", "--yes", "--workspace", self.ws, "--timeout", str(timeout - 5)]
        elif cmd == "doctor":
            argv += ["--json"]
        argv += list(args or [])
        if cmd == "run":
            argv += [task]
        self.last_argv = argv
        t = time.monotonic()
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=self.env(env),
                               cwd=self.ws)
            return Result(p.returncode, p.stdout, p.stderr, time.monotonic() - t)
        except subprocess.TimeoutExpired as e:
            raise CaseFail(f"agentui did not finish within {timeout}s: "
                           f"stderr={(e.stderr or b'')[-400:]!r}")

    def megrams(self):
        p = subprocess.run([AGENTUI, "memory", "stats", "--json", "--data-dir", self.data,
                            "--config", self.cfg_path_empty()],
                           capture_output=True, text=True, timeout=30, env=self.env())
        try:
            return json.loads(p.stdout)["total"]
        except Exception:
            raise CaseFail(f"memory stats failed: rc={p.returncode} {p.stdout[-200:]!r} {p.stderr[-300:]!r}")

    def audit(self):
        p = subprocess.run([AGENTUI, "audit", "--json", "--events", "200", "--data-dir", self.data,
                            "--config", self.cfg_path_empty()],
                           capture_output=True, text=True, timeout=30, env=self.env())
        try:
            return json.loads(p.stdout)
        except Exception:
            raise CaseFail(f"audit failed: rc={p.returncode} {p.stdout[-200:]!r} {p.stderr[-300:]!r}")

    def cfg_path_empty(self):
        p = os.path.join(self.tmp, "empty.toml")
        if not os.path.exists(p):
            open(p, "w").write("")
        return p

    def close(self):
        for s in self.servers:
            try:
                s.stop()
            except Exception:
                pass


# ---------------------------------------------------------------- shared assertions

def no_traceback(res):
    need("Traceback (most recent call last)" not in res.err + res.out,
         f"Python traceback in output: {res.err[-800:]!r}")


def no_overlap(srv, slack=0.35):
    """max_parallel=1: a call starts only after the previous connection is closed."""
    comps = sorted(srv.completions(), key=lambda r: r.t0)
    for a, b in zip(comps, comps[1:]):
        end = getattr(a, "t_disc", None) or a.t_end or time.monotonic()
        need(b.t0 >= end - slack,
             f"request ({b.kind}) started {end - b.t0:.2f}s before the previous ({a.kind}) connection closed")


def no_replan(srv, max_attempts=None):
    planners = srv.completions({"planner"})
    if planners:
        first = json.dumps(planners[0].body.get("messages"))
        for p in planners[1:]:
            need(json.dumps(p.body.get("messages")) == first,
                 f"planner asked {len(planners)} times with different prompts (a replan)")
    if max_attempts is not None:
        need(len(planners) <= max_attempts, f"planner asked {len(planners)} times (> {max_attempts})")


def audit_clean(ctx, allow_warnings=False):
    a = ctx.audit()
    kinds = a.get("events_by_kind") or {}
    need("ggs_thrashing" not in kinds, f"audit has ggs_thrashing: {kinds}")
    if not allow_warnings:
        warns = [e for e in a.get("events", []) if e.get("severity") in ("warning", "error", "critical")]
        need(not warns, f"audit warnings: {[(e['kind'], e['message']) for e in warns][:3]}")


def infra(ctx, res, srv, *, url, model=MODEL, said=(), fix=(), kind=None, planner_max=None,
          max_elapsed=None, said_any=()):
    """Everything issue #12 item 4 promises for an endpoint failure."""
    no_traceback(res)
    need(res.rc == 2, f"exit {res.rc}, expected 2; {res.brief()}")
    j = res.json
    inf = j.get("infra_failure") if isinstance(j, dict) else None
    if isinstance(j, dict) and j:
        need(j.get("final") is None, f"final is not null: {str(j.get('final'))[:300]}")
        need(isinstance(inf, dict), f"no infra_failure in JSON: {res.out[-400:]!r}")
        for k in ("kind", "endpoint", "model", "said", "fix", "message"):
            need(k in inf, f"infra_failure lacks {k}: {inf}")
    else:
        # preflight failures print only the stderr line (checked for --json in preflight_failure_json)
        lines = [l for l in res.err.splitlines() if l.strip()]
        need(lines, "nothing on stdout or stderr")
        last = lines[-1]
        need(sum(1 for l in lines if l == last) == 1, f"message repeated on stderr: {res.err[-600:]!r}")
        inf = {"message": last, "said": last, "fix": "fix"}
    msg = inf.get("message") or ""
    hostport = url.split("//", 1)[-1].split("/", 1)[0]
    need(hostport in msg, f"message does not name the endpoint {hostport}: {msg!r}")
    need(model in msg, f"message does not name the model {model}: {msg!r}")
    need("fix" in msg.lower() or (inf.get("fix") and str(inf.get("fix")) in msg),
         f"message does not give the fix: {msg!r}")
    for s in said:
        need(s.lower() in (msg + " " + str(inf.get("said"))).lower() and s.lower() in msg.lower(),
             f"message does not say what the server said ({s!r}): {msg!r}")
    for f in fix:
        need(f.lower() in msg.lower(), f"message/fix lacks {f!r}: {msg!r}")
    if said_any:
        need(any(a.lower() in msg.lower() for a in said_any),
             f"message does not say what happened (any of {said_any}): {msg!r}")
    need("\n" not in msg.strip(), f"message is more than one line: {msg!r}")
    if kind:
        need(kind in str(inf.get("kind")), f"kind {inf.get('kind')!r}, expected {kind!r}")
    # the human line on stderr: present once
    if srv is not None:
        no_replan(srv, planner_max)
        no_overlap(srv)
    if max_elapsed:
        need(res.elapsed <= max_elapsed, f"took {res.elapsed:.1f}s (> {max_elapsed}s)")
    need(ctx.megrams() == 0, "a Megram was written to memory")
    audit_clean(ctx)


def ok_chat(res):
    no_traceback(res)
    need(res.rc == 0, f"exit {res.rc}, expected 0 (R1 chat reply); {res.brief()}")
    j = res.json or {}
    need("hello there" in json.dumps(j.get("final")), f"final is not the chat reply: {str(j)[:300]}")


# ---------------------------------------------------------------- the cases

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@case
def conn_refused(ctx):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    res = ctx.run(url)
    infra(ctx, res, None, url=url, max_elapsed=60)


@case
def preflight_failure_json(ctx):
    """README: with --json an endpoint failure prints "final": null and "infra_failure": {...}
    (the preflight is one of the endpoint failures it lists)."""
    url = f"http://127.0.0.1:{closed_port()}/v1"
    res = ctx.run(url)
    no_traceback(res)
    need(res.rc == 2, f"exit {res.rc}")
    j = res.json
    need(isinstance(j, dict) and "infra_failure" in j and j.get("final", 1) is None,
         f"--json printed no {{final: null, infra_failure}} on stdout (stdout={res.out[-200:]!r}, "
         f"stderr={res.err[-200:]!r})")


@case
def conn_refused_doctor(ctx):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    res = ctx.run(url, cmd="doctor")
    no_traceback(res)
    need(res.rc == 2, f"doctor exit {res.rc}, expected 2; {res.brief()}")


@case
def conn_refused_mid_task(ctx):
    """Server answers the preflight and R1, then goes away (refused) before the planner."""
    holder = {}

    def perceiver(h, rec):
        h.reply(rec, TASK)
        threading.Thread(target=lambda: (holder["s"].httpd.shutdown(), holder["s"].httpd.server_close()),
                         daemon=True).start()
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": perceiver}))
    holder["s"] = srv
    res = ctx.run(srv.url, task="count the files in the workspace")
    infra(ctx, res, srv, url=srv.url, max_elapsed=90)


@case
def reset_before_reply(ctx):
    """Every completion is answered with a TCP RST (no status line)."""
    srv = ctx.server(by_kind({"*": rst}))
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, max_elapsed=90, said_any=("reset", "closed", "disconnect"))


@case
def reset_mid_stream_planner(ctx):
    """The planner's stream is reset after a few tokens, every time."""
    def planner(h, rec):
        if not rec.stream:
            return rst(h, rec)
        h.start_sse(rec)
        for t in ['{"task_', 'criteria"', ': [{"cri', 'terion"']:
            h.sse_delta(rec, t)
            time.sleep(0.05)
        rst(h, rec)
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK, "planner": planner}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    infra(ctx, res, srv, url=srv.url, planner_max=2 + 1, max_elapsed=90, said_any=("reset", "closed", "disconnect"))


@case
def http401(ctx):
    body = {"error": {"message": "Incorrect API key provided: sk-bad. You can find your API key at "
                                 "https://example.invalid/keys.", "type": "invalid_request_error",
                      "code": "invalid_api_key"}}
    srv = ctx.server(None, auth=(401, body["error"]["message"]))
    res = ctx.run(srv.url, args=["--api-key", "sk-bad"])
    infra(ctx, res, srv, url=srv.url, said=("Incorrect API key",), fix=("key",), max_elapsed=40)
    n = len(srv.completions())
    need(n <= 1, f"401 was retried: {n} completion requests (never retry other 4xx)")


@case
def http403(ctx):
    srv = ctx.server(None, auth=(403, "Forbidden: this key has no access to the model"))
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, said=("no access",), max_elapsed=40)
    n = len(srv.completions())
    need(n <= 1, f"403 was retried: {n} completion requests")


@case
def http401_mid_task(ctx):
    """Preflight and R1 fine, the planner's call gets 401 (key revoked)."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK,
                              "planner": err(401, {"error": {"message": "API key revoked",
                                                             "code": "invalid_api_key"}})}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    infra(ctx, res, srv, url=srv.url, said=("revoked",), planner_max=1, max_elapsed=40)


OLLAMA_MODELS = ["llama3.2:1b", "qwen2.5-coder:7b"]


def ollama404(h, rec):
    m = rec.body.get("model") if isinstance(rec.body, dict) else "?"
    h.send_json(404, {"error": {"message": f'model "{m}" not found, try pulling it first',
                                "type": "api_error", "param": None, "code": None}}, rec)


@case
def ollama_model_not_pulled(ctx):
    srv = ctx.server(ollama404, models=OLLAMA_MODELS)
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, said=("not found",),
          fix=(f"ollama pull {MODEL}",) + tuple(OLLAMA_MODELS), planner_max=0, max_elapsed=40)
    need(len(srv.completions()) <= 1, f"404 retried: {len(srv.completions())} requests")


@case
def ollama_model_not_pulled_doctor(ctx):
    srv = ctx.server(ollama404, models=OLLAMA_MODELS)
    res = ctx.run(srv.url, cmd="doctor")
    no_traceback(res)
    need(res.rc == 2, f"doctor exit {res.rc}, expected 2; {res.brief()}")
    txt = res.out
    for s in (MODEL, f"ollama pull {MODEL}") + tuple(OLLAMA_MODELS):
        need(s in txt, f"doctor output lacks {s!r}: {txt[-600:]!r}")
    need(len(srv.completions()) >= 1, "doctor made no real completion (only the model list)")


@case
def ollama_model_removed_mid_task(ctx):
    """The issue's scenario mid-task: preflight passes, then completions answer 404 model not found
    (ollama rm). Must be exit 2, not 3 replans + abandon Megram."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK, "planner": ollama404,
                              "*": ollama404}), models=OLLAMA_MODELS + [MODEL])
    res = ctx.run(srv.url, task="count the files in the workspace")
    infra(ctx, res, srv, url=srv.url, said=("not found",), fix=(f"ollama pull {MODEL}", "llama3.2:1b"),
          planner_max=1, max_elapsed=40)


@case
def openai_model_not_found(ctx):
    srv = ctx.server(err(404, {"error": {"message": f"The model `{MODEL}` does not exist or you do not "
                                                    "have access to it.", "type": "invalid_request_error",
                                         "code": "model_not_found"}}),
                     models=["gpt-4o-mini", "gpt-4o"])
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, said=("does not exist",), fix=("gpt-4o-mini",), max_elapsed=40)


@case
def http500_always(ctx):
    srv = ctx.server(err(500, {"error": {"message": "CUDA error: out of memory", "type": "server_error"}}))
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, said=("out of memory",), max_elapsed=90)
    n = len(srv.completions())
    need(1 <= n <= 6, f"5xx: {n} completion requests (expected bounded)")


@case
def preflight_transient_500(ctx):
    """README: retries on 5xx. One 500 on the preflight's tiny completion, then fine: the run works."""
    srv = ctx.server(by_kind({"probe": nth([err(500, {"error": {"message": "slot unavailable"}}), ok_probe]),
                              "perceiver": CHAT}))
    res = ctx.run(srv.url)
    ok_chat(res)


@case
def preflight_transient_reset(ctx):
    """README: retries on connection errors. The preflight's first connection is reset, then fine."""
    srv = ctx.server(by_kind({"probe": nth([rst, ok_probe]), "perceiver": CHAT}))
    res = ctx.run(srv.url)
    ok_chat(res)


@case
def http500_planner_mid_task(ctx):
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK,
                              "planner": err(500, {"error": {"message": "llama_decode failed: KV cache full"}})}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    infra(ctx, res, srv, url=srv.url, said=("KV cache full",), planner_max=2, max_elapsed=90)
    n = len(srv.completions({"planner"}))
    need(n == 2, f"planner 5xx tried {n} times with max_retries=1 (expected 2)")


@case
def http502_html_proxy(ctx):
    html = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx/1.25.3</center></body></html>"
    srv = ctx.server(err(502, html, ctype="text/html"))
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, said=("502",), max_elapsed=90)
    need("<html>" not in (res.json or {}).get("infra_failure", {}).get("message", ""),
         "message dumps raw HTML")


@case
def executor_500_mid_task(ctx):
    """Tool tier fails with 5xx during execution: no replan (one planner call), exit 2."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK, "planner": PLAN,
                              "executor": err(503, {"error": {"message": "Service Unavailable: model is loading"}})}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    infra(ctx, res, srv, url=srv.url, said=("loading",), planner_max=1, max_elapsed=100)
    need(len(srv.completions({"planner"})) == 1, f"planner asked {len(srv.completions({'planner'}))} times")


@case
def agent_validator_500_mid_task(ctx):
    """R4a's endpoint fails with 5xx after the step ran: exit 2, no replan, no Megram."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK, "planner": PLAN, "executor": executor_ok,
                              "agent_validator": err(500, {"error": {"message": "GGML_ASSERT failed"}})}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    infra(ctx, res, srv, url=srv.url, said=("GGML_ASSERT",), planner_max=1, max_elapsed=90)


@case
def transient_503_retry_after(ctx):
    """One 503 with Retry-After: 2 on R1, then fine: retried after >= 2 s, not an infra failure."""
    srv = ctx.server(by_kind({"probe": ok_probe,
                              "perceiver": nth([err(503, {"error": {"message": "busy"}}, headers={"Retry-After": "2"}),
                                                CHAT])}))
    res = ctx.run(srv.url, cfg=FAST.replace("max_retries = 1", "max_retries = 2"))
    ok_chat(res)
    ps = srv.completions({"perceiver"})
    need(len(ps) == 2, f"perceiver requests {len(ps)}, expected 2")
    need(ps[1].t0 - ps[0].t_end >= 1.8, f"Retry-After not honoured: gap {ps[1].t0 - ps[0].t_end:.2f}s")


@case
def transient_429(ctx):
    srv = ctx.server(by_kind({"probe": ok_probe,
                              "perceiver": nth([err(429, {"error": {"message": "rate limited"}}, headers={"Retry-After": "1"}),
                                                CHAT])}))
    res = ctx.run(srv.url, cfg=FAST.replace("max_retries = 1", "max_retries = 2"))
    ok_chat(res)


@case
def not_openai_html(ctx):
    """base_url points at an ordinary web site: 200 text/html everywhere."""
    html = "<!doctype html><html><body><h1>Welcome to my blog</h1></body></html>"
    srv = ctx.server(err(200, html, ctype="text/html"), models_status=200, models_body=html)
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, max_elapsed=60)


@case
def not_openai_json(ctx):
    """200 JSON without `choices` (streamed or not)."""
    srv = ctx.server(err(200, {"result": "ok", "text": "hello"}))
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, max_elapsed=60)


@case
def sse_garbage(ctx):
    """text/event-stream whose events are not JSON chunks."""
    def f(h, rec):
        h.start_sse(rec)
        for _ in range(5):
            h._write(b"data: this is not json\n\n", rec)
        h._write(b"data: [DONE]\n\n", rec)
    srv = ctx.server(f)
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, max_elapsed=60)


@case
def empty_200(ctx):
    srv = ctx.server(err(200, b"", ctype="application/json"))
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, max_elapsed=60)


def nonstream_only(content_for):
    def f(h, rec):
        rec.t_stream_asked = rec.stream
        h.full_reply(rec, content_for(rec))
    return f


@case
def ignores_stream_fallback(ctx):
    """Server answers stream:true with a plain JSON completion: works, and is remembered."""
    srv = ctx.server(nonstream_only(lambda rec: "ok" if rec.kind == "probe" else CHAT))
    res = ctx.run(srv.url)
    ok_chat(res)
    comps = srv.completions()
    need(len(comps) >= 2, f"only {len(comps)} completions")
    later = [r for r in comps[1:] if r.stream]
    need(not later, f"non-streaming server not remembered: {len(later)} later requests still ask stream:true "
                    f"({[r.kind for r in later]})")


@case
def ignores_stream_multi_call(ctx):
    """Non-streaming server through a multi-call task: no errors, no infra failure, no traceback."""
    srv = ctx.server(nonstream_only(lambda rec: {"probe": "ok", "perceiver": TASK, "planner": PLAN}.get(
        rec.kind, guess_reply(rec))))
    res = ctx.run(srv.url, task="count the files in the workspace")
    no_traceback(res)
    need(res.rc in (0, 1), f"exit {res.rc}; {res.brief()}")
    need(not (res.json or {}).get("infra_failure"), f"infra failure on a non-streaming server: {res.out[-300:]}")
    need(len(srv.completions({"planner"})) >= 1, "planner never asked")
    streamed_after = [r for r in srv.completions()[2:] if r.stream]
    need(not streamed_after, f"{len(streamed_after)} later calls still ask stream:true")


@case
def whitespace_flood_non_streaming(ctx):
    """A server that ignores `stream` answers the planner with 2 MB of whitespace: a model-output
    failure of the planner (exit 1, no replan, no Megram), never a crash or an infra failure."""
    def f(h, rec):
        if rec.kind == "planner":
            return h.full_reply(rec, '{"task_criteria": [' + " " * 2_000_000, finish="length")
        h.full_reply(rec, {"probe": "ok", "perceiver": TASK}.get(rec.kind, guess_reply(rec)))
    srv = ctx.server(f)
    res = ctx.run(srv.url, task="count the files in the workspace")
    no_traceback(res)
    need(not (res.json or {}).get("infra_failure"), f"treated as infra failure: {res.out[-300:]}")
    check_planner_model_failure(ctx, res, srv)


@case
def stream_false_forced(ctx):
    srv = ctx.server(nonstream_only(lambda rec: "ok" if rec.kind == "probe" else CHAT))
    res = ctx.run(srv.url, cfg=FAST + "stream = false\n")
    ok_chat(res)
    s = [r for r in srv.completions() if r.stream]
    need(not s, f"llm.stream=false but {len(s)} requests asked stream:true")


def stall_after(tokens, seconds=600, busy_after=0.0, srv_ref=None):
    def f(h, rec):
        h.start_sse(rec)
        for t in tokens:
            h.sse_delta(rec, t)
            time.sleep(0.05)
        rec.t_last_token = time.monotonic()
        try:
            hold(h, rec, seconds)
        except ClientGone:
            if busy_after and srv_ref:
                srv_ref["s"].set_busy(busy_after)   # the server keeps generating the orphan
            raise
    return f


@case
def idle_timeout_mid_stream(ctx):
    """R1's stream stalls after 3 tokens: cut at ~idle_timeout_s (3), then a fine retry."""
    srv = ctx.server(by_kind({"probe": ok_probe,
                              "perceiver": nth([stall_after(['{"kind"', ': "chat', '", "intent"']), CHAT])}))
    res = ctx.run(srv.url)
    ok_chat(res)
    p = srv.completions({"perceiver"})
    need(len(p) == 2, f"perceiver requests {len(p)}, expected 2")
    first = p[0]
    need(first.disconnected, "stalled stream was never closed by the client")
    cut = first.t_disc - first.t_last_token
    need(2.5 <= cut <= 6.0, f"stalled stream cut after {cut:.1f}s of silence (idle_timeout_s=3)")
    probes_between = [r for r in srv.completions({"probe"}) if first.t_disc - 0.3 <= r.t0 <= p[1].t0]
    need(probes_between, "after the timeout the next call did not first check the endpoint is idle")
    no_overlap(srv)


@case
def stall_before_first_token(ctx):
    """Headers sent, then nothing: read_timeout_s (5) bounds the wait; every try stalls -> exit 2."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": stall_after([])}))
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, max_elapsed=80)
    first = srv.completions({"perceiver"})[0]
    cut = first.t_disc - first.t0 if first.disconnected else 999
    need(4.0 <= cut <= 8.0, f"first-token wait cut after {cut:.1f}s (read_timeout_s=5)")


@case
def stall_always_idle_timeout(ctx):
    """Every R1 stream stalls mid-reply: timeouts after retries -> exit 2, bounded."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": stall_after(['{"kind"', ': "ta'])}))
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, max_elapsed=80)
    n = len(srv.completions({"perceiver"}))
    need(1 <= n <= 3, f"perceiver asked {n} times with max_retries=1")


def slow_stream(content, gap, first_delay=0.0):
    def f(h, rec):
        toks = [content[i:i + 4] for i in range(0, len(content), 4)]
        rec.planned_tokens = len(toks)
        h.start_sse(rec)
        if first_delay:
            hold(h, rec, first_delay)
        for i, t in enumerate(toks):
            h.sse_delta(rec, t)
            if i == len(toks) - 1:
                rec.all_content_sent = True
            hold(h, rec, gap)
        h.sse_delta(rec, None, finish="stop")
        h.sse_done(rec)
    return f


@case
def slow_but_alive(ctx):
    """A token every 2.2 s (idle_timeout_s=3, read_timeout_s=5): ~45 s in all — must not be cut."""
    reply = json.dumps({"kind": "chat", "reply": "hello there"})  # ~20 tokens
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": slow_stream(reply, 2.2)}))
    res = ctx.run(srv.url, cfg=FAST.replace("call_deadline_s = 40", "call_deadline_s = 100"))
    ok_chat(res)
    p = srv.completions({"perceiver"})
    need(len(p) == 1, f"slow stream was re-asked: {len(p)} perceiver requests")
    need(getattr(p[0], "all_content_sent", False), f"slow stream cut after {p[0].tokens_sent} tokens")


@case
def slow_prompt_processing(ctx):
    """First token after 4 s (read_timeout_s=5 > idle_timeout_s=3): the idle timeout must not apply."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": slow_stream(CHAT, 0.02, first_delay=4.0)}))
    res = ctx.run(srv.url)
    ok_chat(res)
    p = srv.completions({"perceiver"})
    need(len(p) == 1, f"re-asked: {len(p)} perceiver requests")


@case
def slow_alive_default_config(ctx):
    """Default config (idle 30 s): a 20 s gap between tokens is alive."""
    reply = json.dumps({"kind": "chat", "reply": "hello there"})
    toks = [reply[i:i + 4] for i in range(0, len(reply), 4)]

    def f(h, rec):
        h.start_sse(rec)
        for i, t in enumerate(toks):
            h.sse_delta(rec, t)
            if i == 2:
                hold(h, rec, 20)
            else:
                time.sleep(0.02)
        rec.all_content_sent = True
        h.sse_delta(rec, None, finish="stop")
        h.sse_done(rec)
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": f}))
    res = ctx.run(srv.url, cfg="")
    ok_chat(res)
    need(len(srv.completions({"perceiver"})) == 1, "re-asked")


@case
def call_deadline(ctx):
    """A live stream that never completes (varied words, slow) is cut at call_deadline_s (8)."""
    def f(h, rec):
        it = varied_words()
        h.start_sse(rec)
        h.sse_delta(rec, '{"kind": "chat", "reply": "')
        rec.t_first = time.monotonic()
        try:
            while True:
                h.sse_delta(rec, next(it))
                time.sleep(1.0)
        except ClientGone:
            rec.t_disc = time.monotonic()
            raise
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": f}))
    res = ctx.run(srv.url, cfg=FAST.replace("call_deadline_s = 40", "call_deadline_s = 8"))
    no_traceback(res)
    p = srv.completions({"perceiver"})
    need(p and p[0].disconnected, "stream never closed")
    d = p[0].t_disc - p[0].t0
    need(d <= 10.5, f"first call ran {d:.1f}s (call_deadline_s=8)")
    need(res.rc in (1, 2), f"exit {res.rc}")


def runaway(prefix, gen, planned, delay=0.002):
    def f(h, rec):
        def it():
            yield prefix
            for _ in range(planned):
                yield next(gen_i)
        gen_i = gen()
        stream_until_gone(h, rec, it(), delay, planned)
    return f


def ws_gen():
    while True:
        yield " "


def loop_gen():
    unit = '"glob", "read_file", "write_file", "web_search", "file_search", '
    toks = [unit[i:i + 4] for i in range(0, len(unit), 4)]
    while True:
        for t in toks:
            yield t


PLAN_PREFIX_LOOP = ('{"task_criteria": [{"criterion": "files counted", "mode": "verifiable"}], "subtasks": '
                    '[{"intent": "count", "success_criteria": [{"criterion": "n", "mode": "verifiable"}], '
                    '"sequence": 1, "tools": [')


def check_runaway(ctx, res, srv, role="planner", budget=512):
    no_traceback(res)
    reqs = srv.completions({role})
    need(reqs, f"no {role} request")
    for r in reqs:
        need(r.disconnected, f"{role} runaway stream was never closed by the client "
                             f"(sent {r.tokens_sent} tokens)")
        mt = r.max_tokens or budget
        need(r.tokens_sent <= min(budget, mt) + 8,
             f"{role} runaway cut only after {r.tokens_sent} tokens / {r.bytes_sent} bytes "
             f"(budget {min(budget, mt)}, planned {r.planned_tokens})")
    import glob
    logs = "".join(open(f).read() for f in glob.glob(os.path.join(ctx.data, "tasks", "*.jsonl")))
    need('"cut":"' in logs.replace('"cut": "', '"cut":"'), "the task log does not record the cut")
    ctx.note = "; ".join(f"{role}#{i}: cut after {r.tokens_sent} tok/{r.bytes_sent} B of {r.planned_tokens} planned tokens "
                         f"(max_tokens {r.max_tokens})" for i, r in enumerate(reqs))
    st = (res.json or {}).get("stats") or {}
    need(st.get("runaways_cut", 0) >= 1, f"stats.runaways_cut={st.get('runaways_cut')}")
    need(st.get("parse_failures", 0) >= 1, f"stats.parse_failures={st.get('parse_failures')}")
    return reqs


def check_planner_model_failure(ctx, res, srv):
    """README: re-asked once with a tighter budget and shorter prompt, then abandon with no replan/Megram."""
    reqs = srv.completions({"planner"})
    need(len(reqs) <= 2, f"planner asked {len(reqs)} times (re-ask once, then end; no replan)")
    if len(reqs) == 2:
        need((reqs[1].max_tokens or 10**9) < (reqs[0].max_tokens or 10**9),
             f"re-ask budget not tighter: {reqs[0].max_tokens} -> {reqs[1].max_tokens}")
        l0 = len(json.dumps(reqs[0].body.get("messages")))
        l1 = len(json.dumps(reqs[1].body.get("messages")))
        need(l1 <= l0, f"re-ask prompt longer ({l0} -> {l1} chars): quotes the runaway back?")
    need(res.rc == 1, f"exit {res.rc}, expected 1 (abandon: the model's replies could not be used); {res.brief()}")
    fin = (res.json or {}).get("final") or {}
    need(fin.get("directive") == "abandon", f"directive {fin.get('directive')}")
    need(fin.get("replans", 0) == 0, f"replans={fin.get('replans')}")
    need(ctx.megrams() == 0, "a Megram was written for a model-output failure")
    audit_clean(ctx, allow_warnings=True)


@case
def runaway_whitespace_planner(ctx):
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK,
                              "planner": runaway('{"task_criteria": [', ws_gen, 100000)}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    reqs = check_runaway(ctx, res, srv)
    need(all(r.tokens_sent < 400 for r in reqs),
         f"whitespace run cut late: {[r.tokens_sent for r in reqs]} tokens")
    check_planner_model_failure(ctx, res, srv)


@case
def runaway_ngram_loop_planner(ctx):
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK,
                              "planner": runaway(PLAN_PREFIX_LOOP, loop_gen, 100000)}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    reqs = check_runaway(ctx, res, srv)
    need(all(r.tokens_sent < 400 for r in reqs), f"loop cut late: {[r.tokens_sent for r in reqs]} tokens")
    check_planner_model_failure(ctx, res, srv)


@case
def runaway_over_budget_planner(ctx):
    """Non-repeating text that never closes; server ignores max_tokens: cut at the role's budget."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK,
                              "planner": runaway('{"task_criteria": [{"criterion": "', varied_words, 100000)}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    check_runaway(ctx, res, srv)
    check_planner_model_failure(ctx, res, srv)


@case
def runaway_whitespace_default_config(ctx):
    """Default config: whitespace flood from R1 is cut, well before the end (100k tokens)."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": runaway('{"kind": ', ws_gen, 100000)}))
    res = ctx.run(srv.url, cfg="")
    check_runaway(ctx, res, srv, role="perceiver", budget=256)


@case
def runaway_loop_executor(ctx):
    """Executor loops inside a string: cut within its budget (768)."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK, "planner": PLAN,
                              "executor": runaway('{"tool": "shell", "args": {"command": "', 
                                                  lambda: iter(lambda: "ls; ", None), 100000)}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    check_runaway(ctx, res, srv, role="executor", budget=768)


def executor_ok(h, rec):
    """A well-behaved executor: run `ls | wc -l`, then finish with its result."""
    n = sum(1 for m in rec.body.get("messages", []) if m.get("role") == "assistant")
    if n == 0:
        return h.reply(rec, json.dumps({"tool": "shell", "args": {"command": "ls | wc -l"}}))
    return h.reply(rec, json.dumps({"tool": "finish", "output": "3"}))


AV_PASS = json.dumps({"verdicts": [{"criterion": "a number is reported", "verdict": "pass", "evidence": "3"}]})


@case
def runaway_executor_not_an_approach_failure(ctx):
    """Issue: a reply still unparseable after the re-ask is a failure of the model's output, not
    evidence about the approach -> no replans, no Megram learned from it."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK, "planner": PLAN,
                              "executor": runaway('{"tool": "shell", "args": {"command": "',
                                                  lambda: iter(lambda: "ls; ", None), 100000)}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    no_traceback(res)
    fin = (res.json or {}).get("final") or {}
    pl = len(srv.completions({"planner"}))
    mg = ctx.megrams()
    need(pl == 1 and mg == 0,
         f"executor runaway treated as approach failure: planner asked {pl} times, replans={fin.get('replans')}, "
         f"directive path {fin.get('prev_directive')}->{fin.get('directive')}, Megrams={mg}, "
         f"summary={str(fin.get('summary'))[:200]!r}")


@case
def runaway_meta_validator(ctx):
    """README: an R4b reply that stays unusable after its re-ask ends the task abandon, "Not verified",
    with every step's checked result handed over; no success claim, no replan."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK, "planner": PLAN, "executor": executor_ok,
                              "agent_validator": AV_PASS,
                              "meta_validator": runaway('{"verdicts": [', ws_gen, 100000)}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    check_runaway(ctx, res, srv, role="meta_validator", budget=512)
    need(res.rc == 1, f"exit {res.rc}; {res.brief()}")
    fin = (res.json or {}).get("final") or {}
    need(fin.get("directive") == "abandon", f"directive {fin.get('directive')}")
    need("not verified" in json.dumps(fin).lower(), f"summary lacks 'Not verified': {str(fin.get('summary'))[:200]!r}")
    need(fin.get("replans", 0) == 0 and len(srv.completions({"planner"})) == 1,
         f"replanned: replans={fin.get('replans')}, planner calls={len(srv.completions({'planner'}))}")
    need("3" in json.dumps(fin.get("partial_result")), f"step results not handed over: {fin.get('partial_result')}")
    need(len(srv.completions({"meta_validator"})) <= 2, "R4b asked more than twice")


@case
def finish_reason_length(ctx):
    """Server honours max_tokens and stops with finish_reason=length mid-JSON: a parse failure
    of the planner, re-asked once tighter, no replan, no Megram."""
    def f(h, rec):
        mt = rec.max_tokens or 512
        gen = varied_words()
        toks = ['{"task_criteria": [{"criterion": "'] + [next(gen) for _ in range(mt - 1)]
        h.stream_tokens(rec, toks, delay=0.001, finish="length") if rec.stream else \
            h.full_reply(rec, "".join(toks), finish="length")
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK, "planner": f}))
    res = ctx.run(srv.url, task="count the files in the workspace")
    no_traceback(res)
    st = (res.json or {}).get("stats") or {}
    need(st.get("parse_failures", 0) >= 1, f"stats.parse_failures={st.get('parse_failures')}")
    pf = ((st.get("by_role") or {}).get("planner") or {}).get("parse_failures", 0)
    need(pf >= 1, f"planner parse_failures={pf}")
    check_planner_model_failure(ctx, res, srv)


@case
def complete_json_then_junk(ctx):
    """The reply's JSON closes, then the server keeps talking: the client closes right away."""
    def f(h, rec):
        def it():
            for i in range(0, len(CHAT), 4):
                yield CHAT[i:i + 4]
            rec.t_json_done_tokens = rec.tokens_sent + 1
            g = varied_words()
            for _ in range(20000):
                yield next(g)
        stream_until_gone(h, rec, it(), 0.003, 20000)
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": f}))
    res = ctx.run(srv.url)
    ok_chat(res)
    p = srv.completions({"perceiver"})[0]
    need(p.disconnected, f"client read the whole junk tail ({p.tokens_sent} tokens)")
    extra = p.tokens_sent - getattr(p, "t_json_done_tokens", 0)
    need(extra <= 40, f"client kept reading {extra} tokens after the JSON closed")


@case
def interrupted_before_first_token(ctx):
    """llama-cpp-python ends a stream with no token and no finish reason: asked again, not a model failure."""
    def empty_stream(h, rec):
        h.start_sse(rec)
        h.sse_done(rec)
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": nth([empty_stream, CHAT])}))
    res = ctx.run(srv.url)
    ok_chat(res)
    st = (res.json or {}).get("stats") or {}
    need(st.get("parse_failures", 0) == 0, f"counted against the model: parse_failures={st.get('parse_failures')}")
    need(len(srv.completions({"perceiver"})) == 2, "not asked again")


@case
def busy_after_abandoned_call(ctx):
    """R1's stream stalls; after the client cuts it the server keeps generating the orphan for 12 s
    (one slot). The next real call must wait for the endpoint to go idle, not queue behind it."""
    ref = {}
    srv = ctx.server(by_kind({"probe": ok_probe,
                              "perceiver": nth([stall_after(['{"kind"'], busy_after=12, srv_ref=ref), CHAT])}),
                     single_slot=True)
    ref["s"] = srv
    res = ctx.run(srv.url, cfg=FAST.replace("idle_wait_s = 8", "idle_wait_s = 30"))
    ok_chat(res)
    need(srv.busy_windows, "the first call was never abandoned")
    b0, b1 = srv.busy_windows[0]
    stacked = [r for r in srv.completions() if r.kind != "probe" and b0 + 0.3 < r.t0 < b1 - 0.3]
    need(not stacked, f"{len(stacked)} real calls sent while the endpoint was busy: "
                      f"{[(r.kind, round(r.t0 - b0, 1)) for r in stacked]}")
    probes = [r for r in srv.completions({"probe"}) if r.t0 >= b0 - 0.3]
    need(probes, "no idle check (one-token completion) after the timeout")


@case
def busy_too_long(ctx):
    """As above, but the orphan runs 200 s and llm.idle_wait_s = 6: exit 2 (endpoint still busy)."""
    ref = {}
    srv = ctx.server(by_kind({"probe": ok_probe,
                              "perceiver": stall_after(['{"kind"'], busy_after=200, srv_ref=ref)}),
                     single_slot=True)
    ref["s"] = srv
    res = ctx.run(srv.url, cfg=FAST.replace("idle_wait_s = 8", "idle_wait_s = 6"))
    infra(ctx, res, None, url=srv.url, max_elapsed=60)
    b0, b1 = srv.busy_windows[0]
    stacked = [r for r in srv.completions() if r.kind != "probe" and r.t0 > b0 + 0.3]
    need(not stacked, f"{len(stacked)} real calls queued behind the busy endpoint")


def slow_forever_then_busy(busy_s):
    def f(h, rec):
        g = varied_words()
        h.start_sse(rec)
        h.sse_delta(rec, '{"kind": "chat", "reply": "')
        try:
            while True:
                h.sse_delta(rec, next(g))
                time.sleep(0.3)
        except ClientGone:
            rec.t_disc = time.monotonic()
            if busy_s:
                h.server_obj.set_busy(busy_s)
            raise
    return f


@case
def killed_process_orphan_then_next_run(ctx):
    """The issue's cascade: a run is SIGKILLed mid-generation, the server keeps generating the
    orphan for 20 s; the next run (default config) must wait for it, not fail its preflight."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": nth([slow_forever_then_busy(20), CHAT])}),
                     single_slot=True)
    c = ctx.cfg("")
    argv = [AGENTUI, "run", "--config", c, "--data-dir", ctx.data + "1", "--base-url", srv.url, "--model", MODEL,
            "--json", "--yes", "--workspace", ctx.ws, "say hello"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ctx.env())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not srv.completions({"perceiver"}):
        time.sleep(0.2)
    time.sleep(2)
    p.kill()
    p.wait()
    t_kill = time.monotonic()
    while time.monotonic() < t_kill + 5 and not srv.busy_windows:
        time.sleep(0.1)
    need(srv.busy_windows, "the killed run's stream was never seen closed")
    res = ctx.run(srv.url, cfg="", timeout=100)
    ok_chat(res)
    b0, b1 = srv.busy_windows[0]
    stacked = [r for r in srv.completions() if r.kind != "probe" and b0 + 0.3 < r.t0 < b1 - 0.3]
    need(not stacked, f"{len(stacked)} real calls sent while the orphan was generating")


@case
def sigterm_closes_stream(ctx):
    """SIGTERM mid-stream: exit 143 and the server sees the connection closed at once (no orphan)."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": slow_forever_then_busy(0)}))
    c = ctx.cfg(FAST)
    argv = [AGENTUI, "run", "--config", c, "--data-dir", ctx.data, "--base-url", srv.url, "--model", MODEL,
            "--json", "--yes", "--workspace", ctx.ws, "say hello"]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ctx.env(), text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not srv.completions({"perceiver"}):
        time.sleep(0.2)
    time.sleep(2)
    p.terminate()
    t = time.monotonic()
    try:
        out, errs = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        raise CaseFail("agentui did not exit within 30 s of SIGTERM")
    need("Traceback (most recent call last)" not in errs, f"traceback: {errs[-500:]!r}")
    need(p.returncode == 143, f"exit {p.returncode} after SIGTERM, expected 143")
    time.sleep(1.5)   # our server notices on its next write (every 0.3 s)
    r = srv.completions({"perceiver"})[0]
    need(r.disconnected and getattr(r, "t_disc", 1e18) - t <= 2.0,
         f"stream not closed promptly after SIGTERM (disconnected={r.disconnected})")


@case
def preflight_busy_server_waits(ctx):
    """Server lists models but is busy (an earlier killed process's generation) for 16 s:
    run waits (up to idle_wait_s, default 60) with a stderr line, then works."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": CHAT}), single_slot=True)
    srv.set_busy(16)
    res = ctx.run(srv.url, cfg="")
    ok_chat(res)
    need(any(w in res.err.lower() for w in ("busy", "wait")), f"no stderr line about waiting: {res.err[-500:]!r}")


@case
def preflight_is_real_completion(ctx):
    """/v1/models lists the model but completions are broken: preflight must catch it (no task work)."""
    srv = ctx.server(err(500, {"error": {"message": "failed to load model: out of memory"}}), models=[MODEL])
    res = ctx.run(srv.url)
    infra(ctx, res, srv, url=srv.url, said=("failed to load model",), max_elapsed=60)
    need(not srv.completions({"perceiver", "planner"}), "task roles were called despite a failing preflight")


@case
def preflight_stall_within_10s(ctx):
    """Completions never answer (probe included); with idle_wait_s=5 run stops within 10+5+slack s."""
    srv = ctx.server(stall_after([]))
    res = ctx.run(srv.url, cfg=FAST.replace("idle_wait_s = 8", "idle_wait_s = 5"))
    infra(ctx, res, None, url=srv.url, max_elapsed=25)


@case
def doctor_stall_within_timeout(ctx):
    srv = ctx.server(stall_after([]))
    res = ctx.run(srv.url, cmd="doctor", cfg=FAST.replace("idle_wait_s = 8", "idle_wait_s = 5"))
    no_traceback(res)
    need(res.rc == 2, f"doctor exit {res.rc}; {res.brief()}")
    need(res.elapsed <= 20, f"doctor took {res.elapsed:.1f}s (--timeout 10)")


@case
def preflight_no_models_endpoint(ctx):
    """/v1/models is 404 (some servers) but completions work: the tiny completion decides."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": CHAT}), models_status=404,
                     models_body={"error": {"message": "Not Found"}})
    res = ctx.run(srv.url)
    ok_chat(res)


@case
def model_not_listed_but_answers(ctx):
    """llama.cpp takes any name: not in the list but answers -> run works, doctor not a failure."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": CHAT}), models=["some-other.gguf"])
    res = ctx.run(srv.url)
    ok_chat(res)
    d = ctx.run(srv.url, cmd="doctor")
    no_traceback(d)
    need(d.rc in (0, 1), f"doctor exit {d.rc}; {d.brief()}")
    llm = [c for c in (d.json or {}).get("checks", []) if c.get("name", "").startswith("llm")]
    need(llm and all(c.get("ok") for c in llm), f"doctor LLM check failed: {llm}")


@case
def preflight_once_per_process(ctx):
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": CHAT}))
    res = ctx.run(srv.url)
    ok_chat(res)
    n = len(srv.completions({"probe"}))
    need(n == 1, f"{n} preflight completions in one process (cached per process)")


@case
def tool_tier_refused(ctx):
    """Brain tier fine, tool tier's endpoint refused: exit 2 naming the tool endpoint."""
    srv = ctx.server(by_kind({"probe": ok_probe, "perceiver": TASK, "planner": PLAN}))
    bad = f"http://127.0.0.1:{closed_port()}/v1"
    res = ctx.run(srv.url, task="count the files in the workspace",
                  env={"AGENTUI_TOOL_BASE_URL": bad, "AGENTUI_TOOL_MODEL": "tool-model"})
    infra(ctx, res, srv, url=bad, model="tool-model", max_elapsed=60)


# ---------------------------------------------------------------- driver

def run_case(fn):
    ctx = Ctx(fn.__name__)
    t = time.monotonic()
    try:
        fn(ctx)
        return fn.__name__, True, f"{time.monotonic() - t:.1f}s {getattr(ctx, 'note', '')}", ctx
    except CaseFail as e:
        return fn.__name__, False, str(e), ctx
    except Exception as e:
        return fn.__name__, False, f"harness error: {e!r} {traceback.format_exc()[-600:]}", ctx
    finally:
        ctx.close()


def main():
    global AGENTUI
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    AGENTUI = sys.argv[1]
    sel = sys.argv[2:]
    cases = [c for c in CASES if not sel or any(s in c.__name__ for s in sel)]
    results = []
    with ThreadPoolExecutor(max_workers=2) as ex:
        futs = [ex.submit(run_case, c) for c in cases]
        for f in futs:
            name, ok, why, ctx = f.result()
            results.append((name, ok))
            if ok:
                print(f"PASS {name}  [{why}]", flush=True)
                shutil.rmtree(ctx.tmp, ignore_errors=True)
            else:
                argv = " ".join(getattr(ctx, "last_argv", []) or [])
                print(f"FAIL {name}: {why}\n    cmd: {argv}", flush=True)
                if getattr(ctx, "note", ""):
                    print(f"    note: {ctx.note}", flush=True)
    p = sum(ok for _, ok in results)
    print(f"total: {p}/{len(results)}")
    sys.exit(0 if p == len(results) else 1)


if __name__ == "__main__":
    main()
