#!/usr/bin/env python3
"""Black-box cases, part 16: a blocked PATH / QUERY / PATTERN target no longer rejects a step that also lists
another tool; the executor refuses only the exact blocked call.

usage: nice -n 19 python3 -u run_cases16.py /work/adversarial/agentui-devtree15 [case-name-substring ...]

Claims under test (change description, paraphrased):
 1. GGS replan directives carry blocked_targets such as `web_search:settings.ini`, `read_file:conf.txt`,
    `glob:*.csv` and `shell:<exact command>`. The planner's code plan validator checks every new plan against them.
 2. Now: for a blocked PATH / QUERY / PATTERN target (any tool other than shell), a subtask that names the target
    (intent or context, 3+ chars) but ALSO lists at least one OTHER tool is accepted. The step runs; the executor
    refuses only the exact blocked call ("REFUSED: <tool> on '<target>' is blocked for this task ...").
 3. Unchanged, still rejected (re-ask "subtask N repeats the blocked target '<target>' with <tool>"):
    (a) a blocked `shell:<command>` named in a subtask whose tools include shell, or that lists no tools;
    (b) a non-shell target named in a subtask whose tools are ONLY that tool;
    (c) a non-shell target named in a subtask that lists no tools.
    Blocked TOOLS (blocked_tools) still reject any subtask that lists them. Memory MUST NOT constraints are
    unaffected.
 4. Motivating run: "Read settings.ini and tell me the value of mode" (file at conf/settings.ini); web_search
    'settings.ini' failed offline; GGS blocked web_search:settings.ini; a plan "Read settings.ini ..." listing
    read_file, shell, web_search must now run, and can reach the file with read_file conf/settings.ini.

Observation (black box): PlanDirective envelopes in data-dir/recordings/*.bus.jsonl (directive, blocked_tools,
blocked_targets); the planner requests the fake server receives (a plan-validator re-ask is the next planner request,
"Your previous plan was rejected: ..."); DispatchManifest/SubTask envelopes (what was dispatched in which round);
executor conversations (the user turn after each call: "RESULT ...", "ERROR ...", "REFUSED: ..."); ExecutionResult
tool_calls (only calls that really ran); FinalResult / exit code; stderr.
Triggers: change_path comes from an environmental failure (web_search offline via AGENTUI_WEB_SEARCH_URL=
http://127.0.0.1:9/, read_file of a missing file, a failing shell command, followed by `infeasible`; an empty glob /
file_search followed by `finish` and an environmental R4a verdict). break_symmetry (blocked_tools) from an empty glob
followed by `infeasible` (the product classes it logical).
Global invariants on every run: no Python traceback on stderr; no timeout; the seeded workspace files unchanged.
ctl_* = the described behaviour must show; atk_* = attacks / edges. Docstrings marked UNCERTAIN go beyond the
description. I16_VERBOSE=1 prints each run's rc/directive/summary and its directives.
"""
import glob as globmod
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
from harness import plan, Script, Run, FakeLLM  # noqa: E402

CASES = []
TMP = []
OBS = []
WEB_OFFLINE = "http://127.0.0.1:9/"
REJ = "Your previous plan was rejected: "


class Fail(Exception):
    pass


def check(c, m):
    if not c:
        raise Fail(m)


def note(m):
    OBS.append(m)


def case(name, doc):
    def deco(fn):
        fn.__name__ = name
        fn.__doc__ = doc
        CASES.append(fn)
        return fn
    return deco


# ------------------------------------------------------------------ actions
def sh(c):
    return {"tool": "shell", "args": {"command": c}}


def rf(p):
    return {"tool": "read_file", "args": {"path": p}}


def wsq(q):
    return {"tool": "web_search", "args": {"query": q}}


def gl(p):
    return {"tool": "glob", "args": {"pattern": p}}


def fsq(q):
    return {"tool": "file_search", "args": {"query": q}}


def fin(o="mode = quokka7"):
    return {"tool": "finish", "output": o}


def inf(o="giving up"):
    return {"tool": "infeasible", "output": o}


def st(intent, tools, context="", criteria=("the value of mode is given",), seq=None):
    d = {"intent": intent, "criteria": list(criteria), "tools": list(tools), "context": context}
    if seq is not None:
        d["sequence"] = seq
    return d


def P(*steps):
    return plan(["the value of mode is given"], list(steps))


GOAL = "Read settings.ini and tell me the value of mode"
FILES = {"conf/settings.ini": "[main]\nmode = quokka7\n", "notes.txt": "a\nb\nc\n"}
VALUE = "quokka7"

# round-1 triggers: (tools of the first plan, round-1 actions, class R4a gives)
T_WEB = (["web_search", "read_file"], [wsq("settings.ini"), inf("offline, cannot look it up")], "environmental")
T_RF = (["read_file", "shell"], [rf("settings.ini"), inf("settings.ini does not exist")], "environmental")
T_GLOB = (["glob", "read_file"], [gl("*.ini"), fin("no match found")], "environmental")
T_FS = (["file_search", "read_file"], [fsq("quokka_mode"), fin("no match found")], "environmental")
T_SH = (["shell", "read_file"], [sh("cat settings.ini"), inf("settings.ini does not exist")], "environmental")
T_WEB_RF = (["web_search", "read_file"], [wsq("settings.ini"), rf("settings.ini"), inf("cannot find it")],
            "environmental")
T_WEB_GLOB = (["web_search", "glob"], [wsq("settings.ini"), gl("*.ini"), fin("no match found")], "environmental")
T_SH_RF = (["shell", "read_file"], [sh("cat settings.ini"), rf("settings.ini"), inf("cannot find it")],
           "environmental")
T_GLOB_TOOL = (["glob", "read_file"], [gl("*.ini"), inf("nothing")], "logical")

P1_INTENT = "Look up the mode setting (first try)"


# ------------------------------------------------------------------ runner
def mkws(files):
    base = tempfile.mkdtemp(prefix="i16c_")
    TMP.append(base)
    ws = os.path.join(base, "ws")
    os.makedirs(ws)
    for name, c in files.items():
        p = os.path.join(ws, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", newline="", encoding="utf-8") as f:
            f.write(c)
    return ws


def run_agent16(script, goal, ws, dd, timeout=60):
    """harness.run_agent with AGENTUI_WEB_SEARCH_URL set (run_agent strips AGENTUI_* from the environment)."""
    srv = FakeLLM(script).start()
    cfgd = tempfile.mkdtemp(prefix="i16cfg_")
    TMP.append(cfgd)
    cp = os.path.join(cfgd, "config.toml")
    open(cp, "w").close()
    home = tempfile.mkdtemp(prefix="i16home_")
    TMP.append(home)
    args = [H.AGENTUI, "run", "--json", "--yes", "--workspace", ws, "--data-dir", dd, "--base-url", srv.base_url,
            "--model", srv.model, "--timeout", str(timeout), "--config", cp, goal]
    env = {k: v for k, v in os.environ.items() if not (k.startswith("AGENTUI_") or k.startswith("OPENAI_"))}
    env["AGENTUI_CONFIG"] = cp
    env["HOME"] = home
    env["AGENTUI_WEB_SEARCH_URL"] = WEB_OFFLINE
    t0 = time.time()
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout + 30, env=env,
                           stdin=subprocess.DEVNULL)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), ""
    srv.stop()
    r = Run(rc, out, err, srv, ws, dd, time.time() - t0)
    H.LAST_RUNS.append(r)
    return r


def default_later(body, ctx):
    """Later rounds: reach the file with whatever is offered (read_file, else shell), then answer."""
    e = tool_enum(body) or []
    if "read_file" in e:
        acts = [rf("conf/settings.ini"), fin()]
    elif "shell" in e:
        acts = [sh("cat conf/settings.ini"), fin()]
    else:
        acts = [inf("no way to read the file")]
    return acts[min(ctx["n"], len(acts) - 1)]


def make_validator(fail_class):
    def f(body, k):
        t = H.user_text(body)
        if VALUE in t:
            return {"verdicts": [{"criterion": "", "verdict": "pass", "evidence": VALUE}] * k}
        return {"verdicts": [{"criterion": "", "verdict": "fail", "failure_class": fail_class,
                              "evidence": "the lookup found nothing", "what_to_do": "reach the file another way"}] * k}
    return f


def meta(body, k):
    return {"merged_output": "mode = " + VALUE, "summary": "mode is " + VALUE,
            "verdicts": [{"verdict": "pass", "evidence": "mode = " + VALUE}] * k}


CLEAN = P(st("Report the mode value from the conf folder", ["read_file", "shell"]))


def cp_run(trigger, plan2, later=None, after=None, goal=GOAL, files=None, expect_dir="change_path",
           expect_targets=None, expect_tools=None, data_dir=None, p1_intent=P1_INTENT):
    """Round 1: one step with trigger tools runs the trigger actions; R4a fails it -> first directive.
    Planner call 2 returns plan2; later calls return `after` (default CLEAN). later(body, ctx) scripts the executor
    from planner call 2 on (default: read conf/settings.ini with read_file or shell, answer)."""
    tools1, acts1, fclass = trigger
    files = FILES if files is None else files
    p1 = P(st(p1_intent, tools1))
    after = after or CLEAN

    def planner(body, n):
        if n == 1:
            return p1
        if n == 2:
            return plan2
        return after(n) if callable(after) else after

    def ex(body, ctx):
        if ctx["round"] <= 1:
            return acts1[min(ctx["n"], len(acts1) - 1)]
        return (later or default_later)(body, ctx)
    ws = mkws(files)
    dd = data_dir or tempfile.mkdtemp(prefix="i16dd_")
    TMP.append(dd)
    s = Script(goal, p1, executor=ex, validator=make_validator(fclass), meta=meta, planner=planner)
    r = run_agent16(s, goal, ws, dd)
    check(r.rc != "timeout", "agentui run timed out after %.0fs" % r.wall)
    check("Traceback (most recent call last)" not in (r.err or ""),
          "Python traceback on stderr: " + (r.err or "")[-900:])
    for name, content in files.items():
        p = os.path.join(ws, name)
        check(os.path.exists(p), "workspace file %s was deleted" % name)
        with open(p, errors="replace") as fh:
            check(fh.read() == content, "workspace file %s was changed" % name)
    ds = directives(r)
    check(ds, "inconclusive: no PlanDirective recorded: " + r.brief())
    d = ds[0]
    check(d.get("directive") == expect_dir, "inconclusive: first directive is %s, not %s: %s"
          % (d.get("directive"), expect_dir, dbrief(ds[:1])))
    if expect_targets is not None:
        check(d.get("blocked_targets") == expect_targets, "inconclusive: blocked_targets %s, expected %s"
              % (json.dumps(d.get("blocked_targets"), ensure_ascii=False), json.dumps(expect_targets,
                                                                                     ensure_ascii=False)))
    if expect_tools is not None:
        check(sorted(d.get("blocked_tools") or []) == sorted(expect_tools), "inconclusive: blocked_tools "
              + dbrief(ds[:1]))
    return r


# ------------------------------------------------------------------ observation helpers
def envelopes(r):
    out = []
    for f in sorted(globmod.glob(os.path.join(r.dd, "recordings", "*.bus.jsonl"))):
        with open(f, errors="replace") as fh:
            for ln in fh:
                try:
                    d = json.loads(ln)
                except Exception:
                    continue
                if isinstance(d, dict) and "type" in d:
                    out.append(d)
    return out


def directives(r):
    return [e["payload"] for e in envelopes(r) if e["type"] == "PlanDirective"]


def dbrief(ds):
    return json.dumps([{"d": d.get("directive"), "tools": d.get("blocked_tools"), "targets": d.get("blocked_targets")}
                       for d in ds], ensure_ascii=False)[:900]


def manifests(r):
    return [e["payload"] for e in envelopes(r) if e["type"] == "DispatchManifest"]


def subtasks_by_round(r):
    envs = envelopes(r)
    by = {e["payload"]["subtask_id"]: e["payload"] for e in envs if e["type"] == "SubTask"}
    out = {}
    for m in manifests(r):
        subs = [by[i] for i in m.get("subtask_ids") or [] if i in by]
        if subs:
            out[m.get("round")] = subs
    return out


def calls_by_round(r):
    """dispatch round -> list of (tool, target, ok) of calls that really ran (ExecutionResult tool_calls)."""
    sid_round = {}
    for m in manifests(r):
        for i in m.get("subtask_ids") or []:
            sid_round[i] = m.get("round")
    out = {}
    for e in envelopes(r):
        if e["type"] == "ExecutionResult":
            rd = sid_round.get(e["payload"].get("subtask_id"))
            for c in e["payload"].get("tool_calls") or []:
                out.setdefault(rd, []).append((c.get("tool"), c.get("args") or {}, c.get("ok")))
    return out


def planner_reqs(r):
    return r.reqs("PlanOut")


def tool_enum(b):
    try:
        return H.FakeLLM.schema(b)["properties"]["tool"]["enum"]
    except Exception:
        return None


def exec_pairs(r, min_round=2):
    """(tool, args, reply-to-it) for every executor call seen in conversations after planner call min_round-1."""
    seen = {}
    plans = 0
    for b in r.srv.requests:
        n = H.schema_name(b)
        if n == "PlanOut":
            plans += 1
            continue
        if n != "ExecutorAction" or plans < min_round:
            continue
        msgs = b.get("messages") or []
        for i, m in enumerate(msgs):
            if m.get("role") != "assistant":
                continue
            try:
                d = json.loads(m.get("content") or "")
            except Exception:
                continue
            if not isinstance(d, dict) or d.get("tool") in (None, "finish", "infeasible"):
                continue
            nxt = msgs[i + 1].get("content") if i + 1 < len(msgs) else ""
            nxt = nxt if isinstance(nxt, str) else json.dumps(nxt)
            key = (json.dumps(msgs[:2]), i, m.get("content"))
            seen[key] = (d.get("tool"), d.get("args") or {}, (nxt or "").strip())
    return list(seen.values())


def arg_of(args):
    for k in ("query", "path", "pattern", "command"):
        if k in args:
            return args[k]
    return None


def replies_for(r, tool, target, min_round=2):
    return [p[2] for p in exec_pairs(r, min_round) if p[0] == tool and arg_of(p[1]) == target]


def expect_refused(r, tool, target, min_round=2, strict_text=True):
    """strict_text: the reply starts with the described "REFUSED: <tool> on '<target>' is blocked for this task"
    (target as is); otherwise any REFUSED reply counts."""
    rs = replies_for(r, tool, target, min_round)
    check(rs, "inconclusive: the executor's %s %r call was never answered (not offered?)" % (tool, target))
    want = "REFUSED: %s on '%s' is blocked for this task" % (tool, target)
    bad = [x for x in rs if not x.startswith("REFUSED")]
    check(not bad, "the exact blocked call %s %r was NOT refused: %s" % (tool, target, json.dumps(bad[:1])[:400]))
    note("refusal: " + rs[0].splitlines()[0][:200])
    check(not strict_text or any(x.startswith(want) for x in rs), "refusal text differs from %r: %s"
          % (want, json.dumps(rs[0][:300], ensure_ascii=False)))
    ran = [c for rd, cs in calls_by_round(r).items() if rd is not None and rd >= 1 for c in cs
           if c[0] == tool and arg_of(c[1]) == target]
    check(not ran, "the refused %s %r is recorded as run (ExecutionResult tool_calls)" % (tool, target))


def expect_not_refused(r, tool, target, min_round=2):
    rs = replies_for(r, tool, target, min_round)
    check(rs, "inconclusive: the executor's %s %r call was never answered" % (tool, target))
    check(not any(x.startswith("REFUSED") for x in rs), "%s %r refused although only another call is blocked: %s"
          % (tool, target, json.dumps(rs[0][:300], ensure_ascii=False)))
    note("%s %r answered: %s" % (tool, target, rs[0].splitlines()[0][:120]))


def reask_texts(r):
    return [H.user_text(b) for b in planner_reqs(r)[2:]]


def rejection_line(t):
    i = t.find(REJ)
    return t[i:i + 400].split("\n")[0] if i >= 0 else ""


def intents(p):
    return [s["intent"] for s in p["subtasks"]]


def expect_accepted(r, plan2):
    texts = reask_texts(r)
    if texts:
        check(REJ not in texts[0], "the plan was rejected: " + rejection_line(texts[0]))
    man = [m for m in manifests(r) if m.get("round") == 1]
    check(man, "no round-1 dispatch (summary: %s)" % r.brief()[:300])
    check(not man[0].get("planner_error"), "planner_error in round 1: %s" % man[0].get("planner_error"))
    disp = [s.get("intent") for s in subtasks_by_round(r).get(1, [])]
    check(disp == intents(plan2), "round 1 did not dispatch the plan as written: %s" % json.dumps(disp)[:400])
    tools = [s.get("tools") for s in subtasks_by_round(r).get(1, [])]
    note("round-1 dispatch: %s" % json.dumps(list(zip(disp, tools)))[:300])


def expect_rejected(r, plan2, fragment, absent=()):
    texts = reask_texts(r)
    check(texts, "the plan was not rejected: no re-ask; round-1 dispatch: %s"
          % json.dumps([s.get("intent") for s in subtasks_by_round(r).get(1, [])])[:400])
    line = rejection_line(texts[0])
    note("re-ask: " + line[:300])
    check(line, "the next planner request is not a re-ask: ..." + json.dumps(texts[0][-300:]))
    check(fragment in line, "re-ask lacks %s: %s" % (json.dumps(fragment, ensure_ascii=False), line[:400]))
    for a in absent:
        check(a not in line, "re-ask also names %r: %s" % (a, line[:400]))
    disp = [s.get("intent") for s in subtasks_by_round(r).get(1, [])]
    check(disp != intents(plan2), "the rejected plan was dispatched in round 1: %s" % json.dumps(disp)[:300])


def expect_accept_end(r):
    check(r.rc == 0 and r.directive == "accept", "the task did not end in accept: " + r.brief())
    out = json.dumps(r.final, ensure_ascii=False)
    check(VALUE in out, "final result lacks the value %s: %s" % (VALUE, out[:300]))


# ================================================================== A. accepted mixed-tool steps
PM_MOTIV = P(st("Read settings.ini and tell me the value of mode", ["read_file", "shell", "web_search"]))


@case("ctl_acc_motivating_web_search", "Claim 4 (the motivating run): web_search 'settings.ini' fails offline -> "
      "change_path blocks web_search:settings.ini; the plan 'Read settings.ini ...' listing read_file, shell, "
      "web_search is accepted (no re-ask) and dispatched; the executor's exact web_search 'settings.ini' is REFUSED "
      "('REFUSED: web_search on 'settings.ini' is blocked for this task') and not recorded as run; read_file "
      "conf/settings.ini runs; the task is accepted with the value.")
def _():
    def later(body, ctx):
        acts = [wsq("settings.ini"), rf("conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 2)]
    r = cp_run(T_WEB, PM_MOTIV, later=later, expect_targets=["web_search:settings.ini"])
    expect_accepted(r, PM_MOTIV)
    expect_refused(r, "web_search", "settings.ini")
    expect_not_refused(r, "read_file", "conf/settings.ini")
    expect_accept_end(r)


@case("ctl_acc_read_file_target", "read_file 'settings.ini' fails (no such file) -> read_file:settings.ini blocked; "
      "the step 'Read settings.ini and report mode' with [read_file, shell] is accepted; the exact read_file "
      "'settings.ini' is refused, read_file 'conf/settings.ini' (same tool, other target) runs; accept.")
def _():
    p2 = P(st("Read settings.ini and report mode", ["read_file", "shell"]))

    def later(body, ctx):
        acts = [rf("settings.ini"), rf("conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 2)]
    r = cp_run(T_RF, p2, later=later, expect_targets=["read_file:settings.ini"])
    expect_accepted(r, p2)
    expect_refused(r, "read_file", "settings.ini")
    expect_not_refused(r, "read_file", "conf/settings.ini")
    expect_accept_end(r)


@case("ctl_acc_glob_target", "An empty glob '*.ini' judged environmental -> glob:*.ini blocked; the step 'Find "
      "settings with glob *.ini, then read it' with [glob, read_file] is accepted; the exact glob '*.ini' is "
      "refused, glob '**/*.ini' runs; accept.")
def _():
    p2 = P(st("Find the settings with glob *.ini, then read it and report mode", ["glob", "read_file"]))

    def later(body, ctx):
        acts = [gl("*.ini"), gl("**/*.ini"), rf("conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 3)]
    r = cp_run(T_GLOB, p2, later=later, expect_targets=["glob:*.ini"])
    expect_accepted(r, p2)
    expect_refused(r, "glob", "*.ini")
    expect_not_refused(r, "glob", "**/*.ini")
    expect_accept_end(r)


@case("ctl_acc_file_search_target", "An empty file_search 'quokka_mode' judged environmental -> "
      "file_search:quokka_mode blocked; a step naming quokka_mode with [file_search, read_file] is accepted; the "
      "exact query is refused, file_search 'mode =' runs; accept.")
def _():
    p2 = P(st("Search for quokka_mode or 'mode =' and report mode", ["file_search", "read_file"]))

    def later(body, ctx):
        acts = [fsq("quokka_mode"), fsq("mode ="), rf("conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 3)]
    r = cp_run(T_FS, p2, later=later, expect_targets=["file_search:quokka_mode"])
    expect_accepted(r, p2)
    expect_refused(r, "file_search", "quokka_mode")
    expect_not_refused(r, "file_search", "mode =")
    expect_accept_end(r)


@case("ctl_acc_target_in_context", "The blocked query 'settings.ini' named only in the step's context, tools "
      "[web_search, read_file]: accepted and dispatched; accept.")
def _():
    p2 = P(st("Report the mode value", ["web_search", "read_file"], context="earlier we searched settings.ini"))
    r = cp_run(T_WEB, p2, expect_targets=["web_search:settings.ini"])
    expect_accepted(r, p2)
    expect_accept_end(r)


@case("ctl_acc_target_tool_not_listed", "Control (unchanged): the step names settings.ini but lists only shell "
      "(not the target's tool web_search): accepted; the executor reaches the file with `cat conf/settings.ini`.")
def _():
    p2 = P(st("Print settings.ini from the conf folder and report mode", ["shell"]))
    r = cp_run(T_WEB, p2, expect_targets=["web_search:settings.ini"])
    expect_accepted(r, p2)
    expect_accept_end(r)


@case("ctl_acc_succeeds_via_shell", "web_search:settings.ini blocked; step [web_search, shell] naming settings.ini "
      "accepted; the executor's exact web_search is refused, then `cat conf/settings.ini` (another tool) succeeds; "
      "accept with the value.")
def _():
    p2 = P(st("Get settings.ini and report mode", ["web_search", "shell"]))

    def later(body, ctx):
        acts = [wsq("settings.ini"), sh("cat conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 2)]
    r = cp_run(T_WEB, p2, later=later, expect_targets=["web_search:settings.ini"])
    expect_accepted(r, p2)
    expect_refused(r, "web_search", "settings.ini")
    ran = [c for c in calls_by_round(r).get(1, []) if c[0] == "shell"]
    check(ran and ran[0][2], "cat conf/settings.ini did not run ok in round 2: %s" % json.dumps(ran)[:300])
    expect_accept_end(r)


@case("ctl_acc_shell_cmd_without_shell", "Control (unchanged): shell:cat settings.ini blocked; a step naming "
      "'cat settings.ini' whose tools are [read_file] (no shell) is accepted.")
def _():
    p2 = P(st("Instead of cat settings.ini, read conf/settings.ini and report mode", ["read_file"]))
    r = cp_run(T_SH, p2, expect_targets=["shell:cat settings.ini"])
    expect_accepted(r, p2)
    expect_accept_end(r)


# ================================================================== B. still rejected
def _rej_case(trigger, targets, p2, fragment):
    r = cp_run(trigger, p2, expect_targets=targets)
    expect_rejected(r, p2, fragment)
    return r


@case("ctl_rej_single_tool_web_search", "Claim 3b: web_search:settings.ini blocked; step naming settings.ini with "
      "tools [web_search] only: rejected, re-ask \"subtask 1 repeats the blocked target 'settings.ini' with "
      "web_search\".")
def _():
    _rej_case(T_WEB, ["web_search:settings.ini"], P(st("Search settings.ini and report mode", ["web_search"])),
              "subtask 1 repeats the blocked target 'settings.ini' with web_search")


@case("ctl_rej_single_tool_read_file", "Claim 3b (the description's example): read_file:settings.ini blocked; "
      "tools [read_file] only: rejected, \"... 'settings.ini' with read_file\".")
def _():
    _rej_case(T_RF, ["read_file:settings.ini"], P(st("Read settings.ini and report mode", ["read_file"])),
              "subtask 1 repeats the blocked target 'settings.ini' with read_file")


@case("ctl_rej_single_tool_glob", "Claim 3b: glob:*.ini blocked; tools [glob] naming '*.ini': rejected.")
def _():
    _rej_case(T_GLOB, ["glob:*.ini"], P(st("List *.ini files and report mode", ["glob"])),
              "subtask 1 repeats the blocked target '*.ini' with glob")


@case("ctl_rej_single_tool_file_search", "Claim 3b: file_search:quokka_mode blocked; tools [file_search] naming "
      "quokka_mode (in the context): rejected.")
def _():
    _rej_case(T_FS, ["file_search:quokka_mode"],
              P(st("Search the workspace and report mode", ["file_search"], context="query: quokka_mode")),
              "subtask 1 repeats the blocked target 'quokka_mode' with file_search")


@case("ctl_rej_no_tools_non_shell", "Claim 3c: web_search:settings.ini blocked; a step naming settings.ini with no "
      "tools listed (tools []): rejected.")
def _():
    _rej_case(T_WEB, ["web_search:settings.ini"], P(st("Read settings.ini and report mode", [])),
              "subtask 1 repeats the blocked target 'settings.ini'")


@case("ctl_rej_shell_cmd_with_shell_and_others", "Claim 3a: shell:cat settings.ini blocked (a failing cat is "
      "environmental); a step naming 'cat settings.ini' with [shell, read_file, glob]: still rejected \"... 'cat "
      "settings.ini' with shell\" (the other-tool relief is only for non-shell targets).")
def _():
    _rej_case(T_SH, ["shell:cat settings.ini"],
              P(st("Run cat settings.ini again and report mode", ["shell", "read_file", "glob"])),
              "subtask 1 repeats the blocked target 'cat settings.ini' with shell")


@case("ctl_rej_shell_cmd_no_tools", "Claim 3a: shell:cat settings.ini blocked; the command in the context of a "
      "step with no tools: rejected \"... with shell\".")
def _():
    _rej_case(T_SH, ["shell:cat settings.ini"],
              P(st("Report mode", [], context="use cat settings.ini")),
              "subtask 1 repeats the blocked target 'cat settings.ini' with shell")


@case("ctl_rej_blocked_tool_mixed", "Claim 3 (blocked TOOLS): an empty glob then infeasible -> break_symmetry "
      "blocks glob as a tool; a step listing [glob, read_file] (mixed) is still rejected (\"uses blocked tool(s) "
      "glob\").")
def _():
    p2 = P(st("Find the ini file and report mode", ["glob", "read_file"]))
    r = cp_run(T_GLOB_TOOL, p2, expect_dir="break_symmetry", expect_tools=["glob"])
    expect_rejected(r, p2, "subtask 1 uses blocked tool(s) glob")


@case("atk_rej_duplicate_tool_not_other", "'At least one OTHER tool': tools [read_file, read_file] with "
      "read_file:settings.ini blocked lists no other tool: rejected.")
def _():
    _rej_case(T_RF, ["read_file:settings.ini"],
              P(st("Read settings.ini and report mode", ["read_file", "read_file"])),
              "subtask 1 repeats the blocked target 'settings.ini' with read_file")


@case("atk_rej_unknown_other_tool", "UNCERTAIN (unknown tool names are not described): tools [web_search, "
      "teleport] with web_search:settings.ini blocked; a made-up 'other' tool must not buy the step past the "
      "validator: rejected (any reason), never dispatched as written.")
def _():
    p2 = P(st("Search settings.ini and report mode", ["web_search", "teleport"]))
    r = cp_run(T_WEB, p2, expect_targets=["web_search:settings.ini"])
    texts = reask_texts(r)
    note("re-ask: " + (rejection_line(texts[0]) if texts else "(none)")[:300])
    disp = [(s.get("intent"), s.get("tools")) for s in subtasks_by_round(r).get(1, [])]
    note("round-1 dispatch: %s" % json.dumps(disp)[:300])
    check(texts and REJ in texts[0], "not rejected; round-1 dispatch %s" % json.dumps(disp)[:300])


@case("atk_rej_mixed_plus_single_second_step", "Three steps: 1 names settings.ini with [read_file, web_search] "
      "(fine), 2 names it with [web_search] only (violates), 3 is clean: the re-ask names subtask 2, not 1.")
def _():
    p2 = P(st("Read settings.ini with read_file", ["read_file", "web_search"], seq=1),
           st("Search settings.ini online", ["web_search"], seq=2),
           st("Report the mode", ["shell"], seq=3))
    r = cp_run(T_WEB, p2, expect_targets=["web_search:settings.ini"])
    expect_rejected(r, p2, "subtask 2 repeats the blocked target 'settings.ini' with web_search",
                    absent=("subtask 1 ",))


# ================================================================== C. executor refusals
@case("ctl_exec_same_tool_other_query_runs", "web_search:settings.ini blocked; in the accepted mixed step the "
      "executor searches 'settings.ini mode value' (a different query): not refused (it runs and fails offline), "
      "recorded as run; the exact 'settings.ini' is refused.")
def _():
    p2 = P(st("Look up settings.ini and report mode", ["web_search", "read_file"]))

    def later(body, ctx):
        acts = [wsq("settings.ini mode value"), wsq("settings.ini"), rf("conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 3)]
    r = cp_run(T_WEB, p2, later=later, expect_targets=["web_search:settings.ini"])
    expect_accepted(r, p2)
    expect_not_refused(r, "web_search", "settings.ini mode value")
    expect_refused(r, "web_search", "settings.ini")
    ran = [c for c in calls_by_round(r).get(1, []) if c[0] == "web_search"]
    check(any(arg_of(c[1]) == "settings.ini mode value" for c in ran),
          "the other query is not recorded as run: %s" % json.dumps(ran)[:300])


@case("atk_exec_same_target_other_tool_not_refused", "web_search:settings.ini blocked; the executor calls "
      "read_file 'settings.ini' (same text, another tool): not refused (ERROR no such file, recorded as run).")
def _():
    p2 = P(st("Get settings.ini and report mode", ["web_search", "read_file"]))

    def later(body, ctx):
        acts = [rf("settings.ini"), rf("conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 2)]
    r = cp_run(T_WEB, p2, later=later, expect_targets=["web_search:settings.ini"])
    expect_accepted(r, p2)
    expect_not_refused(r, "read_file", "settings.ini")
    expect_accept_end(r)


@case("atk_exec_only_blocked_call_loop", "The accepted mixed step's executor retries only the blocked web_search "
      "'settings.ini' on every turn until out of steps, later rounds give up: no hang, no success, the blocked "
      "call never recorded as run after the directive.")
def _():
    p2 = P(st("Look up settings.ini and report mode", ["web_search", "read_file"]))

    def later(body, ctx):
        return wsq("settings.ini") if ctx["round"] == 2 else inf()
    r = cp_run(T_WEB, p2, later=later, expect_targets=["web_search:settings.ini"])
    expect_accepted(r, p2)
    expect_refused(r, "web_search", "settings.ini")
    check(not r.success(), "success although nothing but refused calls happened: " + r.brief())


QUOTED = "what is \"mode\" in kid's settings.ini"
T_WEB_Q = (["web_search", "read_file"], [wsq(QUOTED), inf("offline")], "environmental")


@case("atk_exec_quoted_query", "Blocked query with double and single quotes: a [web_search]-only step naming it is "
      "rejected (re-ask quoting not checked here); the re-asked mixed step [web_search, read_file] naming it is "
      "accepted; the exact quoted query is refused, accept via read_file.")
def _():
    p2 = P(st("Search: %s" % QUOTED, ["web_search"]))
    p3 = P(st("Search: %s, or read the file" % QUOTED, ["web_search", "read_file"]))

    def later(body, ctx):
        acts = [wsq(QUOTED), rf("conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 2)]
    r = cp_run(T_WEB_Q, p2, later=later, after=p3, expect_targets=["web_search:" + QUOTED])
    texts = reask_texts(r)
    check(texts and "repeats the blocked target" in rejection_line(texts[0]),
          "the single-tool step was not rejected: %s" % (rejection_line(texts[0]) if texts else "(no re-ask)"))
    note("re-ask: " + rejection_line(texts[0])[:300])
    disp = [s.get("intent") for s in subtasks_by_round(r).get(1, [])]
    check(disp == intents(p3), "the mixed re-asked plan was not dispatched: %s" % json.dumps(disp)[:300])
    expect_refused(r, "web_search", QUOTED, strict_text=False)
    expect_accept_end(r)


@case("atk_refusal_quotes_target_exactly", "The executor's refusal names a target holding quotes in the described "
      "form: \"REFUSED: web_search on '<target>' is blocked for this task\" (the target text as is, no escaping).")
def _():
    p2 = P(st("Search: %s, or read the file" % QUOTED, ["web_search", "read_file"]))

    def later(body, ctx):
        acts = [wsq(QUOTED), rf("conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 2)]
    r = cp_run(T_WEB_Q, p2, later=later, expect_targets=["web_search:" + QUOTED])
    expect_accepted(r, p2)
    expect_refused(r, "web_search", QUOTED, strict_text=True)


@case("atk_exec_extra_arg_still_refused", "UNCERTAIN (the target is the path; extra arguments are not described): "
      "read_file:settings.ini blocked; the executor's read_file {path: settings.ini, max_chars: 500} is the same "
      "blocked call on the same target and is refused, not run.")
def _():
    p2 = P(st("Read settings.ini and report mode", ["read_file", "shell"]))

    def later(body, ctx):
        acts = [{"tool": "read_file", "args": {"path": "settings.ini", "max_chars": 500}}, rf("conf/settings.ini"),
                fin()]
        return acts[min(ctx["n"], 2)]
    r = cp_run(T_RF, p2, later=later, expect_targets=["read_file:settings.ini"])
    expect_accepted(r, p2)
    expect_refused(r, "read_file", "settings.ini", strict_text=False)


@case("atk_query_looks_like_shell_command", "A web_search QUERY 'cat settings.ini' (offline) is a non-shell target "
      "web_search:cat settings.ini; a step naming 'cat settings.ini' with [shell, web_search] is accepted (shell is "
      "the other tool); the executor's shell `cat conf/settings.ini` runs and the exact query is refused.")
def _():
    t = (["web_search", "read_file"], [wsq("cat settings.ini"), inf("offline")], "environmental")
    p2 = P(st("Instead of searching cat settings.ini, print the conf copy and report mode", ["shell", "web_search"]))

    def later(body, ctx):
        acts = [wsq("cat settings.ini"), sh("cat conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 2)]
    r = cp_run(t, p2, later=later, expect_targets=["web_search:cat settings.ini"])
    expect_accepted(r, p2)
    expect_refused(r, "web_search", "cat settings.ini")
    expect_accept_end(r)


COLON_Q = "settings.ini: mode"


@case("atk_query_with_colon", "A blocked query holding a colon (web_search:settings.ini: mode): a [web_search]-only "
      "step naming it is rejected \"... 'settings.ini: mode' with web_search\"; the re-asked mixed step is "
      "accepted and the exact query refused.")
def _():
    t = (["web_search", "read_file"], [wsq(COLON_Q), inf("offline")], "environmental")
    p2 = P(st("Search %s online" % COLON_Q, ["web_search"]))
    p3 = P(st("Search %s or read the conf copy" % COLON_Q, ["web_search", "read_file"]))

    def later(body, ctx):
        acts = [wsq(COLON_Q), rf("conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 2)]
    r = cp_run(t, p2, later=later, after=p3, expect_targets=["web_search:" + COLON_Q])
    expect_rejected(r, p2, "subtask 1 repeats the blocked target '%s' with web_search" % COLON_Q)
    disp = [s.get("intent") for s in subtasks_by_round(r).get(1, [])]
    check(disp == intents(p3), "the mixed re-asked plan was not dispatched: %s" % json.dumps(disp)[:300])
    expect_refused(r, "web_search", COLON_Q)
    expect_accept_end(r)


@case("atk_reask_quotes_target_exactly", "The re-ask names a target holding quotes in the described form: "
      "\"subtask 1 repeats the blocked target '<target>' with web_search\" (the target text as is, no escaping).")
def _():
    p2 = P(st("Search: %s" % QUOTED, ["web_search"]))
    r = cp_run(T_WEB_Q, p2, expect_targets=["web_search:" + QUOTED])
    expect_rejected(r, p2, "subtask 1 repeats the blocked target '%s' with web_search" % QUOTED)


# ================================================================== D. substrings
DATA_FILES = {"mydata.csv": "id,mode\n1,quokka7\n", "notes.txt": "a\nb\nc\n"}
DATA_GOAL = "Tell me the mode column of the data csv"
T_RF_DATA = (["read_file", "shell"], [rf("data.csv"), inf("data.csv does not exist")], "environmental")


@case("atk_sub_other_word_mixed_runs", "read_file:data.csv blocked; a step 'Read mydata.csv ...' (contains "
      "'data.csv' inside another word) with [read_file, shell] is accepted, and read_file 'mydata.csv' is NOT "
      "refused (exact call only); accept.")
def _():
    p2 = P(st("Read mydata.csv and report the mode column", ["read_file", "shell"]))

    def later(body, ctx):
        acts = [rf("mydata.csv"), fin(VALUE)]
        return acts[min(ctx["n"], 1)]
    r = cp_run(T_RF_DATA, p2, later=later, goal=DATA_GOAL, files=DATA_FILES, expect_targets=["read_file:data.csv"])
    expect_accepted(r, p2)
    expect_not_refused(r, "read_file", "mydata.csv")
    expect_accept_end(r)


@case("atk_sub_other_word_single_tool", "Per the letter ('intent contains a blocked target's text'): read_file:"
      "data.csv blocked; 'Read mydata.csv ...' with [read_file] only contains 'data.csv' -> rejected \"... "
      "'data.csv' with read_file\" (a substring false positive, unchanged by this change).")
def _():
    p2 = P(st("Read mydata.csv and report the mode column", ["read_file"]))
    r = cp_run(T_RF_DATA, p2, goal=DATA_GOAL, files=DATA_FILES, expect_targets=["read_file:data.csv"])
    expect_rejected(r, p2, "subtask 1 repeats the blocked target 'data.csv' with read_file")


@case("atk_sub_short_target", "A 2-char blocked query (web_search:db, < 3 chars): a [web_search]-only step "
      "'Search the db docs' is not rejected.")
def _():
    t = (["web_search", "shell"], [wsq("db"), inf("offline")], "environmental")
    p2 = P(st("Search the db docs for the mode", ["web_search"]))
    r = cp_run(t, p2, expect_targets=["web_search:db"])
    expect_accepted(r, p2)


@case("atk_sub_three_char_target", "Boundary: a 3-char blocked query (web_search:ini) counts (3+ chars): a "
      "[web_search]-only step 'Search the ini format docs' is rejected \"... 'ini' with web_search\".")
def _():
    t = (["web_search", "shell"], [wsq("ini"), inf("offline")], "environmental")
    p2 = P(st("Search the ini format docs for the mode", ["web_search"]))
    r = cp_run(t, p2, expect_targets=["web_search:ini"])
    expect_rejected(r, p2, "subtask 1 repeats the blocked target 'ini' with web_search")


# ================================================================== E. several blocked targets
@case("ctl_multi_both_mixed", "web_search:settings.ini and read_file:settings.ini both blocked; a step naming "
      "settings.ini with [read_file, web_search, shell] is accepted; both exact calls are refused; read_file "
      "conf/settings.ini runs; accept.")
def _():
    p2 = P(st("Read settings.ini and report mode", ["read_file", "web_search", "shell"]))

    def later(body, ctx):
        acts = [wsq("settings.ini"), rf("settings.ini"), rf("conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 3)]
    r = cp_run(T_WEB_RF, p2, later=later, expect_targets=["web_search:settings.ini", "read_file:settings.ini"])
    expect_accepted(r, p2)
    expect_refused(r, "web_search", "settings.ini")
    expect_refused(r, "read_file", "settings.ini")
    expect_accept_end(r)


@case("atk_multi_pair_covers_each_other", "Per the letter: the same two targets, tools exactly [read_file, "
      "web_search]: for each target the step lists another tool -> accepted; both exact calls refused; accept via "
      "read_file conf/settings.ini.")
def _():
    p2 = P(st("Read settings.ini and report mode", ["read_file", "web_search"]))

    def later(body, ctx):
        acts = [rf("settings.ini"), wsq("settings.ini"), rf("conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 3)]
    r = cp_run(T_WEB_RF, p2, later=later, expect_targets=["web_search:settings.ini", "read_file:settings.ini"])
    expect_accepted(r, p2)
    expect_refused(r, "read_file", "settings.ini")
    expect_refused(r, "web_search", "settings.ini")
    expect_accept_end(r)


@case("atk_multi_one_single_tool", "web_search:settings.ini and glob:*.ini blocked; a step naming both with tools "
      "[glob] only: rejected for '*.ini' with glob (its only tool); settings.ini is not blamed (web_search not "
      "listed).")
def _():
    p2 = P(st("Glob *.ini to find settings.ini and report mode", ["glob"]))
    r = cp_run(T_WEB_GLOB, p2, expect_targets=["web_search:settings.ini", "glob:*.ini"])
    expect_rejected(r, p2, "subtask 1 repeats the blocked target '*.ini' with glob", absent=("with web_search",))


@case("atk_multi_shell_and_path", "shell:cat settings.ini and read_file:settings.ini blocked. Plan 2 names 'cat "
      "settings.ini' with [shell, read_file] -> rejected \"... 'cat settings.ini' with shell\"; the re-asked plan "
      "names only settings.ini with [read_file, shell] -> accepted and dispatched; accept.")
def _():
    p2 = P(st("Run cat settings.ini and report mode", ["shell", "read_file"]))
    p3 = P(st("Read settings.ini from the conf folder and report mode", ["read_file", "shell"]))
    r = cp_run(T_SH_RF, p2, after=p3, expect_targets=["shell:cat settings.ini", "read_file:settings.ini"])
    expect_rejected(r, p2, "subtask 1 repeats the blocked target 'cat settings.ini' with shell")
    disp = [s.get("intent") for s in subtasks_by_round(r).get(1, [])]
    check(disp == intents(p3), "the compliant re-asked plan was not dispatched: %s" % json.dumps(disp)[:300])
    expect_accept_end(r)


# ================================================================== F. memory MUST NOT
def remember_avoid(dd, entity, text):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTUI_")}
    home = tempfile.mkdtemp(prefix="i16home_")
    TMP.append(home)
    env["HOME"] = home
    cfgd = tempfile.mkdtemp(prefix="i16cfg_")
    TMP.append(cfgd)
    cfg = os.path.join(cfgd, "config.toml")
    open(cfg, "w").close()
    env["AGENTUI_CONFIG"] = cfg
    p = subprocess.run([H.AGENTUI, "memory", "--data-dir", dd, "remember", "--avoid", "--space", "tool:read_file",
                        "--entity", entity, text], capture_output=True, text=True, timeout=60, env=env,
                       stdin=subprocess.DEVNULL)
    check(p.returncode == 0, "inconclusive: memory remember failed: " + (p.stderr or "")[-300:])


MEM_TEXT = "never read conf/settings.ini with read_file"


@case("ctl_mem_plan_still_rejected_mixed", "Memory MUST NOT unaffected: `memory remember --avoid --space "
      "tool:read_file --entity path:conf/settings.ini`; after web_search:settings.ini is blocked, a step naming "
      "conf/settings.ini with [read_file, shell] (mixed, would pass the GGS target rule) is still rejected by the "
      "memory constraint. UNCERTAIN: assumes the memory check rejected mixed steps before the change too.")
def _():
    dd = tempfile.mkdtemp(prefix="i16dd_")
    TMP.append(dd)
    remember_avoid(dd, "path:conf/settings.ini", MEM_TEXT)
    p2 = P(st("Read conf/settings.ini and report mode", ["read_file", "shell"]))
    after = P(st("Print the mode line from the conf folder", ["shell"]))
    r = cp_run(T_WEB, p2, after=after, data_dir=dd, expect_targets=["web_search:settings.ini"])
    pr = planner_reqs(r)
    check(pr and "read_file on conf/settings.ini" in H.user_text(pr[0]),
          "inconclusive: the memory MUST NOT line is not in the first planner prompt")
    expect_rejected(r, p2, "memory says must not be done")
    ran = [c for cs in calls_by_round(r).values() for c in cs if c[0] == "read_file"
           and arg_of(c[1]) == "conf/settings.ini"]
    check(not ran, "read_file conf/settings.ini ran despite the memory constraint")


@case("ctl_mem_executor_still_refuses", "Memory MUST NOT unaffected in the executor: the same memory constraint; "
      "an accepted mixed step that does not name the path ([read_file, shell]); the executor's read_file "
      "conf/settings.ini is refused and never runs; a shell `cat conf/settings.ini` then answers.")
def _():
    dd = tempfile.mkdtemp(prefix="i16dd_")
    TMP.append(dd)
    remember_avoid(dd, "path:conf/settings.ini", MEM_TEXT)
    p2 = P(st("Report the mode value from the conf folder", ["read_file", "shell"]))

    def later(body, ctx):
        acts = [rf("conf/settings.ini"), sh("cat conf/settings.ini"), fin()]
        return acts[min(ctx["n"], 2)]
    r = cp_run(T_WEB, p2, later=later, data_dir=dd, expect_targets=["web_search:settings.ini"])
    expect_accepted(r, p2)
    rs = replies_for(r, "read_file", "conf/settings.ini")
    check(rs, "inconclusive: the read_file call was never answered")
    note("memory refusal: " + rs[0].splitlines()[0][:200])
    check(all(x.startswith("REFUSED") for x in rs), "read_file conf/settings.ini not refused: %s" % rs[0][:200])
    ran = [c for cs in calls_by_round(r).values() for c in cs if c[0] == "read_file"
           and arg_of(c[1]) == "conf/settings.ini"]
    check(not ran, "read_file conf/settings.ini ran despite the memory constraint")


# ================================================================== main
def main():
    H.AGENTUI = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "/work/adversarial/agentui-devtree15"
    subs = sys.argv[2:]
    sel = [c for c in CASES if not subs or any(s in c.__name__ for s in subs)]
    okc = 0
    t00 = time.time()
    for c in sel:
        t0 = time.time()
        H.LAST_RUNS.clear()
        OBS.clear()
        try:
            c()
            okc += 1
            print("PASS %s (%.1fs)" % (c.__name__, time.time() - t0), flush=True)
        except Fail as e:
            print("FAIL %s: %s" % (c.__name__, str(e).replace("\n", " ")[:1400]), flush=True)
        except Exception as e:
            print("FAIL %s: harness error %s: %s" % (c.__name__, type(e).__name__, str(e)[:300]), flush=True)
            traceback.print_exc(file=sys.stdout)
        for o in OBS:
            print("    observed: " + o[:900], flush=True)
        if os.environ.get("I16_VERBOSE"):
            for r in H.LAST_RUNS:
                print("   ", r.brief(), "wall=%.1f" % r.wall, flush=True)
                try:
                    print("    directives:", dbrief(directives(r)), flush=True)
                except Exception:
                    pass
        for d in TMP:
            shutil.rmtree(d, ignore_errors=True)
        TMP.clear()
    print("total: %d/%d (%.0fs)" % (okc, len(sel), time.time() - t00))


if __name__ == "__main__":
    main()
