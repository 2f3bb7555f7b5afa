#!/usr/bin/env python3
"""Black-box cases, part 14: break_symmetry / change_approach block shell COMMANDS (shell:<cmd>), not the shell tool.

usage: python3 run_cases14.py /path/to/agentui [case-name-substring ...]

Claims under test (change description, paraphrased):
 1. On a logical failure, break_symmetry / change_approach never put `shell` into blocked_tools. Each distinct shell
    command the failing steps ran becomes a blocked target `shell:<command exactly>`, in call order, at most 6
    (change_approach at low urgency: only shell calls that failed, e.g. non-zero exit). Other tools (read_file, glob,
    file_search, write_file, web_search) are still blocked as tools.
 2. Blocked targets reach (a) the planner prompt as a MUST NOT line `retrying shell:<command>`, (b) the plan
    validator: a step whose intent or context contains a blocked command (3+ chars), with shell among its tools or no
    tools listed, is rejected and the planner re-asked with "subtask N repeats the blocked target '<command>' with
    shell", (c) the executor: a shell call with exactly that command is refused (not run), "blocked for this task".
 3. The shell stays in the executor's tool enum after such a directive.
 4. break_symmetry: a plan with the same words as the last one was rejected ("the planner found no plan unlike the
    one that failed") unless a tool was newly blocked; now a newly blocked command also counts (the same steps may
    run again once).
 5. Passed steps contribute no blocked commands; a directive when every step passed and only the task check failed
    blocks nothing.

Observation (black box): PlanDirective envelopes in data-dir/recordings/*.bus.jsonl (directive, blocked_tools,
blocked_targets); the planner prompts and re-asks the fake server receives; executor conversations (a refused call
is answered "REFUSED: ... blocked for this task"); ExecutionResult tool_calls (only calls that ran); side-effect
files in the workspace (a marker line each time a command really runs); FinalResult/exit code; stderr.
Global invariants checked on every run: no Python traceback on stderr; `shell` never in blocked_tools of
break_symmetry/change_approach; no success when the scripted validators always reject; the seeded workspace files
are left unchanged (no scripted command touches them).
ctl_* = the change must act; atk_* = attacks. Docstrings marked UNCERTAIN go beyond the description.
I14_VERBOSE=1 prints each run's rc/directive/summary and its directives.
"""
import glob
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
from harness import plan, Script, run_agent, passes, meta_pass  # noqa: E402

CASES = []
TMP = []
NOPLAN = "the planner found no plan unlike the one that failed"
OBS = []  # observations printed after a case


class Fail(Exception):
    pass


def check(c, m):
    if not c:
        raise Fail(m)


def note(m):
    OBS.append(m)


def sh(cmd):
    return {"tool": "shell", "args": {"command": cmd}}


def fin(o="3"):
    return {"tool": "finish", "output": o}


def inf(o="giving up"):
    return {"tool": "infeasible", "output": o}


def vfail(body, k):
    return {"verdicts": [{"criterion": "", "verdict": "fail", "failure_class": "logical",
                          "evidence": "the approach is wrong", "what_to_do": "use another method"}] * k}


def mfail(body, k):
    return {"merged_output": "wrong", "summary": "wrong answer",
            "verdicts": [{"verdict": "fail", "failure_class": "logical", "evidence": "the answer is wrong"}] * k}


def mkws(files=None):
    base = tempfile.mkdtemp(prefix="i14c_")
    TMP.append(base)
    ws = os.path.join(base, "ws")
    os.makedirs(ws)
    for name, c in (files or {}).items():
        p = os.path.join(ws, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", newline="", encoding="utf-8") as f:
            f.write(c)
    return ws


NOTES = {"notes.txt": "a\nb\nc\n"}


# ------------------------------------------------------------------ observation helpers
def envelopes(r):
    out = []
    for f in sorted(glob.glob(os.path.join(r.dd, "recordings", "*.bus.jsonl"))):
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


def first_dir(r):
    ds = directives(r)
    check(ds, "inconclusive: no PlanDirective recorded: " + r.brief())
    return ds[0]


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


def results_by_round(r):
    envs = envelopes(r)
    sid_round = {}
    for m in manifests(r):
        for i in m.get("subtask_ids") or []:
            sid_round[i] = m.get("round")
    out = {}
    for e in envs:
        if e["type"] == "ExecutionResult":
            rd = sid_round.get(e["payload"].get("subtask_id"))
            out.setdefault(rd, []).append(e["payload"])
    return out


def ran_cmds(r, rnd):
    """shell commands that really ran (recorded tool_calls) in dispatch round rnd."""
    return [c.get("args", {}).get("command") for p in results_by_round(r).get(rnd, [])
            for c in p.get("tool_calls") or [] if c.get("tool") == "shell"]


def planner_reqs(r):
    return r.reqs("PlanOut")


def all_text(b):
    return H.FakeLLM.all_text(b)


def exec_by_round(r):
    """ExecutorAction requests grouped by the number of planner calls before them (1 = first plan)."""
    out, plans = {}, 0
    for b in r.srv.requests:
        n = H.schema_name(b)
        if n == "PlanOut":
            plans += 1
        elif n == "ExecutorAction":
            out.setdefault(plans, []).append(b)
    return out


def exec_results(reqs):
    """(command, result-first-line) pairs for shell calls seen in executor conversations (deduplicated)."""
    seen = {}
    for b in reqs:
        msgs = b.get("messages") or []
        for i, m in enumerate(msgs):
            if m.get("role") != "assistant":
                continue
            try:
                d = json.loads(m.get("content") or "")
            except Exception:
                continue
            if not isinstance(d, dict) or d.get("tool") != "shell":
                continue
            cmd = (d.get("args") or {}).get("command")
            nxt = msgs[i + 1].get("content") if i + 1 < len(msgs) else ""
            nxt = nxt if isinstance(nxt, str) else json.dumps(nxt)
            key = (json.dumps(b.get("messages")[:2])[:300], i, cmd)
            seen[key] = (cmd, (nxt or "").strip()[:8000])
    return list(seen.values())


def refused(pairs, cmd):
    return [p for p in pairs if p[0] == cmd and p[1].startswith("REFUSED") and "blocked for this task" in p[1]]


def not_refused(pairs, cmd):
    return [p for p in pairs if p[0] == cmd and not p[1].startswith("REFUSED")]


def tool_enum(b):
    try:
        return H.FakeLLM.schema(b)["properties"]["tool"]["enum"]
    except Exception:
        return None


def mustnot_lines(body):
    t = H.user_text(body)
    m = re.search(r"^MUST NOT:\n((?:- .*\n?)+)", t, re.M)
    return [ln[2:] for ln in m.group(1).split("\n") if ln.startswith("- ")] if m else []


def marker_count(ws, name="ran.log", word=None):
    p = os.path.join(ws, name)
    if not os.path.exists(p):
        return 0
    with open(p, errors="replace") as f:
        lines = f.read().splitlines()
    return len([x for x in lines if word is None or x.strip() == word])


# ------------------------------------------------------------------ runner with global invariants
def run(goal, plan_obj, executor, validator=vfail, meta=None, planner=None, files=None, always_reject=True,
        timeout=60):
    ws = mkws(NOTES if files is None else files)
    s = Script(goal, plan_obj, executor=executor, validator=validator, meta=meta or meta_pass("3", "3"),
               planner=planner)
    r = run_agent(s, goal, keep_ws=ws, extra_args=["--yes"], timeout=timeout)
    TMP.append(r.dd)
    check(r.rc != "timeout", "agentui run timed out after %.0fs" % r.wall)
    check("Traceback (most recent call last)" not in (r.err or ""),
          "Python traceback on stderr: " + (r.err or "")[-900:])
    for d in directives(r):
        if d.get("directive") in ("break_symmetry", "change_approach"):
            check("shell" not in (d.get("blocked_tools") or []),
                  "shell put into blocked_tools by %s: %s" % (d.get("directive"), dbrief([d])))
    if always_reject:
        check(not r.success(), "validators always rejected, yet the task ended in success: " + r.brief())
    for name, content in (NOTES if files is None else files).items():
        p = os.path.join(ws, name)
        check(os.path.exists(p), "workspace file %s was deleted (no scripted command deletes it)" % name)
        with open(p, errors="replace") as fh:
            check(fh.read() == content, "workspace file %s was changed (no scripted command writes it)" % name)
    r.ws = ws
    return r


def st(intent, criteria=("the count is printed",), tools=("shell",), seq=None, context=""):
    d = {"intent": intent, "criteria": list(criteria), "tools": list(tools), "context": context}
    if seq is not None:
        d["sequence"] = seq
    return d


G1 = "Print the line count of notes.txt."
P1 = plan(["the count is right"], [st("Print the line count of notes.txt")])


def one_step_exec(round1, later=None):
    """round1: list of actions for every attempt of round 1 (planner call 1); later(ctx) -> list for later rounds."""
    def f(body, ctx):
        if ctx["round"] <= 1:
            acts = round1
        else:
            acts = later(ctx) if later else [inf("giving up")]
        a = acts[min(ctx["n"], len(acts) - 1)]
        return a(body, ctx) if callable(a) else a
    return f


def case(name, doc):
    def deco(fn):
        fn.__name__ = name
        fn.__doc__ = doc
        CASES.append(fn)
        return fn
    return deco


def bs_blocks(cmds, expect=None, retry=None, round2_extra=(), files=None, marker=None):
    """Round 1: one step runs cmds then finishes; validators fail (logical) -> first directive break_symmetry.
    Round 2: the executor runs `retry` commands (default: cmds) then finishes; later rounds give up."""
    retry = list(cmds) if retry is None else retry
    r = run(G1, P1, one_step_exec([sh(c) for c in cmds] + [fin()],
                                  lambda ctx: ([sh(c) for c in retry] + list(round2_extra) + [fin()])
                                  if ctx["round"] == 2 else [inf()]), files=files)
    d = first_dir(r)
    check(d.get("directive") == "break_symmetry", "inconclusive: first directive is not break_symmetry: "
          + dbrief(directives(r)))
    ran0 = ran_cmds(r, 0)
    check(all(c in ran0 for c in cmds), "inconclusive: round 1 did not run every scripted command: ran %s"
          % json.dumps(ran0, ensure_ascii=False)[:400])
    exp = expect if expect is not None else ["shell:" + c for c in dict.fromkeys(cmds)]
    check(d.get("blocked_targets") == exp, "blocked_targets differ.\n  expected %s\n  observed %s"
          % (json.dumps(exp, ensure_ascii=False)[:700], json.dumps(d.get("blocked_targets"), ensure_ascii=False)[:700]))
    return r, d


def expect_mustnot(r, targets, idx=1):
    pr = planner_reqs(r)
    check(len(pr) > idx, "inconclusive: no replan planner call")
    lines = mustnot_lines(pr[idx])
    t = H.user_text(pr[idx])
    for tg in targets:
        check(("retrying " + tg) in t, "planner replan prompt lacks MUST NOT 'retrying %s'; MUST NOT lines: %s"
              % (tg[:200], json.dumps(lines, ensure_ascii=False)[:600]))
    m = re.search(r"^Tools: (.*)$", t, re.M)
    check(m and "shell" in m.group(1), "shell no longer offered to the planner: " + (m.group(0) if m else "no Tools"))


def expect_refused_not_run(r, cmd, rnd_exec=2, dispatch_round=1):
    pairs = exec_results(exec_by_round(r).get(rnd_exec, []))
    check(pairs, "inconclusive: no shell call seen in the round-2 executor conversations")
    rf = refused(pairs, cmd)
    nr = not_refused(pairs, cmd)
    check(not nr, "blocked command was NOT refused in round 2; result: %s" % json.dumps(nr[:1], ensure_ascii=False)[:600])
    check(rf, "no REFUSED '... blocked for this task' answer for the blocked command; seen: %s"
          % json.dumps(pairs[:3], ensure_ascii=False)[:600])
    ran = ran_cmds(r, dispatch_round)
    check(cmd not in ran, "blocked command was recorded as run in round 2: " + json.dumps(ran, ensure_ascii=False)[:400])


def expect_shell_offered(r, rnd_exec=2):
    reqs = exec_by_round(r).get(rnd_exec, [])
    check(reqs, "inconclusive: no executor request in round 2")
    for b in reqs:
        e = tool_enum(b)
        check(e and "shell" in e, "shell missing from the executor's tool enum after the directive: %s" % e)


# ================================================================== A. break_symmetry targets
@case("ctl_bs_single_command", "One failing step ran `wc -l notes.txt`: break_symmetry blocks shell:wc -l notes.txt "
      "(shell not a blocked tool), MUST NOT line in the replan prompt, shell still offered to planner and executor, "
      "and the exact retry in round 2 is refused and does not run.")
def _():
    r, d = bs_blocks(["wc -l notes.txt"])
    check(d.get("blocked_tools") == [], "blocked_tools not empty: " + dbrief([d]))
    expect_mustnot(r, ["shell:wc -l notes.txt"])
    expect_shell_offered(r)
    expect_refused_not_run(r, "wc -l notes.txt")


@case("atk_bs_quotes", "Command with single and double quotes and a backslash: the target is the command exactly, "
      "the MUST NOT line shows it, the exact retry is refused and does not run (marker file).")
def _():
    c = "echo \"it's a \\\"test\\\"\" 'x y' >> ran.log; grep -c 'a' \"notes.txt\""
    r, d = bs_blocks([c])
    expect_mustnot(r, ["shell:" + c])
    n1 = len(ran_cmds(r, 0))
    expect_refused_not_run(r, c)
    check(marker_count(r.ws) == n1, "marker lines %d != runs recorded in round 1 (%d): the command ran again"
          % (marker_count(r.ws), n1))


@case("atk_bs_pipes_and_redirects", "A pipeline with redirects, &&, || and $(...) is one target, exact.")
def _():
    c = "cat notes.txt | sort -r | uniq -c 2>/dev/null && echo \"$(wc -l < notes.txt)\" >> ran.log || true"
    r, d = bs_blocks([c])
    expect_mustnot(r, ["shell:" + c])
    n1 = len(ran_cmds(r, 0))
    expect_refused_not_run(r, c)
    check(marker_count(r.ws) == n1, "the refused pipeline ran again (marker %d vs %d)" % (marker_count(r.ws), n1))


@case("atk_bs_unicode", "Unicode command (accents, CJK, emoji, em dash): exact target, MUST NOT line, refusal.")
def _():
    c = "echo 'héllo wörld — 日本語 ✓ 🚀' >> ran.log"
    r, d = bs_blocks([c])
    expect_mustnot(r, ["shell:" + c])
    n1 = len(ran_cmds(r, 0))
    expect_refused_not_run(r, c)
    check(marker_count(r.ws) == n1, "the refused unicode command ran again")


def long_cmd(n, salt=""):
    """~8n-char echo of distinct hex words (a repetitive 'xxxx' command is cut by the executor's runaway guard
    before it runs, which makes such a case inconclusive)."""
    return "echo " + " ".join(hashlib.md5((salt + str(i)).encode()).hexdigest()[:7] for i in range(n)) + " >> ran.log"


@case("atk_bs_long_command", "A 2,400-character command (distinct words): the blocked target is the whole command exactly (not cut), "
      "and the exact retry is refused and does not run.")
def _():
    c = long_cmd(300)
    check(len(c) > 2000, "harness: command too short")
    r, d = bs_blocks([c])
    n1 = len(ran_cmds(r, 0))
    expect_refused_not_run(r, c)
    check(marker_count(r.ws) == n1, "the refused long command ran again")


@case("atk_bs_long_command_prompt", "UNCERTAIN (display length is not specified): the 2,400-char blocked command "
      "appears in full in the planner's MUST NOT line.")
def _():
    c = long_cmd(300, salt="y")
    r, d = bs_blocks([c])
    expect_mustnot(r, ["shell:" + c])


@case("atk_bs_more_than_six", "Eight distinct commands (the executor step limit is 8) in one failing step: at most 6 targets, the first six in "
      "call order.")
def _():
    cmds = ["echo c%d >> ran.log" % i for i in range(1, 9)]
    r, d = bs_blocks(cmds, expect=["shell:" + c for c in cmds[:6]])
    expect_mustnot(r, ["shell:" + c for c in cmds[:6]])
    lines = mustnot_lines(planner_reqs(r)[1])
    check(not any("echo c7" in x for x in lines), "7th command in MUST NOT: " + json.dumps(lines))


@case("atk_bs_duplicates_distinct", "A, B, A, C, B: targets are the distinct commands in first-call order [A, B, C].")
def _():
    a, b, c = "echo A", "echo B >> ran.log", "wc -c notes.txt"
    r, d = bs_blocks([a, b, a, c, b], expect=["shell:" + a, "shell:" + b, "shell:" + c])


@case("atk_bs_multiline_command", "A command with an embedded newline: one target, exact (newline kept); exact "
      "retry refused and not run.")
def _():
    c = "echo first >> ran.log\necho second >> ran.log"
    r, d = bs_blocks([c])
    n1 = len(ran_cmds(r, 0))
    expect_refused_not_run(r, c)
    check(marker_count(r.ws) == 2 * n1, "the refused multi-line command ran again")


@case("atk_bs_failed_and_succeeded_calls", "break_symmetry blocks every distinct command of the failing step, the "
      "successful (exit 0) and the failed (exit 1) ones, in call order.")
def _():
    r, d = bs_blocks(["echo ok >> ran.log", "ls no_such_file_here", "cat notes.txt"])


@case("atk_bs_whitespace_variant_runs", "Claim is exact match: round 2 runs `wc  -l notes.txt` (two spaces) and "
      "`wc -l notes.txt ` (trailing space) after `wc -l notes.txt` was blocked. Expected (per claim): these are not "
      "refused and run. The observation is reported either way.")
def _():
    base = "wc -l notes.txt"
    v1, v2 = "wc  -l notes.txt", "wc -l notes.txt "
    r, d = bs_blocks([base], retry=[v1, v2])
    pairs = exec_results(exec_by_round(r).get(2, []))
    obs = {v: [p[1][:80] for p in pairs if p[0] == v] for v in (v1, v2)}
    note("whitespace variants in round 2: %s" % json.dumps(obs))
    check(not refused(pairs, v1) and not refused(pairs, v2),
          "a whitespace variant was refused although the claim is exact match: %s" % json.dumps(obs))
    ran = ran_cmds(r, 1)
    check(v1 in ran and v2 in ran, "whitespace variants did not run: ran=%s" % json.dumps(ran))


@case("atk_bs_prefix_command_not_refused", "Blocked `ls`; round 2 runs `ls -la` (contains it, not equal): not refused.")
def _():
    r, d = bs_blocks(["ls"], retry=["ls -la", "ls"])
    pairs = exec_results(exec_by_round(r).get(2, []))
    check(not refused(pairs, "ls -la"), "`ls -la` refused though only `ls` is blocked: " + json.dumps(pairs)[:400])
    check(refused(pairs, "ls"), "exact `ls` not refused: " + json.dumps(pairs)[:400])


@case("atk_bs_leading_trailing_space_target", "UNCERTAIN: a command sent with leading/trailing spaces "
      "'  wc -l notes.txt  ' is blocked as exactly that string (or trimmed); the same string retried is refused.")
def _():
    c = "  wc -l notes.txt  "
    r = run(G1, P1, one_step_exec([sh(c), fin()], lambda ctx: [sh(c), fin()] if ctx["round"] == 2 else [inf()]))
    d = first_dir(r)
    note("target for padded command: %s" % json.dumps(d.get("blocked_targets")))
    check(d.get("blocked_targets") in (["shell:" + c], ["shell:" + c.strip()]),
          "unexpected target for a padded command: " + dbrief([d]))
    expect_refused_not_run(r, c)


# ================================================================== mixed tools
GM = "Print the line count of notes.txt."
PM = plan(["the count is right"], [st("Print the line count of notes.txt",
                                      tools=("read_file", "glob", "write_file", "file_search", "shell"))])


@case("ctl_bs_mixed_tools", "Failing step used read_file, glob, write_file, file_search and shell: the four tools "
      "are blocked as tools, shell only as its command; round-2 executor enum keeps shell, drops the blocked tools.")
def _():
    acts = [{"tool": "read_file", "args": {"path": "notes.txt"}}, {"tool": "glob", "args": {"pattern": "*.txt"}},
            {"tool": "write_file", "args": {"path": "o.txt", "content": "3\n"}},
            {"tool": "file_search", "args": {"query": "a"}}, sh("wc -l notes.txt"), fin()]
    r = run(GM, PM, one_step_exec(acts, lambda ctx: [sh("wc -l notes.txt"), fin()] if ctx["round"] == 2 else [inf()]))
    d = first_dir(r)
    check(d.get("directive") == "break_symmetry", "inconclusive: " + dbrief([d]))
    check(sorted(d.get("blocked_tools") or []) == ["file_search", "glob", "read_file", "write_file"],
          "blocked_tools: " + dbrief([d]))
    check(d.get("blocked_targets") == ["shell:wc -l notes.txt"], "blocked_targets: " + dbrief([d]))
    expect_mustnot(r, ["shell:wc -l notes.txt"])
    t = H.user_text(planner_reqs(r)[1])
    for tool in ("read_file", "glob"):
        check(("tool " + tool) in t, "MUST NOT lacks 'tool %s'" % tool)
    expect_shell_offered(r)
    for b in exec_by_round(r).get(2, []):
        e = tool_enum(b) or []
        check("read_file" not in e, "blocked read_file still offered to the executor: %s" % e)
    expect_refused_not_run(r, "wc -l notes.txt")


@case("atk_bs_read_file_only", "Failing step used only read_file: blocked_tools [read_file], no shell target, "
      "shell still offered in round 2.")
def _():
    p = plan(["the count is right"], [st("Print the line count of notes.txt", tools=("read_file", "shell"))])
    r = run(GM, p, one_step_exec([{"tool": "read_file", "args": {"path": "notes.txt"}}, fin()],
                                 lambda ctx: [sh("wc -l notes.txt"), fin()] if ctx["round"] == 2 else [inf()]))
    d = first_dir(r)
    check(d.get("directive") == "break_symmetry", "inconclusive: " + dbrief([d]))
    check(d.get("blocked_tools") == ["read_file"] and d.get("blocked_targets") == [], "observed " + dbrief([d]))
    expect_shell_offered(r)
    pairs = exec_results(exec_by_round(r).get(2, []))
    check(not refused(pairs, "wc -l notes.txt"), "an unblocked command was refused")


@case("atk_bs_web_search_blocked_as_tool", "Failing step used web_search and shell: web_search is blocked as a tool "
      "(as before), shell only as its command.")
def _():
    p = plan(["the count is right"], [st("Print the line count of notes.txt", tools=("web_search", "shell"))])
    r = run(GM, p, one_step_exec([{"tool": "web_search", "args": {"query": "wc line count"}}, sh("wc -l notes.txt"),
                                  fin()]))
    d = first_dir(r)
    note("directive: " + dbrief([d]))
    ran = [c.get("tool") for pl in results_by_round(r).get(0, []) for c in pl.get("tool_calls") or []]
    check("web_search" in ran, "inconclusive: web_search call not recorded: %s" % ran)
    check(d.get("directive") == "break_symmetry", "inconclusive: " + dbrief([d]))
    check(d.get("blocked_tools") == ["web_search"] and d.get("blocked_targets") == ["shell:wc -l notes.txt"],
          "observed " + dbrief([d]))


# ================================================================== passed steps (claim 5)
G3 = "Print the line, word and char counts of notes.txt."


def p3(tools=("shell",)):
    return plan(["the counts are right"], [st("Print the %s count of notes.txt" % w, tools=tools, seq=1)
                                           for w in ("line", "word", "char")])


def by_word(ctx):
    m = re.search(r"Print the (\w+) count", ctx["subtask"])
    return m.group(1) if m else "?"


def val_pass_words(words_by_round):
    """Validator: the subtasks whose word is in words_by_round[round] pass (grounded), others fail logically."""
    def f(body, k):
        t = H.user_text(body)
        m = re.search(r"\(try (\d+)\)", t)
        rnd = int(m.group(1)) if m else 1
        ws = words_by_round.get(rnd, words_by_round.get("*", ()))
        if any(("Print the %s count" % w) in t for w in ws):
            return passes()(body, k)
        return vfail(body, k)
    return f


@case("ctl_bs_passed_step_contributes_nothing", "3 parallel steps; the 'line' step passes (it ran a failing ls and an "
      "ok echo), the other two fail with ok calls only: the first directive (break_symmetry expected) blocks only the "
      "failing steps' commands, in call order.")
def _():
    def ex(body, ctx):
        w = by_word(ctx)
        if ctx["round"] > 1:
            acts = [inf()]
        elif w == "line":
            acts = [sh("ls missing_line"), sh("echo 3 # line"), fin("3")]
        else:
            acts = [sh("echo 3 # %s" % w), sh("cat notes.txt # %s" % w), fin("3")]
        return acts[min(ctx["n"], len(acts) - 1)]
    r = run(G3, p3(), ex, validator=val_pass_words({1: ["line"]}))
    d = first_dir(r)
    note("first directive: " + dbrief([d]))
    check(d.get("directive") in ("break_symmetry", "change_approach"), "inconclusive: " + dbrief([d]))
    tg = d.get("blocked_targets") or []
    check(not any("line" in x for x in tg), "a passed step's command was blocked: " + dbrief([d]))
    if d.get("directive") == "break_symmetry":
        check(tg == ["shell:echo 3 # word", "shell:cat notes.txt # word", "shell:echo 3 # char",
                     "shell:cat notes.txt # char"], "targets of the failing steps (call order) differ: " + dbrief([d]))


@case("atk_passed_step_failed_call_change_path", "Observation companion: passed 'line' step ran a failing ls, the "
      "failing steps ran ok echo + failing ls; whatever the directive, no command of the passed step is blocked and "
      "shell is not a blocked tool.")
def _():
    def ex(body, ctx):
        w = by_word(ctx)
        acts = [sh("echo 3 # %s" % w), sh("ls missing_%s" % w), fin("3")] if ctx["round"] <= 1 else [inf()]
        return acts[min(ctx["n"], len(acts) - 1)]
    r = run(G3, p3(), ex, validator=val_pass_words({1: ["line"]}))
    d = first_dir(r)
    note("first directive: " + dbrief([d]))
    check(not any("line" in x for x in d.get("blocked_targets") or []), "a passed step's command was blocked: "
          + dbrief([d]))


def ca_run(round2_acts, tools=("shell",), files=None, round3_acts=None, planner=None):
    """Round 1: all three steps fail (break_symmetry). Round 2: 'line' passes, the others fail -> improving ->
    expect change_approach as the SECOND directive. round2_acts(w) -> actions of step w in round 2."""
    def ex(body, ctx):
        w = by_word(ctx)
        if ctx["round"] <= 1:
            acts = [sh("echo 3 # %s r1" % w), fin("3")]
        elif ctx["round"] == 2:
            acts = round2_acts(w)
        elif ctx["round"] == 3 and round3_acts:
            acts = round3_acts(w)
        else:
            acts = [inf()]
        return acts[min(ctx["n"], len(acts) - 1)]
    r = run(G3, p3(tools), ex, validator=val_pass_words({1: [], 2: ["line"], "*": []}), files=files,
            planner=planner)
    ds = directives(r)
    check(len(ds) >= 2, "inconclusive: fewer than 2 directives: " + dbrief(ds))
    check(ds[1].get("directive") == "change_approach", "inconclusive: second directive is not change_approach: "
          + dbrief(ds))
    return r, ds[1]


@case("ctl_ca_low_only_failed_calls", "change_approach (low urgency): failing steps each ran a failing `ls` and an "
      "ok echo; only the failed calls are blocked (in call order); the passed step's failed ls is not.")
def _():
    r, d = ca_run(lambda w: [sh("ls nofile_%s_2" % w), sh("echo 3 # %s r2" % w), fin("3")])
    check(d.get("blocked_targets") == ["shell:ls nofile_word_2", "shell:ls nofile_char_2"],
          "observed " + dbrief([d]))
    check(d.get("blocked_tools") == [], "observed " + dbrief([d]))
    expect_mustnot(r, ["shell:ls nofile_word_2", "shell:ls nofile_char_2"], idx=2)
    expect_shell_offered(r, rnd_exec=3)


@case("ctl_ca_executor_refuses_failed_command", "After change_approach blocked `ls nofile_word_2`, the round-3 "
      "executor's exact retry is refused and does not run; the ok echo of round 2 (not blocked) is not refused.")
def _():
    r, d = ca_run(lambda w: [sh("ls nofile_%s_2" % w), sh("echo 3 # %s r2" % w), fin("3")],
                  round3_acts=lambda w: [sh("ls nofile_word_2"), sh("echo 3 # word r2"), fin("3")])
    check("shell:ls nofile_word_2" in (d.get("blocked_targets") or []), "inconclusive: " + dbrief([d]))
    pairs = exec_results(exec_by_round(r).get(3, []))
    check(refused(pairs, "ls nofile_word_2"), "exact retry not refused: " + json.dumps(pairs[:2])[:500])
    check(not refused(pairs, "echo 3 # word r2"), "an unblocked ok command was refused")
    check("ls nofile_word_2" not in ran_cmds(r, 2), "blocked command ran in round 3")


@case("atk_ca_plan_validator", "Targets of change_approach reach the plan validator too: the round-3 plan's step "
      "intent contains the blocked `ls nofile_word_2` with shell -> re-ask \"subtask 1 repeats the blocked target "
      "'ls nofile_word_2' with shell\".")
def _():
    def planner(body, n):
        p = p3()
        if n == 2:
            for s_ in p["subtasks"]:
                s_["intent"] += " (try 2)"
            return p
        if n == 3:
            return plan(["the counts are right"], [st("Print the word count (try 3): first run ls nofile_word_2")])
        if n >= 4:
            return plan(["the counts are right"], [st("Print the word count (try 3) with awk")])
        return p
    r, d = ca_run(lambda w: [sh("ls nofile_%s_2" % w), sh("echo 3 # %s r2" % w), fin("3")], planner=planner)
    check("shell:ls nofile_word_2" in (d.get("blocked_targets") or []), "inconclusive: " + dbrief([d]))
    pr = planner_reqs(r)
    want = "subtask 1 repeats the blocked target 'ls nofile_word_2' with shell"
    check(len(pr) >= 4, "no re-ask after the violating plan: %d planner calls; %s" % (len(pr), r.brief()[:300]))
    check(want in all_text(pr[3]), "re-ask lacks %r: %s" % (want, json.dumps(all_text(pr[3])[-500:])))


@case("atk_ca_all_calls_ok_blocks_nothing", "change_approach (low urgency) when every shell call exited 0: no "
      "target, no blocked tool, no 'retrying shell:' line in the planner prompt.")
def _():
    r, d = ca_run(lambda w: [sh("echo 3 # %s r2" % w), fin("3")])
    check(d.get("blocked_targets") == [] and d.get("blocked_tools") == [], "observed " + dbrief([d]))
    t = H.user_text(planner_reqs(r)[2])
    check("retrying shell:" not in t, "planner prompt still has a retrying shell line: "
          + json.dumps(mustnot_lines(planner_reqs(r)[2]))[:400])


@case("atk_ca_failed_read_file_blocked_tool", "change_approach: a failing step's read_file of a missing file "
      "failed; read_file is blocked as a tool (as before), shell is not and its ok call not targeted.")
def _():
    r, d = ca_run(lambda w: [{"tool": "read_file", "args": {"path": "missing_%s.txt" % w}},
                             sh("echo 3 # %s r2" % w), fin("3")], tools=("read_file", "shell"))
    res = results_by_round(r).get(1, [])
    rf = [c for p in res for c in p.get("tool_calls") or [] if c.get("tool") == "read_file"]
    note("round-2 read_file calls: %s" % json.dumps([(c.get("target"), c.get("ok"), c.get("error")) for c in rf])[:300])
    check(rf and not all(c.get("ok") for c in rf), "inconclusive: read_file of a missing file did not fail")
    check(d.get("blocked_tools") == ["read_file"], "observed " + dbrief([d]))
    check(d.get("blocked_targets") == [], "observed " + dbrief([d]))


@case("atk_ca_same_calls_vs_bs", "The same round shape under break_symmetry (round 1) blocks the ok commands too, "
      "under change_approach (round 2) only the failed one: compare both directives of one run.")
def _():
    def ex(body, ctx):
        w = by_word(ctx)
        if ctx["round"] <= 2:
            acts = [sh("ls nofile_%s_%d" % (w, ctx["round"])), sh("echo 3 # %s r%d" % (w, ctx["round"])), fin("3")]
        else:
            acts = [inf()]
        return acts[min(ctx["n"], len(acts) - 1)]
    r = run(G3, p3(), ex, validator=val_pass_words({1: [], 2: ["line"], "*": []}))
    ds = directives(r)
    check(len(ds) >= 2, "inconclusive: " + dbrief(ds))
    note("directives: " + dbrief(ds[:2]))
    d0, d1 = ds[0], ds[1]
    check(d0.get("directive") == "break_symmetry" and "shell:echo 3 # line r1" in (d0.get("blocked_targets") or []),
          "break_symmetry did not block the ok echo: " + dbrief([d0]))
    if d1.get("directive") == "change_approach":
        check(all(x.startswith("shell:ls ") for x in d1.get("blocked_targets") or []), "change_approach (low) "
              "blocked an ok call: " + dbrief([d1]))
    else:
        note("second directive was %s (not change_approach); only break_symmetry part checked" % d1.get("directive"))


@case("ctl_task_check_only_failed_blocks_nothing", "Every step passes, only the final task check (R4b) fails "
      "logically: the directive blocks no command and no tool; no 'retrying shell:' line; the same command is not "
      "refused in the next round.")
def _():
    g = "Print the first line of notes.txt in upper case."
    c = "head -n 1 notes.txt | tr a-z A-Z"
    p = plan(["the upper-cased first line is printed"], [st("Print the first line of notes.txt in upper case",
                                                           criteria=["the upper-cased line is printed"])])

    def ex(body, ctx):
        acts = [sh(c), fin("A")] if ctx["round"] <= 2 else [inf()]
        return acts[min(ctx["n"], len(acts) - 1)]
    r = run(g, p, ex, validator=passes(), meta=mfail, files={"notes.txt": "alpha\nbeta\n"})
    ds = directives(r)
    check(ds, "inconclusive: no directive: " + r.brief())
    note("directives: " + dbrief(ds[:2]))
    d = ds[0]
    check(d.get("blocked_targets") == [] and d.get("blocked_tools") == [], "blocked something: " + dbrief([d]))
    pr = planner_reqs(r)
    check(len(pr) > 1 and "retrying shell:" not in H.user_text(pr[1]), "MUST NOT retrying line present: "
          + json.dumps(mustnot_lines(pr[1]) if len(pr) > 1 else None))
    pairs = exec_results(exec_by_round(r).get(2, []))
    check(not refused(pairs, c), "the command was refused though nothing was blocked")


@case("atk_r4b_reject_not_overridden", "UNCERTAIN (not part of this change; the brief's invariant): every step passes "
      "R4a, R4b (task check) rejects the answer '3' for a line count logically; the run must not end in accept/exit "
      "0 for an answer the scripted validators rejected.")
def _():
    p = plan(["the count is right"], [st("Print the line count of notes.txt")])

    def ex(body, ctx):
        acts = [sh("wc -l notes.txt"), fin("3")] if ctx["round"] <= 2 else [inf()]
        return acts[min(ctx["n"], len(acts) - 1)]
    r = run(G1, p, ex, validator=passes(), meta=mfail)
    check(r.rc != 0 and r.directive != "accept", "accepted: " + r.brief())


# ================================================================== plan validator (claim 2b)
def pv_run(plan2, clean=None, blocked_cmd="wc -l notes.txt", later=None):
    """Round 1 runs blocked_cmd and fails -> break_symmetry. Planner call 2 returns plan2; any later call returns
    `clean` (default: a step with no blocked command)."""
    clean = clean or plan(["the count is right"], [st("Count the lines using awk 'END{print NR}' notes.txt")])

    def planner(body, n):
        if n == 1:
            return P1
        if n == 2:
            return plan2
        return clean
    r = run(G1, P1, one_step_exec([sh(blocked_cmd), fin()], later), planner=planner)
    d = first_dir(r)
    check(d.get("directive") == "break_symmetry" and ("shell:" + blocked_cmd) in (d.get("blocked_targets") or []),
          "inconclusive: " + dbrief([d]))
    return r


def reask_text(r):
    pr = planner_reqs(r)
    return [all_text(b) for b in pr[2:]]


def expect_reask(r, n, cmd, strict=True):
    """strict: the re-ask holds the exact text "subtask N repeats the blocked target '<cmd>' with shell";
    loose: it holds "subtask N repeats the blocked target " and "with shell" (quoting of the command not checked)."""
    want = "subtask %d repeats the blocked target '%s' with shell" % (n, cmd)
    texts = reask_text(r)
    check(texts, "the plan was not rejected: no further planner call after the replan; round-1 dispatch: %s"
          % json.dumps([s.get("intent") for s in subtasks_by_round(r).get(1, [])])[:400])
    m = re.search(r"subtask \d+ repeats the blocked target .*? with shell", texts[0])
    note("re-ask says: " + (m.group(0) if m else "(no such sentence)"))
    if strict:
        check(want in texts[0], "the planner re-ask lacks %s; re-ask tail: %s"
              % (json.dumps(want, ensure_ascii=False), json.dumps(texts[0][-300:], ensure_ascii=False)))
    else:
        check(m and m.group(0).startswith("subtask %d " % n), "no rejection sentence for subtask %d; tail: %s"
              % (n, json.dumps(texts[0][-300:], ensure_ascii=False)))
    disp = [s.get("intent") for s in subtasks_by_round(r).get(1, [])]
    check(not any(cmd in (x or "") for x in disp), "the rejected plan was dispatched: " + json.dumps(disp)[:300])


def expect_no_reask(r, plan2):
    texts = reask_text(r)
    intents = [s["intent"] for s in plan2["subtasks"]]
    disp = [s.get("intent") for s in subtasks_by_round(r).get(1, [])]
    if texts:
        check("repeats the blocked target" not in texts[0], "plan rejected: " + json.dumps(texts[0][-400:]))
    check(disp[:len(intents)] == intents, "the plan was not dispatched as written: %s" % json.dumps(disp)[:400])


@case("ctl_pv_intent_contains_blocked", "Replan step intent contains the blocked command, tools [shell]: rejected, "
      "planner re-asked with \"subtask 1 repeats the blocked target 'wc -l notes.txt' with shell\".")
def _():
    p2 = plan(["the count is right"], [st("Run wc -l notes.txt again and print it")])
    expect_reask(pv_run(p2), 1, "wc -l notes.txt")


@case("atk_pv_context_contains_blocked", "Blocked command only in the step's context (intent clean): rejected.")
def _():
    p2 = plan(["the count is right"], [st("Print the number of lines", context="use: wc -l notes.txt")])
    expect_reask(pv_run(p2), 1, "wc -l notes.txt")


@case("atk_pv_no_tools_listed", "Step with no tools listed (tools []) whose intent contains the blocked command: "
      "rejected.")
def _():
    p2 = plan(["the count is right"], [st("Print it with wc -l notes.txt", tools=())])
    expect_reask(pv_run(p2), 1, "wc -l notes.txt")


@case("atk_pv_other_tools_only_kept", "Step naming the blocked command but listing only read_file (no shell): not "
      "rejected by this rule.")
def _():
    p2 = plan(["the count is right"], [st("Read notes.txt (do not use wc -l notes.txt) and count", tools=("read_file",))])
    expect_no_reask(pv_run(p2), p2)


@case("atk_pv_second_subtask_numbered", "Three steps, only the 2nd contains the blocked command: re-ask says "
      "'subtask 2 repeats ...'.")
def _():
    p2 = plan(["the count is right"], [st("List files with ls -la"), st("Then run wc -l notes.txt"),
                                       st("Print the result")])
    expect_reask(pv_run(p2), 2, "wc -l notes.txt")


@case("atk_pv_quoted_command_in_intent", "Blocked command with quotes and a pipe, repeated verbatim inside a longer "
      "intent: rejected and re-asked (the quoting of the command in the message is checked by the next case).")
def _():
    c = "grep -c 'b' notes.txt | tr -d \" \""
    p2 = plan(["the count is right"], [st("Count matches via %s and report" % c)])
    expect_reask(pv_run(p2, blocked_cmd=c), 1, c, strict=False)


@case("atk_pv_reask_quotes_command_exactly", "The re-ask names a command holding quotes exactly in the described "
      "form: subtask 1 repeats the blocked target '<command>' with shell (no backslash escaping, no other quotes).")
def _():
    c = "grep -c 'b' notes.txt | tr -d \" \""
    p2 = plan(["the count is right"], [st("Count matches via %s and report" % c)])
    expect_reask(pv_run(p2, blocked_cmd=c), 1, c, strict=True)


@case("atk_pv_unicode_command_in_context", "Unicode blocked command (with single quotes) in a step's context: "
      "rejected and re-asked (message quoting not checked here).")
def _():
    c = "echo 'zählen ✓ 日本'"
    p2 = plan(["the count is right"], [st("Print the lines", context="previous idea: " + c + " then count")])
    expect_reask(pv_run(p2, blocked_cmd=c), 1, c, strict=False)


@case("atk_pv_short_command_not_matched", "Blocked command `ls` has 2 characters (< 3): a step 'List files with ls "
      "-la' is NOT rejected.")
def _():
    p2 = plan(["the count is right"], [st("List the files with ls -la and count lines of notes.txt")])
    expect_no_reask(pv_run(p2, blocked_cmd="ls"), p2)


@case("atk_pv_persistent_violation", "UNCERTAIN (handling of a planner that never complies is not described): the "
      "planner keeps returning the step 'Run wc -l notes.txt again' on every call after `wc -l notes.txt` was blocked; "
      "the executor (if ever given it) runs the command. Expected: no traceback, no success, the violating plan is "
      "never dispatched and the blocked command never runs again.")
def _():
    p2 = plan(["the count is right"], [st("Run wc -l notes.txt again and print it")])
    r = pv_run(p2, clean=p2, later=lambda ctx: [sh("wc -l notes.txt"), fin()])
    note("planner_error per round: %s" % json.dumps([(m.get("round"), m.get("planner_error"))
                                                     for m in manifests(r)])[:500])
    note("directives: " + dbrief(directives(r)))
    note("shell commands run per dispatch round: %s" % json.dumps({rd: ran_cmds(r, rd) for rd in range(0, 5)}))
    note("persistent violation: %s; planner calls %d" % (r.brief()[:200], len(planner_reqs(r))))
    for rd, subs in subtasks_by_round(r).items():
        if rd >= 1:
            bad = [x.get("intent") for x in subs if "wc -l notes.txt" in (x.get("intent") or "")]
            check(not bad, "a plan repeating the blocked command was dispatched in round %d: %s" % (rd, bad))
    for rd in range(1, 6):
        check("wc -l notes.txt" not in ran_cmds(r, rd), "the blocked command ran in round %d" % rd)


# ================================================================== same plan (claim 4)
def same_plan_run(round2, round3=None, p=None, files=None):
    p = p or P1

    def planner(body, n):
        return p

    def ex(body, ctx):
        if ctx["round"] <= 1:
            acts = [sh("wc -l notes.txt"), fin()]
        elif ctx["round"] == 2:
            acts = round2
        elif ctx["round"] == 3 and round3:
            acts = round3
        else:
            acts = [inf()]
        return acts[min(ctx["n"], len(acts) - 1)]
    return run(G1, p, ex, planner=planner, files=files)


@case("ctl_rp_same_plan_runs_once", "break_symmetry newly blocked `wc -l notes.txt`; the planner returns the SAME "
      "plan: it is dispatched again (not abandoned as a repeated plan), and the executor's retry is refused.")
def _():
    r = same_plan_run([sh("wc -l notes.txt"), fin()])
    d = first_dir(r)
    check(d.get("directive") == "break_symmetry", "inconclusive: " + dbrief([d]))
    subs = subtasks_by_round(r)
    check(1 in subs and [s.get("intent") for s in subs[1]] == [s["intent"] for s in P1["subtasks"]],
          "the same plan was not dispatched in round 1; summary: %s; rounds=%s" % (r.brief()[:300], sorted(subs)))
    expect_refused_not_run(r, "wc -l notes.txt")


@case("ctl_rp_same_plan_second_time_rejected", "After the same plan ran once and its only call was refused (no new "
      "block), a third identical plan is rejected: abandoned with 'the planner found no plan unlike the one that "
      "failed', no round-2 dispatch of the same plan.")
def _():
    r = same_plan_run([sh("wc -l notes.txt"), fin()])
    ds = directives(r)
    subs = subtasks_by_round(r)
    note("directives: " + dbrief(ds[:3]) + "; rounds dispatched: %s" % sorted(subs))
    check(len(ds) >= 2, "inconclusive: " + dbrief(ds))
    check(ds[1].get("directive") == "break_symmetry" and not ds[1].get("blocked_targets")
          and not ds[1].get("blocked_tools"), "inconclusive: second directive newly blocked something: "
          + dbrief(ds[1:2]))
    check(2 not in subs, "the identical plan ran a third time without a new block: rounds %s" % sorted(subs))
    check(NOPLAN in json.dumps(r.final, ensure_ascii=False), "final summary lacks %r: %s" % (NOPLAN, r.brief()))


@case("ctl_rp_no_new_block_same_plan_rejected", "Control (old rule kept): the failing step ran NO command and used "
      "no tool (nothing newly blocked): the identical plan is rejected as a repeated plan.")
def _():
    def planner(body, n):
        return P1
    r = run(G1, P1, one_step_exec([fin()], lambda ctx: [fin()]), planner=planner)
    ds = directives(r)
    subs = subtasks_by_round(r)
    note("directives: " + dbrief(ds[:2]) + "; rounds %s; %s" % (sorted(subs), r.brief()[:200]))
    check(ds and ds[0].get("directive") == "break_symmetry", "inconclusive: " + dbrief(ds))
    check(1 not in subs, "identical plan dispatched although nothing was newly blocked: rounds %s" % sorted(subs))
    check(NOPLAN in json.dumps(r.final, ensure_ascii=False), "final summary lacks %r: %s" % (NOPLAN, r.brief()))


@case("atk_rp_new_command_each_round", "UNCERTAIN ('once' vs 'newly blocked'): each round the executor runs one NEW "
      "failing command besides the refused old ones, so each break_symmetry newly blocks a command: the same plan "
      "keeps being accepted (round 2 dispatched) and nothing blocked ever runs again.")
def _():
    def planner(body, n):
        return P1

    def ex(body, ctx):
        rd = ctx["round"]
        acts = [sh("wc -l notes.txt")] + [sh("echo try%d >> ran.log" % k) for k in range(1, rd)] + \
               [sh("echo try%d >> ran.log" % rd), fin()]
        return acts[min(ctx["n"], len(acts) - 1)]
    r = run(G1, P1, ex, planner=planner)
    ds = directives(r)
    subs = subtasks_by_round(r)
    note("directives: " + dbrief(ds[:3]) + "; rounds %s" % sorted(subs))
    check(2 in subs, "same plan rejected although round 1 newly blocked a command: rounds %s; %s"
          % (sorted(subs), r.brief()[:200]))
    for rd in sorted(subs):
        if rd > 0:
            check("wc -l notes.txt" not in ran_cmds(r, rd), "blocked wc ran in round %d" % rd)


# ================================================================== executor refusals / safety
@case("ctl_exec_destructive_retry_not_run", "Round 1 ran `rm -f scratch_*.tmp; ls` (the request asked to clean) and "
      "failed; the test re-creates scratch_1.tmp before round 2; the executor's exact retry must be refused, so the "
      "file survives. Also no scratch file is touched by the agent itself.")
def _():
    c = "rm -f scratch_*.tmp; ls"
    ws_holder = {}

    def planner(body, n):
        if n == 2 and ws_holder.get("ws"):
            with open(os.path.join(ws_holder["ws"], "scratch_1.tmp"), "w") as f:
                f.write("keep\n")
        return plan(["scratch files are removed"], [st("Remove the scratch .tmp files (try %d)" % n)])
    goal = "Remove the scratch .tmp files in the workspace."
    ws = mkws({"scratch_0.tmp": "x\n", "notes.txt": "a\n"})
    ws_holder["ws"] = ws

    def ex(body, ctx):
        acts = [sh(c), fin("removed")] if ctx["round"] <= 2 else [inf()]
        return acts[min(ctx["n"], len(acts) - 1)]
    s = Script(goal, None, executor=ex, validator=vfail, meta=meta_pass("done", "done"), planner=planner)
    r = run_agent(s, goal, keep_ws=ws, extra_args=["--yes"], timeout=60)
    TMP.append(r.dd)
    check("Traceback (most recent call last)" not in (r.err or ""), "traceback: " + r.err[-600:])
    check(not r.success(), "success although validators rejected: " + r.brief())
    d = first_dir(r)
    check(("shell:" + c) in (d.get("blocked_targets") or []), "inconclusive: " + dbrief([d]))
    check(os.path.exists(os.path.join(ws, "scratch_1.tmp")), "the blocked destructive command ran again in round 2: "
          "scratch_1.tmp is gone; ran=%s" % json.dumps(ran_cmds(r, 1)))
    expect_refused_not_run(r, c)


@case("atk_exec_injection_in_target_not_executed", "A blocked command carrying a quoted $(touch pwned) (harmless as "
      "run) is echoed into prompts/re-asks/refusals; nothing may evaluate it: no 'pwned' file ever appears.")
def _():
    c = "echo '$(touch pwned)' '`touch pwned2`' >> ran.log"
    p2 = plan(["the count is right"], [st("Run " + c)])

    def planner(body, n):
        return P1 if n == 1 else p2 if n == 2 else plan(["ok"], [st("Count with awk")])
    r = run(G1, P1, one_step_exec([sh(c), fin()], lambda ctx: [sh(c), fin()] if ctx["round"] >= 2 else [inf()]),
            planner=planner)
    for f in ("pwned", "pwned2"):
        check(not os.path.exists(os.path.join(r.ws, f)), "%s was created: a blocked target got evaluated" % f)


@case("atk_exec_refused_loop_no_hang", "Round 2 executor retries the blocked command on every step until it runs out "
      "of steps: ends (no timeout), not success, the command never runs in round 2.")
def _():
    c = "echo loop >> ran.log"
    r = run(G1, P1, one_step_exec([sh(c), fin()], lambda ctx: [sh(c)] if ctx["round"] == 2 else [inf()]))
    check(c not in ran_cmds(r, 1), "blocked command ran in round 2")
    n0 = len([x for x in ran_cmds(r, 0) if x == c])
    check(marker_count(r.ws) == n0, "marker %d != round-1 runs %d" % (marker_count(r.ws), n0))


@case("atk_exec_block_persists_later_rounds", "UNCERTAIN (the refusal says 'blocked for this task'): a command "
      "blocked after round 1 is still refused in round 3, after a round-2 directive that blocked nothing new.")
def _():
    c = "wc -l notes.txt"
    r = run(G1, P1, one_step_exec([sh(c), fin()], lambda ctx: [sh(c), fin()] if ctx["round"] in (2, 3) else [inf()]))
    ds = directives(r)
    note("directives: " + dbrief(ds[:3]))
    check(len(ds) >= 2, "inconclusive: " + dbrief(ds))
    ran3 = ran_cmds(r, 2)
    check(c not in ran3, "the command 'blocked for this task' after round 1 ran again in round 3 (directive 2: %s)"
          % dbrief(ds[1:2]))


@case("atk_bs_earlier_attempts_commands", "UNCERTAIN ('each distinct shell command the failing steps ran'): the "
      "failing step ran A in attempt 1, B in attempt 2, C in attempt 3 (all failed): targets include A, B and C "
      "(only the last attempt's C is blocked otherwise).")
def _():
    def ex(body, ctx):
        if ctx["round"] > 1:
            return inf()
        k = int(ctx["attempt"].split()[1])
        acts = [sh("echo attempt%d >> ran.log" % k), fin()]
        return acts[min(ctx["n"], 1)]
    r = run(G1, P1, ex)
    d = first_dir(r)
    tg = d.get("blocked_targets") or []
    note("targets: " + json.dumps(tg))
    n_att = len(results_by_round(r).get(0, []))
    exp = ["shell:echo attempt%d >> ran.log" % k for k in range(1, n_att + 1)]
    check(tg == exp, "expected every attempt's command %s, observed %s" % (json.dumps(exp), json.dumps(tg)))


@case("atk_wrong_answer_never_accepted", "A wrong answer (5 for 3 lines): R4a fails it logically every time; the "
      "round-2 executor then runs a new command and answers 5 again: never accept/exit 0.")
def _():
    r = run("How many lines does notes.txt have? Write the number to count.txt.",
            plan(["count.txt holds 3"], [st("Count lines of notes.txt and write to count.txt")]),
            one_step_exec([sh("echo 5 > count.txt"), fin("5")],
                          lambda ctx: [sh("wc -l notes.txt"), sh("echo 5 > count.txt"), fin("5")]),
            meta=meta_pass("5", "5"))
    check(r.rc != 0 and r.directive != "accept", "accepted: " + r.brief())


def main():
    H.AGENTUI = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "/work/adversarial/agentui-devtree"
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
        if os.environ.get("I14_VERBOSE"):
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
