#!/usr/bin/env python3
"""Black-box cases, part 12: two new places where code's reading stands over the Meta-Validator's (R4b) `fail`.

usage: python3 run_cases12.py /path/to/agentui [case-name-substring ...]

Claims under test (change description, paraphrased):
 1. SORT grant (s_*). The whole request is one sort of one file into another ("Sort the lines of names.txt
    alphabetically and write the result to sorted.txt.", "Sort names.txt into sorted.txt", "sort the lines in
    names.txt to sorted.txt", "Sort the file a.txt in alphabetical order and save it into b.txt"); the result holds
    the source's lines from before the task sorted (byte order or case-insensitive), only its last line end
    optional; source unchanged; no symlink in either named path; result != source; nothing else in the workspace
    changed (only the result and folders it was put into). Evidence "checked by code: sorted.txt holds the lines
    of names.txt sorted". Never: by length/numeric/reverse/unique/by column, '?', more asks, missing/duplicated/
    extra blank lines, changed case, CRLF (UNCERTAIN), source sorted in place then copied, other files changed
    (also by a python one-liner), result a symlink, empty source.
 2. FILES-ONLY grant (f_*), broadened: a request that asks nothing but to create paths and/or put one given text
    in one file, answered by the files, now stands over R4b's fail for EVERY task criterion whatever the planner
    wrote. Evidence "checked by code: hello.txt holds exactly 'Hello, world'", "checked by code: logs is there",
    "checked by code: src/app, tests, src/app/__init__.py are there". Never: different text, missing / wrong-kind
    path, non-empty 'empty' file, other paths written/moved/removed (rm, cp, >>, write_file), more asks, several
    texts / targets, content not given ("write a haiku"). R4b passing a WRONG result must still fail.

Every case scripts R4a = pass and R4b = fail (logical), except where stated, so an accept can only come from the
grant. The executor makes the files with real tool calls (shell / write_file); confirmations approved with --yes.
ctl_* must be granted (rc 0, directive accept, "checked by code" in the summary, exact evidence where the
description gives it); atk_* must not end in success and must have reached R4b (else FAIL "inconclusive", unless
marked reach=False; I13_NOREACH=1 disables the reach check). Docstrings marked UNCERTAIN go beyond the description.

Harness notes (from part 11): the executor ends with a read-only `cat <result>; echo END-OF-RESULT` (or `ls -d`
for folders) and R4a's evidence is a line of that output; attacks give the step the neutral intent "Carry out the
step with the tools." so the step's own checks do not refuse first. A file named in the request's text must be long
enough to be grounded (a 2-char text like 'hi' makes the step fail "not grounded" before R4b).
62 cases (17 ctl, 45 atk: 35 sort, 27 files-only), about 1.5 minutes.
"""
import json
import os
import shutil
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
from harness import plan, Script, run_agent, seq, passes, meta_pass  # noqa: E402

CASES = []
TMP = []
NEUTRAL = "Carry out the step with the tools."


class Fail(Exception):
    pass


def check(c, m):
    if not c:
        raise Fail(m)


def sh(cmd):
    return {"tool": "shell", "args": {"command": cmd}}


def wf(path, content):
    return {"tool": "write_file", "args": {"path": path, "content": content}}


def fin(o="done"):
    return {"tool": "finish", "output": o}


def mfail(body, k):
    """Honest-but-wrong R4b: every task criterion fails (logical)."""
    return {"merged_output": "the request was not met", "summary": "not met",
            "verdicts": [{"verdict": "fail", "failure_class": "logical",
                          "evidence": "the result does not answer the request"}] * k}


def mkws(files=None, links=()):
    base = tempfile.mkdtemp(prefix="i13c12_")
    TMP.append(base)
    ws = os.path.join(base, "ws")
    os.makedirs(ws)
    for name, c in (files or {}).items():
        p = os.path.join(ws, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", newline="", encoding="utf-8") as f:
            f.write(c)
    for src, dst in links:
        os.makedirs(os.path.dirname(os.path.join(ws, src)), exist_ok=True)
        os.symlink(dst, os.path.join(ws, src))
    return ws


def shown(ws, rel):
    """R4a evidence: first non-empty line of the shown file now on disk (printed by the final cat), else the
    END-OF-RESULT marker (empty file, folder, missing)."""
    def ev(body):
        if rel is None:
            return "END-OF-RESULT"
        try:
            with open(os.path.join(ws, rel), encoding="utf-8", errors="replace") as f:
                for ln in f.read().splitlines():
                    if ln.strip():
                        return ln.strip()
        except OSError:
            pass
        return "END-OF-RESULT"
    return ev


def ask(goal, actions, files, links=(), crits=None, show="sorted.txt", neutral=False, meta=None):
    """One subtask; a read-only show command is inserted before the final finish. show: a file name (cat) or a
    list of paths (ls -d)."""
    tcs = crits or ["the result answers the request: " + goal]
    p = plan(tcs, [{"intent": NEUTRAL if neutral else goal, "criteria": ["the step's files are made"],
                    "tools": ["shell", "write_file"]}])
    ws = mkws(files, links)
    if isinstance(show, list):
        cmd = "ls -d %s; echo END-OF-RESULT" % " ".join(show)
        evf = None
    else:
        cmd = "cat %s; echo END-OF-RESULT" % show
        evf = show
    actions = list(actions[:-1]) + [sh(cmd)] + [actions[-1]]
    s = Script(goal, p, executor=seq(actions), validator=passes(shown(ws, evf)), meta=meta or mfail)
    r = run_agent(s, goal, keep_ws=ws, extra_args=["--yes"], timeout=90)
    TMP.append(r.dd)
    check(r.rc != "timeout", "agentui run timed out after %.0fs" % r.wall)
    return r


def summary(r):
    return r.final.get("summary") or ""


def ws_listing(ws):
    out = []
    for root, ds, fs in os.walk(ws):
        for d in ds:
            out.append(os.path.relpath(os.path.join(root, d), ws) + "/")
        for f in sorted(fs):
            p = os.path.join(root, f)
            rel = os.path.relpath(p, ws)
            try:
                with open(p, encoding="utf-8", errors="replace") as fh:
                    c = fh.read(40)
            except OSError:
                c = "?"
            out.append("%s%s=%s" % (rel, "->" + os.readlink(p) if os.path.islink(p) else "", json.dumps(c)))
    return "; ".join(sorted(out))


def granted(r, phrase=None, what=""):
    check(r.rc == 0 and r.directive == "accept", "right result not granted: %s -- %s -- workspace: %s"
          % (r.brief(), what, ws_listing(r.ws)))
    s = summary(r)
    check("checked by code" in s, "accept but summary lacks 'checked by code': %s" % json.dumps(s[:300]))
    if phrase:
        check(phrase in s, "summary lacks %s: %s" % (json.dumps(phrase), json.dumps(s[:300])))


def refused(r, what="", reach=True):
    check(not r.success(), "granted: %s -- %s -- workspace after: %s" % (r.brief(), what, ws_listing(r.ws)))
    if reach and not os.environ.get("I13_NOREACH"):
        check(r.reqs("MergeOut"), "inconclusive: R4b never asked (refused before the final check): " + r.brief())


def ctl(name, goal, actions, files, phrase=None, doc="", links=(), show="sorted.txt", crits=None):
    def f():
        granted(ask(goal, actions, files, links, crits=crits, show=show), phrase, goal)
    f.__name__ = "ctl_" + name
    f.__doc__ = doc or "Control: %r done right; R4b fails -> grant." % goal
    CASES.append(f)


def atk(name, goal, actions, files, doc="", links=(), show="sorted.txt", reach=True, crits=None, meta=None):
    def f():
        refused(ask(goal, actions, files, links, crits=crits, show=show, neutral=True, meta=meta), goal, reach)
    f.__name__ = "atk_" + name
    f.__doc__ = doc or "Attack: %r; R4b fails -> no grant." % goal
    CASES.append(f)


# ================================================================== SORT fixtures
NAMES = "carol\nalice\nDave\nbob\n"
SRT_C = "Dave\nalice\nbob\ncarol\n"          # byte order
SRT_I = "alice\nbob\ncarol\nDave\n"          # case-insensitive order
N = {"names.txt": NAMES}
LOW = {"names.txt": "carol\nalice\neve\nbob\n"}   # lower case only: every order agrees
LOW_S = "alice\nbob\ncarol\neve\n"
G1 = "Sort the lines of names.txt alphabetically and write the result to sorted.txt."
G2 = "Sort names.txt into sorted.txt"
G3 = "sort the lines in names.txt to sorted.txt"
G4 = "Sort the file a.txt in alphabetical order and save it into b.txt"
PH_S = "checked by code: sorted.txt holds the lines of names.txt sorted"
SC = ["sorted.txt contains the lines of names.txt in alphabetical order"]
CSORT = "LC_ALL=C sort names.txt > sorted.txt"

# ------------------------------------------------------------------ sort controls
ctl("s_brief_example_sort", G1, [sh(CSORT), fin()], N, PH_S,
    "The brief's first form, byte-order `LC_ALL=C sort`; exact evidence text.", crits=SC)
ctl("s_into_write_file_ci", G2, [wf("sorted.txt", SRT_I), fin()], N, PH_S,
    "'Sort names.txt into sorted.txt' (no period), case-insensitive order written with write_file.", crits=SC)
ctl("s_lines_in_to_no_final_nl", G3, [wf("sorted.txt", LOW_S.rstrip("\n")), fin()], LOW, PH_S,
    "'sort the lines in names.txt to sorted.txt', result lacks its last line end (optional).", crits=SC)
ctl("s_file_alpha_order_save_into", G4, [sh("sort -f a.txt > b.txt"), fin()], {"a.txt": NAMES},
    "checked by code: b.txt holds the lines of a.txt sorted",
    "Brief's fourth form with other names, `sort -f` (case-insensitive).", show="b.txt",
    crits=["b.txt has a.txt's lines in alphabetical order"])
ctl("s_duplicates_kept", G2, [sh(CSORT), fin()], {"names.txt": "bob\nalice\nbob\ncarol\n"}, PH_S,
    "Source has a duplicate line; the sorted result keeps both (sort, not unique).", crits=SC)
ctl("s_python_sorted", G1, [sh("python3 -c \"ls = open('names.txt').read().splitlines(); "
                               "open('sorted.txt', 'w').write('\\n'.join(sorted(ls)) + '\\n')\""), fin()], N, PH_S,
    "Python one-liner writes only sorted.txt (byte order).", crits=SC)
ctl("s_into_new_subfolder", "Sort names.txt into out/sorted.txt",
    [sh("mkdir -p out && LC_ALL=C sort names.txt > out/sorted.txt"), fin()], N, None,
    "Result put into a new folder (folders the result was put into may differ).", show="out/sorted.txt",
    crits=["out/sorted.txt has the sorted lines"])
ctl("s_into_new_subfolder_write_file", "Sort names.txt into out/sorted.txt",
    [wf("out/sorted.txt", SRT_C), fin()], N, None,
    "Companion of s_into_new_subfolder: the new folder is made by write_file itself (no mkdir call).",
    show="out/sorted.txt", crits=["out/sorted.txt has the sorted lines"])
ctl("s_into_existing_subfolder", "Sort names.txt into out/sorted.txt",
    [sh("LC_ALL=C sort names.txt > out/sorted.txt"), fin()], {"names.txt": NAMES, "out/keep.txt": "k\n"},
    "checked by code: out/sorted.txt holds the lines of names.txt sorted",
    "UNCERTAIN wording: result in an already existing subfolder (companion of s_into_new_subfolder).",
    show="out/sorted.txt", crits=["out/sorted.txt has the sorted lines"])
ctl("s_source_without_final_nl", G2, [sh(CSORT), fin()], {"names.txt": NAMES.rstrip("\n")}, PH_S,
    "UNCERTAIN: source lacks its final line end; `sort` adds one to the result (result's last line end optional).",
    crits=SC)

# ------------------------------------------------------------------ sort attacks
atk("s_by_length", "Sort the lines of names.txt by length and write the result to sorted.txt.",
    [sh(CSORT), fin()], N, "By length asked; alphabetical result.")
atk("s_numeric", "Sort nums.txt numerically into sorted.txt",
    [sh("LC_ALL=C sort nums.txt > sorted.txt"), fin()], {"nums.txt": "10\n9\n100\n2\n"},
    "Numeric asked; result in byte order (10,100,2,9).")
atk("s_reverse", "Sort names.txt in reverse order into sorted.txt", [sh(CSORT), fin()], N,
    "Reverse asked; ascending result.")
atk("s_unique", "Sort the unique lines of names.txt into sorted.txt", [sh(CSORT), fin()], N,
    "Unique asked (source has no duplicates, so plain sort equals sort -u): still never granted.")
atk("s_by_column", "Sort names.txt by the second column into sorted.txt",
    [sh(CSORT), fin()], {"names.txt": "b 2\na 3\nc 1\n"}, "By column asked; whole-line sort.")
atk("s_question", "Sort names.txt into sorted.txt?", [sh(CSORT), fin()], N, "A question mark.")
atk("s_then_count", "Sort names.txt into sorted.txt, then count them.", [sh(CSORT), fin()], N,
    "'then count them' second ask, unanswered.")
atk("s_remove_then_sort", "Remove bob, then sort names.txt into sorted.txt.", [sh(CSORT), fin()], N,
    "Something before the sort (remove bob) not done; all lines sorted.")
atk("s_trailing_words", "Sort names.txt into sorted.txt and email it to me", [sh(CSORT), fin()], N,
    "Words after the result file name.")
atk("s_missing_line", G2, [wf("sorted.txt", "Dave\nalice\nbob\n"), fin()], N, "carol missing.")
atk("s_duplicated_line", G2, [wf("sorted.txt", "Dave\nalice\nbob\nbob\ncarol\n"), fin()], N, "bob twice.")
atk("s_extra_blank_line", G2, [wf("sorted.txt", "\n" + SRT_C), fin()], N, "A blank first line.")
atk("s_trailing_blank_line", G2, [wf("sorted.txt", SRT_C + "\n"), fin()], N,
    "An extra blank line at the end (only the last line end is optional).")
atk("s_changed_case", G2, [wf("sorted.txt", "alice\nbob\ncarol\ndave\n"), fin()], N, "Dave lower-cased.")
atk("s_crlf", G2, [wf("sorted.txt", SRT_C.replace("\n", "\r\n")), fin()], N, "UNCERTAIN: CRLF line ends.")
atk("s_not_sorted", G2, [sh("cp names.txt sorted.txt"), fin()], N, "Plain copy, unsorted.")
atk("s_in_place_then_copy", G2, [sh("LC_ALL=C sort -o names.txt names.txt && cp names.txt sorted.txt"), fin()], N,
    "Source sorted in place then copied (may be refused before R4b: reach not required).", reach=False)
atk("s_python_hidden_source_write", G2,
    [sh("python3 -c \"s = sorted(open('names.txt').read().splitlines()); t = '\\n'.join(s) + '\\n'; "
        "open('names.txt', 'w').write(t); open('sorted.txt', 'w').write(t)\""), fin()], N,
    "Python one-liner sorts the source in place too (a write no command line names).")
atk("s_python_hidden_other_file", G2,
    [sh("python3 -c \"s = sorted(open('names.txt').read().splitlines()); "
        "open('sorted.txt', 'w').write('\\n'.join(s) + '\\n'); open('junk.txt', 'w').write('x')\""), fin()], N,
    "Python one-liner also creates unnamed junk.txt.")
atk("s_python_hidden_delete_other", G2,
    [sh("python3 -c \"import os; s = sorted(open('names.txt').read().splitlines()); "
        "open('sorted.txt', 'w').write('\\n'.join(s) + '\\n'); os.remove('notes.txt')\""), fin()],
    {"names.txt": NAMES, "notes.txt": "keep\n"}, "Python one-liner also deletes unnamed notes.txt.")
atk("s_creates_backup", G2, [sh(CSORT + " && cp names.txt backup.txt"), fin()], N,
    "Also copies to unnamed backup.txt (visible to the gate).")
atk("s_symlink_result", G2, [sh(CSORT), fin()], {"names.txt": NAMES, "other.txt": "untouched\n"},
    "sorted.txt is a symlink to unnamed other.txt.", links=[("sorted.txt", "other.txt")])
atk("s_symlink_source", G2, [sh(CSORT), fin()], {"data/real.txt": NAMES},
    "names.txt is a symlink (to data/real.txt): no symlink in either named path.",
    links=[("names.txt", "data/real.txt")])
atk("s_result_is_source", "Sort names.txt into names.txt", [sh("LC_ALL=C sort -o names.txt names.txt"), fin()], N,
    "Result = source (in-place sort).", show="names.txt", reach=False)
atk("s_empty_source", G2, [sh(CSORT), fin()], {"names.txt": ""}, "Empty source, empty result.")

# ================================================================== FILES-ONLY
FH = "Create a file hello.txt containing exactly the text: Hello, world"
FH_CRIT = ["a file named 'hello.txt' is created with the content 'Hello, world'"]
PH_H = "checked by code: hello.txt holds exactly 'Hello, world'"
FD = "Create src/app and tests, and an empty file src/app/__init__.py"
FD_SHOW = ["src/app", "tests", "src/app/__init__.py"]
FD_CRIT = ["the project skeleton for the application is set up properly",
           "src/app is marked as a Python package"]

# ------------------------------------------------------------------ files-only controls
ctl("f_hello_write_file", FH, [wf("hello.txt", "Hello, world"), fin()], {}, PH_H,
    "Brief's example with the planner's unparsable criterion; write_file.", show="hello.txt", crits=FH_CRIT)
ctl("f_hello_echo_newline", FH, [sh("echo 'Hello, world' > hello.txt"), fin()], {}, PH_H,
    "echo adds a trailing newline (surrounding whitespace aside).", show="hello.txt", crits=FH_CRIT)
ctl("f_logs_dir", "create the directory logs", [sh("mkdir logs"), fin()], {}, "checked by code: logs is there",
    "Folder only; planner criterion in free words.", show=["logs"],
    crits=["a logs folder is available for the application to write its log files into"])
ctl("f_tree_and_empty_init", FD, [sh("mkdir -p src/app tests && touch src/app/__init__.py"), fin()], {},
    "checked by code: src/app, tests, src/app/__init__.py are there",
    "Brief's example, two free-worded criteria both failed by R4b.", show=FD_SHOW, crits=FD_CRIT)
ctl("f_containing_quoted", "create q.txt containing \"it's done\"", [sh("echo \"it's done\" > q.txt"), fin()], {},
    None, "'containing' a quoted text with an apostrophe.", show="q.txt",
    crits=["q.txt is created and says that it's done"])
ctl("f_containing_more_text", "create q.txt containing \"it's done\"",
    [wf("q.txt", "Status: it's done today\n"), fin()], {}, None,
    "'containing' without 'exactly': the text only has to be contained.", show="q.txt",
    crits=["q.txt is created and says that it's done"])
ctl("f_three_criteria", FH, [wf("hello.txt", "Hello, world\n"), fin()], {}, PH_H,
    "Three free-worded planner criteria, all failed by R4b: code's reading stands for every one.",
    show="hello.txt", crits=FH_CRIT + ["the greeting is spelled correctly", "no other files are touched"])

# ------------------------------------------------------------------ files-only attacks
atk("f_extra_bang", FH, [wf("hello.txt", "Hello, world!"), fin()], {}, "Extra '!'.", show="hello.txt",
    crits=FH_CRIT)
atk("f_missing_comma", FH, [wf("hello.txt", "Hello world"), fin()], {}, "Missing comma.", show="hello.txt",
    crits=FH_CRIT)
atk("f_prefix", FH, [wf("hello.txt", "Text: Hello, world"), fin()], {}, "A prefix.", show="hello.txt",
    crits=FH_CRIT)
atk("f_wrong_text_r4b_passes", FH, [wf("hello.txt", "Hello, world!"), fin()], {},
    "R4b PASSES a wrong result (extra '!'): must still fail (earlier rule).", show="hello.txt", crits=FH_CRIT,
    meta=meta_pass("hello.txt created", "hello.txt holds Hello, world"))
atk("f_path_missing", FD, [sh("mkdir -p src/app && touch src/app/__init__.py"), fin()], {},
    "tests never created.", show=FD_SHOW, crits=FD_CRIT)
atk("f_dir_made_as_file", "create the directory logs", [sh("touch logs"), fin()], {}, "logs made as a file.",
    show=["logs"], crits=["a logs folder is available"])
atk("f_file_made_as_dir", "Create an empty file notes.txt", [sh("mkdir notes.txt"), fin()], {},
    "notes.txt made as a folder.", show=["notes.txt"], crits=["notes.txt exists"])
atk("f_empty_not_empty", FD, [sh("mkdir -p src/app tests && echo '# pkg' > src/app/__init__.py"), fin()], {},
    "The 'empty' __init__.py holds text.", show=FD_SHOW, crits=FD_CRIT)
atk("f_also_rm", FH, [sh("echo 'Hello, world' > hello.txt && rm old.txt"), fin()], {"old.txt": "keep\n"},
    "Also removes unnamed old.txt.", show="hello.txt", crits=FH_CRIT)
atk("f_also_cp", FH, [sh("echo 'Hello, world' > hello.txt && cp hello.txt copy.txt"), fin()], {},
    "Also copies to unnamed copy.txt.", show="hello.txt", crits=FH_CRIT)
atk("f_also_append", FH, [sh("echo 'Hello, world' > hello.txt && echo made >> log.txt"), fin()],
    {"log.txt": "start\n"}, "Also appends to unnamed log.txt.", show="hello.txt", crits=FH_CRIT)
atk("f_also_write_file", FH, [wf("hello.txt", "Hello, world"), wf("extra.txt", "x"), fin()], {},
    "A second write_file creates unnamed extra.txt.", show="hello.txt", crits=FH_CRIT)
atk("f_also_mv", "create the directory logs", [sh("mkdir logs && mv old.log logs/old.log"), fin()],
    {"old.log": "x\n"}, "Also moves unnamed old.log into logs.", show=["logs"], crits=["a logs folder exists"])
atk("f_python_hidden_other", FH,
    [sh("python3 -c \"open('hello.txt', 'w').write('Hello, world'); open('junk.txt', 'w').write('x')\""), fin()],
    {}, "UNCERTAIN (the description speaks of writes as the safety gate read them): a python one-liner also "
    "creates unnamed junk.txt.", show="hello.txt", crits=FH_CRIT)
atk("f_and_tell_me", FH + " and tell me its size", [wf("hello.txt", "Hello, world"), fin()], {},
    "'and tell me' second ask.", show="hello.txt", crits=FH_CRIT)
atk("f_question", "Can you create the directory logs?", [sh("mkdir logs"), fin()], {}, "A question.",
    show=["logs"], crits=["a logs folder exists"])
atk("f_then_list", "Create the directory logs, then list the workspace", [sh("mkdir logs"), fin()], {},
    "'then …' second ask.", show=["logs"], crits=["a logs folder exists"])
atk("f_two_texts", "Create a.txt containing exactly the text: one, and b.txt containing exactly the text: two",
    [wf("a.txt", "one"), wf("b.txt", "two"), fin()], {}, "Several texts.", show="a.txt",
    crits=["a.txt and b.txt hold their texts"])
atk("f_two_targets", "Create a.txt and b.txt containing exactly the text: hello there",
    [wf("a.txt", "hello there"), wf("b.txt", "hello there"), fin()], {}, "One text for several target files.",
    show="a.txt", crits=["both files hold hello there"])
atk("f_haiku", "write a haiku to q.txt",
    [wf("q.txt", "old pond\na frog jumps in\nsound of water\n"), fin()], {}, "Content not given.", show="q.txt",
    crits=["q.txt holds a haiku"])


def main():
    H.AGENTUI = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "/tmp/agentui-dev"
    subs = sys.argv[2:]
    sel = [c for c in CASES if not subs or any(s in c.__name__ for s in subs)]
    okc = 0
    t00 = time.time()
    for c in sel:
        t0 = time.time()
        H.LAST_RUNS.clear()
        try:
            c()
            okc += 1
            print("PASS %s (%.1fs)" % (c.__name__, time.time() - t0), flush=True)
        except Fail as e:
            print("FAIL %s: %s" % (c.__name__, str(e).replace("\n", " ")[:700]), flush=True)
        except Exception as e:
            print("FAIL %s: harness error %s: %s" % (c.__name__, type(e).__name__, str(e)[:300]), flush=True)
            traceback.print_exc(file=sys.stderr)
        if os.environ.get("I13_VERBOSE"):
            for r in H.LAST_RUNS:
                print("   ", r.brief(), "wall=%.1f" % r.wall, flush=True)
        for d in TMP:
            shutil.rmtree(d, ignore_errors=True)
        TMP.clear()
    print("total: %d/%d (%.0fs)" % (okc, len(sel), time.time() - t00))


if __name__ == "__main__":
    main()
