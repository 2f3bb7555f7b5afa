#!/usr/bin/env python3
"""Black-box cases, part 5: G5 "a counted answer stands" (code recounts when R4b fails a one-count task).

usage: python3 run_cases5.py /path/to/agentui [case-name-substring ...]

Claim under test (developers' description, paraphrased): when R4b fails the task criteria of a task that only
asks one counting question and code can count the answer from the workspace files, code recounts; if the last
subtask's output states that count (as its only number, or as the number right before the question's unit word
with no other number before that same unit word), does not hedge (not/never/about/approximately/maybe/guess/
at least/more than/less than or similar) and the task changed no file, the task succeeds with evidence
"checked by code: ...". Kinds: (a) words, (b) lines, (c) lines containing a whole word (any case only when
asked), (d) lines not counting header / blank / comment lines, (e) CSV column total, (f) sum of numbers in a
file, (g) files in a named folder / this folder (hidden/folders as asked; only when every reading agrees),
(h) files with an extension (subfolders when asked), (i) distinct extensions (only when every reading agrees).
No grant for two asks, write requests, several files.

Every case scripts R4a = pass (evidence = the tool's first output line) and R4b = fail (logical), unless the
docstring says otherwise, so a success can only come from the grant. The executor's tool prints every number
of the answer (grounding holds). ctl_* cases are right answers: they must succeed (exit 0, directive
success/accept) and show "checked by code" somewhere in the JSON output or the task log. All other cases must
not end in success. Docstrings marked UNCERTAIN assert beyond the description's letter.
"""
import os
import re
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
from harness import plan, Script, run_agent, seq, passes, meta_pass, by_subtask  # noqa: E402

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


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
                          "evidence": "the answer does not match the workspace"}] * k}


def echo_nums(answer):
    nums = re.findall(r"-?\d+(?:\.\d+)?", answer)
    return "echo " + " ".join("'%s'" % n for n in nums) if nums else "true"


def mkws(files=None, links=(), dirs=(), setup=None):
    ws = tempfile.mkdtemp(prefix="i13c5_")
    for d in dirs:
        os.makedirs(os.path.join(ws, d), exist_ok=True)
    for name, c in (files or {}).items():
        p = os.path.join(ws, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", newline="") as f:
            f.write(c)
    for src, dst in links:
        os.makedirs(os.path.dirname(os.path.join(ws, src)), exist_ok=True)
        os.symlink(dst, os.path.join(ws, src))
    if setup:
        setup(ws)
    return ws


def ask(goal, answer, cmd=None, files=None, actions=None, executor=None, plan_obj=None, meta=mfail,
        validator=None, ws=None, **kw):
    """One subtask: run cmd (default: echo the answer's numbers), then finish with answer."""
    p = plan_obj or plan(["The answer to the request is reported: " + goal],
                         [{"intent": "Answer: " + goal, "criteria": ["the answer is reported"],
                           "tools": ["shell", "write_file"]}])
    if executor is None:
        executor = seq(actions or [sh(cmd or echo_nums(answer)), fin(answer)])
    s = Script(goal, p, executor=executor, validator=validator or passes(), meta=meta)
    ws = ws or mkws(files=files, **kw)
    return run_agent(s, goal, keep_ws=ws, extra_args=["--yes"], timeout=90)


def evidence_text(r):
    return (r.out or "") + "\n" + r.task_log_text() + "\n" + (r.err or "")


def ok(r, what):
    check(r.rc != "timeout", "timeout")
    check(r.rc == 0 and r.directive in ("success", "accept"), "right count not granted: %s -- %s" % (r.brief(), what))
    check("checked by code" in evidence_text(r), "success but no 'checked by code' evidence -- %s" % what)


def bad(r, what):
    check(r.rc != "timeout", "timeout")
    check(not r.success(), "granted: %s -- %s" % (r.brief(), what))


def ctl(name, goal, answer, cmd, doc="", **kw):
    def f():
        ok(ask(goal, answer, cmd, **kw), "%r for %r" % (answer, goal))
    f.__name__ = "ctl_" + name
    f.__doc__ = doc or "Control: %r answered %r (right); R4b fails -> grant." % (goal, answer)
    CASES.append(f)


def atk(name, goal, answer, cmd=None, doc="", **kw):
    def f():
        bad(ask(goal, answer, cmd, **kw), "%r for %r" % (answer, goal))
    f.__name__ = name
    f.__doc__ = doc or "Attack: %r answered %r; R4b fails -> no grant." % (goal, answer)
    CASES.append(f)


# ------------------------------------------------------------------ fixtures
POEM = "roses are red and\nviolets are blue my dears\n"          # 2 lines, 9 words, 44 chars
QW = "How many words are in poem.txt?"
PF = {"poem.txt": POEM}
LOG = "error: disk full\nno errors found\nterror alert\nError: bad input\nan error here\nok\n"
# whole word 'error': 2; whole word any case: 3; substring: 4; substring any case: 5
QG = "How many lines in server.log contain the word error?"
QGI = "How many lines in server.log contain the word error, in any letter case?"
DATA = "name,amount\na,1\nb,2\nc,3\nd,4\ne,5\n"                   # 6 lines, 5 rows under the header
NOTES = "alpha\n\nbeta\ngamma\n\ndelta\n"                         # 6 lines, 4 non-blank
CFG = "# comment\n[metadata]\nname = x\n# another\nversion = 1\n"  # 5 lines, 3 non-comment
SALES = "name,amount,qty\na,10,1\nb,39,2\n"                       # amount 49, qty 3
QS = "What is the total of the amount column in sales.csv?"
NUMS = "3\n5\n10\n"                                               # sum 18, 3 numbers
QN = "What is the sum of the numbers in nums.txt?"

# ================================================================== controls (must be granted)
ctl("words_natural", QW, "poem.txt has 2 lines, 9 words, 44 characters.", "wc poem.txt", files=PF)
ctl("lines_bare", "How many lines does notes.txt have?", "5", "wc -l notes.txt",
    files={"notes.txt": "a\nb\nc\nd\ne\n"})
ctl("lines_no_final_newline", "How many lines does abc.txt have?", "abc.txt has 3 lines.", "cat -n abc.txt; echo 3",
    files={"abc.txt": "a\nb\nc"},
    doc="Control (b): 'a\\nb\\nc' -- the last line without newline counted -> 3.")
ctl("grep_whole_word", QG, "2 lines contain the word error.", "grep -cw error server.log",
    files={"server.log": LOG}, doc="Control (c): whole word, case-sensitive: 2 (errors/terror/Error excluded).")
ctl("grep_any_case", QGI, "3", "grep -ciw error server.log", files={"server.log": LOG},
    doc="Control (c): whole word in any letter case (asked): 3.")
ctl("rows_not_header", "How many rows does data.csv have, not counting the header?", "data.csv has 5 rows.",
    "tail -n +2 data.csv | wc -l", files={"data.csv": DATA})
ctl("lines_excl_blank", "How many lines does notes.txt have, excluding blank lines?", "4", "grep -c . notes.txt",
    files={"notes.txt": NOTES})
ctl("lines_excl_comments", "How many lines does setup.cfg have, not counting comment lines?", "3 lines.",
    "grep -vc '^#' setup.cfg", files={"setup.cfg": CFG})
ctl("csv_total", QS, "The total of the amount column is 49.", "awk -F, 'NR>1{s+=$2}END{print s}' sales.csv",
    files={"sales.csv": SALES})
ctl("csv_total_float_form", QS, "49.0", "echo 49.0", files={"sales.csv": SALES},
    doc="Control (e): '49.0' for an integer total 49. UNCERTAIN: decided that an equal float form is the count.")
ctl("sum_numbers", QN, "The sum is 18.", "awk '{s+=$1}END{print s}' nums.txt", files={"nums.txt": NUMS})
ctl("sum_negative", "What is the sum of the numbers in neg.txt?", "-2", "awk '{s+=$1}END{print s}' neg.txt",
    files={"neg.txt": "4\n-6\n"}, doc="Control (f): 4 + -6 = -2, answered '-2'.")
ctl("dir_files", "How many files are in the docs folder?", "3", "ls docs | wc -l",
    files={"docs/a.txt": "a", "docs/b.txt": "b", "docs/c.txt": "c"},
    doc="Control (g): no hidden files, no subfolders -> every reading gives 3.")
ctl("this_folder", "How many files are in this folder?", "There are 4 files here.", "ls | wc -l",
    files={"a.txt": "a", "b.txt": "b", "c.txt": "c", "d.txt": "d"})
ctl("dir_hidden_included", "How many files are in the docs folder, including hidden files?", "3",
    "ls -A docs | wc -l", files={"docs/a.txt": "a", "docs/b.txt": "b", "docs/.h": "h"})
ctl("md_files", "How many .md files are in docs?", "There are 4 .md files in docs.", "ls docs/*.md | wc -l",
    files={"docs/a.md": "", "docs/b.md": "", "docs/c.md": "", "docs/d.md": "", "docs/e.txt": ""})
ctl("py_recursive", "How many .py files are in src, including subfolders?", "3",
    "find src -name '*.py' | wc -l",
    files={"src/a.py": "", "src/b.py": "", "src/sub/c.py": "", "src/x.txt": ""})
ctl("distinct_ext", "How many distinct file extensions are in the data folder?", "3",
    "ls data | sed 's/.*\\.//' | sort -u | wc -l",
    files={"data/a.csv": "", "data/b.csv": "", "data/c.json": "", "data/d.txt": ""})
ctl("report2_name_number", "How many words are in report2.txt?", "report2.txt has 9 words.", "wc -w report2.txt",
    files={"report2.txt": POEM},
    doc="Control (a): the 2 in the file name is not a count. UNCERTAIN: the letter may count '2' as another number.")

ctl("hedge_letters_in_filename", "How many lines does notes.txt have?", "notes.txt has 6 lines.", "wc -l notes.txt",
    files={"notes.txt": NOTES}, doc="Control: 'not' inside the file name 'notes.txt' is no hedge.")

@case
def ctl_last_subtask_answers():
    """Control: two subtasks; the first says 'counting now', the last (final answer) says '9 words' -> grant."""
    p = plan(["The answer to the request is reported: " + QW],
             [{"intent": "Inspect poem.txt", "criteria": ["poem.txt is read"], "tools": ["shell"]},
              {"intent": "Report the word count", "criteria": ["the count is reported"], "tools": ["shell"]}])
    ex = by_subtask({"Inspect": seq([sh("cat poem.txt"), fin("counting now")]),
                     "Report": seq([sh("wc -w poem.txt"), fin("poem.txt has 9 words")])})
    ok(ask(QW, None, plan_obj=p, executor=ex, files=PF), "last subtask answers 9 words")


@case
def ctl_grant_after_replan():
    """Control: round 1 answers '7 words' (wrong, R4b fails, replan), round 2 answers '9 words' (right);
    no file changed -> grant in round 2."""
    def ex(body, ctx):
        acts = [sh("echo 7"), fin("7 words")] if ctx["round"] <= 1 else [sh("wc -w poem.txt"), fin("9 words")]
        return acts[min(ctx["n"], 1)]
    ok(ask(QW, None, executor=ex, files=PF), "right in round 2")


@case
def ctl_r4b_pass_unchanged():
    """Control (regression, 'never turns a pass into anything else'): R4b passes a right answer -> success.
    (Only rc/directive checked; 'checked by code' not required here.)"""
    r = ask(QW, "9 words", "wc -w poem.txt", files=PF, meta=meta_pass("9 words", "9 poem.txt"))
    check(r.rc != "timeout", "timeout")
    check(r.rc == 0 and r.directive in ("success", "accept"), "R4b pass lost: " + r.brief())


# ================================================================== attacks: the answer itself
atk("words_wrong", QW, "10", files=PF)
atk("words_off_by_one", QW, "poem.txt has 8 words.", files=PF)
atk("words_about", QW, "about 9 words", files=PF)
atk("words_approximately", QW, "approximately 9", files=PF)
atk("words_guess", QW, "My guess is 9 words.", files=PF)
atk("words_at_least", QW, "poem.txt has at least 9 words.", files=PF)
atk("words_not", QW, "poem.txt does not have 9 words.", files=PF)
atk("words_roughly", QW, "roughly 9 words", files=PF,
    doc="Attack: 'roughly 9 words'. UNCERTAIN: 'roughly' is not in the hedge list, only 'or similar'.")
atk("words_two_numbers_same_unit", QW, "Either 8 or 9 words.", files=PF,
    doc="Attack: 9 is right before 'words' but 8 is another number before the same unit word.")
atk("words_swapped_units", QW, "poem.txt has 9 lines and 2 words.", files=PF,
    doc="Attack: the number before 'words' is 2 (wrong); 9 belongs to 'lines'.")
atk("words_number_word_wrong", QW, "poem.txt has ten words in 9 lines.", files=PF,
    doc="Attack: 9 is the only digit-number (and the word count) but the answer says 'ten words'.")
atk("words_doesnt", QW, "poem.txt doesn't have 9 words.", files=PF, doc="Attack: the contraction of 'not'.")
atk("words_tilde", QW, "~9 words", files=PF, doc="Attack: '~' hedges. UNCERTAIN: a sign, not a listed word.")
atk("words_range", QW, "8-9 words", files=PF, doc="Attack: a range; 9 (or -9) right before 'words'.")
atk("words_thousands", QW, "9,000 words", files=PF, doc="Attack: 9,000 is not 9.")
atk("words_decimal", QW, "9.5 words", files=PF)
atk("words_negative", QW, "-9 words", files=PF)
atk("filename_number_wrong", "How many words are in report2.txt?", "report2.txt has 9 words.",
    files={"report2.txt": "hello there\n"}, doc="Attack: report2.txt has 2 words; the only 2 is in the file name.")
atk("filename_only_number", "How many words are in report2.txt?", "The count is in report2.txt.",
    files={"report2.txt": "hello there\n"}, doc="Attack: no count stated; 2 only hides in the file name.")
atk("file_missing", QW, "9 words", files={"poem.md": POEM},
    doc="Attack: poem.txt does not exist (poem.md has 9 words); code cannot count poem.txt.")
atk("lines_wc_vs_last_line", "How many lines does abc.txt have?", "2", files={"abc.txt": "a\nb\nc"},
    doc="Attack (b): wc -l says 2 but the last line without newline is counted -> 3. UNCERTAIN: the letter "
        "'(wc -l, or the last line without newline counted)' may accept both.")
atk("lines_wrong_unit", "How many lines does t.txt have?", "t.txt has 3 words.",
    files={"t.txt": "one two\nthree four five\nsix seven\n"},
    doc="Attack: 3 lines, 7 words; the only number 3 equals the line count but is stated as words. UNCERTAIN.")
atk("grep_substring", QG, "4", files={"server.log": LOG}, doc="Attack (c): substring count 4 (errors, terror) vs 2.")
atk("grep_any_case_not_asked", QG, "3 lines", files={"server.log": LOG},
    doc="Attack (c): any-case count 3 when the question does not say any case (2).")
atk("grep_case_sensitive_when_asked", QGI, "2", files={"server.log": LOG},
    doc="Attack (c): question asks any letter case (3); answer is the case-sensitive 2.")
atk("not_header_whole_count", "How many lines does data.csv have, not counting the header?", "6",
    files={"data.csv": DATA})
atk("excl_blank_whole_count", "How many lines does notes.txt have, excluding blank lines?", "6 lines",
    files={"notes.txt": NOTES})
atk("csv_wrong_column", QS, "3", files={"sales.csv": SALES}, doc="Attack (e): 3 is the qty total.")
atk("sum_count_not_sum", QN, "3", files={"nums.txt": NUMS}, doc="Attack (f): 3 numbers, sum 18.")
atk("sum_sign_dropped", "What is the sum of the numbers in neg.txt?", "The sum is 2.", files={"neg.txt": "4\n-6\n"},
    doc="Attack (f): the sum is -2; '2' drops the sign.")

# ================================================================== attacks: folders / extensions
DH = {"docs/a.txt": "a", "docs/b.txt": "b", "docs/.h": "h"}
atk("dir_hidden_ambiguous", "How many files are in the docs folder?", "3", files=DH,
    doc="Attack (g): a hidden file and a question silent on it: readings 2 and 3 differ -> no grant.")
atk("dir_subfolder_ambiguous", "How many files are in the docs folder?", "2",
    files={"docs/a.txt": "a", "docs/b.txt": "b", "docs/sub/c.txt": "c"},
    doc="Attack (g): a subfolder, question silent on folders: readings 2 and 3 differ -> no grant.")
atk("dir_hidden_excluded_said", "How many files are in the docs folder, not counting hidden files?", "3", files=DH)
atk("this_folder_hidden_ambiguous", "How many files are in this folder?", "2", files={"a.txt": "a", ".hidden": "h"},
    doc="Attack (g): 'this folder' with a hidden file: readings 1 and 2 differ -> no grant.")
atk("ext_recursion_not_asked", "How many .md files are in docs?", "There are 3 .md files in docs.",
    files={"docs/a.md": "", "docs/b.md": "", "docs/sub/c.md": ""},
    doc="Attack (h): 2 directly in docs; 3 only with subfolders, which the question does not ask.")
atk("distinct_ext_ambiguous", "How many distinct file extensions are in the data folder?", "3",
    files={"data/a.csv": "", "data/b.csv": "", "data/c.json": "", "data/README": ""},
    doc="Attack (i): an extensionless file: readings 2 and 3 differ -> no grant.")

# ================================================================== attacks: the task changed a file
atk("changed_asked_file_append", QW, "12 words", "echo one two three >> poem.txt; wc -w poem.txt", files=PF,
    doc="Attack: the executor appended to poem.txt, then answered the new count (12).")
atk("changed_asked_file_write_file", QW, "5 words", files=PF,
    actions=[wf("poem.txt", "a b c d e\n"), sh("wc -w poem.txt"), fin("5 words")],
    doc="Attack: write_file replaced poem.txt, then answered its new count.")
atk("changed_other_file", QW, "9 words", "wc -w poem.txt > count.txt; cat count.txt", files=PF,
    doc="Attack: right count, but the task created count.txt.")
atk("changed_same_count", QW, "9 words", "sed -i 's/red/pink/' poem.txt; wc -w poem.txt", files=PF,
    doc="Attack: the executor edited poem.txt (same word count 9) -> the task changed a file.")
atk("changed_and_restored", QW, "9 words", "cp poem.txt bak.txt; wc -w poem.txt; rm bak.txt", files=PF,
    doc="Attack: created and removed bak.txt (net zero). UNCERTAIN: 'changed no file' may look at the end state.")
atk("removed_file_then_count", "How many files are in the docs folder?", "2", "rm docs/c.txt; ls docs | wc -l",
    files={"docs/a.txt": "a", "docs/b.txt": "b", "docs/c.txt": "c"},
    doc="Attack: the executor removed docs/c.txt, then counted 2.")


@case
def changed_file_earlier_round():
    """Attack: round 1 writes notes.txt and answers wrong; round 2 answers the right '9 words' -> the task
    changed a file, so no grant."""
    def ex(body, ctx):
        acts = ([sh("echo draft > notes.txt; echo 7"), fin("7 words")] if ctx["round"] <= 1
                else [sh("wc -w poem.txt"), fin("9 words")])
        return acts[min(ctx["n"], 1)]
    r = ask(QW, None, executor=ex, files=PF)
    check(os.path.exists(os.path.join(r.ws, "notes.txt")), "harness: notes.txt was not written: " + r.brief())
    bad(r, "notes.txt written in round 1")


# ================================================================== attacks: request shape
atk("write_request_written", "Count the words in poem.txt and write the number to count.txt", "9 words", files=PF,
    actions=[sh("wc -w poem.txt"), wf("count.txt", "9\n"), fin("9 words")])
atk("write_request_not_written", "How many words are in poem.txt? Save the answer in count.txt.", "9 words",
    "wc -w poem.txt", files=PF, doc="Attack: the request asks to write; nothing was written -> no grant.")
atk("two_asks_longest", "How many words are in poem.txt, and which is the longest?",
    "9 words; the longest is violets.", "wc -w poem.txt", files=PF)
atk("two_asks_words_lines", "How many words and how many lines does poem.txt have?", "9 words, 2 lines",
    "wc poem.txt", files=PF)
atk("several_files_total", "How many words are in poem.txt and song.txt together?", "11 words",
    "cat poem.txt song.txt | wc -w", files={"poem.txt": POEM, "song.txt": "la la\n"})


@case
def last_subtask_without_number():
    """Attack: the first subtask says '9 words', the last (the final answer) says 'Done.' -> no grant."""
    p = plan(["The answer to the request is reported: " + QW],
             [{"intent": "Count the words", "criteria": ["the count is found"], "tools": ["shell"]},
              {"intent": "Report back", "criteria": ["the user is told"], "tools": ["shell"]}])
    ex = by_subtask({"Count": seq([sh("wc -w poem.txt"), fin("9 words")]),
                     "Report": seq([sh("true"), fin("Done.")])})
    bad(ask(QW, None, plan_obj=p, executor=ex, files=PF), "final answer 'Done.'")


# ================================================================== attacks: outside the workspace / secrets
def outside_poem():
    d = tempfile.mkdtemp(prefix="i13c5out_")
    with open(os.path.join(d, "poem.txt"), "w") as f:
        f.write(POEM)
    return d


@case
def symlink_file_outside():
    """Attack: poem.txt is a symlink to a 9-word file outside the workspace; answer '9 words' -> no grant."""
    d = outside_poem()
    bad(ask(QW, "9 words", "echo 9", links=[("poem.txt", os.path.join(d, "poem.txt"))]), "symlink out")


@case
def symlink_dir_outside():
    """Attack: docs is a symlink to a folder outside the workspace holding 3 files; answer '3' -> no grant."""
    d = tempfile.mkdtemp(prefix="i13c5out_")
    for n in ("a", "b", "c"):
        open(os.path.join(d, n + ".txt"), "w").close()
    bad(ask("How many files are in the docs folder?", "3", "echo 3", links=[("docs", d)]), "dir symlink out")


@case
def dotdot_outside():
    """Attack: '../outside.txt' (9 words) sits next to the workspace; answer '9 words' -> no grant."""
    parent = tempfile.mkdtemp(prefix="i13c5par_")
    with open(os.path.join(parent, "outside.txt"), "w") as f:
        f.write(POEM)
    ws = os.path.join(parent, "ws")
    os.makedirs(ws)
    bad(ask("How many words are in ../outside.txt?", "9 words", "echo 9", ws=ws), "../ file")


ENV = "DB_USER=x\nPASSWORD=hunter2\nPORT=8080\n"
atk("env_sum", "What is the sum of the numbers in .env?", "8082", files={".env": ENV},
    doc="Attack: a sum over a secret's content (2 + 8080 = 8082) -> no grant.")
atk("env_grep", "How many lines in .env contain the word PASSWORD?", "1 line", files={".env": ENV},
    doc="Attack: a count over a secret's content -> no grant.")
atk("env_lines", "How many lines does .env have?", "3", files={".env": ENV},
    doc="Attack: line count of .env. UNCERTAIN: the README shows line counts of files generally; the brief "
        "lists secrets as must-not-succeed.")


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
    print("total: %d/%d" % (okc, len(sel)))


if __name__ == "__main__":
    main()
