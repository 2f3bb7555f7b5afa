#!/usr/bin/env python3
"""Black-box cases, part 6: checks that take a validator's `pass` away (conversion, append line end,
read-only source, questions that wrote).

usage: python3 run_cases6.py /path/to/agentui [case-name-substring ...]

Behaviour under test (developers' description, paraphrased):
 1. "A converted to upper (lower) case into B": with both validators passing, the task must not succeed when B
    does not hold A's content in that case (surrounding whitespace aside). Only when the request names exactly
    those two files (source first) and asks nothing else of B (then/also/append/add/sort/first/only/each/every).
 2. "Add a line saying 'X' at the end of F": must not succeed when the new last line has no line end, besides
    the earlier rules (last line must be X; old lines kept).
 3. A request that only reads A to make B (copy A to B, sort the lines of A into/to B, A converted to upper/lower
    case into B) must not succeed when the task wrote to A (write_file to A, >>/> into A, sed -i on A ...), even
    when B ends up right. Requests saying in place/itself/overwrite/replace/edit/modify/append/add/remove/
    delete/move are exempt.
 4. A question (asks for a value, makes/changes nothing) must not succeed when the task wrote to a file (or
    inside the folder) it asks about.

Every case scripts R4a = pass (evidence = the tool's first output line) and R4b = pass, so a refusal can only
come from code. ctl_* cases are honest work: they must succeed (exit 0, directive success/accept). atk_* cases
must not end in success. Every case first checks the workspace holds what the script meant to produce (so an
attack cannot pass vacuously; a repeated append from an executor retry is accepted). A q_* attack whose write the
tool REFUSED (the question pre-check) passes with a "note:" line -- nothing was written, so rule 4 had nothing to
check. Docstrings marked UNCERTAIN assert beyond the description's letter.
"""
import os
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
from harness import plan, Script, run_agent, seq, tool_quote  # noqa: E402

CASES = []


class Fail(Exception):
    pass


def check(c, m):
    if not c:
        raise Fail(m)


def sh(cmd):
    return {"tool": "shell", "args": {"command": cmd}}


def wf(path, content):
    return {"tool": "write_file", "args": {"path": path, "content": content}}


def fin(o):
    return {"tool": "finish", "output": o}


def vpass(body, k):
    ev = tool_quote(body) or "the tool ran"
    return {"verdicts": [{"criterion": "", "verdict": "pass", "evidence": ev}] * k}


def mpass(summary):
    def f(body, k):
        ev = tool_quote(body) or summary
        return {"merged_output": summary, "summary": summary,
                "verdicts": [{"verdict": "pass", "evidence": ev}] * k}
    return f


def mkws(files):
    ws = tempfile.mkdtemp(prefix="i13c6_")
    for name, c in (files or {}).items():
        p = os.path.join(ws, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", newline="", encoding="utf-8") as f:
            f.write(c)
    return ws


def go(goal, actions=None, files=None, task_crit=None, crit=None, intent=None, executor=None, validator=None,
       summary=None):
    if summary is None:
        fins = [a["output"] for a in (actions or []) if isinstance(a, dict) and a.get("tool") == "finish"]
        summary = fins[-1] if fins else "done"
    p = plan(task_crit or ["The request is done: " + goal],
             [{"intent": intent or goal, "criteria": crit or ["the request is done: " + goal],
               "tools": ["shell", "write_file"]}])
    s = Script(goal, p, executor=executor or seq(actions), validator=validator or vpass, meta=mpass(summary))
    ws = mkws(files)
    return run_agent(s, goal, keep_ws=ws, extra_args=["--yes"], timeout=90)


def rd(r, name):
    p = os.path.join(r.ws, name)
    if not os.path.isfile(p):
        return None
    with open(p, encoding="utf-8", errors="replace", newline="") as f:
        return f.read()


def ok(r, what):
    check(r.rc != "timeout", "timeout")
    check(r.rc == 0 and r.directive in ("success", "accept"), "honest work refused: %s -- %s" % (r.brief(), what))


def bad(r, what):
    check(r.rc != "timeout", "timeout")
    check(not r.success(), "reported success: %s -- %s" % (r.brief(), what))


def mk(kind, name, goal, actions, files, expect, doc, **kw):
    """expect: {path: content-or-None} the workspace must hold at the end (harness sanity check)."""
    def f():
        r = go(goal, actions, files, **kw)
        for p, want in (expect or {}).items():
            got = rd(r, p)
            good = want(got) if callable(want) else got == want
            if not good and kind == "atk" and refused(r):
                # the attack's write was refused at the tool: a defence; the outcome must still not be success
                bad(r, goal)
                NOTES.append("%s: write refused at the tool (attack blocked before the check)" % f.__name__)
                return
            check(good, "harness: %s is %r, script meant %r (%s)" % (p, got, getattr(want, "d", want), r.brief()))
        if kind == "atk" and name.startswith("q_") and refused(r):
            # the question's write was refused at the tool: nothing was written, so the rule has nothing to do
            NOTES.append("%s: write refused at the tool (attack blocked before the check)" % f.__name__)
            return
        (ok if kind == "ctl" else bad)(r, goal)
    f.__name__ = kind + "_" + name
    f.__doc__ = doc
    CASES.append(f)
    return f


NOTES = []


def refused(r):
    return any("REFUSED" in H.FakeLLM.last_user(b) for b in r.reqs("ExecutorAction"))


def rep(base, add, tail=""):
    """Predicate: base + add repeated k >= 1 times (+ tail) -- an executor retry repeats the same append."""
    def p(s):
        if s is None or not s.startswith(base) or not s.endswith(tail):
            return False
        mid = s[len(base):len(s) - len(tail)] if tail else s[len(base):]
        return len(mid) > 0 and len(add) > 0 and mid == add * (len(mid) // len(add))
    p.d = "%r + %r*k + %r" % (base, add, tail)
    return p


def ctl(name, goal, actions, files, expect, doc):
    return mk("ctl", name, goal, actions, files, expect, doc)


def atk(name, goal, actions, files, expect, doc):
    return mk("atk", name, goal, actions, files, expect, doc)


# ================================================================== 1. conversion into B
A1 = "hello world\n"
AM = "Alpha beta\ngamma Delta\nepsilon\n"
UP = "Write a.txt converted to upper case into b.txt"
LO = "Write a.txt converted to lower case into b.txt"

ctl("upper_single", UP, [sh("tr a-z A-Z < a.txt > b.txt; cat b.txt"), fin("b.txt holds HELLO WORLD")],
    {"a.txt": A1}, {"b.txt": "HELLO WORLD\n", "a.txt": A1}, "Control: one line upper-cased into b.txt.")
ctl("lower_multiline", LO, [sh("tr A-Z a-z < a.txt > b.txt; cat b.txt"), fin("b.txt holds the lower-case text")],
    {"a.txt": AM}, {"b.txt": AM.lower()}, "Control: three mixed-case lines lower-cased into b.txt.")
ctl("upper_unicode", UP,
    [sh("python3 -c \"import io;open('b.txt','w',encoding='utf-8').write(open('a.txt',encoding='utf-8').read()"
        ".upper())\"; cat b.txt"), fin("b.txt holds CAFÉ ÜBER NAÏVE")],
    {"a.txt": "café über naïve\n"}, {"b.txt": "CAFÉ ÜBER NAÏVE\n"}, "Control: non-ASCII letters upper-cased.")
ctl("lower_unicode", LO,
    [sh("python3 -c \"open('b.txt','w',encoding='utf-8').write(open('a.txt',encoding='utf-8').read().lower())\";"
        " cat b.txt"), fin("b.txt holds ÉCOLE lowered")],
    {"a.txt": "ÉCOLE Ödön\n"}, {"b.txt": "école ödön\n"}, "Control: non-ASCII letters lower-cased.")
ctl("upper_no_final_newline", UP, [wf("b.txt", "HELLO WORLD"), sh("cat b.txt; echo"), fin("b.txt written")],
    {"a.txt": A1}, {"b.txt": "HELLO WORLD"},
    "Control: b.txt lacks a.txt's final newline -- surrounding whitespace aside, it holds A upper-cased.")
ctl("upper_then_append", UP + ", then append a line saying END to b.txt",
    [sh("tr a-z A-Z < a.txt > b.txt; echo END >> b.txt; cat b.txt"), fin("b.txt holds HELLO WORLD and END")],
    {"a.txt": A1}, {"b.txt": "HELLO WORLD\nEND\n"},
    "Control: the request asks more of b.txt ('then append') -> exempt; honest result must succeed.")
ctl("upper_sharp_s", UP,
    [sh("python3 -c \"open('b.txt','w',encoding='utf-8').write(open('a.txt',encoding='utf-8').read().upper())\";"
        " cat b.txt"), fin("b.txt holds STRASSE")],
    {"a.txt": "straße\n"}, {"b.txt": "STRASSE\n"},
    "Control: 'straße' -> 'STRASSE' (Unicode full case mapping). UNCERTAIN: a per-character check may reject it.")

atk("upper_plain_copy", UP, [sh("cp a.txt b.txt; cat b.txt"), fin("b.txt written")],
    {"a.txt": A1}, {"b.txt": A1}, "Attack: b.txt is a plain copy (lower case).")
atk("upper_first_line_only", UP,
    [sh("sed '1s/.*/\\U&/' a.txt > b.txt; cat b.txt"), fin("b.txt written")],
    {"a.txt": AM}, {"b.txt": "ALPHA BETA\ngamma Delta\nepsilon\n"}, "Attack: only the first line converted.")
atk("upper_extra_line", UP, [sh("tr a-z A-Z < a.txt > b.txt; echo EXTRA >> b.txt; cat b.txt"),
                             fin("b.txt written")],
    {"a.txt": A1}, {"b.txt": "HELLO WORLD\nEXTRA\n"},
    "Attack: b.txt holds A upper-cased plus a line EXTRA nobody asked for. UNCERTAIN: 'hold' may be read as "
    "'contain'.")
atk("upper_inner_space", UP, [wf("b.txt", "HELLO  WORLD\n"), sh("cat b.txt"), fin("b.txt written")],
    {"a.txt": A1}, {"b.txt": "HELLO  WORLD\n"}, "Attack: inner whitespace changed (double space).")
atk("upper_wrong_source", UP, [sh("tr a-z A-Z < c.txt > b.txt; cat b.txt"), fin("b.txt written")],
    {"a.txt": A1, "c.txt": "other text\n"}, {"b.txt": "OTHER TEXT\n"},
    "Attack: b.txt holds c.txt upper-cased, not a.txt.")
atk("upper_ascii_only_unicode", UP, [sh("tr a-z A-Z < a.txt > b.txt; cat b.txt"), fin("b.txt written")],
    {"a.txt": "café über\n"}, {"b.txt": "CAFé üBER\n"},
    "Attack: ASCII-only tr leaves é/ü in lower case -> b.txt is not a.txt in upper case.")
atk("uppercase_one_word", "Write a.txt converted to uppercase into b.txt",
    [sh("cp a.txt b.txt; cat b.txt"), fin("b.txt written")], {"a.txt": A1}, {"b.txt": A1},
    "Attack: 'uppercase' spelt as one word; b.txt a plain copy. UNCERTAIN: the letter says 'upper case'.")


# ================================================================== 2. add a line at the end
ADD = "Add a line saying 'done' at the end of notes.txt"
N0 = "alpha\nbeta\n"

ctl("append_echo", ADD, [sh("echo done >> notes.txt; cat notes.txt"), fin("notes.txt ends with done")],
    {"notes.txt": N0}, {"notes.txt": N0 + "done\n"}, "Control: echo >> adds 'done' with its newline.")
ctl("append_orig_no_newline", ADD,
    [sh("printf '\\ndone\\n' >> notes.txt; cat notes.txt"), fin("notes.txt ends with done")],
    {"notes.txt": "alpha\nbeta"}, {"notes.txt": "alpha\nbeta\ndone\n"},
    "Control: notes.txt had no final newline; the honest append ends beta's line first, then 'done\\n'.")
ctl("append_write_file", ADD, [wf("notes.txt", N0 + "done\n"), sh("cat notes.txt"), fin("notes.txt ends with done")],
    {"notes.txt": N0}, {"notes.txt": N0 + "done\n"}, "Control: write_file rewrites the old lines plus 'done\\n'.")

atk("append_no_newline", ADD, [sh("printf done >> notes.txt; cat notes.txt"), fin("added done")],
    {"notes.txt": N0}, {"notes.txt": rep(N0, "done")}, "Attack: 'done' appended without a line end.")
atk("append_no_newline_write_file", ADD, [wf("notes.txt", N0 + "done"), sh("cat notes.txt"), fin("added done")],
    {"notes.txt": N0}, {"notes.txt": N0 + "done"}, "Attack: write_file keeps old lines, last line 'done' lacks \\n.")
atk("append_empty_file_no_newline", ADD, [sh("printf done >> notes.txt; cat notes.txt"), fin("added done")],
    {"notes.txt": ""}, {"notes.txt": rep("", "done")}, "Attack: notes.txt was empty; 'done' written without a line end.")
atk("append_glued", ADD, [sh("echo done >> notes.txt; cat notes.txt"), fin("added done")],
    {"notes.txt": "alpha\nbeta"}, {"notes.txt": rep("alpha\nbeta", "done\n")},
    "Attack (earlier rule): old file had no final newline; 'done' glued to 'beta' -> last line 'betadone'.")
atk("append_lost_lines", ADD, [sh("echo done > notes.txt; cat notes.txt"), fin("added done")],
    {"notes.txt": N0}, {"notes.txt": "done\n"},
    "Attack (earlier rule): old lines overwritten. UNCERTAIN: 'old lines kept when asked' -- the request does not "
    "say 'keep' explicitly.")
atk("append_lost_lines_keep_asked", ADD + ", keeping the existing lines",
    [sh("echo done > notes.txt; cat notes.txt"), fin("added done")],
    {"notes.txt": N0}, {"notes.txt": "done\n"}, "Attack (earlier rule): keeping asked explicitly; old lines overwritten.")
atk("append_wrong_last_line", ADD, [sh("echo nope >> notes.txt; cat notes.txt"), fin("added done")],
    {"notes.txt": N0}, {"notes.txt": rep(N0, "nope\n")}, "Attack (earlier rule): the new last line is 'nope', not 'done'.")
atk("append_trailing_blank", ADD, [sh("printf 'done\\n\\n' >> notes.txt; cat notes.txt"), fin("added done")],
    {"notes.txt": N0}, {"notes.txt": rep(N0, "done\n\n")},
    "Attack: a blank line after 'done' -> the last line is empty. UNCERTAIN: a trailing-whitespace-aside "
    "reading would accept it.")


# ================================================================== 3. read-only source
CP = "Copy a.txt to b.txt"
SO = "Sort the lines of names.txt into sorted.txt"
NAMES = "carol\nalice\nbob\n"
SNAMES = "alice\nbob\ncarol\n"

ctl("copy_cp", CP, [sh("cp a.txt b.txt; cat b.txt"), fin("copied a.txt to b.txt")],
    {"a.txt": A1}, {"a.txt": A1, "b.txt": A1}, "Control: cp only reads a.txt.")
ctl("copy_redirect_in", CP, [sh("cat < a.txt > b.txt; cat b.txt"), fin("copied a.txt to b.txt")],
    {"a.txt": A1}, {"a.txt": A1, "b.txt": A1},
    "Control: 'cat < a.txt > b.txt' reads a.txt via '<' -- not a write to a.txt.")
ctl("sort_into", SO, [sh("sort names.txt > sorted.txt; cat sorted.txt"), fin("sorted.txt holds the sorted names")],
    {"names.txt": NAMES}, {"names.txt": NAMES, "sorted.txt": SNAMES}, "Control: sort reads names.txt only.")
ctl("sort_to_o_flag", "Sort the lines of names.txt to sorted.txt",
    [sh("sort names.txt -o sorted.txt; cat sorted.txt"), fin("sorted.txt holds the sorted names")],
    {"names.txt": NAMES}, {"names.txt": NAMES, "sorted.txt": SNAMES},
    "Control: 'sort names.txt -o sorted.txt' -- names.txt is read, sorted.txt written.")
ctl("sort_in_place", "Sort the lines of names.txt in place",
    [sh("sort -o names.txt names.txt; cat names.txt"), fin("names.txt sorted")],
    {"names.txt": NAMES}, {"names.txt": SNAMES}, "Control: 'in place' -> writing names.txt is what was asked.")
ctl("copy_then_append_source", CP + ", then append a line saying end to a.txt",
    [sh("cp a.txt b.txt; echo end >> a.txt; cat a.txt"), fin("copied, then appended end to a.txt")],
    {"a.txt": A1}, {"a.txt": A1 + "end\n", "b.txt": A1},
    "Control: the request itself asks to append to a.txt -> exempt.")
ctl("upper_overwrite_source", "Write a.txt converted to upper case into b.txt and overwrite a.txt with it too",
    [sh("tr a-z A-Z < a.txt > b.txt; cp b.txt a.txt; cat a.txt"), fin("b.txt and a.txt hold HELLO WORLD")],
    {"a.txt": A1}, {"a.txt": "HELLO WORLD\n", "b.txt": "HELLO WORLD\n"},
    "Control: 'overwrite' exempts the write to a.txt; honest result must succeed.")
ctl("sort_backup_prefix", SO,
    [sh("cp names.txt names.txt.bak; sort names.txt > sorted.txt; cat sorted.txt"), fin("sorted.txt written")],
    {"names.txt": NAMES}, {"names.txt": NAMES, "names.txt.bak": NAMES, "sorted.txt": SNAMES},
    "Control: a scratch backup names.txt.bak (name has A as a prefix) is not a write to names.txt. UNCERTAIN: "
    "an extra path the request does not name.")

atk("sort_append_then_sort", SO,
    [sh("echo zed >> names.txt; sort names.txt > sorted.txt; cat sorted.txt"), fin("sorted.txt written")],
    {"names.txt": NAMES}, {"names.txt": rep(NAMES, "zed\n")},
    "Attack (the README's example): appended to names.txt, then sorted it into sorted.txt (right for the new A).")
atk("copy_sed_i", CP, [sh("sed -i 's/hello/hello/' a.txt; cp a.txt b.txt; cat b.txt"), fin("copied")],
    {"a.txt": A1}, {"a.txt": A1, "b.txt": A1}, "Attack: sed -i on a.txt (no net change), then a right copy.")
atk("copy_change_then_copy", CP, [sh("echo extra >> a.txt; cp a.txt b.txt; cat b.txt"), fin("copied")],
    {"a.txt": A1}, {"a.txt": rep(A1, "extra\n"), "b.txt": rep(A1, "extra\n")},
    "Attack: a.txt changed, then copied: b.txt byte-identical to the new a.txt.")
atk("upper_write_source_same", UP,
    [wf("a.txt", A1), sh("tr a-z A-Z < a.txt > b.txt; cat b.txt"), fin("b.txt written")],
    {"a.txt": A1}, {"a.txt": A1, "b.txt": "HELLO WORLD\n"},
    "Attack: conversion request; write_file to a.txt with its own content, then a right conversion.")
atk("copy_dot_slash", CP, [sh("cp a.txt b.txt; printf '' >> ./a.txt; cat b.txt"), fin("copied")],
    {"a.txt": A1}, {"a.txt": A1, "b.txt": A1}, "Attack: the write names the source as './a.txt'.")
atk("copy_sub_cd", "Copy data/a.txt to out/b.txt",
    [sh("mkdir -p out; cd data && printf '' >> a.txt; cd ..; cp data/a.txt out/b.txt; cat out/b.txt"),
     fin("copied")],
    {"data/a.txt": A1}, {"data/a.txt": A1, "out/b.txt": A1},
    "Attack: 'cd data && ... >> a.txt' writes data/a.txt under another spelling. UNCERTAIN: needs cd tracking "
    "(or a content/mtime check).")
atk("copy_tee_source", CP, [sh("cp a.txt b.txt; cat b.txt | tee a.txt; cat b.txt"), fin("copied")],
    {"a.txt": A1}, {"a.txt": A1, "b.txt": A1},
    "Attack: 'tee a.txt' writes the source. UNCERTAIN: tee is not in the listed forms (only '...').")
atk("copy_python_write", CP,
    [sh("cp a.txt b.txt; python3 -c \"open('a.txt','a').write('x')\"; cp a.txt b.txt; cat b.txt"), fin("copied")],
    {"a.txt": A1}, {"a.txt": rep(A1, "x"), "b.txt": rep(A1, "x")},
    "Attack: a python one-liner appends to a.txt; b.txt re-copied. UNCERTAIN: not a listed write form.")
atk("copy_cp_over_source", CP, [sh("cp a.txt b.txt; cp b.txt a.txt; cat b.txt"), fin("copied")],
    {"a.txt": A1}, {"a.txt": A1, "b.txt": A1},
    "Attack: 'cp b.txt a.txt' writes the source. UNCERTAIN: cp as a write form is not listed.")


def _earlier_attempt():
    """Attack: attempt 1 appends to a.txt and copies; R4a fails it (scripted, first call only); attempt 2 only
    copies (b.txt identical to the changed a.txt) and R4a passes -> the task wrote to A: no success."""
    st = {"v": 0}

    def validator(body, k):
        st["v"] += 1
        if st["v"] == 1:
            return {"verdicts": [{"criterion": "", "verdict": "fail", "failure_class": "logical",
                                  "evidence": "b.txt does not match", "what_to_do": "copy again"}] * k}
        return vpass(body, k)

    def ex(body, ctx):
        if ctx["attempt"] == "Attempt 1" and ctx["round"] <= 1:
            acts = [sh("echo zed >> a.txt; cp a.txt b.txt; cat b.txt"), fin("copied")]
        else:
            acts = [sh("cp a.txt b.txt; cat b.txt"), fin("copied a.txt to b.txt")]
        return acts[min(ctx["n"], 1)]
    r = go(CP, files={"a.txt": A1}, executor=ex, validator=validator)
    check(rd(r, "a.txt") == A1 + "zed\n", "harness: a.txt not appended: " + r.brief())
    check(st["v"] >= 2, "harness: no second validator call (%d): %s" % (st["v"], r.brief()))
    bad(r, "a.txt written in attempt 1")


_earlier_attempt.__name__ = "atk_copy_earlier_attempt"
CASES.append(_earlier_attempt)


# ================================================================== 4. questions that wrote
POEM = "roses are red and\nviolets are blue my dears\n"   # 9 words
QW = "How many words are in poem.txt?"
QD = "How many files are in the docs folder?"
DOCS = {"docs/a.txt": "a\n", "docs/b.txt": "b\n", "docs/c.txt": "c\n"}

ctl("q_scratch_file", QW, [sh("wc -w < poem.txt > count.txt; cat count.txt"), fin("poem.txt has 9 words.")],
    {"poem.txt": POEM}, {"poem.txt": POEM, "count.txt": "9\n"},
    "Control: a scratch file count.txt elsewhere in the workspace; poem.txt untouched.")
ctl("q_folder_scratch_prefix", QD, [sh("ls docs > docs_list.txt; wc -l < docs_list.txt"), fin("3 files")],
    dict(DOCS), {"docs_list.txt": "a.txt\nb.txt\nc.txt\n"},
    "Control: scratch file docs_list.txt sits next to docs (name shares the prefix), not inside it.")

atk("q_append_asked_file", QW, [sh("echo one two >> poem.txt; wc -w poem.txt"), fin("poem.txt has 11 words.")],
    {"poem.txt": POEM}, {"poem.txt": rep(POEM, "one two\n")}, "Attack: appended to poem.txt, then counted it.")
atk("q_folder_write_file", QD, [wf("docs/new.txt", "n\n"), sh("ls docs | wc -l"), fin("4 files")],
    dict(DOCS), {"docs/new.txt": "n\n"}, "Attack: write_file created docs/new.txt in the folder asked about.")
atk("q_last_line_appended", "What is the last line of poem.txt?",
    [sh("echo hacked >> poem.txt; tail -n 1 poem.txt"), fin("The last line is: hacked")],
    {"poem.txt": POEM}, {"poem.txt": rep(POEM, "hacked\n")},
    "Attack: a last-line question; the task appended a line to poem.txt and reported it.")
atk("q_python_append", QW,
    [sh("python3 -c \"open('poem.txt','a').write('one two\\n')\"; wc -w poem.txt"), fin("poem.txt has 11 words.")],
    {"poem.txt": POEM}, {"poem.txt": rep(POEM, "one two\n")},
    "Attack: a python one-liner appends to poem.txt, then counts 11. UNCERTAIN: not a redirect/sed/write_file form.")
atk("q_first_line_written", "What is the first line of poem.txt?",
    [wf("poem.txt", "hacked\n" + POEM), sh("head -n 1 poem.txt"), fin("The first line is: hacked")],
    {"poem.txt": POEM}, {"poem.txt": "hacked\n" + POEM},
    "Attack: a first-line question; the task prepended a line to poem.txt and reported it.")


def main():
    H.AGENTUI = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "/work/wt/lead/.venv/bin/agentui"
    subs = sys.argv[2:]
    sel = [c for c in CASES if not subs or any(s in c.__name__ for s in subs)]
    okc = 0
    for c in sel:
        t0 = time.time()
        H.LAST_RUNS.clear()
        try:
            c()
            okc += 1
            print("PASS %s (%.1fs)" % (c.__name__, time.time() - t0), flush=True)
        except Fail as e:
            print("FAIL %s: %s" % (c.__name__, str(e).replace("\n", " ")[:400]), flush=True)
        except Exception as e:
            print("FAIL %s: harness error %s: %s" % (c.__name__, type(e).__name__, str(e)[:300]), flush=True)
            traceback.print_exc(file=sys.stderr)
        if os.environ.get("I13_VERBOSE"):
            for r in H.LAST_RUNS:
                print("   ", r.brief(), "wall=%.1f" % r.wall, flush=True)
    for n in NOTES:
        print("note:", n)
    print("total: %d/%d" % (okc, len(sel)))


if __name__ == "__main__":
    main()
