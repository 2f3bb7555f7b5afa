"""Scripted-role harness around fakellm.FakeLLM for black-box agentui cases."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fakellm import FakeLLM  # noqa: E402

AGENTUI = None
LAST_RUNS = []


def schema_name(body):
    rf = body.get("response_format") or {}
    n = (rf.get("json_schema") or {}).get("name")
    if n:
        return n
    # fallback: recognise by system prompt words
    sysp = FakeLLM.system(body)
    for key, nm in (("Perceiver", "PerceiverOut"), ("Planner", "PlanOut"), ("Executor", "ExecutorAction"),
                    ("Agent-Validator", "Judgement"), ("Meta-Validator", "MergeOut")):
        if key in sysp:
            return nm
    return None


def user_text(body):
    return "\n".join(m.get("content") or "" for m in body.get("messages", []) if m.get("role") != "system")


def prompt_chars(body):
    return sum(len(m.get("content") or "") for m in body.get("messages", []))


def n_criteria(body):
    m = re.search(r"Give exactly (\d+) verdict", user_text(body))
    if m:
        return int(m.group(1))
    return max(1, len(re.findall(r"^\d+\. ", FakeLLM.last_user(body), re.M)))


def subtask_of(body):
    m = re.search(r"^Subtask: (.*)$", user_text(body), re.M)
    return m.group(1).strip() if m else ""


def crit(text, mode="verifiable"):
    return {"criterion": text, "mode": mode}


def plan(task_criteria, subtasks):
    st = []
    for i, s in enumerate(subtasks):
        d = {"intent": s["intent"], "success_criteria": [crit(c) if isinstance(c, str) else c for c in s["criteria"]],
             "sequence": s.get("sequence", i + 1), "tools": s.get("tools", ["shell"]), "context": s.get("context", "")}
        st.append(d)
    return {"task_criteria": [crit(c) if isinstance(c, str) else c for c in task_criteria], "subtasks": st}


class Script:
    """Per-role scripted behaviour. Override the on_* callables.

    on_executor(body, ctx) where ctx = {"subtask": str, "n": call index within this (subtask, attempt-prompt)}.
    """

    def __init__(self, goal, plan_obj, executor=None, validator=None, meta=None, perceiver=None, planner=None,
                 vary=True):
        self.vary = vary
        self.goal = goal
        self.plan_obj = plan_obj
        self.executor = executor
        self.validator = validator
        self.meta = meta
        self.perceiver = perceiver
        self.planner = planner
        self.counters = {}
        self.calls = {}

    def __call__(self, body, srv):
        n = schema_name(body)
        self.calls[n] = self.calls.get(n, 0) + 1
        if n is None:
            return "ok"
        if n == "PerceiverOut":
            if self.perceiver:
                return json.dumps(self.perceiver(body))
            return json.dumps({"kind": "task", "intent": self.goal, "scope": None, "reply": "", "question": ""})
        if n == "PlanOut":
            if self.planner:
                return json.dumps(self.planner(body, self.calls[n]))
            if self.vary and "replan round" in user_text(body):
                # a disobedient-but-plausible replanner: same work, reworded, tools limited to those offered
                m = re.search(r"^Tools: (.*)$", user_text(body), re.M)
                allowed = [t.strip() for t in m.group(1).split(",")] if m else []
                p = json.loads(json.dumps(self.plan_obj))
                rnd = self.calls[n]
                for st in p["subtasks"]:
                    st["intent"] = st["intent"] + " (try %d)" % rnd
                    if allowed:
                        t = [x for x in st.get("tools", []) if x in allowed]
                        st["tools"] = t or [x for x in allowed if x != "web_search"][:2]
                return json.dumps(p)
            return json.dumps(self.plan_obj)
        if n == "ExecutorAction":
            msgs = body.get("messages", [])
            first_user = next((m["content"] for m in msgs if m.get("role") == "user"), "")
            am = re.search(r"^Attempt \d+", first_user, re.M)
            key = (self.calls.get("PlanOut", 0), subtask_of(body), am.group(0) if am else "Attempt 1")
            k = self.counters.get(key, 0)
            self.counters[key] = k + 1
            # n = number of assistant turns already in the conversation is more robust
            n_asst = sum(1 for m in msgs if m.get("role") == "assistant")
            ctx = {"subtask": subtask_of(body), "n": k, "n_asst": n_asst, "first_user": first_user,
                   "round": self.calls.get("PlanOut", 0), "attempt": key[2]}
            r = self.executor(body, ctx) if self.executor else {"tool": "finish", "output": "done"}
            return r if isinstance(r, str) else json.dumps(r)
        if n == "Judgement":
            k = n_criteria(body)
            if self.validator:
                r = self.validator(body, k)
            else:
                r = {"verdicts": [{"criterion": "", "verdict": "pass", "evidence": "ok"}] * k}
            return r if isinstance(r, str) else json.dumps(r)
        if n == "MergeOut":
            k = n_criteria(body)
            if self.meta:
                r = self.meta(body, k)
            else:
                r = {"merged_output": "done", "summary": "done", "verdicts": [{"verdict": "pass", "evidence": "ok"}] * k}
            return r if isinstance(r, str) else json.dumps(r)
        return "{}"


class Run:
    def __init__(self, rc, out, err, srv, ws, dd, wall):
        self.rc, self.out, self.err, self.srv, self.ws, self.dd, self.wall = rc, out, err, srv, ws, dd, wall
        try:
            self.j = json.loads(out)
        except Exception:
            self.j = None

    @property
    def final(self):
        return (self.j or {}).get("final") or {}

    @property
    def directive(self):
        return self.final.get("directive")

    def success(self):
        """A success claim: exit 0 or a success/accept directive."""
        return self.rc == 0 or self.directive in ("success", "accept")

    def reqs(self, name):
        return [b for b in self.srv.requests if schema_name(b) == name]

    def task_log_text(self):
        d = os.path.join(self.dd, "tasks")
        out = []
        if os.path.isdir(d):
            for f in os.listdir(d):
                with open(os.path.join(d, f), errors="replace") as fh:
                    out.append(fh.read())
        return "\n".join(out)

    def brief(self):
        return "rc=%s directive=%s summary=%s" % (self.rc, self.directive, (self.final.get("summary") or "")[:200])


def run_agent(script, goal, files=None, extra_args=(), config=None, timeout=60, data_dir=None, keep_ws=None):
    srv = FakeLLM(script).start()
    ws = keep_ws or tempfile.mkdtemp(prefix="i13ws_")
    dd = data_dir or tempfile.mkdtemp(prefix="i13dd_")
    for name, content in (files or {}).items():
        p = os.path.join(ws, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(content)
    args = [AGENTUI, "run", "--json", "--workspace", ws, "--data-dir", dd,
            "--base-url", srv.base_url, "--model", srv.model, "--timeout", str(timeout)]
    cp = os.path.join(tempfile.mkdtemp(prefix="i13cfg_"), "config.toml")
    with open(cp, "w") as f:
        f.write(config or "")
    args += ["--config", cp]
    args += list(extra_args) + [goal]
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("AGENTUI_") or k.startswith("OPENAI_"):
            del env[k]
    env["AGENTUI_CONFIG"] = cp
    env["HOME"] = env.get("I13_HOME") or tempfile.mkdtemp(prefix="i13home_")
    t0 = time.time()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout + 30, env=env, stdin=subprocess.DEVNULL)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), ""
    srv.stop()
    r = Run(rc, out, err, srv, ws, dd, time.time() - t0)
    LAST_RUNS.append(r)
    return r


def memory_cmd(dd, *args):
    env = dict(os.environ)
    env["HOME"] = tempfile.mkdtemp(prefix="i13home_")
    cfg = os.path.join(tempfile.mkdtemp(prefix="i13cfg_"), "config.toml")
    open(cfg, "a").close()
    env["AGENTUI_CONFIG"] = cfg
    p = subprocess.run([AGENTUI, "memory", "--data-dir", dd] + list(args), capture_output=True, text=True,
                       timeout=60, env=env, stdin=subprocess.DEVNULL)
    return p


def tool_quote(body):
    """First output line of the first tool result shown in a validator prompt."""
    t = user_text(body)
    m = re.search(r"^Tool \S+ .*?\u2192 \S+.*\n(.+)$", t, re.M)
    return m.group(1).strip() if m else ""


def seq(actions):
    """Executor that returns actions[n] for the n-th call of an attempt (last one repeated)."""
    def f(body, ctx):
        a = actions[min(ctx["n"], len(actions) - 1)]
        return a(body, ctx) if callable(a) else a
    return f


def by_subtask(mapping):
    def f(body, ctx):
        for key, fn in mapping.items():
            if key in ctx["subtask"]:
                return fn(body, ctx)
        return {"tool": "infeasible", "output": "unknown subtask"}
    return f


def passes(evidence=None):
    def f(body, k):
        ev = evidence(body) if callable(evidence) else (evidence if evidence is not None else tool_quote(body))
        return {"verdicts": [{"criterion": "", "verdict": "pass", "evidence": ev}] * k}
    return f


def meta_pass(merged, evidence="ok"):
    def f(body, k):
        return {"merged_output": merged, "summary": merged,
                "verdicts": [{"verdict": "pass", "evidence": evidence}] * k}
    return f
