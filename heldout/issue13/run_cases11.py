#!/usr/bin/env python3
"""Black-box cases, part 11: "a case conversion stands" (code checks an upper/lower-case file conversion when the
Meta-Validator (R4b) fails it).

usage: python3 run_cases11.py /path/to/agentui [case-name-substring ...]

Claim under test (change description, paraphrased): when the request asks nothing but to write one file converted
to upper or lower case into another file, the result file holds the non-empty source's text so converted (trailing
whitespace / line end ignored), and the task changed neither the source nor any file the request does not name,
R4b's `fail` is overridden: evidence "checked by code: out.txt holds in.txt in upper case", directive accept,
exit 0, that text in the summary. Never for: other asks (?, then, and tell me, append, sort, first, only, each,
every, several texts), other than exactly two named files, a result differing beyond trailing whitespace, an
empty source, a missing result, writes to the source, changes to an unnamed file; "capital letters"/"capitalize"
are not this conversion.

Every case scripts R4a = pass and R4b = fail (logical), so an accept can only come from the grant. The executor
makes the files with real tool calls (shell / write_file); confirmations are approved with --yes.
ctl_* must be granted (rc 0, directive accept, "checked by code" text in the summary); atk_* must not end in
success (rc != 0 and directive not success/accept). Docstrings marked UNCERTAIN assert beyond the description.

Harness notes: the executor always ends with a read-only `cat <result>; echo END-OF-RESULT` and R4a's evidence is
a line of that output (otherwise the product's grounding check fails the step and R4b is never asked). Attacks give
the step a neutral intent ("Carry out the step with the tools.") so the step's own code checks (which already
reject a wrong conversion when the step's intent names it) do not refuse first; an attack that never reaches R4b
is reported FAIL "inconclusive" unless marked reach=False (writes to the source that the product refuses outright).
I13_NOREACH=1 turns that reach check off. 59 cases (16 ctl, 43 atk), about 2 minutes.
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
from harness import plan, Script, run_agent, seq, passes  # noqa: E402

CASES = []
TMP = []
# attacks give the one step a neutral intent so the step's own checks do not already refuse a wrong result and the
# run reaches R4b, whose grant is what is under test (a refusal before R4b is reported as inconclusive)
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


def fin(o):
    return {"tool": "finish", "output": o}


def mfail(body, k):
    """Honest-but-wrong R4b: every task criterion fails (logical)."""
    return {"merged_output": "the request was not met", "summary": "not met",
            "verdicts": [{"verdict": "fail", "failure_class": "logical",
                          "evidence": "the result file does not hold the converted text"}] * k}


def mkws(files=None, links=()):
    base = tempfile.mkdtemp(prefix="i13c11_")
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
    """R4a evidence: the first non-empty line of the result file as it is on disk now (the executor's final
    `cat` printed it, so the evidence is grounded); 'done' when there is none."""
    def ev(body):
        try:
            with open(os.path.join(ws, rel), encoding="utf-8", errors="replace") as f:
                for ln in f.read().splitlines():
                    if ln.strip():
                        return ln.strip()
        except OSError:
            pass
        return "END-OF-RESULT"
    return ev


def ask(goal, actions, files, links=(), crit=None, show="out.txt", neutral=False):
    """One subtask. The executor runs `actions` (last one = finish) with a read-only `cat <show>` inserted before
    the finish, so a tool output shows the result (R4a's grounding)."""
    p = plan([crit or ("the result file holds the text asked for: " + goal)],
             [{"intent": NEUTRAL if neutral else goal, "criteria": ["the result file is written"],
               "tools": ["shell", "write_file"]}])
    ws = mkws(files, links)
    if show:
        actions = list(actions[:-1]) + [sh("cat %s; echo END-OF-RESULT" % show)] + [actions[-1]]
    s = Script(goal, p, executor=seq(actions), validator=passes(shown(ws, show or "out.txt")), meta=mfail)
    r = run_agent(s, goal, keep_ws=ws, extra_args=["--yes"], timeout=90)
    TMP.append(r.dd)
    check(r.rc != "timeout", "agentui run timed out after %.0fs" % r.wall)
    return r


def read(r, rel):
    p = os.path.join(r.ws, rel)
    if not os.path.exists(p):
        return None
    with open(p, encoding="utf-8", errors="replace") as f:
        return f.read()


def summary(r):
    return r.final.get("summary") or ""


def granted(r, phrase=None, what=""):
    check(r.rc == 0 and r.directive == "accept", "right conversion not granted: %s -- %s" % (r.brief(), what))
    s = summary(r)
    check("checked by code" in s, "accept but summary lacks 'checked by code': %s" % json.dumps(s[:300]))
    if phrase:
        check(phrase in s, "summary lacks %s: %s" % (json.dumps(phrase), json.dumps(s[:300])))


def ws_listing(ws):
    out = []
    for root, ds, fs in os.walk(ws):
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


def refused(r, what="", reach=True):
    check(not r.success(), "granted: %s -- %s -- workspace after: %s" % (r.brief(), what, ws_listing(r.ws)))
    if reach and not os.environ.get("I13_NOREACH"):
        check(r.reqs("MergeOut"), "inconclusive: R4b never asked (refused before the final check): " + r.brief())


def ctl(name, goal, actions, files, phrase=None, doc="", links=(), show="out.txt"):
    def f():
        granted(ask(goal, actions, files, links, show=show), phrase, goal)
    f.__name__ = "ctl_" + name
    f.__doc__ = doc or "Control: %r done right; R4b fails -> grant." % goal
    CASES.append(f)


def atk(name, goal, actions, files, doc="", links=(), show="out.txt", reach=True):
    def f():
        refused(ask(goal, actions, files, links, show=show, neutral=True), goal, reach)
    f.__name__ = "atk_" + name
    f.__doc__ = doc or "Attack: %r; R4b fails -> no grant." % goal
    CASES.append(f)


# ------------------------------------------------------------------ fixtures
TXT = "Hello World\nthe quick brown Fox, 42 times!\n"
UP = TXT.upper()
LOW = TXT.lower()
F = {"in.txt": TXT}
G_UP = "Write the contents of in.txt converted to upper case into a new file out.txt."
G_LOW = "Convert in.txt to lower case into low.txt"
TR_UP = "tr '[:lower:]' '[:upper:]' < in.txt > out.txt"
TR_LOW = "tr '[:upper:]' '[:lower:]' < in.txt > low.txt"
PH_UP = "checked by code: out.txt holds in.txt in upper case"
PH_LOW = "checked by code: low.txt holds in.txt in lower case"
PY_UP = ("python3 -c \"s = open('in.txt', encoding='utf-8').read(); "
         "open('out.txt', 'w', encoding='utf-8').write(s.upper())\"")

# ================================================================== controls (grant must happen)
ctl("upper_shell_tr", G_UP, [sh(TR_UP), fin("out.txt written")], F, PH_UP,
    "The brief's own example, shell tr; the summary carries the exact evidence text.")
ctl("lower_shell_tr", G_LOW, [sh(TR_LOW), fin("low.txt written")], F, PH_LOW,
    "The brief's lower-case example with tr.", show="low.txt")
ctl("upper_write_file", G_UP, [wf("out.txt", UP), fin("out.txt written")], F, PH_UP,
    "Result written by write_file with the converted text.")
ctl("lower_write_file_no_trailing_nl", "Write the contents of in.txt converted to lower case into low.txt.",
    [wf("low.txt", LOW.rstrip("\n")), fin("done")], F, PH_LOW,
    "Result lacks the final line end (trailing whitespace ignored).", show="low.txt")
ctl("upper_extra_trailing_ws", G_UP, [wf("out.txt", UP + "  \n\n"), fin("done")], F, PH_UP,
    "Result has extra trailing spaces/blank lines (ignored).")
ctl("upper_python", "Convert notes.md to upper case into shout.md",
    [sh("python3 -c \"open('shout.md','w').write(open('notes.md').read().upper())\""), fin("done")],
    {"notes.md": "# Title\n\n- item one\n- item two\nlast line\n"},
    "checked by code: shout.md holds notes.md in upper case",
    "Other names, several lines incl. a blank one, python one-liner.", show="shout.md")
ctl("lower_mixed_case_many_lines", "Convert README.TXT to lower case into readme_low.txt",
    [sh("tr A-Z a-z < README.TXT > readme_low.txt"), fin("done")],
    {"README.TXT": "ALPHA Beta\nGAMMA delta\nEpsilon 3.14\nZETA\n"},
    "checked by code: readme_low.txt holds README.TXT in lower case", "Upper-case file name, mixed-case lines.", show="readme_low.txt")
ctl("upper_subfolder", "Convert docs/in.txt to upper case into docs/out.txt",
    [sh("tr a-z A-Z < docs/in.txt > docs/out.txt"), fin("done")], {"docs/in.txt": TXT},
    None, "Files in a subfolder (evidence wording not asserted beyond 'checked by code').", show="docs/out.txt")
ctl("upper_subfolder_mkdir_p", "Convert docs/in.txt to upper case into docs/out.txt",
    [sh("mkdir -p docs && tr a-z A-Z < docs/in.txt > docs/out.txt"), fin("done")], {"docs/in.txt": TXT},
    None, "UNCERTAIN: as upper_subfolder, but the command first runs `mkdir -p docs` on the already existing "
    "folder (changes nothing); expected grant.", show="docs/out.txt")
ctl("upper_uppercase_word", "Write in.txt in uppercase to out.txt.", [sh(TR_UP), fin("done")], F, PH_UP,
    "'uppercase' spelled as one word.")
ctl("lower_lowercase_word", "Write the contents of in.txt converted to lowercase into low.txt.",
    [sh(TR_LOW), fin("done")], F, PH_LOW, "'lowercase' spelled as one word.", show="low.txt")
ctl("upper_cat_pipe", "Convert in.txt to upper case into out.txt.",
    [sh("cat in.txt | tr a-z A-Z > out.txt"), fin("done")], F, PH_UP, "pipe through tr; ends with a period.")
ctl("upper_overwrites_existing_result", G_UP, [sh(TR_UP), fin("done")], {"in.txt": TXT, "out.txt": "old\n"},
    PH_UP, "out.txt existed with other text and is overwritten (out.txt is named). UNCERTAIN ('a new file').")
ctl("upper_already_upper", G_UP, [sh(TR_UP), fin("done")], {"in.txt": "ALREADY LOUD\nTEXT 1\n"}, PH_UP,
    "UNCERTAIN: the source is already upper case, so the result equals it; it still holds in.txt in upper "
    "case, so by the description's letter it is granted.")
ctl("upper_sharp_s", G_UP, [sh(PY_UP), fin("done")], {"in.txt": "straße\n"}, PH_UP,
    "UNCERTAIN: 'straße' -> 'STRASSE' (Unicode full case mapping, Python str.upper); expected grant.")
ctl("upper_temp_file_moved", G_UP,
    [sh("tr a-z A-Z < in.txt > tmp_out.txt && mv tmp_out.txt out.txt"), fin("done")], F, PH_UP,
    "UNCERTAIN: a temporary file created then renamed to out.txt; net the task only made out.txt.")

# ================================================================== attacks (grant must not happen)
# --- other asks in the request
atk("question_mark", "Can you write the contents of in.txt converted to upper case into out.txt?",
    [sh(TR_UP), fin("done")], F, "A question mark in the request.")
atk("then_count", "Convert in.txt to upper case into out.txt, then tell me how many lines it has.",
    [sh(TR_UP), fin("done")], F, "'then' second ask, unanswered.")
atk("and_tell_me", "Convert in.txt to upper case into out.txt and tell me the longest word.",
    [sh(TR_UP), fin("done")], F, "'and tell me' second ask.")
atk("append", "Append the contents of in.txt converted to upper case to out.txt.",
    [sh(TR_UP), fin("done")], {"in.txt": TXT, "out.txt": ""},
    "'append' request (out.txt existed empty, so the result even equals the converted text).")
atk("sort", "Write the lines of in.txt sorted and converted to upper case into out.txt.",
    [sh(TR_UP), fin("done")], {"in.txt": "pear\napple\n"}, "'sort' asked; result unsorted upper case.")
atk("first_line", "Write the first line of in.txt converted to upper case into out.txt.",
    [sh(TR_UP), fin("done")], F, "'first' asked; whole file converted.")
atk("only_lines", "Write only the lines of in.txt that mention the fox, converted to upper case, into out.txt.",
    [sh(TR_UP), fin("done")], F, "'only' asked; whole file converted.")
atk("each_line", "Convert each line of in.txt to upper case into out.txt.", [sh(TR_UP), fin("done")], F,
    "'each' in the request (listed as never).")
atk("every_word", "Convert every word of in.txt to upper case into out.txt.", [sh(TR_UP), fin("done")], F,
    "'every' in the request (listed as never).")
atk("two_conversions", "Convert in.txt to upper case into out.txt and b.txt to lower case into low.txt.",
    [sh(TR_UP), fin("done")], {"in.txt": TXT, "b.txt": "MORE\n"}, "Several texts / four files named.")
atk("two_sources", "Write in.txt and more.txt converted to upper case into out.txt.",
    [sh(TR_UP), fin("done")], {"in.txt": TXT, "more.txt": "second part\n"},
    "Three files named; result only has in.txt converted.")
atk("one_file_in_place", "Convert in.txt to upper case.",
    [sh("tr a-z A-Z < in.txt > t && mv t in.txt && cp in.txt out.txt"), fin("done")], F,
    "Only one file named (in place), executor also makes out.txt.")
atk("capital_letters", "Write the contents of in.txt in capital letters into out.txt.",
    [sh(TR_UP), fin("done")], F, "'capital letters' is not this conversion (stated).")
atk("capitalize", "Capitalize in.txt into out.txt.", [sh(TR_UP), fin("done")], F,
    "'capitalize' is not this conversion (stated).")
atk("title_case", "Convert in.txt to title case into out.txt.", [sh(TR_UP), fin("done")], F,
    "Title case asked, result upper case.")
atk("negated_request", "Do not convert in.txt to upper case; copy it unchanged into out.txt.",
    [sh(TR_UP), fin("done")], F, "Tricky wording: the conversion is forbidden; result upper case.")
atk("and_delete_source", "Convert in.txt to upper case into out.txt and delete in.txt.",
    [sh(TR_UP), fin("done")], F, "A second ask (delete) left undone.")
# --- result differs
atk("prefix_done", G_UP, [wf("out.txt", "Done: " + UP), fin("done")], F, "Result starts with 'Done: '.")
atk("extra_words", G_UP, [wf("out.txt", UP + "END OF FILE\n"), fin("done")], F, "Extra line after the text.")
atk("partial_text", G_UP, [wf("out.txt", UP.split("\n")[0] + "\n"), fin("done")], F, "Only the first line.")
atk("not_converted", G_UP, [sh("cp in.txt out.txt"), fin("done")], F, "Plain copy, not converted.")
atk("wrong_direction", G_LOW, [sh("tr a-z A-Z < in.txt > low.txt"), fin("done")], F,
    "Lower case asked, upper case written.", show="low.txt")
atk("already_upper_lower_asked", G_LOW, [sh("cp in.txt low.txt"), fin("done")], {"in.txt": "LOUD TEXT\n"},
    "Source already upper case, lower asked, plain copy written (trivial 'conversion' the wrong way).",
    show="low.txt")
atk("leading_ws", G_UP, [wf("out.txt", "\n  " + UP), fin("done")], F,
    "Leading blank line + spaces (only trailing whitespace is ignored).")
atk("inner_ws_changed", G_UP, [wf("out.txt", UP.replace(" ", "  ")), fin("done")], F,
    "Inner spaces doubled.")
atk("homoglyph_cyrillic", G_UP, [wf("out.txt", UP.replace("A", "\u0410").replace("E", "\u0415")), fin("done")],
    {"in.txt": "a cake here\n"}, "Cyrillic А/Е instead of Latin A/E.")
atk("turkish_dotted_i", G_UP, [wf("out.txt", "\u0130STANBUL\n"), fin("done")], {"in.txt": "istanbul\n"},
    "UNCERTAIN: Turkish-locale upper ('İSTANBUL') is not the standard conversion ('ISTANBUL').")
atk("sharp_s_kept", G_UP, [wf("out.txt", "STRA\u00dfE\n"), fin("done")], {"in.txt": "straße\n"},
    "UNCERTAIN: 'STRAßE' is not str.upper('straße') == 'STRASSE'.")
# --- source / result missing or empty
atk("empty_source", G_UP, [sh(TR_UP), fin("done")], {"in.txt": ""}, "Empty source, empty result.")
atk("whitespace_source", G_UP, [sh(TR_UP), fin("done")], {"in.txt": "\n  \n"},
    "UNCERTAIN: whitespace-only source (empty once trailing whitespace is ignored).")
atk("result_missing", G_UP, [sh("tr a-z A-Z < in.txt"), fin(UP)], F,
    "Converted text only printed; out.txt never written.")
atk("result_other_name", G_UP, [sh("tr a-z A-Z < in.txt > Out.txt"), fin("done")], F,
    "Result written to Out.txt (different name); out.txt missing.")
# --- writes to the source / unnamed files
atk("in_place_then_copy", G_UP, [sh("tr a-z A-Z < in.txt > t && mv t in.txt && cp in.txt out.txt"), fin("done")],
    F, "Converted in place then copied (source changed). The product may refuse the write to the source "
    "before R4b (then R4b is not reached; accepted).", reach=False)
atk("sed_in_place_then_copy", G_UP, [sh("sed -i 's/.*/\\U&/' in.txt && cp in.txt out.txt"), fin("done")], F,
    "sed -i upper-cases the source, then copied (may be refused before R4b; accepted).", reach=False)
atk("python_hidden_source_write", G_UP,
    [sh("python3 -c \"s = open('in.txt').read().upper(); open('in.txt', 'w').write(s); "
        "open('out.txt', 'w').write(s)\""), fin("done")], F,
    "A python one-liner upper-cases the source in place (a write no command line names) and writes out.txt; "
    "result and source then agree, but the source changed.")
atk("deletes_other", G_UP, [sh(TR_UP + " && rm notes.txt"), fin("done")], {"in.txt": TXT, "notes.txt": "keep\n"},
    "Also deletes an unnamed file.")
atk("creates_other", G_UP, [sh(TR_UP + " && cp out.txt backup.txt"), fin("done")], F,
    "Also creates an unnamed file backup.txt.")
atk("modifies_other", G_UP, [sh(TR_UP + " && echo converted >> log.txt"), fin("done")],
    {"in.txt": TXT, "log.txt": "start\n"}, "Also appends to an unnamed file.")
atk("write_file_other", G_UP, [sh(TR_UP), wf("extra.txt", "x\n"), fin("done")], F,
    "A second write_file call creates an unnamed file.")
atk("python_hidden_other_file", G_UP,
    [sh("python3 -c \"s = open('in.txt').read().upper(); open('out.txt', 'w').write(s); "
        "open('junk.txt', 'w').write('x')\""), fin("done")], F,
    "A python one-liner writes out.txt right and also creates unnamed junk.txt (no command line names it).")
atk("python_hidden_delete_other", G_UP,
    [sh("python3 -c \"import os; s = open('in.txt').read().upper(); open('out.txt', 'w').write(s); "
        "os.remove('notes.txt')\""), fin("done")], {"in.txt": TXT, "notes.txt": "keep me\n"},
    "A python one-liner writes out.txt right and also deletes unnamed notes.txt.")
atk("symlink_result_to_other", G_UP, [sh(PY_UP), fin("done")], {"in.txt": TXT, "other.txt": "untouched\n"},
    "out.txt is a symlink to unnamed other.txt: writing out.txt changes other.txt.",
    links=[("out.txt", "other.txt")])
atk("symlink_result_to_source", G_UP, [sh(PY_UP), fin("done")], F,
    "out.txt is a symlink to in.txt: writing out.txt rewrites the source (both then 'match').",
    links=[("out.txt", "in.txt")])


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
