#!/usr/bin/env python3
"""Adversarial black-box cases for `agentui tree` (issue 16).

usage: python3 run_cases.py /path/to/agentui [case-name ...]
Each case runs in its own subprocess (timeout 120 s), at most 2 in parallel.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import copy
import hashlib
import http.server
import json
import os
import shutil
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAIN = Path(__file__).resolve().parents[2]  # the repository (tests.fakellm is run from here)
PY = Path(sys.executable)
AGENTUI = None  # set in main / child
CASES: dict = {}
TB = "Traceback (most recent call last)"


def case(fn):
    CASES[fn.__name__] = fn
    return fn


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


# ---------------------------------------------------------------- helpers

class Ctx:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.cfg = tmp / "agentui-config.toml"
        self.cfg.write_text("")
        self.home = tmp / "home"
        self.home.mkdir()
        self.procs = []
        self.n = 0

    def env(self):
        env = {k: v for k, v in os.environ.items()
               if not (k.startswith("AGENTUI_") or k.startswith("OPENAI_"))}
        env["AGENTUI_CONFIG"] = str(self.cfg)
        env["HOME"] = str(self.home)
        env["XDG_CONFIG_HOME"] = str(self.home / ".config")
        env["XDG_DATA_HOME"] = str(self.home / ".local/share")
        env["GIT_CONFIG_NOSYSTEM"] = "1"
        return env

    def ddir(self):
        self.n += 1
        return str(self.tmp / f"data{self.n}")

    def agentui(self, *args, cwd=None, timeout=100, check_tb=True):
        p = subprocess.run([AGENTUI, *args], cwd=cwd, capture_output=True, text=True,
                           errors="replace", timeout=timeout, env=self.env())
        if check_tb:
            check(TB not in p.stdout and TB not in p.stderr,
                  f"traceback from agentui {' '.join(args)}: {p.stderr[-600:]}")
        return p

    def tree(self, repo, *args, **kw):
        return self.agentui("tree", *args, cwd=str(repo), **kw)

    def llm(self, url):
        return ["--base-url", url, "--model", "fake", "--data-dir", self.ddir()]

    def repo(self, branch="work", name="repo"):
        r = self.tmp / name
        r.mkdir()
        git(r, "init", "-q", "-b", branch)
        git(r, "config", "user.email", "t@example.com")
        git(r, "config", "user.name", "Tester")
        git(r, "config", "commit.gpgsign", "false")
        (r / "README").write_text("hello\n")
        git(r, "add", "README")
        git(r, "commit", "-q", "-m", "init")
        return r

    def fake(self, script=None):
        """start tests.fakellm with a script; returns base URL"""
        args = [str(PY), "-m", "tests.fakellm", "--port", "0"]
        if script is not None:
            sf = self.tmp / f"script{len(self.procs)}.json"
            sf.write_text(json.dumps(script))
            args += ["--script", str(sf)]
        p = subprocess.Popen(args, cwd=str(MAIN), stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
        self.procs.append(p)
        url = p.stdout.readline().strip()
        check(url.startswith("http"), f"fake server did not start: {url!r}")
        return url

    def custom_server(self, mode):
        """own tiny server: /models ok; chat completions 'error500' or 'hang'"""

        class H(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                body = json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(n)
                if mode == "hang":
                    time.sleep(90)
                    return
                body = b'{"error": {"message": "boom"}}'
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        s = S(("127.0.0.1", 0), H)
        threading.Thread(target=s.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{s.server_address[1]}/v1"

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()


def git(repo, *args, check_rc=True):
    p = subprocess.run(["git", *args], cwd=str(repo), capture_output=True, text=True)
    if check_rc and p.returncode != 0:
        raise Fail(f"git {' '.join(args)} failed: {p.stderr.strip()}")
    return p.stdout


def commits(repo, ref="HEAD"):
    return git(repo, "log", "--format=%s", ref).splitlines()


def ncommits(repo, ref="HEAD"):
    return int(git(repo, "rev-list", "--count", ref).strip())


def branch(repo):
    return git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()


def clean(repo):
    return git(repo, "status", "--porcelain", "--untracked-files=all").strip() == ""


def tpath(repo):
    return Path(repo) / ".agentui/state/tree.json"


def load_tree(repo):
    return json.loads(tpath(repo).read_text())


def save_tree(repo, t, canonical=True):
    if canonical:
        tpath(repo).write_text(json.dumps(t, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    else:
        tpath(repo).write_text(json.dumps(t))


def node(i, order=0, children=None, **kw):
    d = {"id": i, "order": order, "title": kw.pop("title", f"title {i}"),
         "goal": kw.pop("goal", f"goal {i}"), "acceptance": kw.pop("acceptance", [f"acc {i}"]),
         "passes": False, "attempts": 0, "max_attempts": 3, "children": children or []}
    d.update(kw)
    return d


def find(t, i):
    if t["id"] == i:
        return t
    for c in t["children"]:
        r = find(c, i)
        if r is not None:
            return r
    return None


def set_config(repo, **kv):
    p = Path(repo) / ".agentui/state/config.toml"
    lines = p.read_text().splitlines()
    out = []
    done = set()
    for ln in lines:
        key = ln.split("=")[0].strip() if "=" in ln and not ln.lstrip().startswith("#") else None
        if key in kv:
            out.append(f"{key} = {toml_val(kv[key])}")
            done.add(key)
        else:
            out.append(ln)
    for k, v in kv.items():
        if k not in done:
            out.append(f"{k} = {toml_val(v)}")
    p.write_text("\n".join(out) + "\n")


def toml_val(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return json.dumps(v)


def canonical(text):
    obj = json.loads(text)
    a = json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False)
    b = json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=True)
    return text.rstrip("\n") in (a, b)


def sorted_children_everywhere(t):
    ks = [(c["order"], c["id"]) for c in t["children"]]
    return ks == sorted(ks) and all(sorted_children_everywhere(c) for c in t["children"])


# scripted replies --------------------------------------------------------

TP_EXEC = {"decision": "execute", "children": [], "assumptions": [], "questions": []}
PERC_TASK = {"kind": "task", "intent": "do the work", "scope": None, "reply": "", "question": ""}
PERC_CHAT = {"kind": "chat", "intent": "", "scope": None, "reply": "CHATREPLY", "question": ""}
PLAN = {"task_criteria": [{"criterion": "work done", "mode": "plausible"}],
        "subtasks": [{"intent": "Do the work", "success_criteria": [{"criterion": "work done", "mode": "plausible"}],
                      "sequence": 1, "tools": ["shell"], "context": ""}]}
EXEC_FIN = {"tool": "finish", "output": "WORKDONE"}
AV_PASS = {"verdicts": [{"criterion": "work done", "verdict": "pass", "evidence": "WORKDONE"}]}
MV_PASS = {"merged_output": "WORKDONE", "summary": "SUMMARYDONE", "verdicts": [{"verdict": "pass", "evidence": "WORKDONE"}]}


def script_done(n=1, tp=None, executor_pre=None):
    """n iterations, each `done` via accept"""
    ex = []
    for _ in range(n):
        ex += list(executor_pre or []) + [EXEC_FIN]
    return {"tree_planner": tp if tp is not None else [TP_EXEC] * n,
            "perceiver": [PERC_TASK] * n, "planner": [PLAN] * n, "executor": ex,
            "agent_validator": [AV_PASS] * n, "meta_validator": [MV_PASS] * n, "*": {"ok": True}}


def script_retry(n=1, tp=None):
    """n iterations, each `retry` via a conversational reply"""
    return {"tree_planner": tp if tp is not None else [TP_EXEC] * n,
            "perceiver": [PERC_CHAT] * n, "*": {"ok": True}}


def script_abandon(n=1, executor_pre=None):
    """tree planner executes; pipeline's planner replies unusable -> abandon -> retry"""
    s = {"tree_planner": [TP_EXEC] * n, "perceiver": [PERC_TASK] * n, "*": {"ok": True}}
    return s


def tp_decompose(children, **kw):
    d = {"decision": "decompose", "children": children, "assumptions": [], "questions": []}
    d.update(kw)
    return d


def kid(t, g=None):
    return {"title": t, "goal": g or f"goal of {t}", "acceptance": [f"{t} accepted"]}


def setup(ctx, tree=None, guard="true", cfg=None, run_id="r1", branch_name="work", start=True,
          init_args=()):
    """repo + init (+ custom tree/config) + start; returns repo"""
    r = ctx.repo(branch_name)
    args = ["init", "root goal", "--id", "root"]
    if guard is not None:
        args += ["--guard", guard]
    p = ctx.tree(r, *args, *init_args)
    check(p.returncode == 0, f"init failed rc={p.returncode}: {p.stderr}")
    if tree is not None:
        save_tree(r, tree)
    if cfg:
        set_config(r, **cfg)
    if start:
        p = ctx.tree(r, "start", "--run-id", run_id)
        check(p.returncode == 0, f"start failed rc={p.returncode}: {p.stdout}{p.stderr}")
        check(clean(r), f"not clean after start: {git(r, 'status', '--porcelain')}")
    return r


def step(ctx, r, url, *extra, timeout=100):
    return ctx.tree(r, "step", "--yes", *ctx.llm(url), *extra, timeout=timeout)


def iterdir(r, rid="r1", n=1):
    return Path(r) / ".agentui/iterations" / rid / str(n)


def last_meta(r, rid="r1", n=1):
    return json.loads((iterdir(r, rid, n) / "meta.json").read_text())


def no_tb_all(p):
    return TB not in p.stdout and TB not in p.stderr


# ---------------------------------------------------------------- init / layout

@case
def init_layout(ctx):
    r = ctx.repo()
    p = ctx.tree(r, "init", "write a file", "--guard", "true", "-a", "file exists")
    check(p.returncode == 0, f"rc={p.returncode} {p.stderr}")
    for f in ["state/tree.json", "state/schema.json", "state/config.toml", "state/assumptions.md",
              "state/questions.md", ".gitignore"]:
        check((r / ".agentui" / f).is_file(), f"missing .agentui/{f}")
    gi = (r / ".agentui/.gitignore").read_text().split()
    check(any(x.strip("/") == "context" for x in gi) and any(x.strip("/") == "iterations" for x in gi),
          f".gitignore does not ignore context/ and iterations/: {gi}")


@case
def init_tree_fields(ctx):
    r = ctx.repo()
    p = ctx.tree(r, "init", "write a file", "-a", "a1", "-a", "a2", "--guard", "true")
    check(p.returncode == 0, p.stderr)
    t = load_tree(r)
    need = {"id", "order", "title", "goal", "acceptance", "passes", "attempts", "max_attempts", "children"}
    check(need <= set(t) <= need | {"guard"}, f"keys {sorted(t)}")
    check(t["passes"] is False and t["attempts"] == 0 and t["children"] == [], f"{t}")
    check(t["acceptance"] == ["a1", "a2"], f"acceptance {t['acceptance']}")
    check(t["goal"] == "write a file", f"goal {t['goal']!r}")
    check(isinstance(t["max_attempts"], int) and t["max_attempts"] > 0, "max_attempts")


@case
def init_canonical_unicode(ctx):
    r = ctx.repo()
    p = ctx.tree(r, "init", "écrire « un fichier » — ✓ 日本", "-a", "zé", "--guard", "true")
    check(p.returncode == 0, p.stderr)
    txt = tpath(r).read_text(encoding="utf-8")
    check(canonical(txt), "tree.json is not canonical (sorted keys, 2-space indent)")


@case
def init_config_defaults(ctx):
    r = ctx.repo()
    check(ctx.tree(r, "init", "g", "--guard", "make test").returncode == 0, "init")
    c = tomllib.loads((r / ".agentui/state/config.toml").read_text())
    exp = {"guard": "make test", "iteration_timeout_s": 1800, "guard_output_cap_bytes": 100000,
           "max_iterations": 50, "max_attempts": 3, "decompose": True, "max_depth": 3, "max_children": 6}
    for k, v in exp.items():
        check(c.get(k) == v, f"config {k}={c.get(k)!r}, expected {v!r}")


@case
def init_existing_needs_force(ctx):
    r = ctx.repo()
    check(ctx.tree(r, "init", "first goal", "--guard", "true").returncode == 0, "init")
    before = tpath(r).read_bytes()
    p = ctx.tree(r, "init", "second goal")
    check(p.returncode != 0, "second init without --force succeeded")
    check(tpath(r).read_bytes() == before, "tree.json changed by refused init")
    p = ctx.tree(r, "init", "second goal", "--force")
    check(p.returncode == 0, f"--force rc={p.returncode} {p.stderr}")
    check(load_tree(r)["goal"] == "second goal", "--force did not replace the tree")


@case
def init_max_attempts_and_id(ctx):
    r = ctx.repo()
    p = ctx.tree(r, "init", "g", "--id", "my-root", "--max-attempts", "5", "--guard", "true")
    check(p.returncode == 0, p.stderr)
    p = ctx.tree(r, "select")
    check(p.returncode == 0, f"select rc={p.returncode}")
    check("status=open" in p.stdout and "id=my-root" in p.stdout and "attempts=0/5" in p.stdout,
          f"select output {p.stdout!r}")


@case
def init_max_attempts_zero_rejected(ctx):
    r = ctx.repo()
    p = ctx.tree(r, "init", "g", "--max-attempts", "0")
    check(p.returncode != 0, "init --max-attempts 0 accepted (max_attempts > 0 required)")
    p2 = ctx.tree(r, "init", "g", "--max-attempts", "-2", "--force")
    check(p2.returncode != 0, "init --max-attempts -2 accepted")


@case
def init_title_first_line(ctx):
    r = ctx.repo()
    p = ctx.tree(r, "init", "First line here\nsecond line\nthird", "--guard", "true")
    check(p.returncode == 0, p.stderr)
    t = load_tree(r)
    check(t["title"] == "First line here", f"title {t['title']!r}")
    check("second line" in t["goal"], "goal lost lines")


@case
def init_empty_goal(ctx):
    r = ctx.repo()
    p = ctx.tree(r, "init", "   ")
    check(p.returncode != 0, "blank goal accepted")
    check(p.stderr.strip() != "", "no message")


@case
def init_select_status_text(ctx):
    r = ctx.repo()
    ctx.tree(r, "init", "add a --version flag to the CLI", "--guard", "true")
    p = ctx.tree(r, "select")
    check(p.returncode == 0, f"rc {p.returncode}")
    check(p.stdout.strip().startswith("select: status=open id=add-a-version-flag-to-the-cli path="),
          f"select {p.stdout!r}")
    check(p.stdout.strip().endswith("attempts=0/3"), f"select {p.stdout!r}")
    s = ctx.tree(r, "status")
    check(s.returncode == 0 and "[ ]" in s.stdout, f"status rc={s.returncode} {s.stdout!r}")


# ---------------------------------------------------------------- validate

def vrepo(ctx, tree):
    r = ctx.repo()
    check(ctx.tree(r, "init", "g", "--id", "root", "--guard", "true").returncode == 0, "init")
    if isinstance(tree, (bytes, str)):
        data = tree.encode() if isinstance(tree, str) else tree
        tpath(r).write_bytes(data)
    else:
        save_tree(r, tree)
    return r


def errlines(p):
    return [ln.strip()[2:] for ln in (p.stdout + p.stderr).splitlines() if ln.strip().startswith("- ")]


@case
def validate_ok(ctx):
    r = vrepo(ctx, node("root", children=[node("a", 1), node("b", 2, children=[node("c", 0)])]))
    p = ctx.tree(r, "validate")
    check(p.returncode == 0, f"rc={p.returncode} {p.stderr}")


@case
def validate_additional_property(ctx):
    r = vrepo(ctx, node("root", children=[node("a", 1, colour="red")]))
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"rc={p.returncode}")
    check("colour" in p.stdout + p.stderr, "unknown field not named")


@case
def validate_root_extra_field(ctx):
    r = vrepo(ctx, node("root", status="done"))
    p = ctx.tree(r, "validate")
    check(p.returncode == 1 and "status" in p.stdout + p.stderr, f"rc={p.returncode} {p.stderr!r}")


@case
def validate_duplicate_ids(ctx):
    r = vrepo(ctx, node("root", children=[node("a", 1), node("b", 2, children=[node("a", 0)])]))
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"rc={p.returncode}")
    check("duplicate" in (p.stdout + p.stderr).lower(), f"{p.stderr!r}")


@case
def validate_attempt_bounds(ctx):
    r = vrepo(ctx, node("root", children=[node("a", 1, attempts=4, max_attempts=3),
                                          node("b", 2, attempts=-1),
                                          node("c", 3, max_attempts=0)]))
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"rc={p.returncode}")
    ls = errlines(p)
    check(len(ls) >= 3, f"expected >=3 errors (a,b,c), got {ls}")


@case
def validate_unsorted_children(ctx):
    r = vrepo(ctx, node("root", children=[node("b", 1), node("a", 1)]))
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"tie on order with ids b,a not flagged as unsorted; rc={p.returncode}")
    r2 = vrepo(ctx, node("root", children=[node("a", 2), node("b", 1)])) if False else None


@case
def validate_all_errors_sorted(ctx):
    t = node("root", children=[node("z", 5, extra=1), node("a", 1, attempts=9),
                               node("z", 7, max_attempts=0, children=[node("q", 2), node("p", 1)])])
    r = vrepo(ctx, t)
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"rc={p.returncode}")
    ls = errlines(p)
    check(len(ls) >= 5, f"expected >= 5 errors collected, got {len(ls)}: {ls}")
    check(ls == sorted(ls), f"errors not sorted: {ls}")
    p2 = ctx.tree(r, "validate")
    check(errlines(p2) == ls, "error list not deterministic")


@case
def validate_types_and_missing(ctx):
    t = node("root", children=[node("a", "1"), node("b", 2, passes="yes")])
    del t["children"][1]["goal"]
    r = vrepo(ctx, t)
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"rc={p.returncode}")
    check(len(errlines(p)) >= 3, f"expected >=3 errors: {errlines(p)}")


@case
def validate_broken_json(ctx):
    r = vrepo(ctx, '{"id": "root", "order": 0,,,')
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"rc={p.returncode}")
    check(p.stderr.strip() != "" or p.stdout.strip() != "", "no message")


@case
def validate_root_not_object(ctx):
    for bad in ["[]", "null", "42", '"str"', ""]:
        r = vrepo(ctx, bad) if False else None
    rr = ctx.repo()
    ctx.tree(rr, "init", "g", "--guard", "true")
    for bad in ["[]", "null", "42", '"str"', ""]:
        tpath(rr).write_text(bad)
        p = ctx.tree(rr, "validate")
        check(p.returncode == 1, f"tree.json={bad!r}: rc={p.returncode}")


@case
def validate_invalid_utf8(ctx):
    r = vrepo(ctx, b'{"id": "\xff\xfe", "order": 0}')
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"rc={p.returncode}")


@case
def validate_tree_is_directory(ctx):
    r = ctx.repo()
    ctx.tree(r, "init", "g", "--guard", "true")
    tpath(r).unlink()
    tpath(r).mkdir()
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"rc={p.returncode}")
    p = ctx.tree(r, "select")
    check(p.returncode == 1, f"select rc={p.returncode}")


@case
def validate_missing_state(ctx):
    r = ctx.repo()
    for a in (["validate"], ["select"], ["status"], ["status", "--json"]):
        p = ctx.tree(r, *a)
        check(p.returncode in (1, 2), f"{a} without .agentui: rc={p.returncode}")
        check(p.returncode != 0, "ok without state")


@case
def validate_too_deep_150(ctx):
    t = node("n0")
    cur = t
    for i in range(1, 150):
        c = node(f"n{i}")
        cur["children"] = [c]
        cur = c
    r = vrepo(ctx, t)
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"150-level tree: rc={p.returncode} (at most 100 levels)")


@case
def validate_very_deep_5000(ctx):
    depth = 5000
    s = "".join('{"id":"n%d","order":0,"title":"t","goal":"g","acceptance":[],"passes":false,'
                '"attempts":0,"max_attempts":3,"children":[' % i for i in range(depth))
    s += "]}" * depth
    r = vrepo(ctx, s)
    for a in (["validate"], ["select"], ["status", "--json"]):
        p = ctx.tree(r, *a)
        check(p.returncode == 1, f"{a} on 5000-deep tree: rc={p.returncode} {p.stderr[-200:]!r}")


@case
def validate_guard_nul(ctx):
    r = vrepo(ctx, node("root", children=[node("a", 1, guard="true\u0000rm -rf x")]))
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"NUL guard: rc={p.returncode}")


@case
def validate_schema_edit_and_restore(ctx):
    r = ctx.repo()
    ctx.tree(r, "init", "g", "--guard", "true")
    sp = r / ".agentui/state/schema.json"
    orig = sp.read_bytes()
    s = json.loads(orig)
    s["additionalProperties"] = True
    sp.write_text(json.dumps(s))
    p = ctx.tree(r, "validate")
    check(p.returncode == 1 and "schema" in (p.stdout + p.stderr).lower(), f"edited schema: rc={p.returncode}")
    p = ctx.tree(r, "validate", "--write-schema")
    check(p.returncode == 0, f"--write-schema rc={p.returncode} {p.stderr}")
    check(sp.read_bytes() == orig, "restored schema differs from init's")
    sp.unlink()
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"deleted schema: rc={p.returncode}")
    sp.write_text("{not json")
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"broken schema: rc={p.returncode}")
    p = ctx.tree(r, "validate", "--write-schema")
    check(p.returncode == 0 and sp.read_bytes() == orig, "restore after broken")


@case
def validate_is_readonly(ctx):
    t = node("root", children=[node("a", 1)])
    r = ctx.repo()
    ctx.tree(r, "init", "g", "--guard", "true")
    tpath(r).write_text(json.dumps(t))  # valid but compact
    before = tpath(r).read_bytes()
    for a in (["validate"], ["select"], ["status"], ["status", "--json"]):
        ctx.tree(r, *a)
    check(tpath(r).read_bytes() == before, "a read-only command rewrote tree.json")


@case
def schema_additional_properties_false(ctx):
    r = ctx.repo()
    ctx.tree(r, "init", "g", "--guard", "true")
    s = json.loads((r / ".agentui/state/schema.json").read_text())
    found = []

    def walk(x):
        if isinstance(x, dict):
            if "additionalProperties" in x:
                found.append(x["additionalProperties"])
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(s)
    check(found and all(v is False for v in found), f"additionalProperties values: {found}")


# ---------------------------------------------------------------- select / status

@case
def select_order_and_id_tiebreak(ctx):
    t = node("root", children=[node("z", 2), node("b9", 1), node("b10", 1), node("c", 3)])
    t["children"].sort(key=lambda c: (c["order"], c["id"]))
    r = vrepo(ctx, t)
    p = ctx.tree(r, "select")
    check(p.returncode == 0 and "id=b10 " in p.stdout + " ", f"expected b10 (order 1, id 'b10'<'b9'): {p.stdout!r}")


@case
def select_depth_first(ctx):
    t = node("root", children=[
        node("a", 0, children=[node("a1", 0, passes=True), node("a2", 1)]),
        node("b", 1)])
    r = vrepo(ctx, t)
    p = ctx.tree(r, "select")
    check(p.returncode == 0 and "id=a2" in p.stdout, f"{p.stdout!r}")
    check("path=" in p.stdout and "a2" in p.stdout.split("path=")[1], f"{p.stdout!r}")


@case
def select_parent_passes_derived(ctx):
    # parent marked passes=false but all its children passed: skip it
    t = node("root", children=[node("a", 0, children=[node("a1", 0, passes=True)]), node("b", 1)])
    r = vrepo(ctx, t)
    p = ctx.tree(r, "select")
    check(p.returncode == 0 and "id=b" in p.stdout, f"{p.stdout!r}")
    # parent marked passes=true but a child is open: the child is still open
    t2 = node("root", children=[node("a", 0, passes=True, children=[node("a1", 0), node("a2", 1, passes=True)]),
                                node("b", 1)])
    save_tree(r, t2)
    p = ctx.tree(r, "select")
    check(p.returncode == 0 and "id=a1" in p.stdout, f"parent passes=true hid open child: {p.stdout!r}")


@case
def select_complete_exit2(ctx):
    t = node("root", passes=True, children=[node("a", 0, passes=True), node("b", 1, passes=True)])
    r = vrepo(ctx, t)
    p = ctx.tree(r, "select")
    check(p.returncode == 2 and "status=complete" in p.stdout, f"rc={p.returncode} {p.stdout!r}")
    s = ctx.tree(r, "status")
    check(s.returncode == 2, f"status rc={s.returncode}")
    s = ctx.tree(r, "status", "--json")
    check(s.returncode == 2, f"status --json rc={s.returncode}")


@case
def select_stuck_exit3(ctx):
    t = node("root", children=[node("a", 0, attempts=3, max_attempts=3), node("b", 1)])
    r = vrepo(ctx, t)
    p = ctx.tree(r, "select")
    check(p.returncode == 3 and "status=stuck" in p.stdout and "id=a" in p.stdout,
          f"rc={p.returncode} {p.stdout!r} (run must stop, not skip to b)")
    s = ctx.tree(r, "status")
    check(s.returncode == 3 and "[!]" in s.stdout, f"status rc={s.returncode} {s.stdout!r}")


@case
def select_invalid_exit1(ctx):
    r = vrepo(ctx, node("root", children=[node("a", 0), node("a", 1)]))
    for a in (["select"], ["status"], ["status", "--json"]):
        p = ctx.tree(r, *a)
        check(p.returncode == 1, f"{a} on invalid tree rc={p.returncode}")


@case
def status_json_shape(ctx):
    t = node("root", children=[node("a", 0, passes=True), node("b", 1, attempts=1)])
    r = vrepo(ctx, t)
    p = ctx.tree(r, "status", "--json")
    check(p.returncode == 0, f"rc={p.returncode}")
    d = json.loads(p.stdout)
    txt = json.dumps(d)
    check('"b"' in txt and '"a"' in txt, "nodes missing")
    check(d.get("selection", {}).get("id") == "b", f"selection {d.get('selection')}")


@case
def repo_option_from_elsewhere(ctx):
    r = ctx.repo()
    other = ctx.tmp / "elsewhere"
    other.mkdir()
    p = ctx.agentui("tree", "--repo", str(r), "init", "g", "--guard", "true", cwd=str(other))
    check(p.returncode == 0, f"init --repo rc={p.returncode} {p.stderr}")
    check(tpath(r).is_file(), "tree not written under --repo")
    p = ctx.agentui("tree", "--repo", str(r), "select", cwd=str(other))
    check(p.returncode == 0, f"select --repo rc={p.returncode}")
    p = ctx.agentui("tree", "select", "--repo", str(r), cwd=str(other))
    check(p.returncode == 0, f"select (option after action) rc={p.returncode}")


# ---------------------------------------------------------------- bad CLI input

@case
def bad_cli_inputs(ctx):
    r = setup(ctx, start=False)
    cases = [
        (["tree", "frobnicate"], {2}),
        (["tree", "run", "--max-iterations", "abc"], {2}),
        (["tree", "run", "--max-iterations", "-1"], {1, 2}),
        (["tree", "--repo", str(ctx.tmp / "nope"), "status"], {1, 2}),
        (["tree", "--repo", str(r / "README"), "validate"], {1, 2}),
        (["tree", "init"], {2}),
    ]
    for args, ok in cases:
        p = ctx.agentui(*args, cwd=str(r))
        check(p.returncode in ok, f"{args}: rc={p.returncode} expected {ok}: {p.stderr[-200:]!r}")
    check(clean(r) or True, "")


@case
def start_bad_run_id(ctx):
    r = setup(ctx, start=False)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "tree")
    for rid in ["a..b", "bad id", "../escape", "x~1", "-x", "a:b"]:
        p = ctx.tree(r, "start", "--run-id", rid)
        check(p.returncode != 0, f"start --run-id {rid!r} accepted")
        check(branch(r) == "work", f"branch changed to {branch(r)} by bad run id {rid!r}")
    check(not (r / ".agentui/escape").exists() and not (r / "escape").exists(), "path escape")


@case
def start_creates_branch_and_commits(ctx):
    r = setup(ctx, start=False)
    p = ctx.tree(r, "start", "--run-id", "abc")
    check(p.returncode == 0, f"rc={p.returncode} {p.stderr}")
    check(branch(r) == "runner/abc", f"branch {branch(r)}")
    files = git(r, "ls-files").split()
    check(".agentui/state/tree.json" in files and ".agentui/.gitignore" in files, f"not committed: {files}")
    check(clean(r), "dirty after start")
    rs = json.loads((r / ".agentui/state/run_state.json").read_text())
    check(rs.get("run_id") == "abc", f"run_state {rs}")


@case
def start_default_run_id(ctx):
    r = setup(ctx, start=False)
    p = ctx.tree(r, "start")
    check(p.returncode == 0, f"rc={p.returncode}")
    b = branch(r)
    check(b.startswith("runner/") and len(b) > len("runner/"), f"branch {b}")
    rid = b[len("runner/"):]
    rs = json.loads((r / ".agentui/state/run_state.json").read_text())
    check(rs.get("run_id") == rid, f"run_state run_id {rs.get('run_id')} vs branch {rid}")


# ---------------------------------------------------------------- git policy

@case
def step_refuses_main(ctx):
    for b in ("main", "master"):
        r = setup(ctx, branch_name=b, start=False) if False else None
        rr = ctx.repo(b, name=f"repo-{b}")
        ctx.tree(rr, "init", "g", "--id", "root", "--guard", "true")
        git(rr, "add", "-A")
        git(rr, "commit", "-q", "-m", "tree")
        url = ctx.fake(script_done(1))
        n = ncommits(rr)
        p = step(ctx, rr, url)
        check(p.returncode == 1, f"step on {b}: rc={p.returncode} (expected refusal, exit 1)")
        check(ncommits(rr) == n and branch(rr) == b, f"step on {b} committed or switched")
        check(not (rr / ".agentui/iterations").exists() or not any((rr / ".agentui/iterations").rglob("meta.json")),
              "an iteration ran on " + b)
        p = ctx.tree(rr, "run", "--yes", *ctx.llm(url))
        check(p.returncode == 1 and ncommits(rr) == n, f"run on {b}: rc={p.returncode}")


@case
def start_from_main_then_step_ok(ctx):
    r = ctx.repo("main")
    ctx.tree(r, "init", "g", "--id", "root", "--guard", "true")
    p = ctx.tree(r, "start", "--run-id", "m1")
    check(p.returncode == 0 and branch(r) == "runner/m1", f"start from main rc={p.returncode} {branch(r)}")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 2, f"step rc={p.returncode} {p.stderr[-300:]}")
    git(r, "checkout", "-q", "main")
    p = step(ctx, r, url)
    check(p.returncode == 1, f"step after checkout main: rc={p.returncode}")


@case
def step_refuses_untracked(ctx):
    r = setup(ctx)
    (r / "junk.txt").write_text("x")
    url = ctx.fake(script_done(1))
    n = ncommits(r)
    p = step(ctx, r, url)
    check(p.returncode == 1, f"rc={p.returncode}")
    check(ncommits(r) == n, "committed with untracked file")
    t = load_tree(r)
    check(t["attempts"] == 0 and t["passes"] is False, "tree changed")
    check((r / "junk.txt").read_text() == "x", "untracked file touched")


@case
def step_refuses_modified_and_staged(ctx):
    r = setup(ctx)
    url = ctx.fake(script_done(2))
    (r / "README").write_text("changed\n")
    n = ncommits(r)
    p = step(ctx, r, url)
    check(p.returncode == 1 and ncommits(r) == n, f"modified: rc={p.returncode}")
    git(r, "add", "README")
    p = step(ctx, r, url)
    check(p.returncode == 1 and ncommits(r) == n, f"staged: rc={p.returncode}")


@case
def step_refuses_uncommitted_state_edit(ctx):
    r = setup(ctx)
    t = load_tree(r)
    t["title"] = "hand edit"
    save_tree(r, t)
    url = ctx.fake(script_done(1))
    n = ncommits(r)
    p = step(ctx, r, url)
    check(p.returncode == 1 and ncommits(r) == n, f"dirty tree.json: rc={p.returncode}")


@case
def step_ignored_paths_ok(ctx):
    r = setup(ctx, start=False)
    (r / ".gitignore").write_text("*.log\n")
    git(r, "add", ".gitignore")
    git(r, "commit", "-q", "-m", "ignore")
    check(ctx.tree(r, "start", "--run-id", "r1").returncode == 0, "start")
    (r / "build.log").write_text("ignored")
    (r / ".agentui/context").mkdir(exist_ok=True)
    (r / ".agentui/context/stale.md").write_text("stale")
    (r / ".agentui/iterations/old").mkdir(parents=True, exist_ok=True)
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 2, f"ignored files blocked step: rc={p.returncode} {p.stderr[-300:]}")
    check(not (r / ".agentui/context/stale.md").exists(), "context/ not cleared")


@case
def one_commit_per_iteration_and_messages(ctx):
    t = node("root", children=[node("a", 0), node("b", 1), node("c", 2)])
    r = setup(ctx, tree=t, guard="true")
    url = ctx.fake(script_done(3))
    msgs = []
    for i in range(3):
        n = ncommits(r)
        p = step(ctx, r, url)
        check(ncommits(r) == n + 1, f"iteration {i+1}: {ncommits(r) - n} commits")
        check(clean(r), f"dirty after iteration {i+1}")
        msgs.append(commits(r)[0])
        check(p.returncode == (2 if i == 2 else 0), f"step {i+1} rc={p.returncode}")
    check(msgs == ["feat(tree): a done", "feat(tree): b done", "feat(tree): c done"], f"messages {msgs}")
    tt = load_tree(r)
    check(tt["passes"] is True, "root not derived passed")


@case
def iteration_artifacts_not_tracked(ctx):
    r = setup(ctx)
    url = ctx.fake(script_done(1))
    step(ctx, r, url)
    files = git(r, "ls-files").split()
    check(not any("/context/" in f or "/iterations/" in f for f in files), f"tracked: {files}")
    d = iterdir(r)
    for f in ["meta.json", "tree.before.json", "tree.after.json", "guard.log"]:
        check((d / f).is_file(), f"missing iterations/r1/1/{f}")
    check(any((d / "pipeline/tasks").glob("*.jsonl")), "no pipeline task log")
    check(any((d / "pipeline/recordings").glob("*.jsonl")), "no bus recording")


@case
def meta_json_fields(ctx):
    r = setup(ctx)
    url = ctx.fake(script_done(1))
    step(ctx, r, url)
    m = last_meta(r)
    keys = " ".join(m.keys())
    for k in ["node", "status", "guard", "duration", "tokens", "commit"]:
        check(k in keys, f"meta.json lacks {k}: {sorted(m)}")
    check(m.get("commit") == git(r, "rev-parse", "HEAD").strip(), f"meta commit {m.get('commit')} != HEAD")
    check(m.get("status") == "done", f"status {m.get('status')}")


@case
def head_left_branch_no_commit(ctx):
    r = setup(ctx, start=False)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "tree on work")
    check(ctx.tree(r, "start", "--run-id", "r1").returncode == 0, "start")
    t = load_tree(r)
    t["guard"] = "git checkout -q work"
    save_tree(r, t)
    git(r, "commit", "-q", "-am", "node guard")
    nw, nr = ncommits(r, "work"), ncommits(r, "runner/r1")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 1, f"rc={p.returncode} (expected 1: runner error (git))")
    check(ncommits(r, "work") == nw, f"committed on work: {commits(r, 'work')[:2]}")
    check(ncommits(r, "runner/r1") == nr, f"committed on runner/r1: {commits(r, 'runner/r1')[:2]}")


# ---------------------------------------------------------------- transitions

@case
def done_guard_pass(ctx):
    r = setup(ctx, guard="true")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 2, f"rc={p.returncode} (single node complete)")
    t = load_tree(r)
    check(t["passes"] is True and t["attempts"] == 0, f"{t['passes']} {t['attempts']}")
    check(commits(r)[0] == "feat(tree): root done", f"msg {commits(r)[0]!r}")
    s = ctx.tree(r, "select")
    check(s.returncode == 2, f"select after complete rc={s.returncode}")


@case
def done_guard_fail(ctx):
    mark = ctx.tmp / "guard-ran"
    r = setup(ctx, guard=f"echo GUARDOUT; echo GUARDERR >&2; touch {mark}; exit 3")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 0, f"rc={p.returncode}")
    check(mark.exists(), "guard did not run")
    t = load_tree(r)
    check(t["passes"] is False and t["attempts"] == 1, f"passes={t['passes']} attempts={t['attempts']}")
    check(commits(r)[0] == "fix(tree): root guard failed 1/3", f"msg {commits(r)[0]!r}")
    log = (iterdir(r) / "guard.log").read_text()
    check("GUARDOUT" in log and "GUARDERR" in log, f"guard.log {log!r}")


@case
def retry_chat_skips_guard(ctx):
    mark = ctx.tmp / "guard-ran"
    r = setup(ctx, guard=f"touch {mark}")
    url = ctx.fake(script_retry(1))
    p = step(ctx, r, url)
    check(p.returncode == 0, f"rc={p.returncode} {p.stderr[-300:]}")
    check(not mark.exists(), "guard ran on retry")
    t = load_tree(r)
    check(t["attempts"] == 1 and not t["passes"], f"attempts {t['attempts']}")
    check(commits(r)[0] == "chore(tree): root retry 1/3", f"msg {commits(r)[0]!r}")


@case
def retry_abandon(ctx):
    mark = ctx.tmp / "guard-ran"
    r = setup(ctx, guard=f"touch {mark}")
    url = ctx.fake(script_abandon(1))
    p = step(ctx, r, url)
    check(p.returncode == 0, f"rc={p.returncode} {p.stderr[-300:]}")
    check(not mark.exists(), "guard ran on abandon")
    t = load_tree(r)
    check(t["attempts"] == 1, f"attempts {t['attempts']}")
    check(commits(r)[0] == "chore(tree): root retry 1/3", f"msg {commits(r)[0]!r}")
    q = (r / ".agentui/state/questions.md").read_text()
    check("Retry the task" in q or "larger" in q, f"next moves not in questions.md: {q!r}")


@case
def history_md_after_retry_only(ctx):
    r = setup(ctx, guard="true")
    url = ctx.fake(script_retry(2))
    step(ctx, r, url)
    ctxd = r / ".agentui/context"
    check((ctxd / "goal.md").is_file(), "goal.md missing")
    check(not (ctxd / "history.md").exists(), "history.md present on first iteration")
    check(not (ctxd / "failure.md").exists(), "failure.md present on first iteration")
    g = (ctxd / "goal.md").read_text()
    check("goal" in g.lower() and "root goal" in g, f"goal.md {g!r}")
    step(ctx, r, url)
    check((ctxd / "history.md").is_file(), "history.md missing after a retry")
    check(not (ctxd / "failure.md").exists(), "failure.md after a retry")


@case
def failure_md_after_guard_fail(ctx):
    flag = ctx.tmp / "flag"
    guard = f"if [ -f {flag} ]; then exit 0; fi; touch {flag}; echo FAILMARK-1234; exit 1"
    r = setup(ctx, guard=guard)
    url = ctx.fake(script_done(2))
    p1 = step(ctx, r, url)
    check(p1.returncode == 0 and load_tree(r)["attempts"] == 1, f"step1 rc={p1.returncode}")
    p2 = step(ctx, r, url)
    ctxd = r / ".agentui/context"
    check((ctxd / "failure.md").is_file(), "failure.md missing after guard fail")
    check("FAILMARK-1234" in (ctxd / "failure.md").read_text(), "failure.md lacks guard output")
    check(not (ctxd / "history.md").exists(), "history.md after guard fail (not a retry)")
    check(p2.returncode == 2, f"step2 rc={p2.returncode}")
    t = load_tree(r)
    check(t["passes"] and t["attempts"] == 1, f"after pass: {t['passes']} {t['attempts']}")


@case
def context_cleared_each_iteration(ctx):
    flag = ctx.tmp / "flag"
    guard = f"if [ -f {flag} ]; then exit 0; fi; touch {flag}; exit 1"
    r = setup(ctx, guard=guard)
    s = script_done(2)
    s["tree_planner"] = [TP_EXEC] * 3
    s["perceiver"] = [PERC_CHAT, PERC_TASK, PERC_TASK]
    url = ctx.fake(s)
    step(ctx, r, url)  # retry
    step(ctx, r, url)  # done + guard fail -> context has history.md
    ctxd = r / ".agentui/context"
    check((ctxd / "history.md").exists(), "history.md missing in iteration 2 (after retry)")
    step(ctx, r, url)  # done after guard fail -> failure.md, no history.md
    check((ctxd / "failure.md").exists(), "failure.md missing in iteration 3")
    check(not (ctxd / "history.md").exists(), "stale history.md kept in iteration 3")
    msgs = commits(r)[:3]
    check(msgs == ["feat(tree): root done", "fix(tree): root guard failed 2/3", "chore(tree): root retry 1/3"],
          f"messages {msgs}")


@case
def stuck_after_attempts(ctx):
    r = setup(ctx, guard="exit 1", init_args=("--max-attempts", "2"))
    url = ctx.fake(script_done(3))
    p1 = step(ctx, r, url)
    p2 = step(ctx, r, url)
    check([p1.returncode, p2.returncode] == [0, 3] or [p1.returncode, p2.returncode] == [0, 0],
          f"rcs {p1.returncode},{p2.returncode}")
    check(commits(r)[:2] == ["fix(tree): root guard failed 2/2", "fix(tree): root guard failed 1/2"],
          f"msgs {commits(r)[:2]}")
    n = ncommits(r)
    p3 = step(ctx, r, url)
    check(p3.returncode == 3, f"step on stuck leaf rc={p3.returncode}")
    check(ncommits(r) == n, "step on stuck leaf committed")
    t = load_tree(r)
    check(t["attempts"] == 2, f"attempts {t['attempts']} (saturate at 2)")
    s = ctx.tree(r, "select")
    check(s.returncode == 3 and "status=stuck" in s.stdout, f"select {s.returncode} {s.stdout!r}")


@case
def run_until_stuck(ctx):
    t = node("root", children=[node("a", 0, max_attempts=2), node("b", 1)])
    r = setup(ctx, tree=t, guard="true")
    url = ctx.fake(script_retry(5))
    p = ctx.tree(r, "run", "--yes", *ctx.llm(url))
    check(p.returncode == 3, f"run rc={p.returncode} (stuck)")
    check(commits(r)[:2] == ["chore(tree): a retry 2/2", "chore(tree): a retry 1/2"], f"{commits(r)[:3]}")
    tt = load_tree(r)
    check(find(tt, "b")["attempts"] == 0, "run skipped the stuck leaf to b")


@case
def run_to_completion_three_nodes(ctx):
    t = node("root", children=[node("c", 2), node("a", 0), node("b", 1)])
    t["children"].sort(key=lambda c: (c["order"], c["id"]))
    r = setup(ctx, tree=t, guard="true")
    url = ctx.fake(script_done(3))
    p = ctx.tree(r, "run", "--yes", *ctx.llm(url))
    check(p.returncode == 2, f"run rc={p.returncode} {p.stderr[-300:]}")
    check(commits(r)[:3] == ["feat(tree): c done", "feat(tree): b done", "feat(tree): a done"], f"{commits(r)[:4]}")
    tt = load_tree(r)
    check(tt["passes"] is True and all(c["passes"] for c in tt["children"]), "not all passed")
    check(clean(r), "dirty")
    rs = json.loads((r / ".agentui/state/run_state.json").read_text())
    check(rs.get("next_iteration") == 4, f"next_iteration {rs.get('next_iteration')}")


@case
def run_max_iterations(ctx):
    t = node("root", children=[node("a", 0), node("b", 1), node("c", 2)])
    r = setup(ctx, tree=t, guard="true")
    url = ctx.fake(script_done(3))
    n = ncommits(r)
    p = ctx.tree(r, "run", "--yes", "--max-iterations", "2", *ctx.llm(url))
    check(p.returncode == 0, f"rc={p.returncode} (open leaf left)")
    check(ncommits(r) == n + 2, f"{ncommits(r) - n} commits")
    s = ctx.tree(r, "select")
    check("id=c" in s.stdout, s.stdout)


@case
def run_config_max_iterations(ctx):
    t = node("root", children=[node("a", 0), node("b", 1), node("c", 2)])
    r = setup(ctx, tree=t, guard="true", cfg={"max_iterations": 1})
    url = ctx.fake(script_done(3))
    n = ncommits(r)
    p = ctx.tree(r, "run", "--yes", *ctx.llm(url))
    check(p.returncode == 0 and ncommits(r) == n + 1, f"rc={p.returncode}, {ncommits(r) - n} commits (config max_iterations=1)")


@case
def global_options_before_action(ctx):
    r = setup(ctx)
    url = ctx.fake(script_done(1))
    p = ctx.agentui("tree", "--base-url", url, "--model", "fake", "--data-dir", ctx.ddir(), "step", "--yes", cwd=str(r))
    check(p.returncode == 2, f"rc={p.returncode} {p.stderr[-300:]}")


@case
def bottom_up_passes_nested(ctx):
    t = node("root", children=[node("p", 0, children=[node("p1", 0), node("p2", 1)]), node("q", 1)])
    r = setup(ctx, tree=t, guard="true")
    url = ctx.fake(script_done(3))
    step(ctx, r, url)
    tt = load_tree(r)
    check(find(tt, "p")["passes"] is False, "parent passed with an open child")
    step(ctx, r, url)
    tt = load_tree(r)
    check(find(tt, "p")["passes"] is True, "parent not passed when all children passed")
    check(tt["passes"] is False, "root passed with q open")
    p = step(ctx, r, url)
    check(p.returncode == 2 and load_tree(r)["passes"] is True, f"rc {p.returncode}")


@case
def node_guard_overrides_config(ctx):
    t = node("root", guard="true")
    r = setup(ctx, tree=t, guard="exit 7")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 2 and load_tree(r)["passes"], f"node guard not used: rc={p.returncode}")
    t2 = node("root", guard="exit 9")
    r2 = ctx.tmp / "r2"
    r2 = setup(ctx, tree=t2, guard="true") if False else None


@case
def node_guard_fail_overrides_config_pass(ctx):
    t = node("root", guard="exit 9")
    r = setup(ctx, tree=t, guard="true")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    tt = load_tree(r)
    check(p.returncode == 0 and not tt["passes"] and tt["attempts"] == 1, f"rc={p.returncode} {tt['passes']}")


@case
def assumptions_questions_appended(ctx):
    r = setup(ctx, guard="exit 1")
    tp = [dict(TP_EXEC, assumptions=["ASSUME-ONE"], questions=["QUESTION-ONE?"]),
          dict(TP_EXEC, assumptions=["ASSUME-TWO"], questions=["QUESTION-TWO?"])]
    url = ctx.fake(script_done(2, tp=tp))
    step(ctx, r, url)
    step(ctx, r, url)
    a = (r / ".agentui/state/assumptions.md").read_text()
    q = (r / ".agentui/state/questions.md").read_text()
    check("ASSUME-ONE" in a and "ASSUME-TWO" in a and a.index("ASSUME-ONE") < a.index("ASSUME-TWO"), f"{a!r}")
    check("QUESTION-ONE" in q and "QUESTION-TWO" in q, f"{q!r}")
    check(ncommits(r) >= 4 and "assumptions.md" in git(r, "show", "--stat", "HEAD"), "assumptions not committed")


# ---------------------------------------------------------------- runner-owned fields / agent edits

EDIT_SCRIPT = r'''
import json, sys
p = ".agentui/state/tree.json"
t = json.load(open(p))
def f(n, i):
    if n["id"] == i: return n
    for c in n["children"]:
        r = f(c, i)
        if r: return r
MODE
json.dump(t, open(p, "w"))
print("EDITED")
'''


def edit_exec(ctx, body, name="edit.py"):
    p = ctx.tmp / name
    p.write_text(EDIT_SCRIPT.replace("MODE", body))
    return [{"tool": "shell", "args": {"command": f"python3 {p}"}}]


@case
def runner_owned_fields_reset(ctx):
    t = node("root", children=[node("a", 0), node("b", 1)])
    r = setup(ctx, tree=t, guard="true")
    pre = edit_exec(ctx, 'f(t,"b")["attempts"]=2; f(t,"b")["passes"]=True; f(t,"b")["title"]="B RENAMED"')
    url = ctx.fake(script_done(1, executor_pre=pre))
    p = step(ctx, r, url)
    check(p.returncode == 0, f"rc={p.returncode} {p.stderr[-300:]}")
    tt = load_tree(r)
    b = find(tt, "b")
    check(b["attempts"] == 0 and b["passes"] is False, f"agent edit to runner fields kept: {b}")
    check(b["title"] == "B RENAMED", f"open-node edit discarded: {b['title']!r}")
    check(find(tt, "a")["passes"] is True, "a not passed")
    check(canonical(tpath(r).read_text()), "tree.json not rewritten canonically after agent's compact write")
    check(commits(r)[0] == "feat(tree): a done", commits(r)[0])


@case
def agent_sets_own_passes_on_retry(ctx):
    r = setup(ctx, guard="true")
    pre = edit_exec(ctx, 't["passes"]=True; t["attempts"]=0; t["max_attempts"]=99')
    s = script_abandon(1)
    s["planner"] = [PLAN]
    s["executor"] = pre + [{"tool": "infeasible", "output": "cannot"}]
    url = ctx.fake(s)
    p = step(ctx, r, url)
    tt = load_tree(r)
    check(tt["passes"] is False, "agent's passes=true kept")
    check(tt["max_attempts"] == 3 or tt["attempts"] >= 1, f"{tt}")


@case
def passed_node_immutable(ctx):
    t = node("root", children=[node("a", 0, passes=True), node("b", 1)])
    r = setup(ctx, tree=t, guard="true")
    pre = edit_exec(ctx, 'f(t,"a")["title"]="HACKED"')
    url = ctx.fake(script_done(1, executor_pre=pre))
    p = step(ctx, r, url)
    tt = load_tree(r)
    check(find(tt, "a")["title"] == "title a", f"edit to passed node kept: {find(tt, 'a')['title']!r}")
    b = find(tt, "b")
    check(b["attempts"] == 1 and b["passes"] is False, f"agent error should retry b: {b}")
    check(commits(r)[0] == "chore(tree): b retry 1/3", f"msg {commits(r)[0]!r}")
    check((iterdir(r) / "agent_error.log").is_file(), "no agent_error.log")


@case
def passed_node_delete_is_agent_error(ctx):
    t = node("root", children=[node("a", 0, passes=True), node("b", 1)])
    r = setup(ctx, tree=t, guard="true")
    pre = edit_exec(ctx, 't["children"]=[c for c in t["children"] if c["id"]!="a"]')
    url = ctx.fake(script_done(1, executor_pre=pre))
    step(ctx, r, url)
    tt = load_tree(r)
    check(find(tt, "a") is not None, "passed node a was deleted by the agent")
    check(find(tt, "b")["attempts"] == 1 and not find(tt, "b")["passes"], f"{find(tt, 'b')}")


@case
def agent_adds_children_on_done(ctx):
    t = node("root", children=[node("a", 0), node("b", 1)])
    r = setup(ctx, tree=t, guard="true")
    pre = edit_exec(ctx, 'f(t,"a")["children"]=[dict(f(t,"b"), id="a-sub", title="sub")]')
    url = ctx.fake(script_done(1, executor_pre=pre))
    step(ctx, r, url)
    tt = load_tree(r)
    a = find(tt, "a")
    check(a["children"] == [], f"children added on done kept: {a['children']}")
    check(a["attempts"] == 1 and not a["passes"], f"agent error should retry: {a}")
    check((iterdir(r) / "agent_error.log").is_file(), "no agent_error.log")


@case
def agent_breaks_tree_json(ctx):
    r = setup(ctx, guard="true")
    p = ctx.tmp / "break.py"
    p.write_text('open(".agentui/state/tree.json","w").write("{ this is not json"); print("EDITED")\n')
    pre = [{"tool": "shell", "args": {"command": f"python3 {p}"}}]
    url = ctx.fake(script_done(1, executor_pre=pre))
    pr = step(ctx, r, url)
    check(pr.returncode == 0, f"rc={pr.returncode}")
    v = ctx.tree(r, "validate")
    check(v.returncode == 0, f"tree invalid after agent broke it: {v.stderr}")
    tt = load_tree(r)
    check(tt["attempts"] == 1 and not tt["passes"], f"{tt['attempts']} {tt['passes']}")
    check(clean(r), "dirty after iteration")


@case
def agent_adds_open_sibling_allowed(ctx):
    t = node("root", children=[node("a", 0), node("b", 1)])
    r = setup(ctx, tree=t, guard="true")
    pre = edit_exec(ctx, 't["children"].append(dict(f(t,"b"), id="c-new", order=5, title="new node"))')
    url = ctx.fake(script_done(1, executor_pre=pre))
    p = step(ctx, r, url)
    tt = load_tree(r)
    check(find(tt, "a")["passes"] is True, f"done with allowed edit not passed: rc={p.returncode}")
    check(find(tt, "c-new") is not None, "new open node discarded")


# ---------------------------------------------------------------- decomposition

@case
def decompose_valid(ctx):
    mark = ctx.tmp / "guard-ran"
    r = setup(ctx, guard=f"touch {mark}", cfg={"max_attempts": 5})
    url = ctx.fake({"tree_planner": [tp_decompose([kid("one"), kid("two"), kid("three")])], "*": {"ok": True}})
    p = step(ctx, r, url)
    check(p.returncode == 0, f"rc={p.returncode} {p.stderr[-300:]}")
    tt = load_tree(r)
    ids = [c["id"] for c in tt["children"]]
    check(ids == ["root.1", "root.2", "root.3"], f"children ids {ids}")
    check([c["title"] for c in tt["children"]] == ["one", "two", "three"], "titles/order")
    check(all(c["max_attempts"] == 5 and c["attempts"] == 0 and not c["passes"] for c in tt["children"]),
          f"new nodes {tt['children']}")
    check(tt["attempts"] == 0, "decomposition used an attempt")
    check(not mark.exists(), "guard ran on decomposition")
    check(commits(r)[0] == "chore(tree): root decomposed into 3", f"msg {commits(r)[0]!r}")
    check(ctx.tree(r, "validate").returncode == 0, "invalid after decomposition")
    s = ctx.tree(r, "select")
    check("id=root.1" in s.stdout, s.stdout)
    check((iterdir(r) / "planner_output.json").is_file(), "planner_output.json missing")


def decomp_invalid(ctx, children, cfg=None):
    r = setup(ctx, guard="true", cfg=cfg)
    url = ctx.fake({"tree_planner": [tp_decompose(children)], "*": {"ok": True}})
    p = step(ctx, r, url)
    tt = load_tree(r)
    check(tt["children"] == [], f"invalid decomposition added children: {[c['title'] for c in tt['children']]}")
    check(tt["attempts"] == 1, f"attempts {tt['attempts']} (agent error -> retry, attempts+1)")
    check(p.returncode == 0, f"rc={p.returncode}")
    check(commits(r)[0] == "chore(tree): root retry 1/3", f"msg {commits(r)[0]!r}")
    check((iterdir(r) / "agent_error.log").is_file(), "no agent_error.log")


@case
def decompose_one_child_invalid(ctx):
    decomp_invalid(ctx, [kid("only")])


@case
def decompose_zero_children_invalid(ctx):
    decomp_invalid(ctx, [])


@case
def decompose_too_many_invalid(ctx):
    decomp_invalid(ctx, [kid(f"c{i}") for i in range(7)])


@case
def decompose_over_config_max_children(ctx):
    decomp_invalid(ctx, [kid("a"), kid("b"), kid("c")], cfg={"max_children": 2})


@case
def decompose_duplicate_children_invalid(ctx):
    decomp_invalid(ctx, [kid("same", "same goal"), kid("same", "same goal")])


@case
def decompose_empty_title_invalid(ctx):
    decomp_invalid(ctx, [kid("ok"), {"title": "", "goal": "g", "acceptance": ["x"]}])


@case
def decompose_whitespace_title_invalid(ctx):
    decomp_invalid(ctx, [kid("ok"), {"title": "   ", "goal": "g", "acceptance": ["x"]}])


@case
def decompose_at_max_depth_never_split(ctx):
    t = node("root", children=[node("a", 0)])
    r = setup(ctx, tree=t, guard="true", cfg={"max_depth": 1})
    url = ctx.fake({"tree_planner": [tp_decompose([kid("x"), kid("y")])] * 3, "*": {"ok": True}})
    step(ctx, r, url)
    tt = load_tree(r)
    check(find(tt, "a")["children"] == [], "leaf at max_depth was split")
    check("decomposed" not in commits(r)[0], f"msg {commits(r)[0]!r}")


@case
def decompose_disabled(ctx):
    r = setup(ctx, guard="true", cfg={"decompose": False})
    url = ctx.fake({"tree_planner": [tp_decompose([kid("x"), kid("y")])] * 3, "*": {"ok": True}})
    step(ctx, r, url)
    tt = load_tree(r)
    check(tt["children"] == [], "split with decompose=false")
    check("decomposed" not in commits(r)[0], f"msg {commits(r)[0]!r}")


@case
def decompose_then_complete(ctx):
    r = setup(ctx, guard="true")
    s = script_done(2, tp=[tp_decompose([kid("one"), kid("two")]), TP_EXEC, TP_EXEC])
    url = ctx.fake(s)
    p = ctx.tree(r, "run", "--yes", *ctx.llm(url))
    check(p.returncode == 2, f"rc={p.returncode} {p.stderr[-300:]}")
    check(commits(r)[:3] == ["feat(tree): root.2 done", "feat(tree): root.1 done", "chore(tree): root decomposed into 2"],
          f"{commits(r)[:3]}")
    check(load_tree(r)["passes"] is True, "root not derived passed")


# ---------------------------------------------------------------- guard details

@case
def guard_output_cap(ctx):
    g = "head -c 1000 /dev/zero | tr '\\0' x; head -c 500 /dev/zero | tr '\\0' y >&2; exit 1"
    r = setup(ctx, guard=g, cfg={"guard_output_cap_bytes": 100})
    url = ctx.fake(script_done(1))
    step(ctx, r, url)
    log = (iterdir(r) / "guard.log").read_text()
    check("[truncated 900 bytes]" in log, f"stdout marker missing: {log[-300:]!r}")
    check("[truncated 400 bytes]" in log, f"stderr marker missing: {log[-300:]!r}")
    check("x" * 101 not in log and "y" * 101 not in log, "more than the cap kept")
    check("x" * 100 in log and "y" * 100 in log, "less than the cap kept")


@case
def guard_output_at_cap_not_truncated(ctx):
    g = "head -c 100 /dev/zero | tr '\\0' x; exit 1"
    r = setup(ctx, guard=g, cfg={"guard_output_cap_bytes": 100})
    url = ctx.fake(script_done(1))
    step(ctx, r, url)
    log = (iterdir(r) / "guard.log").read_text()
    check("truncated" not in log and "x" * 100 in log, f"{log!r}")


@case
def guard_output_cap_multibyte(ctx):
    g = "printf 'ééééééééééé'; exit 1"  # 11 x 2 bytes = 22 bytes
    r = setup(ctx, guard=g, cfg={"guard_output_cap_bytes": 10})
    url = ctx.fake(script_done(1))
    step(ctx, r, url)
    raw = (iterdir(r) / "guard.log").read_bytes()
    log = raw.decode("utf-8")  # must be valid UTF-8
    out = log.split("printf", 1)[1].split("\n", 1)[1]  # after the echoed command line
    check("é" * 5 in out and "é" * 6 not in out, f"kept part {log!r}")
    check("[truncated 12 bytes]" in log, f"marker {log!r}")


@case
def guard_binary_output(ctx):
    g = "printf 'BIN\\377\\376\\000END'; exit 1"
    r = setup(ctx, guard=g)
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 0, f"rc={p.returncode}")
    raw = (iterdir(r) / "guard.log").read_bytes()
    log = raw.decode("utf-8")
    check("\ufffd" in log and "BIN" in log, f"{log!r}")


@case
def no_guard_is_runner_error(ctx):
    r = setup(ctx, guard=None)
    set_config(r, guard="")
    git(r, "commit", "-q", "-am", "no guard", check_rc=False)
    url = ctx.fake(script_done(1))
    n = ncommits(r)
    p = step(ctx, r, url)
    check(p.returncode == 1, f"rc={p.returncode}")
    tt = load_tree(r)
    check(tt["attempts"] == 0 and not tt["passes"], f"attempts {tt['attempts']} passes {tt['passes']}")
    check(ncommits(r) == n + 1 and commits(r)[0].startswith("chore(tree): root runner error ("), f"{commits(r)[:1]}")


@case
def guard_nul_caught_before_agent(ctx):
    t = node("root", guard="echo a\u0000b")
    r = setup(ctx, tree=t, guard="true", start=False)
    ctx.tree(r, "start", "--run-id", "r1")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 1, f"rc={p.returncode}")
    tt = load_tree(r)
    check(tt["attempts"] == 0 and not tt["passes"], "attempt used")
    d = iterdir(r)
    check(not (d / "pipeline/tasks").exists() or not any((d / "pipeline/tasks").glob("*")), "agent ran")


@case
def timeout_in_guard_no_attempt(ctx):
    pidf = ctx.tmp / "guard.pid"
    r = setup(ctx, guard=f"echo $$ > {pidf}; exec sleep 60", cfg={"iteration_timeout_s": 3})
    url = ctx.fake(script_done(1))
    t0 = time.time()
    p = step(ctx, r, url)
    el = time.time() - t0
    check(p.returncode == 1, f"rc={p.returncode}")
    check(el < 30, f"took {el:.0f}s with a 3 s iteration timeout")
    tt = load_tree(r)
    check(tt["attempts"] == 0 and not tt["passes"], f"attempt used {tt['attempts']}")
    check(commits(r)[0] == "chore(tree): root runner error (timeout)", f"msg {commits(r)[0]!r}")
    check(clean(r), "dirty")
    if pidf.exists():
        pid = int(pidf.read_text())
        time.sleep(0.5)
        alive = os.path.exists(f"/proc/{pid}") and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
        check(not alive, "guard process still alive after timeout")
    check(ctx.tree(r, "validate").returncode == 0, "tree invalid after timeout")


@case
def timeout_in_agent_no_attempt(ctx):
    url = ctx.custom_server("hang")
    r = setup(ctx, guard="true", cfg={"iteration_timeout_s": 3})
    t0 = time.time()
    p = step(ctx, r, url)
    el = time.time() - t0
    check(p.returncode in (1, 2), f"rc={p.returncode}")
    check(el < 60, f"took {el:.0f}s")
    tt = load_tree(r)
    check(tt["attempts"] == 0, f"attempt used: {tt['attempts']}")
    if p.returncode == 1:
        check(commits(r)[0].startswith("chore(tree): root runner error ("), f"msg {commits(r)[0]!r}")


@case
def endpoint_500_during_iteration(ctx):
    url = ctx.custom_server("error500")
    r = setup(ctx, guard="true")
    n = ncommits(r)
    p = step(ctx, r, url, timeout=110)
    check(p.returncode in (1, 2), f"rc={p.returncode}")
    tt = load_tree(r)
    check(tt["attempts"] == 0, f"endpoint failure used an attempt: {tt['attempts']}")
    if p.returncode == 1:
        check(commits(r)[0].startswith("chore(tree): root runner error ("), f"msg {commits(r)[0]!r}")
    else:
        check(ncommits(r) == n, "exit 2 but committed")


@case
def tree_planner_unparseable(ctx):
    r = setup(ctx, guard="true")
    url = ctx.fake({"tree_planner": ["not json at all", "still not"], "*": {"ok": True}})
    p = step(ctx, r, url)
    check(p.returncode == 1, f"rc={p.returncode}")
    tt = load_tree(r)
    check(tt["attempts"] == 0, f"attempts {tt['attempts']}")
    check(commits(r)[0].startswith("chore(tree): root runner error ("), f"msg {commits(r)[0]!r}")
    check((iterdir(r) / "runner_error.log").is_file(), "runner_error.log missing")
    rs = json.loads((r / ".agentui/state/run_state.json").read_text())
    check(rs.get("next_iteration") == 2, f"next_iteration {rs.get('next_iteration')}")


@case
def preflight_endpoint_down(ctx):
    r = setup(ctx)
    n = ncommits(r)
    p = ctx.tree(r, "step", "--yes", "--base-url", "http://127.0.0.1:1/v1", "--model", "fake", "--data-dir", ctx.ddir())
    check(p.returncode == 2, f"rc={p.returncode}")
    check(len(p.stderr.strip().splitlines()) == 1, f"not one line: {p.stderr!r}")
    check(ncommits(r) == n and clean(r), "committed or dirtied")
    check(not (r / ".agentui/iterations").exists() or not any((r / ".agentui/iterations").rglob("meta.json")), "iteration ran")
    p = ctx.tree(r, "run", "--yes", "--base-url", "http://127.0.0.1:1/v1", "--model", "fake", "--data-dir", ctx.ddir())
    check(p.returncode == 2 and ncommits(r) == n, f"run rc={p.returncode}")


@case
def preflight_no_llm_configured(ctx):
    r = setup(ctx)
    n = ncommits(r)
    p = ctx.tree(r, "step", "--yes", "--data-dir", ctx.ddir(), timeout=60)
    check(p.returncode == 2, f"rc={p.returncode} {p.stderr[-200:]!r}")
    check(ncommits(r) == n, "committed")


@case
def preflight_data_dir_is_file(ctx):
    r = setup(ctx)
    url = ctx.fake(script_done(1))
    f = ctx.tmp / "afile"
    f.write_text("x")
    n = ncommits(r)
    p = ctx.tree(r, "step", "--yes", "--base-url", url, "--model", "fake", "--data-dir", str(f))
    check(p.returncode == 2, f"rc={p.returncode}")
    check(ncommits(r) == n and load_tree(r)["attempts"] == 0, "committed/changed")


@case
def bad_url_no_host(ctx):
    r = setup(ctx)
    p = ctx.tree(r, "step", "--yes", "--base-url", "http://:99999/v1", "--model", "fake", "--data-dir", ctx.ddir())
    check(p.returncode == 2, f"rc={p.returncode}")


# ---------------------------------------------------------------- config validation

@case
def config_unknown_key(ctx):
    r = setup(ctx)
    set_config(r, gaurd="true")
    git(r, "commit", "-q", "-am", "typo in config")
    url = ctx.fake(script_done(1))
    n = ncommits(r)
    p = step(ctx, r, url)
    check(p.returncode in (1, 2), f"unknown config key accepted: rc={p.returncode}")
    check("gaurd" in p.stdout + p.stderr, "unknown key not named")
    check(ncommits(r) == n, "committed")
    v = ctx.tree(r, "validate")
    check(v.returncode != 0, f"validate accepts unknown config key: rc={v.returncode}")


@case
def config_bad_values(ctx):
    for kv in ({"iteration_timeout_s": "soon"}, {"guard_output_cap_bytes": -5}, {"max_children": 0},
               {"max_attempts": 0}, {"max_iterations": -1}):
        r = setup(ctx, cfg=kv, start=False) if False else None
        rr = ctx.repo(name=f"repo-{list(kv)[0]}")
        ctx.tree(rr, "init", "g", "--id", "root", "--guard", "true")
        set_config(rr, **kv)
        ctx.tree(rr, "start", "--run-id", "r1")
        url = ctx.fake(script_done(1))
        n = ncommits(rr)
        p = step(ctx, rr, url)
        check(p.returncode in (1, 2), f"{kv} accepted: rc={p.returncode}")
        check(ncommits(rr) == n, f"{kv}: committed")


@case
def config_broken_toml(ctx):
    r = setup(ctx, start=False)
    (r / ".agentui/state/config.toml").write_text("guard = [unclosed\n")
    ctx.tree(r, "start", "--run-id", "r1")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode in (1, 2), f"rc={p.returncode}")


@case
def run_state_corrupt(ctx):
    r = setup(ctx)
    (r / ".agentui/state/run_state.json").write_text("{corrupt")
    git(r, "commit", "-q", "-am", "corrupt")
    url = ctx.fake(script_done(1))
    n = ncommits(r)
    p = step(ctx, r, url)
    check(p.returncode in (1, 2), f"rc={p.returncode}")
    check(ncommits(r) == n, "committed with corrupt run_state")
    s = ctx.tree(r, "status")
    check(TB not in s.stderr, "traceback in status")


# ---------------------------------------------------------------- signals

def signal_case(ctx, sig):
    pidf = ctx.tmp / "guard.pid"
    r = setup(ctx, guard=f"echo $$ > {pidf}; exec sleep 60")
    url = ctx.fake(script_done(1))
    n = ncommits(r)
    proc = subprocess.Popen([AGENTUI, "tree", "step", "--yes", *ctx.llm(url)], cwd=str(r), env=ctx.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while not pidf.exists() and time.time() - t0 < 40 and proc.poll() is None:
        time.sleep(0.1)
    check(pidf.exists(), "guard never started")
    time.sleep(0.3)
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Fail("agentui did not exit within 30 s of the signal")
    check(TB not in err, f"traceback: {err[-400:]}")
    return r, n, proc.returncode, int(pidf.read_text()), err


def pid_alive(pid):
    try:
        st = Path(f"/proc/{pid}/stat").read_text().split()[2]
        return st != "Z"
    except FileNotFoundError:
        return False


@case
def sigint_during_guard(ctx):
    r, n, rc, gpid, err = signal_case(ctx, signal.SIGINT)
    check(rc == 130, f"rc={rc}")
    time.sleep(0.5)
    check(not pid_alive(gpid), "guard process still running")
    check(ncommits(r) == n + 1, f"{ncommits(r) - n} commits")
    check(commits(r)[0] == "chore(tree): root runner error (interrupted)", f"msg {commits(r)[0]!r}")
    check(load_tree(r)["attempts"] == 0, "attempt used")
    check(clean(r), "dirty after interrupt")


@case
def sigterm_during_guard(ctx):
    r, n, rc, gpid, err = signal_case(ctx, signal.SIGTERM)
    time.sleep(0.5)
    alive = pid_alive(gpid)
    if alive:
        os.kill(gpid, signal.SIGKILL)
    check(rc in (130, 143), f"rc={rc}, new commits={ncommits(r) - n}, guard process still alive={alive}, "
          f"meta.json written={(iterdir(r) / 'meta.json').exists()}")
    check(not pid_alive(gpid), "guard process still running")
    check(ncommits(r) == n + 1, f"{ncommits(r) - n} commits")
    check(commits(r)[0].startswith("chore(tree): root runner error ("), f"msg {commits(r)[0]!r}")
    check(load_tree(r)["attempts"] == 0, "attempt used")
    check(clean(r), "dirty after SIGTERM")


# ---------------------------------------------------------------- byte stability

@case
def byte_stable_across_runs(ctx):
    outs = []
    for k in range(2):
        t = node("root", children=[node("a", 0, title="Ünïcode ✓"), node("b", 1), node("c", 2)])
        r = ctx.repo(name=f"rep{k}")
        ctx.tree(r, "init", "g", "--id", "root", "--guard", "true")
        save_tree(r, t)
        ctx.tree(r, "start", "--run-id", "same")
        s = script_done(4, tp=[tp_decompose([kid("x"), kid("y")])] + [TP_EXEC] * 4)
        url = ctx.fake(s)
        p = ctx.tree(r, "run", "--yes", *ctx.llm(url))
        check(p.returncode == 2, f"run {k} rc={p.returncode} {p.stderr[-300:]}")
        txt = tpath(r).read_bytes()
        check(canonical(txt.decode()), "tree.json not canonical")
        check(sorted_children_everywhere(json.loads(txt)), "children not sorted")
        outs.append((txt, commits(r), (r / ".agentui/state/run_state.json").read_bytes(),
                     git(r, "rev-parse", "HEAD^{tree}").strip()))
    check(outs[0][0] == outs[1][0], "tree.json bytes differ between identical runs")
    check(outs[0][1] == outs[1][1], "commit messages differ")
    check(outs[0][2] == outs[1][2], "run_state.json bytes differ between identical runs")
    check(outs[0][3] == outs[1][3], "committed state (HEAD tree object) differs between identical runs")


@case
def rewrite_idempotent_after_step(ctx):
    r = setup(ctx, guard="exit 1")
    url = ctx.fake(script_done(1))
    step(ctx, r, url)
    txt = tpath(r).read_text()
    check(canonical(txt), "not canonical after step")
    before = iterdir(r) / "tree.before.json"
    after = iterdir(r) / "tree.after.json"
    check(json.loads(after.read_text()) == json.loads(txt), "tree.after.json != tree.json")
    check(json.loads(before.read_text())["attempts"] == 0, "tree.before.json wrong")


@case
def iterations_append_only(ctx):
    r = setup(ctx, guard="exit 1")
    url = ctx.fake(script_done(2))
    step(ctx, r, url)
    d1 = iterdir(r, n=1)
    h1 = {p.relative_to(d1): hashlib.sha256(p.read_bytes()).hexdigest() for p in d1.rglob("*") if p.is_file()}
    step(ctx, r, url)
    h1b = {p.relative_to(d1): hashlib.sha256(p.read_bytes()).hexdigest() for p in d1.rglob("*") if p.is_file()}
    check(h1 == h1b, "iteration 1 files changed by iteration 2")
    check((iterdir(r, n=2) / "meta.json").is_file(), "iteration 2 dir missing")
    rs = json.loads((r / ".agentui/state/run_state.json").read_text())
    check(rs.get("next_iteration") == 3, f"next_iteration {rs.get('next_iteration')}")


# ---------------------------------------------------------------- more adversarial cases

@case
def agent_work_committed_in_iteration(ctx):
    r = setup(ctx, guard="test -f out.txt")
    pre = [{"tool": "shell", "args": {"command": "echo hi > out.txt"}}]
    url = ctx.fake(script_done(1, executor_pre=pre))
    p = step(ctx, r, url)
    check(p.returncode == 2, f"rc={p.returncode} {p.stderr[-300:]}")
    check("out.txt" in git(r, "show", "--name-only", "--format=", "HEAD").split(), "agent's file not in the iteration commit")
    check(clean(r), "dirty after iteration")


@case
def agent_work_committed_on_retry(ctx):
    r = setup(ctx, guard="true")
    pre = [{"tool": "shell", "args": {"command": "echo partial > partial.txt"}}]
    s = {"tree_planner": [TP_EXEC], "perceiver": [PERC_TASK], "planner": [PLAN],
         "executor": pre + [{"tool": "infeasible", "output": "cannot"}], "*": {"ok": True}}
    url = ctx.fake(s)
    n = ncommits(r)
    p = step(ctx, r, url)
    check(ncommits(r) == n + 1, f"{ncommits(r) - n} commits (rc={p.returncode})")
    check(clean(r), f"dirty after a retry iteration: {git(r, 'status', '--porcelain')}")
    check(load_tree(r)["attempts"] == 1, f"attempts {load_tree(r)['attempts']}")


@case
def guard_runs_in_repo(ctx):
    r = setup(ctx, guard="test -f README && test -d .agentui")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 2 and load_tree(r)["passes"], f"guard not run in the repository: rc={p.returncode}")


@case
def guard_killed_by_signal_is_fail(ctx):
    r = setup(ctx, guard="kill -9 $$")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    tt = load_tree(r)
    check(p.returncode == 0 and not tt["passes"] and tt["attempts"] == 1, f"rc={p.returncode} {tt['attempts']}")
    check(commits(r)[0] == "fix(tree): root guard failed 1/3", commits(r)[0])


@case
def guard_stderr_only_exit0_passes(ctx):
    r = setup(ctx, guard="echo warning >&2; exit 0")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 2 and load_tree(r)["passes"], f"rc={p.returncode}")


@case
def guard_huge_output(ctx):
    g = "head -c 30000000 /dev/zero | tr '\\0' z; exit 1"
    r = setup(ctx, guard=g, cfg={"guard_output_cap_bytes": 100})
    url = ctx.fake(script_done(1))
    t0 = time.time()
    p = step(ctx, r, url)
    check(p.returncode == 0, f"rc={p.returncode}")
    log = (iterdir(r) / "guard.log").read_text()
    check("[truncated 29999900 bytes]" in log, f"marker: {log[-200:]!r}")
    check(len(log) < 10000, f"guard.log is {len(log)} bytes")
    check(time.time() - t0 < 60, "slow")


@case
def guard_timeout_kills_background_children(ctx):
    pidf = ctx.tmp / "bg.pid"
    r = setup(ctx, guard=f"sleep 77 & echo $! > {pidf}; wait", cfg={"iteration_timeout_s": 3})
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 1, f"rc={p.returncode}")
    time.sleep(0.5)
    check(pidf.exists(), "guard did not start")
    check(not pid_alive(int(pidf.read_text())), "guard's background child survived the timeout")
    check(load_tree(r)["attempts"] == 0, "attempt used")


@case
def guard_closes_stdout_then_hangs(ctx):
    r = setup(ctx, guard="exec >&- 2>&-; sleep 60", cfg={"iteration_timeout_s": 3})
    url = ctx.fake(script_done(1))
    t0 = time.time()
    p = step(ctx, r, url)
    check(p.returncode == 1 and time.time() - t0 < 40, f"rc={p.returncode} after {time.time() - t0:.0f}s")
    check(commits(r)[0] == "chore(tree): root runner error (timeout)", commits(r)[0])


@case
def sigint_during_agent(ctx):
    url = ctx.custom_server("hang")
    r = setup(ctx, guard="true")
    n = ncommits(r)
    proc = subprocess.Popen([AGENTUI, "tree", "step", "--yes", *ctx.llm(url)], cwd=str(r), env=ctx.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while not iterdir(r).exists() and time.time() - t0 < 30 and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Fail("no exit within 30 s of SIGINT")
    check(TB not in err, f"traceback {err[-300:]}")
    check(proc.returncode == 130, f"rc={proc.returncode}")
    check(ncommits(r) == n + 1 and commits(r)[0] == "chore(tree): root runner error (interrupted)", f"{commits(r)[:1]}")
    check(load_tree(r)["attempts"] == 0 and clean(r), "attempt used or dirty")


@case
def double_sigint_during_guard(ctx):
    pidf = ctx.tmp / "guard.pid"
    r = setup(ctx, guard=f"echo $$ > {pidf}; exec sleep 60")
    url = ctx.fake(script_done(1))
    proc = subprocess.Popen([AGENTUI, "tree", "step", "--yes", *ctx.llm(url)], cwd=str(r), env=ctx.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while not pidf.exists() and time.time() - t0 < 40 and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Fail("no exit")
    check(TB not in err, f"traceback on second Ctrl+C: {err[-300:]}")
    check(proc.returncode == 130, f"rc={proc.returncode}")
    check(ctx.tree(r, "validate").returncode == 0, "tree invalid")
    check(load_tree(r)["attempts"] == 0, "attempt used")
    time.sleep(0.3)
    check(not pid_alive(int(pidf.read_text())), "guard alive")


@case
def sigint_during_run_stops(ctx):
    pidf = ctx.tmp / "guard.pid"
    t = node("root", children=[node("a", 0), node("b", 1)])
    r = setup(ctx, tree=t, guard=f"echo $$ > {pidf}; exec sleep 60")
    url = ctx.fake(script_done(2))
    n = ncommits(r)
    proc = subprocess.Popen([AGENTUI, "tree", "run", "--yes", *ctx.llm(url)], cwd=str(r), env=ctx.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.time()
    while not pidf.exists() and time.time() - t0 < 40 and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Fail("no exit")
    check(proc.returncode == 130, f"rc={proc.returncode}")
    check(ncommits(r) == n + 1, f"{ncommits(r) - n} commits (run must stop after the interrupted iteration)")
    check(commits(r)[0] == "chore(tree): a runner error (interrupted)", commits(r)[0])


@case
def git_index_lock_runner_error(ctx):
    r = setup(ctx, guard="true")
    url = ctx.fake(script_done(1))
    (r / ".git/index.lock").write_text("")
    p = step(ctx, r, url)
    check(p.returncode == 1, f"rc={p.returncode}")
    (r / ".git/index.lock").unlink()
    check(git(r, "show", "HEAD:.agentui/state/tree.json") and json.loads(git(r, "show", "HEAD:.agentui/state/tree.json"))["attempts"] == 0,
          "attempt recorded")
    check(ctx.tree(r, "validate").returncode == 0, "tree invalid after git failure")


@case
def start_does_not_commit_user_files(ctx):
    r = ctx.repo()
    ctx.tree(r, "init", "g", "--guard", "true")
    (r / "secret-notes.txt").write_text("mine")
    p = ctx.tree(r, "start", "--run-id", "r1")
    files = git(r, "ls-files").split()
    check("secret-notes.txt" not in files, f"start committed a user file (rc={p.returncode})")


@case
def start_outside_git(ctx):
    d = ctx.tmp / "plain"
    d.mkdir()
    ctx.tree(d, "init", "g", "--guard", "true")
    p = ctx.tree(d, "start", "--run-id", "r1")
    check(p.returncode in (1, 2), f"start outside git rc={p.returncode}")
    url = ctx.fake(script_done(1))
    p = step(ctx, d, url)
    check(p.returncode in (1, 2), f"step outside git rc={p.returncode}")


@case
def step_on_complete_and_stuck_no_commit(ctx):
    r = setup(ctx, tree=node("root", passes=True), guard="true")
    url = ctx.fake(script_done(1))
    n = ncommits(r)
    p = step(ctx, r, url)
    check(p.returncode == 2 and ncommits(r) == n, f"complete: rc={p.returncode} commits+{ncommits(r) - n}")
    p = ctx.tree(r, "run", "--yes", *ctx.llm(url))
    check(p.returncode == 2 and ncommits(r) == n, f"run complete: rc={p.returncode}")
    r2 = ctx.tmp / "x"
    t = node("root", attempts=3)
    rr = ctx.repo(name="stuckrepo")
    ctx.tree(rr, "init", "g", "--id", "root", "--guard", "true")
    save_tree(rr, t)
    ctx.tree(rr, "start", "--run-id", "r1")
    n = ncommits(rr)
    p = ctx.tree(rr, "run", "--yes", *ctx.llm(url))
    check(p.returncode == 3 and ncommits(rr) == n, f"run stuck: rc={p.returncode}")


@case
def validate_bool_as_int(ctx):
    r = vrepo(ctx, node("root", children=[node("a", False, attempts=True, max_attempts=True)]))
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"booleans accepted as integers: rc={p.returncode}")


@case
def validate_acceptance_types(ctx):
    r = vrepo(ctx, node("root", acceptance="just a string", children=[node("a", 0, acceptance=[1, None])]))
    p = ctx.tree(r, "validate")
    check(p.returncode == 1 and len(errlines(p)) >= 2, f"rc={p.returncode} {errlines(p)}")


@case
def validate_children_not_list(ctx):
    r = vrepo(ctx, node("root", children={"a": 1}))
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"rc={p.returncode}")
    r = vrepo(ctx, node("root", children=[1, "x", None])) if False else None
    rr = ctx.repo(name="r2")
    ctx.tree(rr, "init", "g", "--guard", "true")
    tpath(rr).write_text(json.dumps(node("root", children=[1, "x", None])))
    p = ctx.tree(rr, "validate")
    check(p.returncode == 1, f"non-object children rc={p.returncode}")


@case
def git_failure_keeps_previous_tree(ctx):
    r = setup(ctx, guard="true")
    url = ctx.fake(script_done(2))
    head_tree = git(r, "show", "HEAD:.agentui/state/tree.json")
    (r / ".git/index.lock").write_text("")
    p = step(ctx, r, url)
    (r / ".git/index.lock").unlink()
    check(p.returncode == 1, f"rc={p.returncode}")
    t = load_tree(r)
    check(t["passes"] is False and t["attempts"] == 0,
          f"after a git failure tree.json on disk has passes={t['passes']} (previous tree not kept)")
    s = ctx.tree(r, "select")
    check(s.returncode == 0, f"select after git failure: rc={s.returncode} {s.stdout.strip()!r}")


@case
def head_left_branch_tree_not_passed(ctx):
    r = setup(ctx, start=False)
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "tree on work")
    ctx.tree(r, "start", "--run-id", "r1")
    t = load_tree(r)
    t["guard"] = "git checkout -q work"
    save_tree(r, t)
    git(r, "commit", "-q", "-am", "node guard")
    url = ctx.fake(script_done(1))
    p = step(ctx, r, url)
    check(p.returncode == 1, f"rc={p.returncode}")
    check(branch(r) == "work", "unexpected branch")
    tt = load_tree(r)
    check(tt["passes"] is False, "the (checked-out) tree.json was marked passed although nothing was committed")
    check(tt["attempts"] == 0, "attempt used")


@case
def agent_deletes_selected_node(ctx):
    t = node("root", children=[node("a", 0), node("b", 1)])
    r = setup(ctx, tree=t, guard="true")
    pre = edit_exec(ctx, 't["children"]=[c for c in t["children"] if c["id"]!="a"]')
    url = ctx.fake(script_done(1, executor_pre=pre))
    n = ncommits(r)
    p = step(ctx, r, url)
    check(ncommits(r) == n + 1, f"{ncommits(r) - n} commits (rc={p.returncode})")
    check(ctx.tree(r, "validate").returncode == 0, "tree invalid")
    check(clean(r), "dirty")


@case
def agent_duplicate_id_is_agent_error(ctx):
    t = node("root", children=[node("a", 0), node("b", 1)])
    r = setup(ctx, tree=t, guard="true")
    pre = edit_exec(ctx, 't["children"].append(dict(f(t,"b"), order=9))')
    url = ctx.fake(script_done(1, executor_pre=pre))
    p = step(ctx, r, url)
    check(ctx.tree(r, "validate").returncode == 0, "invalid tree persisted")
    tt = load_tree(r)
    a = find(tt, "a")
    check(a["attempts"] == 1 and not a["passes"], f"broken tree by agent not an agent error: {a}")
    check(len(tt["children"]) == 2, "agent's broken edit kept")


@case
def agent_unsorted_children_canonicalised(ctx):
    t = node("root", children=[node("a", 0), node("b", 1), node("c", 2)])
    r = setup(ctx, tree=t, guard="true")
    pre = edit_exec(ctx, 't["children"].reverse()')
    url = ctx.fake(script_done(1, executor_pre=pre))
    step(ctx, r, url)
    txt = tpath(r).read_text()
    check(canonical(txt) and sorted_children_everywhere(json.loads(txt)), "tree.json not canonical / unsorted")
    check(ctx.tree(r, "validate").returncode == 0, "invalid")


@case
def config_guard_nul(ctx):
    r = setup(ctx, start=False)
    p = r / ".agentui/state/config.toml"
    p.write_text(p.read_text().replace('guard = "true"', 'guard = "echo a\\u0000b"'))
    check("\\u0000" in p.read_text(), "harness: replace failed")
    git(r, "add", "-A")
    git(r, "commit", "-q", "-m", "nul guard")
    ctx.tree(r, "start", "--run-id", "r1")
    url = ctx.fake(script_done(1))
    n = ncommits(r)
    s = step(ctx, r, url)
    check(s.returncode == 1, f"rc={s.returncode}")
    check(load_tree(r)["attempts"] == 0, "attempt used")
    d = iterdir(r)
    check(not (d / "pipeline/tasks").exists() or not any((d / "pipeline/tasks").glob("*")), "agent ran with a NUL guard")


@case
def validate_depth_boundary(ctx):
    def chain(k):
        t = node("n0")
        cur = t
        for i in range(1, k):
            c = node(f"n{i}")
            cur["children"] = [c]
            cur = c
        return t
    r = vrepo(ctx, chain(100))
    p = ctx.tree(r, "validate")
    check(p.returncode == 0, f"100-level chain rejected: rc={p.returncode} {errlines(p)[:2]}")
    s = ctx.tree(r, "select")
    check(s.returncode == 0 and "id=n99" in s.stdout, f"select {s.stdout!r}")
    save_tree(r, chain(102))
    p = ctx.tree(r, "validate")
    check(p.returncode == 1, f"102-level chain accepted: rc={p.returncode}")


@case
def goal_md_contents(ctx):
    t = node("root", title="TITLE-XYZ", goal="GOAL-XYZ", acceptance=["ACC-ONE", "ACC-TWO"])
    r = setup(ctx, tree=t, guard="true")
    url = ctx.fake(script_retry(1))
    step(ctx, r, url)
    g = (r / ".agentui/context/goal.md").read_text()
    for w in ["TITLE-XYZ", "GOAL-XYZ", "ACC-ONE", "ACC-TWO"]:
        check(w in g, f"goal.md lacks {w}: {g!r}")


@case
def history_md_has_last_summary(ctx):
    r = setup(ctx, guard="true")
    url = ctx.fake(script_abandon(2))
    step(ctx, r, url)
    step(ctx, r, url)
    h = (r / ".agentui/context/history.md").read_text()
    check("Abandoned" in h or "could not be used" in h, f"history.md lacks the last summary: {h!r}")


@case
def wide_tree_fast(ctx):
    kids = [node(f"k{i:04d}", i, passes=(i < 1999)) for i in range(2000)]
    r = vrepo(ctx, node("root", children=kids))
    t0 = time.time()
    p = ctx.tree(r, "select")
    check(p.returncode == 0 and "id=k1999" in p.stdout, p.stdout)
    v = ctx.tree(r, "validate")
    check(v.returncode == 0, f"validate rc={v.returncode}")
    check(time.time() - t0 < 30, "slow")


@case
def run_stops_on_runner_error(ctx):
    t = node("root", children=[node("a", 0), node("b", 1)])
    r = setup(ctx, tree=t, guard="true")
    url = ctx.fake({"tree_planner": ["garbage"] * 10, "*": {"ok": True}})
    n = ncommits(r)
    p = ctx.tree(r, "run", "--yes", *ctx.llm(url))
    check(p.returncode == 1, f"rc={p.returncode}")
    check(ncommits(r) == n + 1, f"{ncommits(r) - n} commits: run did not stop after the runner error")
    check(commits(r)[0].startswith("chore(tree): a runner error ("), commits(r)[0])


@case
def status_markers(ctx):
    t = node("root", children=[node("a", 0, passes=True), node("b", 1, attempts=3), node("c", 2)])
    r = vrepo(ctx, t)
    s = ctx.tree(r, "status")
    check(s.returncode == 3, f"rc={s.returncode}")
    lines = s.stdout.splitlines()
    la = [l for l in lines if " a" in l or "a:" in l]
    check(any("[x]" in l and "a" in l for l in lines), f"no [x] for passed a: {s.stdout!r}")
    check(any("[!]" in l and "b" in l for l in lines), f"no [!] for stuck b: {s.stdout!r}")
    check(any("[ ]" in l and "c" in l for l in lines), f"no [ ] for open c: {s.stdout!r}")


@case
def agent_resets_own_attempts(ctx):
    t = node("root", attempts=1)
    r = setup(ctx, tree=t, guard="true")
    pre = edit_exec(ctx, 't["attempts"]=0')
    s = {"tree_planner": [TP_EXEC], "perceiver": [PERC_TASK], "planner": [PLAN],
         "executor": pre + [{"tool": "infeasible", "output": "cannot"}], "*": {"ok": True}}
    url = ctx.fake(s)
    step(ctx, r, url)
    tt = load_tree(r)
    check(tt["attempts"] == 2, f"attempts {tt['attempts']} (previous 1 + retry; agent's reset to 0 must be ignored)")


@case
def agent_new_node_runner_fields_zeroed(ctx):
    t = node("root", children=[node("a", 0), node("b", 1)])
    r = setup(ctx, tree=t, guard="true")
    pre = edit_exec(ctx, 't["children"].append(dict(f(t,"b"), id="sneaky", order=7, title="sneaky", passes=True, attempts=2))')
    url = ctx.fake(script_done(1, executor_pre=pre))
    step(ctx, r, url)
    tt = load_tree(r)
    sn = find(tt, "sneaky")
    if sn is not None:
        check(sn["passes"] is False and sn["attempts"] == 0,
              f"agent-created node kept runner-owned fields: passes={sn['passes']} attempts={sn['attempts']}")
    check(tt["passes"] is False, "root passed via an agent-made passed node")


@case
def agent_adds_children_on_retry_single_attempt(ctx):
    t = node("root", children=[node("a", 0), node("b", 1)])
    r = setup(ctx, tree=t, guard="true")
    pre = edit_exec(ctx, 'f(t,"a")["children"]=[dict(f(t,"b"), id="a-sub", title="sub")]')
    s = {"tree_planner": [TP_EXEC], "perceiver": [PERC_TASK], "planner": [PLAN],
         "executor": pre + [{"tool": "infeasible", "output": "cannot"}], "*": {"ok": True}}
    url = ctx.fake(s)
    step(ctx, r, url)
    tt = load_tree(r)
    a = find(tt, "a")
    check(a["children"] == [], "children added on retry kept")
    check(a["attempts"] == 1, f"attempts {a['attempts']} (one iteration must cost at most one attempt)")


@case
def agent_error_skips_guard(ctx):
    mark = ctx.tmp / "guard-ran"
    t = node("root", children=[node("a", 0, passes=True), node("b", 1)])
    r = setup(ctx, tree=t, guard=f"touch {mark}")
    pre = edit_exec(ctx, 'f(t,"a")["goal"]="rewritten"')
    url = ctx.fake(script_done(1, executor_pre=pre))
    step(ctx, r, url)
    b = find(load_tree(r), "b")
    check(b["attempts"] == 1 and not b["passes"], f"{b}")
    m = last_meta(r)
    check(not mark.exists(), f"guard ran although the iteration was an agent error (retry); "
          f"meta.json says guard={m.get('guard')!r} guard_exit={m.get('guard_exit')!r}")


@case
def decompose_id_collision(ctx):
    t = node("root", children=[node("a", 0), node("a.1", 1), node("a.2", 2)])
    r = setup(ctx, tree=t, guard="true")
    url = ctx.fake({"tree_planner": [tp_decompose([kid("one"), kid("two")])], "*": {"ok": True}})
    p = step(ctx, r, url)
    v = ctx.tree(r, "validate")
    check(v.returncode == 0, f"decomposition produced an invalid tree: {errlines(v)}")
    tt = load_tree(r)
    ids = []

    def walk(n):
        ids.append(n["id"])
        for c in n["children"]:
            walk(c)
    walk(tt)
    check(len(ids) == len(set(ids)), f"duplicate ids {ids}")


@case
def decompose_many_children_order(ctx):
    # max_children raised to 9 in config.toml (accepted by the tool); the planner proposes 9 distinct children
    r = setup(ctx, guard="true", cfg={"max_children": 9})
    titles = [f"step-{i}" for i in range(1, 10)]
    reply = tp_decompose([kid(x) for x in titles])
    url = ctx.fake({"tree_planner": [reply, reply], "*": {"ok": True}})
    p = step(ctx, r, url)
    check(p.returncode == 0, f"rc={p.returncode}: {p.stdout.strip().splitlines()[-1:]} {p.stderr.strip()[:200]}")
    tt = load_tree(r)
    got = [c["title"] for c in tt["children"]]
    check(got == titles, f"children order differs from the planner's: {got}")
    s = ctx.tree(r, "select")
    check("id=root.1 " in s.stdout + " ", f"first child not selected first: {s.stdout!r}")
    check(commits(r)[0] == "chore(tree): root decomposed into 9", commits(r)[0])


@case
def untracked_in_state_dir_refused(ctx):
    r = setup(ctx)
    (r / ".agentui/state/notes.txt").write_text("mine")
    url = ctx.fake(script_done(1))
    n = ncommits(r)
    p = step(ctx, r, url)
    check(p.returncode == 1 and ncommits(r) == n, f"rc={p.returncode}, commits+{ncommits(r) - n}")


@case
def history_after_guard_fail_then_retry(ctx):
    flag = ctx.tmp / "flag"
    r = setup(ctx, guard="echo GF-MARK; exit 1")
    s = {"tree_planner": [TP_EXEC] * 3, "perceiver": [PERC_TASK, PERC_CHAT, PERC_CHAT], "planner": [PLAN],
         "executor": [EXEC_FIN], "agent_validator": [AV_PASS], "meta_validator": [MV_PASS], "*": {"ok": True}}
    url = ctx.fake(s)
    step(ctx, r, url)  # done + guard fail
    step(ctx, r, url)  # retry; context: failure.md
    cd = r / ".agentui/context"
    check((cd / "failure.md").exists() and not (cd / "history.md").exists(), f"iteration 2 context: {sorted(os.listdir(cd))}")
    step(ctx, r, url)  # retry; context: history.md only
    check((cd / "history.md").exists() and not (cd / "failure.md").exists(), f"iteration 3 context: {sorted(os.listdir(cd))}")
    check(load_tree(r)["attempts"] == 3, f"attempts {load_tree(r)['attempts']}")
    check(commits(r)[:3] == ["chore(tree): root retry 3/3", "chore(tree): root retry 2/3", "fix(tree): root guard failed 1/3"],
          f"{commits(r)[:3]}")


@case
def pipeline_endpoint_failure_no_attempt(ctx):
    # own server: the first completion (tree planner) answers `execute`, every later one fails with 500
    state = {"n": 0}

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            body = json.dumps({"object": "list", "data": [{"id": "fake", "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            req = json.loads(self.rfile.read(n) or b"{}")
            state["n"] += 1
            if state["n"] == 1:
                content = json.dumps(TP_EXEC)
                if req.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    ch = {"id": "c1", "object": "chat.completion.chunk", "model": "fake",
                          "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}]}
                    self.wfile.write(f"data: {json.dumps(ch)}\n\n".encode())
                    ch["choices"][0]["delta"] = {}
                    ch["choices"][0]["finish_reason"] = "stop"
                    self.wfile.write(f"data: {json.dumps(ch)}\n\ndata: [DONE]\n\n".encode())
                    return
                body = json.dumps({"id": "c1", "object": "chat.completion", "model": "fake",
                                   "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                                "finish_reason": "stop"}],
                                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            body = b'{"error": {"message": "boom"}}'
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True

    srv = S(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    r = setup(ctx, guard="true")
    n = ncommits(r)
    p = step(ctx, r, url, timeout=110)
    check(state["n"] >= 2, f"pipeline never called the endpoint (calls={state['n']}, rc={p.returncode})")
    check(p.returncode == 1, f"rc={p.returncode} {p.stdout.strip()[-200:]}")
    check(load_tree(r)["attempts"] == 0, f"pipeline endpoint failure used an attempt ({load_tree(r)['attempts']})")
    check(commits(r)[0].startswith("chore(tree): root runner error ("), f"msg {commits(r)[0]!r}")


@case
def agentui_path_is_file(ctx):
    r = ctx.repo()
    (r / ".agentui").write_text("not a dir")
    for a in (["init", "g"], ["validate"], ["select"], ["status"]):
        p = ctx.tree(r, *a)
        check(p.returncode in (1, 2), f"{a}: rc={p.returncode}")


@case
def validate_bom(ctx):
    r = vrepo(ctx, "\ufeff" + json.dumps(node("root"), indent=2, sort_keys=True))
    p = ctx.tree(r, "validate")
    check(p.returncode in (0, 1), f"rc={p.returncode}")


@case
def memory_store_held_uses_temporary(ctx):
    dd = ctx.tmp / "shared-data"
    r = setup(ctx, guard="true")
    url = ctx.fake(script_done(1))
    # create the store, then hold its lock from another process
    holder = subprocess.Popen([str(PY), "-c",
                               "import plyvel,sys,time; db=plyvel.DB(sys.argv[1], create_if_missing=True); print('held', flush=True); time.sleep(100)",
                               str(dd / "memory.leveldb")], stdout=subprocess.PIPE, text=True)
    ctx.procs.append(holder)
    dd.mkdir(exist_ok=True)
    check(holder.stdout.readline().strip() == "held", "could not hold the store")
    p = ctx.tree(r, "step", "--yes", "--base-url", url, "--model", "fake", "--data-dir", str(dd))
    check(p.returncode == 2, f"rc={p.returncode} {p.stderr.strip()[-300:]}")
    m = last_meta(r)
    check(m.get("memory") == "temporary", f"meta memory {m.get('memory')!r}")


@case
def decompose_max_length_id(ctx):
    # a valid 64-character id (the schema's maximum); the runner assigns the children's ids
    r = ctx.repo()
    check(ctx.tree(r, "init", "g", "--id", "x" * 64, "--guard", "true").returncode == 0, "init with a 64-char id refused")
    check(ctx.tree(r, "start", "--run-id", "r1").returncode == 0, "start")
    url = ctx.fake({"tree_planner": [tp_decompose([kid("one"), kid("two")])], "*": {"ok": True}})
    p = step(ctx, r, url)
    tt = load_tree(r)
    err = (iterdir(r) / "agent_error.log").read_text().strip()[:160] if (iterdir(r) / "agent_error.log").exists() else ""
    check(len(tt["children"]) == 2 and tt["attempts"] == 0,
          f"valid 2-child decomposition not applied: children={len(tt['children'])} attempts={tt['attempts']} "
          f"commit={commits(r)[0][:20]}…{commits(r)[0][-12:]!r} agent_error.log={err!r}")
    check(ctx.tree(r, "validate").returncode == 0, "invalid tree after decomposition")


@case
def init_long_title_valid(ctx):
    r = ctx.repo()
    p = ctx.tree(r, "init", "g", "--title", "T" * 300, "--guard", "true")
    if p.returncode == 0:
        check(ctx.tree(r, "validate").returncode == 0, "init wrote a tree that validate rejects")
    r2 = ctx.repo(name="r2")
    p = ctx.tree(r2, "init", ("word " * 80).strip(), "--guard", "true")
    check(p.returncode == 0 and ctx.tree(r2, "validate").returncode == 0, "long goal: invalid tree from init")


@case
def guard_output_cap_binary(ctx):
    g = "head -c 200 /dev/zero | tr '\\0' '\\377'; exit 1"
    r = setup(ctx, guard=g, cfg={"guard_output_cap_bytes": 100})
    url = ctx.fake(script_done(1))
    step(ctx, r, url)
    log = (iterdir(r) / "guard.log").read_text(encoding="utf-8")
    k = 0
    i = log.find("\ufffd")
    while i + k < len(log) and log[i + k] == "\ufffd":
        k += 1
    check(0 < k and 3 * k <= 100, f"kept {k} U+FFFD = {3 * k} bytes in guard.log (cap 100)")
    check(f"[truncated {200 - k} bytes]" in log, f"kept {k} of 200 output bytes; marker: "
          f"{[ln for ln in log.splitlines() if 'truncated' in ln]}")


@case
def preflight_damaged_store(ctx):
    r = setup(ctx)
    url = ctx.fake(script_done(1))
    dd = ctx.tmp / "dmg"
    (dd / "memory.leveldb").mkdir(parents=True)
    (dd / "memory.leveldb/CURRENT").write_text("MANIFEST-999999\n")
    (dd / "memory.leveldb/LOCK").write_text("")
    n = ncommits(r)
    p = ctx.tree(r, "step", "--yes", "--base-url", url, "--model", "fake", "--data-dir", str(dd))
    check(p.returncode == 2, f"rc={p.returncode} {p.stderr.strip()[-200:]}")
    check(ncommits(r) == n and load_tree(r)["attempts"] == 0, "committed / attempt used")


# ---------------------------------------------------------------- driver

def run_one(name, tmp):
    ctx = Ctx(Path(tmp))
    try:
        CASES[name](ctx)
        return None
    except Fail as e:
        return str(e)
    except subprocess.TimeoutExpired as e:
        return f"timeout: {e.cmd[:4] if isinstance(e.cmd, list) else e.cmd}"
    except Exception as e:  # harness problem or unexpected tool output
        return f"{type(e).__name__}: {e}"
    finally:
        ctx.close()


def child_main(agentui, name):
    global AGENTUI
    AGENTUI = agentui
    tmp = tempfile.mkdtemp(prefix=f"adv16-{name}-")
    err = run_one(name, tmp)
    print(json.dumps({"err": err}))
    shutil.rmtree(tmp, ignore_errors=True)


def run_case_proc(agentui, name):
    p = subprocess.Popen([sys.executable, __file__, "--child", agentui, name], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return name, "case timed out after 120 s"
    try:
        res = json.loads(out.strip().splitlines()[-1])["err"]
    except Exception:
        res = f"harness: no result (rc={p.returncode}) {err[-300:]}"
    return name, res


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--child":
        child_main(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    agentui = sys.argv[1]
    names = sys.argv[2:] or list(CASES)
    passed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        futs = [ex.submit(run_case_proc, agentui, n) for n in names]
        for f in futs:
            name, err = f.result()
            if err is None:
                passed += 1
                print(f"PASS {name}", flush=True)
            else:
                print(f"FAIL {name}: {err}", flush=True)
    print(f"total: {passed}/{len(names)}")


if __name__ == "__main__":
    main()
