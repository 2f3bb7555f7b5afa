#!/usr/bin/env python3
"""Black-box cases, part 15: "which file contains X" is checked by code (grant on an R4b fail, contradiction on a
validators' pass).

usage: nice -n 19 python3 -u run_cases15.py /path/to/agentui [case-name-substring ...]

Claims under test (change description, paraphrased):
 1. Trigger: a question "Which file(s) [in <folder> | in this folder | here] contain(s) / hold(s) / mention(s) /
    include(s) [the word | text | string | phrase | term] X" (X quoted or one bare token). Code reads the regular
    files (not symlinks) of the named folder, or of the workspace; a question naming specific files -> nothing.
    Open readings are all tried: direct vs subfolders (unless "recursively"/"subfolders"/... or "directly"), hidden
    in/out (unless it says), case exact vs ignored (ignored only for "any case"/"case-insensitive"/...; otherwise
    both), whole word vs part of a longer word. Different sets of holders -> nothing. Binary files (NUL in the first
    4 KB) never hold X; secret files (keys, .env, ...) are not read; over 500 files -> nothing.
 2. GRANT: R4b FAILS, the task changed no file, the answer (<= 400 chars, no "maybe"/"probably"/"not"/"or") names
    every holder and no other looked-at file (path relative to the folder, ./ or absolute allowed, or base name when
    no other looked-at file shares it) -> the criterion passes with evidence like "checked by code: b.txt is the
    only file in this folder holding 'TODO'; the answer names it", directive accept, exit 0, output = the
    executor's answer.
 3. CONTRADICTION: the validators PASS an answer naming none of the holders, or naming a looked-at non-holder ->
    logical fail, evidence "a.txt in this folder does not hold 'TODO'" / "b.txt in this folder holds 'TODO'; the
    answer does not name it"; the replan is told "search the text with: grep -rl TODO . and answer with the file
    names it prints". A partial answer (some holders, no wrong file) is not contradicted.
 4. Never: other "which file" questions (most lines, contains 3 lines, largest, superlatives, numbers), no holder,
    a request that asks to make or change something.

Every case scripts all roles. R4a always passes (its evidence is the first line of the executor's tool output, so
it is grounded). g_/ng_ cases: R4b fails (logical) -> accept can only come from the grant. c_/nc_ cases: R4b
passes too -> only code can make it fail. Later rounds: the executor gives up (infeasible), so a contradicted run
ends in abandon quickly. Global invariants: no Traceback on stderr, no timeout, the workspace is unchanged (byte
for byte, symlinks included) unless the case writes on purpose.
Docstrings marked UNCERTAIN go beyond the description. I15_VERBOSE=1 prints each run's rc/directive/summary and
the code texts found.
"""
import glob
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
from harness import plan, Script, run_agent, passes  # noqa: E402

CASES = []
TMP = []
OBS = []


class Fail(Exception):
    pass


def check(c, m):
    if not c:
        raise Fail(m)


def note(m):
    OBS.append(m)


def sh(cmd):
    return {"tool": "shell", "args": {"command": cmd}}


def fin(o):
    return {"tool": "finish", "output": o}


def inf(o="giving up"):
    return {"tool": "infeasible", "output": o}


def case(name, doc):
    def deco(fn):
        fn.__name__ = name
        fn.__doc__ = doc
        CASES.append(fn)
        return fn
    return deco


# ------------------------------------------------------------------ workspace
def mkws(files=None, links=()):
    base = tempfile.mkdtemp(prefix="i15c_")
    TMP.append(base)
    ws = os.path.join(base, "ws")
    os.makedirs(ws)
    for name, c in (files or {}).items():
        p = os.path.join(ws, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if isinstance(c, bytes):
            with open(p, "wb") as f:
                f.write(c)
        else:
            with open(p, "w", newline="", encoding="utf-8") as f:
                f.write(c)
    for src, dst in links:
        p = os.path.join(ws, src)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.symlink(dst, p)
    return ws


def snapshot(ws):
    out = {}
    for root, ds, fs in os.walk(ws):
        for n in ds + fs:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, ws)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isfile(p):
                with open(p, "rb") as f:
                    out[rel] = ("file", f.read())
            else:
                out[rel] = ("dir", None)
    return out


# ------------------------------------------------------------------ observation
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


def texts(r):
    """Texts the product wrote about verdicts: criterion evidence, corrections, replan requests, directives, the
    final summary."""
    out = []
    for e in envelopes(r):
        p = e.get("payload") or {}
        t = e["type"]
        if t == "SubTaskOutcome":
            for v in p.get("criteria_verdicts") or []:
                out.append(("verdict:%s:%s" % (v.get("verdict"), v.get("failure_class")), v.get("evidence") or ""))
            out.append(("failure_reason", p.get("failure_reason") or ""))
        elif t == "CorrectionSignal":
            out.append(("correction", "%s | %s" % (p.get("what_was_wrong"), p.get("what_to_do"))))
        elif t == "ReplanRequest":
            out.append(("replan", p.get("gap_summary") or ""))
        elif t == "PlanDirective":
            out.append(("directive", p.get("rationale") or ""))
        elif t == "FinalResult":
            out.append(("summary", p.get("summary") or ""))
    return out


CODE_PAT = re.compile(r"checked by code|contradicted by the workspace|does not hold '|the answer does not name it|"
                      r"holding '|holds '")
CONTRA_PAT = re.compile(r"contradicted by the workspace|does not hold '|the answer does not name it")


def code_texts(r, pat=CODE_PAT):
    return [(k, t) for k, t in texts(r) if pat.search(t)]


def contra_texts(r):
    return code_texts(r, CONTRA_PAT)


def planner_after_first(r):
    return [H.user_text(b) for b in r.reqs("PlanOut")[1:]]


def executor_prompts(r):
    out = []
    for b in r.reqs("ExecutorAction"):
        m = next((m["content"] for m in b.get("messages", []) if m.get("role") == "user"), "")
        out.append(m)
    return out


def summary(r):
    return r.final.get("summary") or ""


def short(x, n=700):
    return json.dumps(x, ensure_ascii=False)[:n]


# ------------------------------------------------------------------ runner
def mfail(body, k):
    return {"merged_output": "the request was not met", "summary": "not met",
            "verdicts": [{"verdict": "fail", "failure_class": "logical",
                          "evidence": "the answer does not name the right file"}] * k}


def mpass(answer):
    def f(body, k):
        return {"merged_output": answer, "summary": answer,
                "verdicts": [{"verdict": "pass", "evidence": answer[:200]}] * k}
    return f


HINT_RE = re.compile(r"search the text with: (.*?) and answer with the file names it prints")


def names_from_result(body):
    """File names printed by the last tool result in an executor conversation (RESULT header and END dropped)."""
    msgs = body.get("messages") or []
    last = next((m.get("content") or "" for m in reversed(msgs) if m.get("role") == "user"), "")
    out = []
    for ln in last.splitlines()[1:]:
        ln = ln.strip()
        if ln and ln != "END" and not ln.startswith("RESULT"):
            out.append(ln[2:] if ln.startswith("./") else ln)
    return out


def ask(goal, files, answer, meta="fail", links=(), cmd=None, pre=(), follow_hint=False, may_write=False,
        timeout=60):
    """One-step question. Round 1: the executor runs `pre` actions, then `cmd` (read-only listing), then finishes
    with `answer` (a str or fn(ws) -> str). R4a passes; R4b fails (meta='fail') or passes with the answer.
    follow_hint: on a corrected attempt whose prompt carries the "search the text with: <cmd>" hint, the executor
    runs <cmd> exactly and answers the names it printed, joined with ' and '."""
    ws = mkws(files, links)
    before = snapshot(ws)
    ans = answer(ws) if callable(answer) else answer
    cmd = cmd or "find . -type f -o -type l | sort; echo END"
    hint_runs = []
    finals = [ans]

    def ex(body, ctx):
        if ctx["round"] > 1:
            return inf()
        m = HINT_RE.search(ctx["first_user"])
        if follow_hint and m:
            if ctx["n"] == 0:
                hint_runs.append(m.group(1))
                return sh(m.group(1))
            finals.append(" and ".join(names_from_result(body)) or "none")
            return fin(finals[-1])
        acts = list(pre) + [sh(cmd), fin(ans)]
        return acts[min(ctx["n"], len(acts) - 1)]
    p = plan(["the answer names the file(s) asked for"],
             [{"intent": goal, "criteria": ["the file name(s) are reported"], "tools": ["shell"]}])
    def meta_pass_latest(body, k):  # R4b passes and merges the executor's latest answer
        return mpass(finals[-1])(body, k)
    s = Script(goal, p, executor=ex, validator=passes(), meta=mfail if meta == "fail" else meta_pass_latest)
    r = run_agent(s, goal, keep_ws=ws, extra_args=["--yes"], timeout=timeout)
    TMP.append(r.dd)
    r.ws, r.answer, r.hint_runs = ws, ans, hint_runs
    check(r.rc != "timeout", "agentui run timed out after %.0fs" % r.wall)
    check("Traceback (most recent call last)" not in (r.err or ""), "Python traceback on stderr: " + r.err[-900:])
    if not may_write:
        after = snapshot(ws)
        ch = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        check(not ch, "workspace changed (no scripted command writes): %s" % ch[:10])
    if os.environ.get("I15_VERBOSE"):
        note(r.brief() + " wall=%.1f" % r.wall)
        note("code texts: " + short(code_texts(r), 900))
    return r


# ------------------------------------------------------------------ expectations
def granted(r, phrase=None):
    check(r.rc == 0 and r.directive == "accept", "right answer %s not granted: %s; code texts: %s"
          % (short(r.answer, 120), r.brief(), short(code_texts(r), 500)))
    s = summary(r)
    check("checked by code" in s, "accept but the summary lacks 'checked by code': " + short(s, 300))
    if phrase:
        check(phrase in s, "summary lacks %s: %s" % (short(phrase), short(s, 400)))
    check(r.final.get("output") == r.answer, "output is not the executor's answer: %s vs %s"
          % (short(r.final.get("output"), 200), short(r.answer, 200)))
    check(not contra_texts(r), "a contradiction was recorded as well: " + short(contra_texts(r), 400))
    note("summary: " + s[:300])


def not_granted(r, reach=True):
    check(not r.success(), "granted although it must not be: %s; code texts: %s"
          % (r.brief(), short(code_texts(r), 500)))
    if reach:
        check(r.reqs("MergeOut"), "inconclusive: R4b never asked: %s; code texts: %s"
              % (r.brief(), short(code_texts(r), 400)))


def contradicted(r, phrase, hint="grep -rl TODO . and answer with the file names it prints"):
    check(not r.success(), "the validators' pass of a wrong answer stood: " + r.brief())
    ev = [t for k, t in texts(r) if k.startswith("verdict:fail:logical")]
    check(any(phrase in t for t in ev), "no logical fail with evidence %s; fail evidences: %s; code texts: %s"
          % (short(phrase), short(ev[:3], 500), short(code_texts(r)[:3], 400)))
    if hint:
        pl = planner_after_first(r)
        check(pl, "inconclusive: no replan")
        check(any(hint in t for t in pl), "the replan prompt lacks the hint %s: %s"
              % (short(hint), short([t[-600:] for t in pl[:1]], 700)))
    note("evidence: " + short([t for t in ev if phrase in t][:1], 400))


def not_contradicted(r, accept=True):
    c = contra_texts(r)
    check(not c, "contradicted although it must not be: %s" % short(c[:3], 600))
    if accept:
        check(r.rc == 0 and r.directive == "accept", "validators passed, no contradiction, yet not accepted: "
              + r.brief())


def no_hold_grant(r):
    """For questions that must never trigger: no hold-evidence anywhere; an accept (if any) is not this grant."""
    c = code_texts(r, re.compile(r"holding '|holds '|does not hold '|the answer does not name it"))
    check(not c, "the which-file check was triggered: " + short(c[:3], 600))


# ------------------------------------------------------------------ fixtures
T3 = {"a.txt": "hello there\n", "b.txt": "fix this\nTODO: write tests\n", "c.txt": "nothing to see\n"}
G_WORD = "Which file contains the word TODO?"
EV_B = "checked by code: b.txt is the only file in this folder holding 'TODO'; the answer names it"
HOLD2 = {"a.txt": "hello there\n", "b.txt": "TODO one\n", "c.txt": "and TODO two\n"}


def LONG(n):
    words = ("The search went through each file in the folder and compared every line against the requested "
             "text, and the single match that it found is this one, which is why the answer is given here. ")
    s = "b.txt. "
    while len(s) < n:
        s += words
    return s[:n]


# ================================================================== G. grant must happen
@case("g_basic_word", "Brief example: 'Which file contains the word TODO?', only b.txt holds it, answer 'b.txt', "
      "R4b fails -> accept, exit 0, the exact evidence text, output = the executor's answer.")
def _():
    granted(ask(G_WORD, T3, "b.txt"), EV_B)


@case("g_dot_slash", "Answer './b.txt' (leading ./ allowed) -> grant.")
def _():
    granted(ask(G_WORD, T3, "./b.txt"))


@case("g_absolute_path", "Answer is the absolute path of b.txt (allowed) -> grant.")
def _():
    granted(ask(G_WORD, T3, lambda ws: os.path.join(ws, "b.txt")))


@case("g_prose_sentence", "Answer in a prose sentence with the name followed by a full stop: 'The only file that "
      "holds TODO is b.txt.' -> grant.")
def _():
    granted(ask(G_WORD, T3, "The only file that holds TODO is b.txt."))


@case("g_two_holders_mention", "'Which files mention \"TODO\"?' with holders b.txt and c.txt, answer 'b.txt and "
      "c.txt' -> grant.")
def _():
    granted(ask('Which files mention "TODO"?', HOLD2, "b.txt and c.txt"))


@case("g_markdown_list", "UNCERTAIN (format of names not specified): two holders answered as a markdown list of "
      "names in backticks '- `b.txt`\\n- `c.txt`' -> grant.")
def _():
    granted(ask("Which files mention 'TODO'?", HOLD2, "- `b.txt`\n- `c.txt`"))


DOCS = {"notes.txt": "TODO at top\n", "docs/a.md": "intro\n", "docs/b.md": "TODO: section 2\n",
        "docs/c.md": "end\n"}


@case("g_docs_folder", "'Which file in the docs folder contains \"TODO\"?': only docs/b.md there holds it (a "
      "top-level notes.txt also does, outside the folder); answer 'b.md' (relative to the folder) -> grant.")
def _():
    granted(ask('Which file in the docs folder contains "TODO"?', DOCS, "b.md"))


@case("g_docs_folder_ws_relative", "UNCERTAIN (the description allows paths relative to the folder, ./, absolute, "
      "or base names): the same question answered 'docs/b.md' (relative to the workspace) -> grant.")
def _():
    granted(ask('Which file in the docs folder contains "TODO"?', DOCS, "docs/b.md"))


@case("g_here_holds_bare", "'Which files here hold FIXME?' (bare token, 'here', 'hold'), holder b.txt, answer "
      "'b.txt' -> grant.")
def _():
    granted(ask("Which files here hold FIXME?", {"a.txt": "ok\n", "b.txt": "FIXME later\n"}, "b.txt"))


@case("g_this_folder_includes_term", "'Which file in this folder includes the term 'alpha'?' -> grant for "
      "'b.txt'.")
def _():
    granted(ask("Which file in this folder includes the term 'alpha'?",
                {"a.txt": "beta gamma\n", "b.txt": "the alpha test\n"}, "b.txt"))


SUB = {"a.txt": "nothing\n", "b.txt": "TODO top\n", "sub/c.txt": "TODO nested\n", "sub/d.txt": "plain\n"}


@case("g_subfolders_named", "'Which files in this folder and its subfolders contain 'TODO'?' (subfolders fixed) "
      "holders b.txt, sub/c.txt; answer 'b.txt and sub/c.txt' -> grant.")
def _():
    granted(ask("Which files in this folder and its subfolders contain 'TODO'?", SUB, "b.txt and sub/c.txt"))


@case("g_recursively", "'Which files contain 'TODO', searched recursively?' -> grant for 'b.txt and sub/c.txt'. "
      "UNCERTAIN only in where 'recursively' may stand.")
def _():
    granted(ask("Which files contain 'TODO', searched recursively?", SUB, "b.txt and sub/c.txt"))


@case("g_directly", "'Which file directly in this folder contains 'TODO'?' (subfolders excluded) with a nested "
      "holder sub/c.txt: answer 'b.txt' -> grant.")
def _():
    granted(ask("Which file directly in this folder contains 'TODO'?", SUB, "b.txt"))


@case("g_hidden_included", "UNCERTAIN (wording of the hidden-file choice not given): 'Which files contain 'TODO', "
      "including hidden files?' holders b.txt and .h.txt; answer 'b.txt and .h.txt' -> grant.")
def _():
    granted(ask("Which files contain 'TODO', including hidden files?",
                {"a.txt": "x\n", "b.txt": "TODO\n", ".h.txt": "TODO hidden\n"}, "b.txt and .h.txt"))


@case("g_any_case", "'Which files contain 'todo' in any case?' with TODO in b.txt and todo in c.txt -> grant for "
      "'b.txt and c.txt'.")
def _():
    granted(ask("Which files contain 'todo' in any case?",
                {"a.txt": "x\n", "b.txt": "TODO up\n", "c.txt": "todo low\n"}, "b.txt and c.txt"))


@case("g_binary_not_holder", "bin.dat has a NUL byte in its first 4 KB and the text TODO: never a holder; answer "
      "'b.txt' -> grant.")
def _():
    f = dict(T3)
    f["bin.dat"] = b"\x00\x01\x02TODO\x00binary"
    granted(ask(G_WORD, f, "b.txt"))


@case("g_symlinks_not_looked_at", "link.txt -> b.txt and out.txt -> a file outside the workspace holding TODO are "
      "symlinks, not looked at; answer 'b.txt' -> grant.")
def _():
    outside = tempfile.mkdtemp(prefix="i15o_")
    TMP.append(outside)
    with open(os.path.join(outside, "ext.txt"), "w") as f:
        f.write("TODO outside\n")
    granted(ask(G_WORD, T3, "b.txt", links=[("link.txt", "b.txt"), ("out.txt", os.path.join(outside, "ext.txt"))]))


@case("g_env_secret_not_read", ".env holds TODO but is a secret file (not read), so both hidden readings give "
      "{b.txt}; answer 'b.txt' -> grant.")
def _():
    f = dict(T3)
    f[".env"] = "API_KEY=abc # TODO rotate\n"
    granted(ask(G_WORD, f, "b.txt"))


@case("g_unicode", "Unicode X: 'Which file contains the word \"café\"?' b.txt holds café, c.txt only 'cafe' -> "
      "grant for 'b.txt'.")
def _():
    granted(ask('Which file contains the word "café"?',
                {"a.txt": "tea\n", "b.txt": "un café noir\n", "c.txt": "a cafe here\n"}, "b.txt"))


@case("g_regex_dot", "X 'a.b' is text, not a pattern: c.txt has 'axb' (a regex match only); answer 'b.txt' -> "
      "grant. (A product could read 'a.b' as a named file and do nothing; that errs on the safe side.)")
def _():
    granted(ask('Which file contains the string "a.b"?',
                {"a.txt": "nothing\n", "b.txt": "see a.b here\n", "c.txt": "see axb here\n"}, "b.txt"))


@case("g_regex_star", "X 'a*b': c.txt has 'aab' (regex match only), answer 'b.txt' -> grant.")
def _():
    granted(ask("Which file contains the text 'a*b'?",
                {"a.txt": "nothing\n", "b.txt": "see a*b here\n", "c.txt": "see aab here\n"}, "b.txt"))


@case("g_regex_paren", "X '(x)': c.txt has only 'x'; answer 'b.txt' -> grant.")
def _():
    granted(ask("Which file contains the text '(x)'?",
                {"a.txt": "nothing\n", "b.txt": "call (x) now\n", "c.txt": "x marks\n"}, "b.txt"))


@case("g_cplusplus", "X 'c++' standing alone between spaces is a whole word in any sensible reading; c.txt has only "
      "'c'. Answer 'b.txt' -> grant (a \\b-based whole-word test finds no whole-word 'c++' and would differ).")
def _():
    granted(ask("Which file mentions 'c++'?",
                {"a.txt": "python only\n", "b.txt": "I write c++ daily\n", "c.txt": "plan c now\n"}, "b.txt"))


@case("g_phrase_spaces", "X is a phrase 'hello world'; c.txt has the words on separate lines -> grant for 'b.txt'.")
def _():
    granted(ask("Which file contains the phrase 'hello world'?",
                {"a.txt": "bye\n", "b.txt": "say hello world now\n", "c.txt": "hello\nworld\n"}, "b.txt"))


@case("g_answer_390_chars", "A 390-char prose answer (<= 400, no hedge words) naming b.txt -> grant.")
def _():
    a = LONG(390)
    check(len(a) == 390 and not re.search(r"\b(maybe|probably|not|or)\b", a), "harness: bad filler")
    granted(ask(G_WORD, T3, a))


@case("g_400_files", "Control for the 500-file limit: 400 files, b.txt the only holder -> grant.")
def _():
    f = {"f%03d.txt" % i: "line %d\n" % i for i in range(399)}
    f["b.txt"] = "TODO\n"
    granted(ask(G_WORD, f, "b.txt", cmd="ls | head -3; echo END"))


# ================================================================== NG. no grant
@case("ng_wrong_file", "Answer 'a.txt' (a non-holder) -> no grant.")
def _():
    not_granted(ask(G_WORD, T3, "a.txt"), reach=False)


@case("ng_extra_file", "Answer 'b.txt and a.txt' names a looked-at non-holder -> no grant.")
def _():
    not_granted(ask(G_WORD, T3, "b.txt and a.txt"), reach=False)


@case("ng_partial", "Two holders, answer 'b.txt' only -> no grant (must name every holder).")
def _():
    not_granted(ask("Which files mention 'TODO'?", HOLD2, "b.txt"))


@case("ng_hedge_maybe", "'maybe b.txt' -> no grant (hedging word).")
def _():
    not_granted(ask(G_WORD, T3, "maybe b.txt"))


@case("ng_hedge_not", "'b.txt, and definitely not anything else' (right file, but 'not') -> no grant.")
def _():
    not_granted(ask(G_WORD, T3, "b.txt, and definitely not anything else"))


@case("ng_hedge_or", "Two holders answered 'b.txt or c.txt' (both named, but 'or') -> no grant.")
def _():
    not_granted(ask("Which files mention 'TODO'?", HOLD2, "b.txt or c.txt"))


@case("ng_too_long", "A 420-char answer (> 400) naming b.txt, no hedge words -> no grant.")
def _():
    a = LONG(420)
    check(not re.search(r"\b(maybe|probably|not|or)\b", a), "harness: bad filler")
    not_granted(ask(G_WORD, T3, a))


SUBS = {"a.txt": "x\n", "b.txt": "TODO\n", "ab.txt": "plain\n"}


@case("ng_substring_name", "Holder b.txt; the answer 'ab.txt' names a non-holder whose name ends in 'b.txt' -> no "
      "grant (must not read 'ab.txt' as naming b.txt).")
def _():
    not_granted(ask(G_WORD, SUBS, "ab.txt"), reach=False)


@case("ng_ambig_subfolder", "Holders b.txt and sub/c.txt, question silent on subfolders: the readings differ -> "
      "nothing; answer 'b.txt' -> no grant.")
def _():
    not_granted(ask(G_WORD, SUB, "b.txt"))


@case("ng_ambig_hidden", "Holders b.txt and .h.txt, question silent on hidden files -> nothing; answer 'b.txt' -> "
      "no grant.")
def _():
    not_granted(ask(G_WORD, {"a.txt": "x\n", "b.txt": "TODO\n", ".h.txt": "TODO\n"}, "b.txt"))


@case("ng_ambig_case", "b.txt has TODO, c.txt has 'todo', question silent on case -> readings differ; answer "
      "'b.txt' -> no grant.")
def _():
    not_granted(ask(G_WORD, {"a.txt": "x\n", "b.txt": "TODO\n", "c.txt": "a todo item\n"}, "b.txt"))


@case("ng_ambig_part_of_word", "UNCERTAIN (whether 'the word' fixes the whole-word reading is not said): b.txt has "
      "TODO, c.txt only 'TODOS' -> readings differ; answer 'b.txt' -> no grant.")
def _():
    not_granted(ask(G_WORD, {"a.txt": "x\n", "b.txt": "TODO\n", "c.txt": "the TODOS list\n"}, "b.txt"))


@case("ng_nul_after_4k", "big.dat has its only NUL byte after 4 KB and holds TODO: it is text, so a holder; "
      "answer 'b.txt' only -> no grant.")
def _():
    f = dict(T3)
    f["big.dat"] = b"TODO " + b"y" * 5000 + b"\x00tail"
    not_granted(ask(G_WORD, f, "b.txt"))


@case("ng_shared_basename", "'... and its subfolders': holder sub/notes.txt, non-holder notes.txt at top; answer "
      "'notes.txt' (a base name another looked-at file shares) -> no grant.")
def _():
    not_granted(ask("Which files in this folder and its subfolders contain 'TODO'?",
                    {"notes.txt": "plain\n", "sub/notes.txt": "TODO\n"}, "notes.txt"), reach=False)


@case("ng_over_500_files", "501 files, b.txt the only holder -> code does nothing; answer 'b.txt' -> no grant.")
def _():
    f = {"f%03d.txt" % i: "line %d\n" % i for i in range(500)}
    f["b.txt"] = "TODO\n"
    not_granted(ask(G_WORD, f, "b.txt", cmd="ls | head -3; echo END"))


@case("ng_named_files", "The question names files, not a folder: 'Which file among a.txt and b.txt contains "
      "'TODO'?' -> code does nothing; answer 'b.txt' -> no grant.")
def _():
    not_granted(ask("Which file among a.txt and b.txt contains 'TODO'?", T3, "b.txt"))


@case("ng_task_wrote_file", "Right answer 'b.txt', but the executor wrote found.lst (grep -l ... > found.lst) -> "
      "the task changed a file -> no grant.")
def _():
    r = ask(G_WORD, T3, "b.txt", pre=[sh("grep -l TODO *.txt > found.lst; cat found.lst")], may_write=True)
    check(os.path.exists(os.path.join(r.ws, "found.lst")), "inconclusive: found.lst was not written")
    not_granted(r)


@case("ng_change_request_replace", "'Which file contains the word TODO? Replace it with DONE.' asks for a change "
      "(the executor changes nothing and answers 'b.txt') -> no grant.")
def _():
    not_granted(ask("Which file contains the word TODO? Replace it with DONE.", T3, "b.txt"))


@case("ng_change_request_fix", "'Which file contains the word TODO? Also fix it.' asks for a change -> no grant "
      "(earlier parts found 'fix' after a question not seen as a change).")
def _():
    not_granted(ask("Which file contains the word TODO? Also fix it.", T3, "b.txt"))


@case("ng_superlative_quoted", "'Which file contains the most 'TODO' mentions?' (superlative) with TODO in a.txt "
      "once and b.txt three times; answer 'a.txt and b.txt' (every holder!) -> never this grant.")
def _():
    r = ask("Which file contains the most 'TODO' mentions?",
            {"a.txt": "TODO\n", "b.txt": "TODO\nTODO\nTODO\n", "c.txt": "x\n"}, "a.txt and b.txt")
    no_hold_grant(r)
    not_granted(r)


@case("ng_number_times", "'Which file contains 'TODO' 3 times?' (a number); answer 'a.txt and b.txt' -> never "
      "this grant.")
def _():
    r = ask("Which file contains 'TODO' 3 times?",
            {"a.txt": "TODO\n", "b.txt": "TODO\nTODO\nTODO\n", "c.txt": "x\n"}, "a.txt and b.txt")
    no_hold_grant(r)
    not_granted(r)


TWICE = {"a.txt": "TODO once\n", "b.txt": "TODO and TODO\n", "c.txt": "x\n"}


@case("ng_twice", "'Which file contains 'TODO' twice?' (a number word; the description excludes numbers): a.txt has one TODO; answer 'a.txt and "
      "b.txt' -> never this grant.")
def _():
    r = ask("Which file contains 'TODO' twice?", TWICE, "a.txt and b.txt")
    no_hold_grant(r)
    not_granted(r)


@case("ng_but_not", "'Which file contains 'TODO' but not 'DONE'?': b.txt also has DONE; answer 'a.txt and b.txt' "
      "-> no grant. UNCERTAIN (a trailing condition is outside the question shape).")
def _():
    r = ask("Which file contains 'TODO' but not 'DONE'?",
            {"a.txt": "TODO only\n", "b.txt": "TODO\nDONE\n", "c.txt": "x\n"}, "a.txt and b.txt")
    no_hold_grant(r)
    not_granted(r)


@case("ng_negated_question", "'Which file doesn't contain 'TODO'?' asks for the opposite set; the wrong answer "
      "'b.txt' (the holder) -> no grant. (Not the question form 'contain(s)'; UNCERTAIN only in that the "
      "description does not list negation by name.)")
def _():
    r = ask("Which file doesn't contain 'TODO'?", {"a.txt": "x\n", "b.txt": "TODO\n"}, "b.txt")
    no_hold_grant(r)
    not_granted(r)


@case("nc_negated_right_answer", "'Which file doesn't contain 'TODO'?': validators pass the right answer 'a.txt' "
      "-> no contradiction, accept. (UNCERTAIN as ng_negated_question.)")
def _():
    r = ask("Which file doesn't contain 'TODO'?", {"a.txt": "x\n", "b.txt": "TODO\n"}, "a.txt", meta="pass")
    not_contradicted(r)


@case("ng_in_its_name", "'Which file contains 'TODO' in its name?' asks about names (TODO.md), not contents; the "
      "wrong answer 'a.txt' (holds TODO in its text) -> no grant. UNCERTAIN (trailing qualifier).")
def _():
    r = ask("Which file contains 'TODO' in its name?", {"TODO.md": "x\n", "a.txt": "TODO\n"}, "a.txt")
    no_hold_grant(r)
    not_granted(r)


@case("ng_names_file_outside_folder", "UNCERTAIN (the description only forbids other *looked-at* files): 'Which "
      "file in the docs folder contains \"TODO\"?' answered 'b.md and notes.txt' (notes.txt is outside docs) -> "
      "no grant.")
def _():
    not_granted(ask('Which file in the docs folder contains "TODO"?', DOCS, "b.md and notes.txt"))


@case("ng_no_holder", "No file holds TODO; answer 'none of the files' -> never triggered, no grant.")
def _():
    r = ask(G_WORD, {"a.txt": "x\n", "b.txt": "y\n"}, "none of the files")
    no_hold_grant(r)
    not_granted(r, reach=False)


# ================================================================== C. contradiction (validators pass)
@case("c_wrong_file", "Validators pass 'a.txt' (holder is b.txt) -> logical fail 'a.txt in this folder does not "
      "hold 'TODO'', replan told 'grep -rl TODO . ...', no success.")
def _():
    contradicted(ask(G_WORD, T3, "a.txt", meta="pass"), "a.txt in this folder does not hold 'TODO'")


@case("c_names_none", "'Which file directly in this folder contains 'TODO'?' (subfolders excluded): validators "
      "pass 'sub/c.txt' (a nested holder, not looked at), which names none of the holders -> 'b.txt in this folder "
      "holds 'TODO'; the answer does not name it'. (A made-up name 'report.txt' is caught earlier by another "
      "product check: 'the answer names report.txt, which does not exist'.)")
def _():
    contradicted(ask("Which file directly in this folder contains 'TODO'?", SUB, "sub/c.txt", meta="pass"),
                 "b.txt in this folder holds 'TODO'; the answer does not name it")


@case("c_names_outside_folder", "'Which file in the docs folder contains \"TODO\"?': validators pass 'notes.txt' "
      "(a top-level holder, outside docs) -> 'b.md in docs holds 'TODO'; the answer does not name it' (folder wording "
      "UNCERTAIN: only the 'holds ... does not name it' part is asserted).")
def _():
    contradicted(ask('Which file in the docs folder contains "TODO"?', DOCS, "notes.txt", meta="pass"),
                 "holds 'TODO'; the answer does not name it", hint=None)


@case("c_extra_nonholder", "Validators pass 'b.txt and a.txt' -> 'a.txt in this folder does not hold 'TODO''.")
def _():
    contradicted(ask(G_WORD, T3, "b.txt and a.txt", meta="pass"), "a.txt in this folder does not hold 'TODO'")


@case("c_substring_name", "Validators pass 'ab.txt' (holder b.txt) -> 'ab.txt ... does not hold 'TODO'' "
      "(ab.txt is not read as b.txt).")
def _():
    contradicted(ask(G_WORD, SUBS, "ab.txt", meta="pass"), "ab.txt in this folder does not hold 'TODO'")


@case("c_binary_named", "Validators pass 'bin.dat' (binary, has TODO after a NUL) while b.txt holds TODO: binary "
      "never holds -> contradicted (b.txt not named / bin.dat does not hold).")
def _():
    f = dict(T3)
    f["bin.dat"] = b"\x00\x01TODO\x00"
    r = ask(G_WORD, f, "bin.dat", meta="pass")
    ev = [t for k, t in texts(r) if k.startswith("verdict:fail:logical")]
    ph = [p for p in ("b.txt in this folder holds 'TODO'; the answer does not name it",
                      "bin.dat in this folder does not hold 'TODO'") if any(p in t for t in ev)]
    check(ph, "no contradiction: %s; code texts %s" % (r.brief(), short(code_texts(r)[:3], 400)))
    contradicted(r, ph[0])


@case("c_regex_star", "X 'a*b' is text: c.txt has 'aab' (a regex match only); validators pass 'c.txt' -> 'c.txt in "
      "this folder does not hold 'a*b''.")
def _():
    contradicted(ask("Which file contains the text 'a*b'?",
                     {"a.txt": "nothing\n", "b.txt": "see a*b here\n", "c.txt": "see aab here\n"}, "c.txt",
                     meta="pass"), "c.txt in this folder does not hold 'a*b'", hint=None)


@case("nc_partial", "Two holders, validators pass 'b.txt' (partial, no wrong file) -> not contradicted, accept.")
def _():
    not_contradicted(ask("Which files mention 'TODO'?", HOLD2, "b.txt", meta="pass"))


@case("nc_right_answer", "Validators pass the right 'b.txt' -> accept, no contradiction.")
def _():
    not_contradicted(ask(G_WORD, T3, "b.txt", meta="pass"))


@case("nc_ambiguous_readings", "Subfolder ambiguity (b.txt vs b.txt+sub/c.txt): code does nothing, so the "
      "validators' pass of 'sub/c.txt' stands -> accept, no contradiction.")
def _():
    not_contradicted(ask(G_WORD, SUB, "sub/c.txt", meta="pass"))


@case("nc_no_holder", "No file holds TODO: validators pass 'a.txt' -> never triggered, accept.")
def _():
    not_contradicted(ask(G_WORD, {"a.txt": "x\n", "b.txt": "y\n"}, "a.txt", meta="pass"))


@case("nc_change_request", "'Which file contains the word TODO? Replace it with DONE.' (a change): validators pass "
      "'a.txt' -> never triggered, accept.")
def _():
    not_contradicted(ask("Which file contains the word TODO? Replace it with DONE.", T3, "a.txt", meta="pass"))


@case("nc_most_lines", "'Which file contains the most lines?' a.txt = 'most' (1 line), b.txt 3 lines; validators "
      "pass 'b.txt' -> not this check (no 'b.txt does not hold 'most'').")
def _():
    r = ask("Which file contains the most lines?", {"a.txt": "most\n", "b.txt": "x\ny\nz\n"}, "b.txt", meta="pass")
    no_hold_grant(r)
    not_contradicted(r)


@case("c_hint_injection_safe", "X '$(touch pwned)': validators pass 'a.txt' -> contradicted; the executor then runs "
      "the replan/correction hint command verbatim: nothing is evaluated (no 'pwned' file), and (UNCERTAIN) its "
      "answer is accepted.")
def _():
    r = ask('Which file contains the text "$(touch pwned)"?',
            {"a.txt": "x\n", "b.txt": "echo $(touch pwned) here\n"}, "a.txt", meta="pass", follow_hint=True)
    check(r.hint_runs, "inconclusive: no hint seen by the executor: " + r.brief())
    note("hint run: " + short(r.hint_runs[:1]))
    check(not os.path.exists(os.path.join(r.ws, "pwned")), "the hint command created 'pwned'")
    check(r.rc == 0 and r.directive == "accept", "following the hint did not end in accept: " + r.brief())


@case("c_hint_follow_binary", "UNCERTAIN (the hint's output vs the holder rule): b.txt holds TODO, bin.dat is "
      "binary with TODO; validators pass 'a.txt' -> contradicted; the executor runs the hint command and answers "
      "the names it prints -> that answer must not be contradicted again (accept). grep -rl lists binary files.")
def _():
    f = dict(T3)
    f["bin.dat"] = b"\x00\x01TODO\x00"
    r = ask(G_WORD, f, "a.txt", meta="pass", follow_hint=True)
    check(r.hint_runs, "inconclusive: no hint seen: " + r.brief())
    note("hint run: %s; logical-fail evidences: %s" % (short(r.hint_runs[:1]), short(
        [t for k, t in texts(r) if k.startswith("verdict:fail:logical") and "contradicted" in t][:2], 600)))
    check(r.rc == 0 and r.directive == "accept", "following the hint exactly did not end in accept: " + r.brief())


@case("c_hint_follow_regex", "UNCERTAIN: X 'a*b' (c.txt has 'aab', a.txt has 'b'); validators pass 'a.txt' -> "
      "contradicted; the executor runs the hint command exactly and answers what it prints -> accept (the hint must "
      "search the text literally, e.g. grep -F).")
def _():
    r = ask("Which file contains the text 'a*b'?",
            {"a.txt": "just b\n", "b.txt": "see a*b here\n", "c.txt": "see aab here\n"}, "a.txt", meta="pass",
            follow_hint=True)
    check(r.hint_runs, "inconclusive: no hint seen: " + r.brief())
    note("hint run: %s; logical-fail evidences: %s" % (short(r.hint_runs[:1]), short(
        [t for k, t in texts(r) if k.startswith("verdict:fail:logical") and "contradicted" in t][:2], 600)))
    check(r.rc == 0 and r.directive == "accept", "following the hint exactly did not end in accept: " + r.brief())


@case("c_secret_not_claimed", "UNCERTAIN: .env (secret, not read) holds TODO, b.txt holds TODO; validators pass "
      "'.env' -> code may contradict ('b.txt ... not name it') but must not claim '.env ... does not hold' (it did "
      "not read it).")
def _():
    f = dict(T3)
    f[".env"] = "TOKEN=1 # TODO\n"
    r = ask(G_WORD, f, ".env", meta="pass")
    bad = [t for k, t in texts(r) if ".env in this folder does not hold" in t]
    note("code texts: " + short(contra_texts(r)[:2], 400))
    check(not bad, "code claimed a secret file it does not read lacks the text: " + short(bad[:1], 300))


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
            print("    observed: " + o[:900].replace("\n", "\\n"), flush=True)
        for d in TMP:
            shutil.rmtree(d, ignore_errors=True)
        TMP.clear()
    print("total: %d/%d (%.0fs)" % (okc, len(sel), time.time() - t00))


if __name__ == "__main__":
    main()
