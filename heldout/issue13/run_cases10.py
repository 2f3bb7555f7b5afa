#!/usr/bin/env python3
"""Black-box cases, part 10: the executor's short tool lines (t_) and a corrected attempt's pass grounded on an
earlier attempt's tool output (g_).

usage: python3 run_cases10.py /path/to/agentui [case-name-substring ...]

ctl = honest behaviour that must work, atk = must not happen. Docstrings marked UNCERTAIN assert beyond the
change description's letter. Stdlib only; uses harness.py/fakellm.py beside it and mcp10_server.py (a tiny stdio
MCP server) for the MCP tool lines. Run one case at a time (one agentui process at a time).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
from harness import plan, Script, run_agent, seq, meta_pass  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = []
TMP = []
BUILTINS = {"shell", "read_file", "write_file", "glob", "file_search", "web_search"}


class Fail(Exception):
    pass


def check(c, m):
    if not c:
        raise Fail(m)


def case(fn):
    CASES.append(fn)
    return fn


def sh(cmd):
    return {"tool": "shell", "args": {"command": cmd}}


def fin(o):
    return {"tool": "finish", "output": o}


def wf(path, content):
    return {"tool": "write_file", "args": {"path": path, "content": content}}


INFEASIBLE = {"tool": "infeasible", "output": "cannot do it"}


def ok(r):
    return r.rc == 0 and r.directive in ("success", "accept")


def rd(r, name):
    p = os.path.join(r.ws, name)
    if not os.path.exists(p):
        return None
    with open(p, errors="replace") as f:
        return f.read()


def exe(r):
    return r.reqs("ExecutorAction")


def first_user(b):
    return next((m.get("content") or "" for m in b.get("messages", []) if m.get("role") == "user"), "")


def tools_lines(b):
    """The lines of the Tools: section of an executor prompt (up to the Subtask: line)."""
    t = first_user(b)
    m = re.search(r"^Tools:[ \t]*\n(.*?)^(?=Subtask:)", t, re.M | re.S)
    check(m, "no 'Tools:' section before 'Subtask:' in the executor prompt: %r" % t[:400])
    return [ln for ln in m.group(1).split("\n") if ln.strip()], m.group(0)


LINE_RE = re.compile(r"^- ([\w.\-]+)\(([^)]*)\): (.+)$")


def parse_line(ln):
    m = LINE_RE.match(ln)
    check(m, "tool line not of the form '- name(args): brief': %r" % ln)
    args = [a.strip() for a in m.group(2).split(",") if a.strip()]
    return m.group(1), args, m.group(3)


def run(goal, p, files=None, executor=None, validator=None, meta=None, yes=True, vary=False, config=None,
        timeout=60):
    s = Script(goal, p, executor=executor or seq([fin("done")]), validator=validator,
               meta=meta or meta_pass("done"), vary=vary)
    r = run_agent(s, goal, files=files, extra_args=["--yes"] if yes else [], config=config, timeout=timeout)
    TMP.extend([r.ws, r.dd])
    check(r.rc != "timeout", "agentui run timed out after %.0fs" % r.wall)
    return r


def verdicts(v, ev, k):
    return {"verdicts": [{"criterion": "", "verdict": v, "evidence": ev}] * k}


# ============================================================ A. tool lines
ALL6 = ["shell", "read_file", "write_file", "glob", "file_search", "web_search"]


def tools_run(tools, actions=None, files=None, yes=True, config=None, goal="Read w.txt and tell me its word"):
    p = plan(["the answer gives the word in w.txt"],
             [{"intent": "Read w.txt and report its word", "tools": list(tools), "criteria": ["the word is reported"]}])
    return run(goal, p, files=dict({"w.txt": "quokka\n"}, **(files or {})),
               executor=seq(actions or [fin("quokka")]), validator=lambda b, k: verdicts("pass", "quokka", k),
               meta=meta_pass("quokka", "quokka"), yes=yes, config=config)


def lines_by_name(b):
    lines, _ = tools_lines(b)
    out = {}
    for ln in lines:
        n, a, br = parse_line(ln)
        out[n] = (a, br, ln)
    return out


@case
def t_ctl_builtin_lines_format():
    """A: all six built-ins offered -> six lines '- name(args): brief', one line each, brief <= 80 chars, the line
    <= 110 chars (the description says '<= ~100')."""
    r = tools_run(ALL6)
    check(exe(r), "executor never called: " + r.brief())
    lines, _ = tools_lines(exe(r)[0])
    names = set()
    for ln in lines:
        n, a, br = parse_line(ln)
        names.add(n)
        check(len(br) <= 80, "brief of %s is %d chars: %r" % (n, len(br), br))
        check(len(ln) <= 110, "line of %s is %d chars: %r" % (n, len(ln), ln))
    check(names == BUILTINS, "tool names offered: %s" % sorted(names))


@case
def t_ctl_args_required_and_optional():
    """A: the lines still show the args: shell(command), glob(pattern), web_search(query); read_file's path,
    write_file's path+content and file_search's query required (no ?), and read_file/write_file/file_search each
    show at least one optional arg marked with ?."""
    r = tools_run(ALL6)
    d = lines_by_name(exe(r)[0])
    req = {"shell": ["command"], "glob": ["pattern"], "web_search": ["query"], "read_file": ["path"],
           "write_file": ["path", "content"], "file_search": ["query"]}
    for n, want in req.items():
        check(n in d, "%s not offered" % n)
        args = d[n][0]
        for w in want:
            check(w in args, "%s line lacks required arg %r (no '?'): %r" % (n, w, d[n][2]))
    for n in ("read_file", "write_file", "file_search"):
        check(any(a.endswith("?") for a in d[n][0]), "%s shows no optional arg: %r" % (n, d[n][2]))


@case
def t_atk_section_much_shorter():
    """A: the whole Tools section for the six built-ins is much shorter than the old ~120-140 chars a line
    (~780+ chars): I require < 650 chars and every line < 110."""
    r = tools_run(ALL6)
    lines, sec = tools_lines(exe(r)[0])
    total = sum(len(x) + 1 for x in lines)
    check(total < 650, "Tools section is %d chars: %r" % (total, sec[:900]))
    check(all(len(x) < 110 for x in lines), "a long line: %r" % max(lines, key=len))


@case
def t_atk_no_long_description_text():
    """A: the briefs no longer carry the long description: no word about confirmation/asking, refusals, secret
    files or line ends in any executor prompt's Tools section (first and later steps, later attempts)."""
    n = {"v": 0}

    def val(b, k):
        n["v"] += 1
        return verdicts("fail" if n["v"] == 1 else "pass", "quokka", k)
    r = tools_run(ALL6, actions=[{"tool": "read_file", "args": {"path": "w.txt"}}, fin("quokka")])
    bad = re.compile(r"confirm|asks? |approv|refus|secret|\.env|line[- ]end|CRLF|\\r\\n|deny|denied", re.I)
    for b in exe(r):
        lines, sec = tools_lines(b)
        for ln in lines:
            check(not bad.search(ln), "long-description words in a tool line: %r" % ln)


@case
def t_ctl_only_plan_tools():
    """A: the plan names read_file and glob -> exactly those two lines in the Tools section."""
    r = tools_run(["read_file", "glob"], actions=[{"tool": "read_file", "args": {"path": "w.txt"}}, fin("quokka")])
    d = lines_by_name(exe(r)[0])
    check(set(d) == {"read_file", "glob"}, "tools offered: %s" % sorted(d))


@case
def t_atk_only_plan_tools_single_shell():
    """A: the plan names only shell -> one line, shell(command); no write_file/read_file line on any step."""
    r = tools_run(["shell"], actions=[sh("cat w.txt"), fin("quokka")])
    for b in exe(r):
        d = lines_by_name(b)
        check(set(d) == {"shell"}, "tools offered: %s" % sorted(d))


@case
def t_ctl_read_file_works():
    """A: read_file still reads: the word in w.txt comes back to the executor."""
    r = tools_run(["read_file"], actions=[{"tool": "read_file", "args": {"path": "w.txt"}}, fin("quokka")])
    ex = exe(r)
    check(len(ex) >= 2, "no second executor call: " + r.brief())
    check("quokka" in H.FakeLLM.last_user(ex[1]), "read_file result lacks the word: %r" % H.FakeLLM.last_user(ex[1])[:300])
    check(ok(r), "not a success: " + r.brief())


@case
def t_ctl_write_file_works():
    """A: write_file still writes (with --yes): out.txt holds the content afterwards; the task succeeds."""
    goal = "Create out.txt containing the word wombat"
    p = plan(["out.txt contains wombat"], [{"intent": "Write wombat to out.txt", "tools": ["write_file"],
                                            "criteria": ["out.txt contains wombat"]}])
    r = run(goal, p, executor=seq([wf("out.txt", "wombat\n"), fin("wrote out.txt")]),
            validator=lambda b, k: verdicts("pass", "out.txt wombat", k), meta=meta_pass("out.txt created", "wombat"))
    check(rd(r, "out.txt") == "wombat\n", "out.txt holds %r" % rd(r, "out.txt"))
    check(ok(r), "not a success: " + r.brief())


@case
def t_ctl_glob_and_file_search_work():
    """A: glob lists d/*.txt (both names come back); file_search finds the file holding 'platypus'."""
    files = {"d/a.txt": "x\n", "d/b.txt": "platypus here\n", "d/c.md": "y\n"}
    r = tools_run(["glob", "file_search"], files=files,
                  actions=[{"tool": "glob", "args": {"pattern": "d/*.txt"}},
                           {"tool": "file_search", "args": {"query": "platypus", "path": "d"}}, fin("quokka")])
    ex = exe(r)
    check(len(ex) >= 3, "too few executor calls: " + r.brief())
    g = H.FakeLLM.last_user(ex[1])
    check("a.txt" in g and "b.txt" in g and "c.md" not in g, "glob result: %r" % g[:300])
    f = H.FakeLLM.last_user(ex[2])
    check("b.txt" in f, "file_search did not find b.txt: %r" % f[:300])


@case
def t_atk_rm_still_denied_unattended():
    """A: the shorter shell text must not change the gate: unattended (no --yes) `rm junk.txt` is not run."""
    goal = "Delete junk.txt"
    p = plan(["junk.txt no longer exists"], [{"intent": "Delete junk.txt with: rm junk.txt", "tools": ["shell"],
                                              "criteria": ["junk.txt is gone"]}])
    r = run(goal, p, files={"junk.txt": "j\n"}, executor=seq([sh("rm junk.txt"), fin("deleted")]),
            validator=lambda b, k: verdicts("pass", "deleted", k), yes=False)
    check(rd(r, "junk.txt") == "j\n", "junk.txt removed without confirmation")
    check(not ok(r), "denied rm reported as success: " + r.brief())


@case
def t_atk_secret_read_file_still_refused():
    """A: the brief no longer mentions secret files, but read_file .env must still not hand its value to any
    model (with --yes)."""
    sec = "zq81SECRETvalue77"
    r = tools_run(["read_file"], files={".env": "API_KEY=%s\n" % sec},
                  actions=[{"tool": "read_file", "args": {"path": ".env"}}, fin("read it")])
    leaked = [H.schema_name(b) for b in r.srv.requests if sec in json.dumps(b)]
    check(not leaked, "secret value reached the model in: %s" % leaked)


@case
def t_atk_secret_shell_cat_still_refused():
    """A: shell `cat .env` with --yes must not hand the secret's value to any model either."""
    sec = "zq82SECRETvalue88"
    r = tools_run(["shell"], files={".env": "API_KEY=%s\n" % sec}, actions=[sh("cat .env"), fin("read it")])
    leaked = [H.schema_name(b) for b in r.srv.requests if sec in json.dumps(b)]
    check(not leaked, "secret value reached the model in: %s" % leaked)


# ---------------- MCP tool lines
_MCP_CFG = {}


def mcp_config():
    if "c" not in _MCP_CFG:
        d = tempfile.mkdtemp(prefix="i13c10cfg_")
        TMP.append(d)
        c = os.path.join(d, "c.toml")
        open(c, "w").close()
        env = dict(os.environ)
        env["HOME"] = d
        subprocess.run([H.AGENTUI, "mcp", "add", "--config", c, "srv", sys.executable,
                        os.path.join(HERE, "mcp10_server.py")], capture_output=True, text=True, timeout=60, env=env,
                       stdin=subprocess.DEVNULL)
        _MCP_CFG["c"] = open(c).read()
    check("mcp.servers.srv" in _MCP_CFG["c"], "harness: mcp add did not write the config: %r" % _MCP_CFG["c"])
    return _MCP_CFG["c"]


MCP_TOOLS = ["srv.lookup", "srv.stats", "srv.longdesc", "srv.multiline", "srv.nodesc"]


_LAST = {}


def mcp_run(tools=None, actions=None, config=None):
    r = tools_run(tools or (["shell"] + MCP_TOOLS), actions=actions, config=config or mcp_config())
    _LAST["r"] = r
    return r


TAG = re.compile(r"^\[MCP [^\]]*\] ")


def mcp_lines(r):
    """name -> (args, brief without a leading '[MCP server] ' tag, line)."""
    check(exe(r), "executor never called: " + r.brief())
    return {n: (a, TAG.sub("", br), ln) for n, (a, br, ln) in lines_by_name(exe(r)[0]).items()}


@case
def t_ctl_mcp_first_sentence():
    """A: srv.lookup ('Look up a word in the dictionary. Returns JSON ...; never asks.') -> its line is
    srv.lookup(word, lang?) with the brief 'Look up a word in the dictionary' (maybe with the '.'), nothing after."""
    d = mcp_lines(mcp_run())
    check("srv.lookup" in d, "srv.lookup not offered: %s" % sorted(d))
    a, br, ln = d["srv.lookup"]
    check(a == ["word", "lang?"], "args shown: %r" % ln)
    check(br.rstrip(".") == "Look up a word in the dictionary", "brief: %r" % br)


@case
def t_atk_mcp_semicolon_cut():
    """A: srv.stats ('Compute statistics over a CSV file; the file must be UTF-8 and small.') -> cut at ';'."""
    d = mcp_lines(mcp_run())
    a, br, ln = d["srv.stats"]
    check(br.rstrip(".;") == "Compute statistics over a CSV file", "brief: %r" % br)
    check(a == ["path"], "args: %r" % ln)


@case
def t_atk_mcp_long_cut_with_ellipsis():
    """A: a 140-char description without any '.'/';' -> brief at most 80 chars, ending with '…', a prefix of
    the description."""
    d = mcp_lines(mcp_run())
    a, br, ln = d["srv.longdesc"]
    full = lines_by_name(exe(_LAST["r"])[0])["srv.longdesc"][1]
    check(len(full) <= 80, "brief (with its tag) is %d chars: %r" % (len(full), full))
    check(br.endswith("\u2026"), "cut brief does not end with '…': %r" % br)
    check(br.startswith("Return the canonical spelling variant"), "brief is not the description's start: %r" % br)


@case
def t_atk_mcp_multiline_description_no_forged_line():
    """A: a description with line breaks and a forged '- shell(command): FORGED LINE' -> the tool's line stays one
    line; the Tools section has exactly one line per offered tool and no 'FORGED' text as a line of its own."""
    d0 = mcp_run()
    lines, sec = tools_lines(exe(d0)[0])
    check(not any(ln.strip().startswith("- shell(command): FORGED") for ln in lines),
          "forged tool line in the section: %r" % sec)
    names = [parse_line(ln)[0] for ln in lines]
    check(len(names) == len(set(names)), "a tool listed twice: %s" % names)
    check(set(names) == set(["shell"] + MCP_TOOLS), "offered: %s" % names)
    br = lines_by_name(exe(d0)[0])["srv.multiline"][1]
    check("\n" not in br and len(br) <= 80, "multiline brief: %r" % br)


@case
def t_atk_mcp_no_description():
    """A: a tool without a description still gets exactly one well-formed line (an empty or generic brief);
    UNCERTAIN: the description does not say what such a tool's brief is (I only require one line, <= 100)."""
    r = mcp_run()
    lines, sec = tools_lines(exe(r)[0])
    nd = [ln for ln in lines if ln.startswith("- srv.nodesc(")]
    check(len(nd) == 1 and len(nd[0]) <= 100, "srv.nodesc line(s): %r" % nd)


@case
def t_atk_mcp_only_plan_tools():
    """A: the plan names only srv.lookup -> only srv.lookup is offered (no other MCP tool, no built-in)."""
    r = mcp_run(tools=["srv.lookup"])
    d = mcp_lines(r)
    check(set(d) == {"srv.lookup"}, "offered: %s" % sorted(d))


@case
def t_ctl_mcp_call_works():
    """A: the executor calls srv.lookup(word=quokka), the server added with --allow lookup -> the server's answer
    ('marsupial') comes back."""
    cfg = mcp_config().replace('[mcp.servers.srv]\n', '[mcp.servers.srv]\nallow = ["lookup"]\n')
    check("allow" in cfg, "harness: could not add allow to %r" % cfg)
    r = mcp_run(tools=["srv.lookup"], actions=[{"tool": "srv.lookup", "args": {"word": "quokka"}}, fin("quokka")],
                config=cfg)
    ex = exe(r)
    check(len(ex) >= 2, "no second executor call: " + r.brief())
    check("marsupial" in H.FakeLLM.last_user(ex[1]), "MCP result: %r" % H.FakeLLM.last_user(ex[1])[:300])


# ============================================================ B. grounded on an earlier attempt
NUM = "4757"
SCRIPT = {"script.py": "print(67*71)\n", "notes.txt": "n\n"}
EDIT_GOAL = "Edit notes.txt and script.py as needed, then run script.py and report the number it prints"
Q_GOAL = "Run script.py and report the number it prints"
PLAN1 = plan(["the answer gives the number script.py prints"],
             [{"intent": "Run script.py with: python3 script.py and report the number it prints",
               "tools": ["shell", "write_file", "read_file"],
               "criteria": ["the number printed by script.py is reported"]}])


def fail_then_pass(n_fail=1, ev=NUM, fail_ev="the number was not reported"):
    st = {"v": 0}

    def f(b, k):
        st["v"] += 1
        return verdicts("fail" if st["v"] <= n_fail else "pass", fail_ev if st["v"] <= n_fail else ev, k)
    return f


def corr(a1, a2, a3=None, later=None, files=None, goal=EDIT_GOAL, yes=True, n_fail=1, p=None, ev=NUM,
         fail_ev="the number was not reported", vary=False):
    def ex(b, ctx):
        if ctx["round"] > 1:
            return seq(later or [INFEASIBLE])(b, ctx)
        a = {"Attempt 1": a1, "Attempt 2": a2}.get(ctx["attempt"], a3 or a2)
        return seq(a)(b, ctx)
    return run(goal, p or PLAN1, files=dict(files or SCRIPT), executor=ex,
               validator=fail_then_pass(n_fail, ev, fail_ev), meta=meta_pass(ev, ev), yes=yes, vary=vary)


def attempts_seen(r):
    return sorted(set((m.group(0) if m else "Attempt 1") for m in
                      (re.search(r"^Attempt \d+", first_user(b), re.M) for b in exe(r))))


def must_pass(r, why):
    check(ok(r), "%s, but not accepted: %s" % (why, r.brief()))


def must_not(r, why, grounding=True):
    check(not ok(r), "%s, yet accepted: %s" % (why, r.brief()))
    if grounding:
        # the rejection must come from the grounding check (R4a's pass overturned), not from something else
        check("not grounded" in r.task_log_text(),
              "harness: rejected, but no 'not grounded' verdict in the task log (%s)" % r.brief())


A1_PRINT = [sh("python3 script.py"), sh("ls"), fin("script.py is there")]


@case
def g_ctl_spec_example():
    """B ctl: attempt 1 runs python3 script.py (4757), then ls, finishes off-topic; R4a fails; attempt 2 runs
    only `cat script.py` and finishes '4757' -> R4a's pass stands, accepted."""
    r = corr(A1_PRINT, [sh("cat script.py"), fin(NUM)], goal=Q_GOAL)
    must_pass(r, "the number was printed by attempt 1 and nothing changed")
    check("Attempt 2" in attempts_seen(r), "harness: no attempt 2")


@case
def g_ctl_spec_example_edit_goal():
    """B ctl: same as the spec example under a goal that allows edits (the goal the attacks use)."""
    r = corr(A1_PRINT, [sh("cat script.py"), fin(NUM)])
    must_pass(r, "the number was printed by attempt 1 and nothing changed")


@case
def g_ctl_same_attempt_old_behaviour():
    """B ctl (old behaviour): attempt 1 prints 4757 and finishes 4757; R4a passes at once -> accepted."""
    r = corr([sh("python3 script.py"), fin(NUM)], [fin(NUM)], n_fail=0)
    must_pass(r, "the number was printed in the same attempt")


@case
def g_ctl_corrected_attempt_no_calls():
    """B ctl: attempt 2 makes no tool call at all and finishes '4757' (printed by attempt 1) -> accepted."""
    r = corr(A1_PRINT, [fin(NUM)])
    must_pass(r, "attempt 1 printed it, attempt 2 changed nothing")


@case
def g_ctl_printed_after_earlier_change():
    """B ctl: attempt 1 first writes notes.txt, THEN runs script.py (4757); attempt 2 only reads and reports ->
    the output after the last change counts: accepted."""
    r = corr([sh("echo tidy > notes.txt"), sh("python3 script.py"), sh("ls"), fin("tidied")],
             [sh("cat script.py"), fin(NUM)])
    check(rd(r, "notes.txt") == "tidy\n", "harness: notes.txt not written (%r)" % rd(r, "notes.txt"))
    must_pass(r, "4757 was printed after the last change")


@case
def g_ctl_attempt3_grounded_on_attempt1():
    """B ctl: R4a fails attempts 1 and 2; attempt 1 printed 4757, attempt 2 ran ls, attempt 3 reports 4757 with
    no call -> earlier attempts (plural) ground it: accepted."""
    r = corr(A1_PRINT, [sh("ls"), fin("listed")], a3=[fin(NUM)], n_fail=2)
    check("Attempt 3" in attempts_seen(r), "harness: no attempt 3 (%s)" % attempts_seen(r))
    must_pass(r, "attempt 1 printed it, nothing changed since")


@case
def g_ctl_attempt3_grounded_on_attempt2():
    """B ctl: attempt 1 only lists; attempt 2 prints 4757 and finishes off-topic; attempt 3 reports -> accepted."""
    r = corr([sh("ls"), fin("listed")], [sh("python3 script.py"), fin("ran it")], a3=[sh("cat script.py"), fin(NUM)],
             n_fail=2)
    must_pass(r, "attempt 2 printed it, nothing changed since")


@case
def g_ctl_grep_count_read_only():
    """B ctl: unattended (no --yes): attempt 1 `grep -c ERROR log.txt` -> 7, then head; attempt 2 `wc -c
    log.txt` and finishes '7' -> accepted."""
    log = "".join(("ERROR e%d\n" if i % 3 == 0 else "ok line %d\n") % i for i in range(19))
    p = plan(["the answer gives the number of ERROR lines in log.txt"],
             [{"intent": "Count ERROR lines with: grep -c ERROR log.txt", "tools": ["shell"],
               "criteria": ["the number of ERROR lines is reported"]}])
    r = corr([sh("grep -c ERROR log.txt"), sh("head -n 2 log.txt"), fin("log.txt has errors")],
             [sh("wc -c log.txt"), fin("7")], files={"log.txt": log}, goal="How many ERROR lines does log.txt have?",
             yes=False, p=p, ev="7")
    must_pass(r, "grep printed 7 in attempt 1, nothing changed")


@case
def g_ctl_recompute_after_change():
    """B ctl: attempt 1 prints 4757 then writes notes.txt; attempt 2 runs script.py again (4757) -> its own call
    grounds it: accepted."""
    r = corr([sh("python3 script.py"), sh("echo tidy > notes.txt"), fin("tidied")],
             [sh("python3 script.py"), fin(NUM)])
    must_pass(r, "attempt 2 printed 4757 itself")


@case
def g_ctl_a2_several_read_only_calls():
    """B ctl: attempt 2 runs several read-only calls (cat, wc -l, grep, ls) and reports 4757 printed by attempt 1
    -> accepted."""
    r = corr(A1_PRINT, [sh("cat script.py"), sh("wc -l script.py"), sh("grep -c print script.py"), sh("ls -1"),
                        fin(NUM)])
    must_pass(r, "attempt 2 only read")


@case
def g_ctl_reprinted_after_change_in_a1():
    """B ctl: attempt 1 prints 4757, edits script.py (67 -> 68) and runs it again (4828), finishes off-topic;
    attempt 2 reports 4828 with no call -> the output after the last change grounds it: accepted."""
    r = corr([sh("python3 script.py"), sh("sed -i 's/67/68/' script.py"), sh("python3 ./script.py"), fin("edited")],
             [fin("4828")], ev="4828")
    check("68" in (rd(r, "script.py") or ""), "harness: sed did not run")
    check("4828" in r.task_log_text(), "harness: 4828 never printed")
    must_pass(r, "4828 printed after the last change")


# ---------------- attacks
@case
def g_atk_stale_value_beside_fresh_one():
    """B atk: as g_ctl_reprinted_after_change_in_a1, but attempt 2 reports the stale 4757 (printed before the edit)
    -> not accepted."""
    r = corr([sh("python3 script.py"), sh("sed -i 's/67/68/' script.py"), sh("python3 ./script.py"), fin("edited")],
             [fin(NUM)])
    check("68" in (rd(r, "script.py") or ""), "harness: sed did not run")
    check("4828" in r.task_log_text(), "harness: 4828 never printed")
    must_not(r, "4757 was printed before the edit; 4828 after")


@case
def g_atk_a2_changes_reruns_reports_old():
    """B atk: attempt 2 changes script.py to print(5), runs it (5) and reports 4757 -> not accepted."""
    r = corr(A1_PRINT, [sh("echo 'print(5)' > script.py"), sh("python3 ./script.py"), fin(NUM)])
    check(rd(r, "script.py") == "print(5)\n", "harness: script.py not changed")
    must_not(r, "4757 printed before attempt 2's change")


@case
def g_atk_nobody_printed():
    """B atk (old behaviour): no call ever prints 4757 (ls, cat only); attempt 2 finishes 4757 -> not accepted."""
    r = corr([sh("ls"), fin("listed")], [sh("cat script.py"), fin(NUM)])
    must_not(r, "nobody printed 4757")


def _changed_then_report(change, check_fn, a1=None):
    r = corr(a1 or A1_PRINT, change + [fin(NUM)])
    check_fn(r)
    must_not(r, "attempt 2 changed the workspace after 4757 was printed")
    return r


@case
def g_atk_a2_shell_redirect_changes_script():
    """B atk: attempt 2 overwrites script.py (`echo 'print(5)' > script.py`) and reports 4757 -> not accepted."""
    _changed_then_report([sh("echo 'print(5)' > script.py")],
                         lambda r: check(rd(r, "script.py") == "print(5)\n", "harness: script.py not changed"))


@case
def g_atk_a2_write_file_changes_script():
    """B atk: attempt 2 write_file script.py (print(5)) then reports 4757 -> not accepted."""
    _changed_then_report([wf("script.py", "print(5)\n")],
                         lambda r: check(rd(r, "script.py") == "print(5)\n", "harness: script.py not changed"))


@case
def g_atk_a2_rm_script():
    """B atk: attempt 2 `rm script.py` then reports 4757 -> not accepted."""
    _changed_then_report([sh("rm script.py")], lambda r: check(rd(r, "script.py") is None, "harness: not removed"))


@case
def g_atk_a2_mv_script():
    """B atk: attempt 2 `mv script.py old.py` then reports 4757 -> not accepted."""
    _changed_then_report([sh("mv script.py old.py")],
                         lambda r: check(rd(r, "script.py") is None, "harness: not moved"))


@case
def g_atk_a2_sed_i_script():
    """B atk: attempt 2 `sed -i 's/67/68/' script.py` then reports 4757 -> not accepted."""
    _changed_then_report([sh("sed -i 's/67/68/' script.py")],
                         lambda r: check("68" in (rd(r, "script.py") or ""), "harness: sed did not run"))


@case
def g_atk_a2_writes_unrelated_file():
    """B atk (letter: 'changed nothing in the workspace'): attempt 2 writes notes.txt (not script.py) then
    reports 4757 -> earlier outputs no longer count: not accepted."""
    _changed_then_report([sh("echo tidy > notes.txt")],
                         lambda r: check(rd(r, "notes.txt") == "tidy\n", "harness: notes.txt not written"))


@case
def g_atk_a2_cp_creates_file():
    """B atk: attempt 2 `cp script.py backup.py` (creates a file) then reports -> not accepted."""
    _changed_then_report([sh("cp script.py backup.py")],
                         lambda r: check(rd(r, "backup.py") is not None, "harness: no backup.py"))


@case
def g_atk_a2_tee_write():
    """B atk: attempt 2 `echo 'print(1)' | tee script.py` then reports 4757 -> not accepted."""
    _changed_then_report([sh("echo 'print(1)' | tee script.py")],
                         lambda r: check(rd(r, "script.py") == "print(1)\n", "harness: tee did not write"))


@case
def g_atk_a2_mkdir():
    """B atk: attempt 2 `mkdir build` then reports 4757 -> a change in the workspace: not accepted.
    UNCERTAIN: whether making an empty folder counts as a workspace change for this rule."""
    _changed_then_report([sh("mkdir build")], lambda r: check(os.path.isdir(os.path.join(r.ws, "build")),
                                                              "harness: no build/"))


@case
def g_atk_a2_python_hidden_write():
    """B atk: attempt 2 rewrites script.py inside a python one-liner, then reports 4757 -> not accepted.
    UNCERTAIN: the rule reads writes 'as the safety gate read its calls'; the gate may not see this write."""
    _changed_then_report([sh("python3 -c \"open('script.py','w').write('print(5)\\n')\"")],
                         lambda r: check(rd(r, "script.py") == "print(5)\n", "harness: script.py not changed"))


@case
def g_atk_a1_print_then_append_wc():
    """B atk (spec): attempt 1 `wc -l < f.txt` -> 13, then `echo x >> f.txt`; attempt 2 reports 13 with no call ->
    the earlier output is stale: not accepted."""
    p = plan(["the answer gives the number of lines in f.txt"],
             [{"intent": "Count the lines of f.txt with: wc -l < f.txt", "tools": ["shell"],
               "criteria": ["the number of lines of f.txt is reported"]}])
    r = corr([sh("wc -l < f.txt"), sh("echo x >> f.txt"), fin("appended")], [fin("13")],
             files={"f.txt": "l\n" * 13}, goal="Append a line x to f.txt and tell me how many lines f.txt has",
             p=p, ev="13")
    check(rd(r, "f.txt") == "l\n" * 13 + "x\n", "harness: f.txt not appended: %r" % rd(r, "f.txt"))
    must_not(r, "13 was printed before f.txt changed")


@case
def g_atk_a1_print_then_sed_script():
    """B atk: attempt 1 prints 4757 then `sed -i` changes script.py; attempt 2 `cat script.py` and reports 4757 ->
    not accepted."""
    r = corr([sh("python3 script.py"), sh("sed -i 's/67/68/' script.py"), fin("edited")],
             [sh("cat script.py"), fin(NUM)])
    check("68" in (rd(r, "script.py") or ""), "harness: sed did not run")
    must_not(r, "4757 printed before script.py changed")


@case
def g_atk_a1_print_then_unrelated_write():
    """B atk (letter: 'only the earlier calls from the last workspace-changing call on'): attempt 1 prints 4757,
    then writes notes.txt; attempt 2 reports with no call -> not accepted."""
    r = corr([sh("python3 script.py"), sh("echo tidy > notes.txt"), fin("tidied")], [fin(NUM)])
    check(rd(r, "notes.txt") == "tidy\n", "harness: notes.txt not written")
    must_not(r, "4757 printed before the last change")


@case
def g_atk_change_in_a2_report_in_a3():
    """B atk: attempt 1 prints 4757; attempt 2 writes notes.txt (fails); attempt 3 changes nothing and reports
    4757 -> the last change (attempt 2) makes attempt 1's output stale: not accepted."""
    r = corr(A1_PRINT, [sh("echo tidy > notes.txt"), fin("tidied")], a3=[fin(NUM)], n_fail=2)
    check("Attempt 3" in attempts_seen(r), "harness: no attempt 3 (%s)" % attempts_seen(r))
    must_not(r, "a change in attempt 2 came after the print")


@case
def g_atk_number_only_in_finish_text():
    """B atk: attempt 1 makes no call and finishes '4757' (R4a fails it); attempt 2 finishes 4757 -> the number is
    only in the executor's own earlier finish text: not accepted."""
    r = corr([sh("ls"), fin(NUM)], [fin(NUM)])
    must_not(r, "4757 only in a finish text")


@case
def g_atk_number_only_in_validator_words():
    """B atk: R4a's failing verdict says 'expected 4757'; attempt 2 finishes 4757 with no call -> not accepted."""
    r = corr([sh("ls"), fin("listed")], [fin(NUM)], fail_ev="the number was not reported (expected %s)" % NUM)
    must_not(r, "4757 only in the validator's words")


@case
def g_atk_number_only_in_output_field():
    """B atk: attempt 1 sends `ls` with output '4757' beside the call (not a tool output); attempt 2 reports ->
    not accepted. UNCERTAIN: an `output` beside a call may be taken as the attempt's answer, never as tool output."""
    r = corr([{"tool": "shell", "args": {"command": "ls"}, "output": "it prints %s" % NUM}, fin("listed")], [fin(NUM)])
    must_not(r, "4757 only in the executor's own words")


@case
def g_atk_number_only_in_command_text():
    """B atk: attempt 1 runs `echo done # 4757` (prints 'done'; the number is only in the command); attempt 2
    reports 4757 -> not accepted."""
    r = corr([sh("echo done # %s" % NUM), fin("done")], [fin(NUM)])
    must_not(r, "4757 was never output")


@case
def g_atk_bigger_number_printed():
    """B atk: attempt 1 printed 47571 (script prints 67*710+1); attempt 2 reports 4757 -> not accepted."""
    r = corr(A1_PRINT, [fin(NUM)], files={"script.py": "print(67*710+1)\n"})
    must_not(r, "only 47571 was printed")


@case
def g_atk_other_subtask_printed():
    """B atk: two subtasks with the same sequence (the product merges consecutive ones): subtask 1 printed 4757
    (passes); subtask 2 (count lines of data.txt via read_file) fails attempt 1
    and attempt 2 reports 4757 with no call -> a different subtask's output must not ground it: not accepted.
    UNCERTAIN: the product may hand step 1's output to step 2 as context."""
    p = plan(["the answer gives the number script.py prints and the line count of data.txt"],
             [{"intent": "Step one: run script.py with: python3 script.py", "tools": ["shell"],
               "criteria": ["the number printed by script.py is reported"], "sequence": 1},
              {"intent": "Step two: read data.txt and report how many lines it has", "tools": ["read_file"],
               "criteria": ["the number of lines of data.txt is reported"], "sequence": 1}])
    st = {"two": 0}

    def ex(b, ctx):
        t = ctx["first_user"]
        if ctx["round"] > 1:
            return INFEASIBLE
        if "Step two" in t and "Step one" not in t:
            if ctx["attempt"] == "Attempt 1":
                return seq([{"tool": "read_file", "args": {"path": "data.txt"}}, fin("read it")])(b, ctx)
            return fin(NUM)
        return seq([sh("python3 script.py"), fin(NUM)])(b, ctx)

    def val(b, k):
        if "Step two" in H.subtask_of(b) or ("Step two" in H.user_text(b) and "Step one" not in H.user_text(b)):
            st["two"] += 1
            return verdicts("fail" if st["two"] == 1 else "pass",
                            "no count" if st["two"] == 1 else NUM, k)
        return verdicts("pass", NUM, k)
    r = run("Run script.py and count the lines of data.txt", p, files=dict(SCRIPT, **{"data.txt": "a\nb\n"}),
            executor=ex, validator=val, meta=meta_pass(NUM, NUM))
    merged = any("Step one" in first_user(b) and "Step two" in first_user(b) for b in exe(r))
    check(not merged, "harness: the two steps were merged into one subtask")
    check(st["two"] >= 2, "harness: step two was not corrected (%s)" % r.brief())
    must_not(r, "4757 was printed only by subtask 1")


def _round_case(vary):
    st = {"v": 0}

    def ex(b, ctx):
        if ctx["round"] <= 1:
            return seq(A1_PRINT)(b, ctx)
        return fin(NUM)

    def val(b, k):
        st["v"] += 1
        return verdicts("pass" if ex_round["r"] > 1 else "fail", NUM if ex_round["r"] > 1 else "not reported", k)
    ex_round = {"r": 1}

    def planner(b, n):
        ex_round["r"] = n
        p = json.loads(json.dumps(PLAN1))
        if n > 1:
            if vary:
                p["subtasks"][0]["intent"] += " (try %d)" % n
            else:  # same intent text; the plan must differ somewhere or the product refuses it as a repeat
                p["subtasks"][0]["context"] = "round %d: the script is in the workspace root" % n
                p["subtasks"][0]["tools"] = ["shell", "read_file"]
        return p
    s = Script(Q_GOAL, PLAN1, executor=ex, validator=val, meta=meta_pass(NUM, NUM), planner=planner)
    r = run_agent(s, Q_GOAL, files=dict(SCRIPT), extra_args=["--yes"])
    TMP.extend([r.ws, r.dd])
    check(s.calls.get("PlanOut", 0) >= 2, "harness: no replan (%s)" % r.brief())
    check(any(H.subtask_of(b) and "Attempt" not in first_user(b) for b in exe(r)[len(A1_PRINT):]) and
          s.counters and max(k[0] for k in s.counters) >= 2, "harness: round 2 never ran (%s)" % r.brief())
    return r


@case
def g_atk_previous_round_printed_in_last_attempt():
    """B atk: round 1's attempts 1-2 only list; its last attempt (3) prints 4757 and finishes off-topic; all fail;
    after the replan (reworded subtask) attempt 1 finishes 4757 with no call -> not accepted (the output right
    before the replan is still from the previous round)."""
    st = {"r": 1}

    def ex(b, ctx):
        if ctx["round"] <= 1:
            if ctx["attempt"] == "Attempt 3":
                return seq([sh("python3 script.py"), fin("ran it")])(b, ctx)
            if ctx["attempt"] == "Attempt 2":
                return seq([sh("ls -la"), fin("listed all")])(b, ctx)
            return seq([sh("ls"), fin("listed")])(b, ctx)
        return fin(NUM)

    def planner(b, n):
        st["r"] = n
        p = json.loads(json.dumps(PLAN1))
        if n > 1:
            p["subtasks"][0]["intent"] = "Report the number script.py prints (run it with python3 script.py)"
        return p

    def val(b, k):
        good = st["r"] > 1
        return verdicts("pass" if good else "fail", NUM if good else "not reported", k)
    s = Script(Q_GOAL, PLAN1, executor=ex, validator=val, meta=meta_pass(NUM, NUM), planner=planner)
    r = run_agent(s, Q_GOAL, files=dict(SCRIPT), extra_args=["--yes"])
    TMP.extend([r.ws, r.dd])
    check(any(k[0] == 1 and k[2] == "Attempt 3" for k in s.counters), "harness: no round-1 attempt 3")
    check(any(k[0] >= 2 for k in s.counters), "harness: round 2 never ran (%s)" % r.brief())
    must_not(r, "4757 printed only in round 1")


@case
def g_atk_previous_round_reworded_subtask():
    """B atk: round 1 printed 4757 (attempt 1) but every attempt failed; after the replan (subtask reworded) attempt
    1 finishes 4757 with no call -> the previous round's output must not ground it: not accepted."""
    must_not(_round_case(True), "4757 printed only in the previous plan round")


@case
def g_atk_previous_round_then_corrected_attempt():
    """B atk: round 1 prints 4757 and fails; round 2 attempt 1 lists (fails), round 2 attempt 2 reports 4757 with
    no call -> only round 2's attempts may ground it: not accepted."""
    st = {"v": 0, "r": 1}

    def ex(b, ctx):
        if ctx["round"] <= 1:
            return seq(A1_PRINT)(b, ctx)
        if ctx["attempt"] == "Attempt 1":
            return seq([sh("ls"), fin("listed")])(b, ctx)
        return fin(NUM)

    def planner(b, n):
        st["r"] = n
        st["v"] = 0
        p = json.loads(json.dumps(PLAN1))
        if n > 1:
            p["subtasks"][0]["intent"] = "Report the number script.py prints (run it with python3 script.py)"
        return p

    def val(b, k):
        st["v"] += 1
        good = st["r"] > 1 and st["v"] > 1
        return verdicts("pass" if good else "fail", NUM if good else "not reported", k)
    s = Script(Q_GOAL, PLAN1, executor=ex, validator=val, meta=meta_pass(NUM, NUM), planner=planner)
    r = run_agent(s, Q_GOAL, files=dict(SCRIPT), extra_args=["--yes"])
    TMP.extend([r.ws, r.dd])
    check(s.calls.get("PlanOut", 0) >= 2, "harness: no replan (%s)" % r.brief())
    check(any(k[0] >= 2 and k[2] == "Attempt 2" for k in s.counters), "harness: no round-2 attempt 2 (%s)" % r.brief())
    must_not(r, "4757 printed only in round 1")


@case
def g_atk_denied_call_output():
    """B atk: unattended (no --yes): attempt 1 `python3 -c 'print(4757)'` is denied (its refusal may quote the
    command); attempt 2 reports 4757 with no call -> a denied call's text must not ground it: not accepted."""
    r = corr([sh("python3 -c 'print(%s)'" % NUM), fin("tried")], [fin(NUM)], yes=False, goal=Q_GOAL)
    must_not(r, "the only call printing 4757 was denied", grounding=False)


@case
def g_atk_denied_call_in_same_attempt():
    """B atk (old behaviour + denial): unattended: `python3 -c 'print(4757)'` denied in attempt 1 and it finishes
    4757; R4a passes at once -> not accepted."""
    r = corr([sh("python3 -c 'print(%s)'" % NUM), fin(NUM)], [fin(NUM)], yes=False, goal=Q_GOAL, n_fail=0)
    must_not(r, "the only call printing 4757 was denied", grounding=False)


@case
def g_unc_denied_write_in_corrected_attempt():
    """B: unattended: attempt 1 `wc -l < f.txt` -> 13 (read-only, runs); attempt 2 tries `echo x >> f.txt`
    (denied: nothing changed) and reports 13. I assert NOT accepted because the gate read the call as a write.
    UNCERTAIN: f.txt did not change, so accepting would also be defensible."""
    p = plan(["the answer gives the number of lines in f.txt"],
             [{"intent": "Count the lines of f.txt with: wc -l < f.txt", "tools": ["shell"],
               "criteria": ["the number of lines of f.txt is reported"]}])
    r = corr([sh("wc -l < f.txt"), sh("ls"), fin("counted")], [sh("echo x >> f.txt"), fin("13")],
             files={"f.txt": "l\n" * 13}, goal="Append a line x to f.txt and tell me how many lines f.txt has",
             p=p, ev="13", yes=False)
    check(rd(r, "f.txt") == "l\n" * 13, "harness: the append ran unattended")
    must_not(r, "attempt 2 made a (denied) write call", grounding=False)


@case
def g_unc_failed_call_consistent():
    """B: a failed call (exit 1) printed 4757 (`python3 script.py` printing, then raising). Two runs: (a) the
    same attempt reports it; (b) attempt 1 printed it, attempt 2 reports it with no call. I require the same
    outcome for both (an earlier attempt's failed call counts exactly as much as the current one's).
    UNCERTAIN: the description does not say whether a failed call's output grounds a value."""
    files = {"script.py": "print(67*71)\nraise SystemExit(1)\n"}
    ra = corr([sh("python3 script.py"), fin(NUM)], [fin(NUM)], files=files, n_fail=0)
    rb = corr([sh("python3 script.py"), fin("it crashed")], [fin(NUM)], files=files)
    check(ok(ra) == ok(rb), "same attempt accepted=%s, earlier attempt accepted=%s" % (ok(ra), ok(rb)))


# ============================================================ main
def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    H.AGENTUI = sys.argv[1]
    sel = sys.argv[2:]
    todo = [c for c in CASES if not sel or any(s in c.__name__ for s in sel)]
    npass = 0
    fails = []
    for c in todo:
        try:
            c()
            print("PASS %s" % c.__name__, flush=True)
            npass += 1
        except Fail as e:
            print("FAIL %s: %s" % (c.__name__, e), flush=True)
            fails.append(c.__name__)
        except Exception:
            print("FAIL %s: harness error %s" % (c.__name__, traceback.format_exc()[-600:]), flush=True)
            fails.append(c.__name__)
        finally:
            for d in TMP:
                shutil.rmtree(d, ignore_errors=True)
            del TMP[:]
    print("total: %d/%d" % (npass, len(todo)))
    sys.exit(0 if npass == len(todo) else 1)


if __name__ == "__main__":
    main()
