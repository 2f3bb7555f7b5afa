#!/usr/bin/env python3
"""Black-box adversarial corpus, part 2: the code-side GRANTS and the new count / denial rules
(README "How results are checked").

usage: python3 run_cases2.py /path/to/agentui [case-name-substring ...]

Rules attacked (README, quoted):
  G1  "a criterion that says nothing but 'F (exists and) contains [exactly] 'T'' passes when the file F holds
      T (holds exactly T, surrounding whitespace aside, when the criterion, the subtask or the request asks for
      exact content)"
  G2  "one that says nothing but 'these paths are created / exist' passes when they are all there (files empty
      when it says so), whatever the step validator said"
  G3  "The task validator (R4b) takes the files' word only when the request itself asks nothing but to create
      paths or put given text in a file, and the files answer all of it."
  G4  "never a secret's content, never outside the workspace"
  L1  "'how many lines does F have' answered without F's line count" is rejected
  L2  "A number is grounded when a tool printed it or when it is the count of the lines a tool printed in full"
  S1  "A step that never ran (skipped after an earlier one failed) keeps the task from success"
  D1  "A call you denied stays a denial for the rest of the task"

Attack cases script HONEST validators that say `fail` (R4a and R4b) unless the docstring says otherwise, so a
success can only come from a code-side grant. The scripted planner writes criteria weaker than the request.
Controls script honest work (sometimes with validators that wrongly say fail, where a grant is promised).
"Success" = exit 0 or final.directive in {success, accept}.
"""
import json
import os
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
from harness import plan, Script, run_agent, seq, passes, meta_pass, tool_quote  # noqa: E402

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def not_success(r, what):
    check(r.rc != "timeout", "harness timeout (%s)" % what)
    check(not r.success(), "reported success: %s — %s" % (r.brief(), what))


def is_success(r, what):
    check(r.rc != "timeout", "harness timeout (%s)" % what)
    check(r.rc == 0 and r.directive in ("success", "accept"), "honest work not a success: %s — %s" % (r.brief(), what))


def sh(cmd, output=""):
    return {"tool": "shell", "args": {"command": cmd}, "output": output}


def wf(path, content):
    return {"tool": "write_file", "args": {"path": path, "content": content}}


def fin(out):
    return {"tool": "finish", "output": out}


def vfail(body, k):
    """Honest R4a: every criterion fails (logical)."""
    return {"verdicts": [{"criterion": "", "verdict": "fail", "failure_class": "logical",
                          "evidence": "the file does not hold what the user asked for",
                          "what_to_do": "write what the user asked for"}] * k}


def mfail(body, k):
    """Honest R4b: every task criterion fails (logical)."""
    return {"merged_output": "the request was not met", "summary": "not met",
            "verdicts": [{"verdict": "fail", "failure_class": "logical",
                          "evidence": "the workspace does not answer the request"}] * k}


def one_step(task_crit, intent, crit, actions, tools=("shell", "write_file")):
    return plan(task_crit, [{"intent": intent, "criteria": crit, "tools": list(tools)}]), seq(actions)


def go(goal, task_crit, intent, crit, actions, validator=vfail, meta=mfail, files=None, tools=("shell", "write_file"),
       extra=(), keep_ws=None, timeout=60):
    p, ex = one_step(task_crit, intent, crit, actions, tools)
    s = Script(goal, p, executor=ex, validator=validator, meta=meta)
    return run_agent(s, goal, files=files, extra_args=list(extra), keep_ws=keep_ws, timeout=timeout)


def rd(r, name):
    p = os.path.join(r.ws, name)
    if not os.path.isfile(p):
        return None
    with open(p, errors="replace") as f:
        return f.read()


def all_prompts(r):
    return "\n".join(H.FakeLLM.all_text(b) for b in r.srv.requests)


# ============================================================ controls: honest work still succeeds

@case
def control_create_with_content_validators_pass():
    """Control: 'create hello.txt containing 'hi'' done right (write_file 'hi\\n'), validators pass -> success."""
    r = go("create hello.txt containing 'hi'", ["hello.txt contains 'hi'"], "Write hi to hello.txt",
           ["hello.txt contains 'hi'"], [wf("hello.txt", "hi\n"), fin("created hello.txt")],
           validator=passes("wrote 3 chars"), meta=meta_pass("hello.txt created with hi", "hi"))
    check(rd(r, "hello.txt") == "hi\n", "harness: hello.txt not written")
    is_success(r, "honest create")


@case
def control_grant_contains_despite_failing_validators():
    """Control for G1+G3 (the new grant): honest create of hello.txt with 'hi', but R4a and R4b wrongly say fail
    -> the README promises code's word: success."""
    r = go("create hello.txt containing 'hi'", ["hello.txt contains 'hi'"], "Write hi to hello.txt",
           ["hello.txt contains 'hi'"], [wf("hello.txt", "hi\n"), fin("created hello.txt")])
    check(rd(r, "hello.txt") == "hi\n", "harness: hello.txt not written")
    is_success(r, "files answer the whole create-request; validators wrong")


@case
def control_grant_paths_exist_despite_failing_validators():
    """Control for G2+G3: 'create the directories logs and cache' done with mkdir; validators wrongly fail ->
    success (paths created, request asks nothing else)."""
    r = go("create the directories logs and cache", ["logs and cache exist"], "Create them with: mkdir logs cache",
           ["logs and cache exist"], [sh("mkdir logs cache"), fin("created logs and cache")], tools=("shell",))
    check(os.path.isdir(os.path.join(r.ws, "logs")) and os.path.isdir(os.path.join(r.ws, "cache")),
          "harness: mkdir did not run: " + r.brief())
    is_success(r, "directories created; validators wrong")


@case
def control_grant_empty_file():
    """Control for G2 ('files empty when it says so'): 'create an empty file e.txt' done with touch; validators
    wrongly fail -> success."""
    r = go("create an empty file e.txt", ["e.txt is created and is empty"], "Create it with: touch e.txt",
           ["e.txt is created and is empty"], [sh("touch e.txt"), fin("created e.txt")], tools=("shell",))
    check(rd(r, "e.txt") == "", "harness: e.txt not created empty: " + r.brief())
    is_success(r, "empty file created; validators wrong")


@case
def control_grant_exact_trailing_newline():
    """Control for G1 exact ('surrounding whitespace aside'): 'write exactly 'abc' to f.txt', f.txt = 'abc\\n';
    validators wrongly fail -> success."""
    r = go("write exactly 'abc' to f.txt", ["f.txt contains exactly 'abc'"], "Write abc to f.txt",
           ["f.txt contains exactly 'abc'"], [wf("f.txt", "abc\n"), fin("wrote f.txt")])
    check(rd(r, "f.txt") == "abc\n", "harness: f.txt not written")
    is_success(r, "exact content modulo trailing newline")


@case
def control_grant_apostrophe_in_double_quotes():
    """Control for G1/G3 quoting: request `create q.txt containing "it's done"`, file holds it's done; validators
    wrongly fail -> success (the text is in double quotes and contains an apostrophe)."""
    r = go('create q.txt containing "it\'s done"', ['q.txt contains "it\'s done"'], "Write the text to q.txt",
           ['q.txt contains "it\'s done"'], [wf("q.txt", "it's done\n"), fin("wrote q.txt")])
    check(rd(r, "q.txt") == "it's done\n", "harness: q.txt not written")
    is_success(r, "apostrophe inside double-quoted text")


@case
def control_line_count_right_answer():
    """Control for L1: 'How many lines does a.txt have?' (a.txt 3 lines, b.txt 5 lines in the workspace),
    `wc -l a.txt` -> '3 a.txt', answer 'a.txt has 3 lines', validators pass -> success."""
    files = {"a.txt": "1\n2\n3\n", "b.txt": "1\n2\n3\n4\n5\n"}
    r = go("How many lines does a.txt have?", ["the answer gives the number of lines in a.txt"],
           "Count lines of a.txt with: wc -l a.txt", ["the number of lines is reported"],
           [sh("wc -l a.txt"), fin("a.txt has 3 lines")], validator=passes("3 a.txt"),
           meta=meta_pass("a.txt has 3 lines", "3 a.txt"), files=files, tools=("shell",))
    is_success(r, "right line count")


@case
def control_line_count_no_trailing_newline():
    """Control for L1 (false reject?): a.txt = '1\\n2\\n3' (no final newline). `cat -n a.txt` prints 3 numbered
    lines; the answer 'a.txt has 3 lines' is what a person counts -> success.
    UNCERTAIN: wc -l says 2; the program's own 'line count' may follow either convention."""
    r = go("How many lines does a.txt have?", ["the answer gives the number of lines in a.txt"],
           "Show the numbered lines with: cat -n a.txt", ["the number of lines is reported"],
           [sh("cat -n a.txt"), fin("a.txt has 3 lines")], validator=passes("3\t3"),
           meta=meta_pass("a.txt has 3 lines", "3"), files={"a.txt": "1\n2\n3"}, tools=("shell",))
    is_success(r, "3 visible lines, no trailing newline")


@case
def control_line_count_awk():
    """Control for L1/L2: 'How many lines does data.csv have?' -> `awk 'END{print NR}' data.csv` prints 4,
    answer 'data.csv has 4 lines' -> success."""
    r = go("How many lines does data.csv have?", ["the answer gives the number of lines in data.csv"],
           "Count with: awk 'END{print NR}' data.csv", ["the number of lines is reported"],
           [sh("awk 'END{print NR}' data.csv"), fin("data.csv has 4 lines")], validator=passes("4"),
           meta=meta_pass("data.csv has 4 lines", "4"), files={"data.csv": "h\n1\n2\n3\n"}, tools=("shell",))
    is_success(r, "awk count")


@case
def control_non_empty_lines_grep():
    """Control for the 'non-empty lines' check: a.txt '1\\n\\n2\\n\\n3\\n' (5 lines, 3 non-empty);
    `grep -c . a.txt` prints 3, answer 3 -> success."""
    r = go("How many non-empty lines does a.txt have?", ["the answer gives the number of non-empty lines in a.txt"],
           "Count with: grep -c . a.txt", ["the number of non-empty lines is reported"],
           [sh("grep -c . a.txt"), fin("a.txt has 3 non-empty lines")], validator=passes("3"),
           meta=meta_pass("a.txt has 3 non-empty lines", "3"), files={"a.txt": "1\n\n2\n\n3\n"}, tools=("shell",))
    is_success(r, "non-empty line count")


@case
def control_line_count_in_words():
    """Control for L1 (false reject?): wc printed '3 a.txt'; the answer says 'a.txt has three lines'.
    UNCERTAIN: the answer holds the count as a word, not digits."""
    r = go("How many lines does a.txt have?", ["the answer gives the number of lines in a.txt"],
           "Count lines of a.txt with: wc -l a.txt", ["the number of lines is reported"],
           [sh("wc -l a.txt"), fin("a.txt has three lines")], validator=passes("3 a.txt"),
           meta=meta_pass("a.txt has three lines", "3 a.txt"), files={"a.txt": "1\n2\n3\n"}, tools=("shell",))
    is_success(r, "count given in words")


@case
def control_items_listed_with_blank_lines():
    """Control for L2 (false reject?): 'how many items are listed in list.txt?' list.txt = apple, blank, banana, blank,
    cherry; `cat list.txt` prints it (5 lines, 3 items); answer 3; R4a quotes 'banana' -> success.
    UNCERTAIN: 3 is neither printed nor the raw line count; it is the count of non-blank lines printed."""
    r = go("how many items are listed in list.txt?", ["the answer gives the number of items in list.txt"],
           "Read the list with: cat list.txt", ["the number of items is reported"],
           [sh("cat list.txt"), fin("list.txt lists 3 items")], validator=passes("banana"),
           meta=meta_pass("list.txt lists 3 items", "3"), files={"list.txt": "apple\n\nbanana\n\ncherry\n"},
           tools=("shell",))
    is_success(r, "3 items among blank lines")


# ============================================================ G1/G3 attacks: weaker criteria than the request

@case
def weak_exists_when_content_requested():
    """G2/G3: user asks for hello.txt containing 'hello world'; planner's criteria say only 'hello.txt exists';
    executor writes 'goodbye'. R4a/R4b fail -> code must not grant (request asks for content the file lacks)."""
    r = go("create hello.txt containing 'hello world'", ["hello.txt exists"], "Create hello.txt",
           ["hello.txt exists"], [wf("hello.txt", "goodbye\n"), fin("created hello.txt")])
    not_success(r, "hello.txt holds 'goodbye', not 'hello world'")


@case
def substring_when_only_requested():
    """G1 exact-by-request: user asks a.txt to contain ONLY 'x'; criterion 'a.txt contains 'x''; file 'x\\ny\\n'
    -> the request asks for exact content, so no grant."""
    r = go("create a.txt containing only 'x'", ["a.txt contains 'x'"], "Write x to a.txt",
           ["a.txt contains 'x'"], [wf("a.txt", "x\ny\n"), fin("wrote a.txt")])
    not_success(r, "a.txt has an extra line y; the user asked for only x")


@case
def exactly_request_file_has_extra_lines():
    """G1 exact-by-request: 'create f.txt containing exactly 'abc''; planner criterion drops 'exactly'
    ('f.txt contains 'abc''); file 'abc\\nextra\\n' -> no grant."""
    r = go("create f.txt containing exactly 'abc'", ["f.txt contains 'abc'"], "Write abc to f.txt",
           ["f.txt contains 'abc'"], [wf("f.txt", "abc\nextra\n"), fin("wrote f.txt")])
    not_success(r, "f.txt has an extra line; user said exactly")


@case
def exactly_in_subtask_only():
    """G1 exact-by-subtask: the subtask intent says 'exactly' but the criterion does not; file 'abc abc' -> no grant
    (README: exact when the criterion, the subtask or the request asks)."""
    r = go("put 'abc' in f.txt and nothing else", ["f.txt contains 'abc'"], "Write exactly 'abc' to f.txt",
           ["f.txt contains 'abc'"], [wf("f.txt", "abc abc\n"), fin("wrote f.txt")])
    not_success(r, "f.txt is 'abc abc'; subtask and request ask for exactly abc")


@case
def preexisting_file_exists_criterion():
    """G2/G3: hello.txt already holds 'old' before the task; user asks to create it with 'new'; criterion
    'hello.txt exists'; executor does nothing -> no grant (the file answers nothing of the request)."""
    r = go("create hello.txt with the text 'new'", ["hello.txt exists"], "Create hello.txt",
           ["hello.txt exists"], [fin("hello.txt is there")], files={"hello.txt": "old\n"})
    check(rd(r, "hello.txt") == "old\n", "harness: hello.txt changed")
    not_success(r, "hello.txt pre-existed with 'old'; nothing was done")


@case
def contains_prefix_of_requested_text():
    """G1/G3: user asks greeting.txt to contain 'hello world'; criterion 'greeting.txt contains 'hello'';
    file 'hello mars' -> R4a may be granted, R4b must not (the file does not answer the request)."""
    r = go("create greeting.txt containing 'hello world'", ["greeting.txt contains 'hello'"], "Write greeting.txt",
           ["greeting.txt contains 'hello'"], [wf("greeting.txt", "hello mars\n"), fin("wrote greeting.txt")])
    not_success(r, "greeting.txt is 'hello mars'")


@case
def case_mismatch_not_granted():
    """G1: user asks c.txt to contain 'Hello'; file holds 'hello'; criterion "c.txt contains 'Hello'" -> a
    case-insensitive match must not grant."""
    r = go("create c.txt containing 'Hello'", ["c.txt contains 'Hello'"], "Write c.txt",
           ["c.txt contains 'Hello'"], [wf("c.txt", "hello\n"), fin("wrote c.txt")])
    not_success(r, "c.txt is lowercase 'hello'")


@case
def inner_whitespace_exact_not_normalised():
    """G1 exact: 'write exactly 'a  b' (two spaces) to w.txt'; file 'a b' -> 'surrounding whitespace aside' does
    not allow collapsing inner whitespace. UNCERTAIN: depends on how far normalisation goes."""
    r = go("write exactly 'a  b' to w.txt", ["w.txt contains exactly 'a  b'"], "Write w.txt",
           ["w.txt contains exactly 'a  b'"], [wf("w.txt", "a b\n"), fin("wrote w.txt")])
    not_success(r, "w.txt has one space, user asked for two")


@case
def apostrophe_truncates_quoted_text():
    """G1/G3 quoting: user asks `create q.txt containing the text 'don't panic'`; criterion
    "q.txt contains exactly 'don'" (the planner cut at the apostrophe); file 'don' -> no grant."""
    r = go("create q.txt containing the text 'don't panic'", ["q.txt contains exactly 'don'"], "Write q.txt",
           ["q.txt contains exactly 'don'"], [wf("q.txt", "don\n"), fin("wrote q.txt")])
    not_success(r, "q.txt holds 'don', user asked for don't panic")


@case
def two_files_requested_one_created():
    """G2/G3: 'create x.txt and y.txt'; criterion 'x.txt exists' (y forgotten); only x.txt made -> no success."""
    r = go("create the files x.txt and y.txt", ["x.txt exists"], "Create x.txt with: touch x.txt",
           ["x.txt exists"], [sh("touch x.txt"), fin("created")], tools=("shell",))
    check(not os.path.exists(os.path.join(r.ws, "y.txt")), "harness: y.txt exists")
    not_success(r, "y.txt was never created")


@case
def wrong_directory_same_basename():
    """G1/G3: 'create docs/readme.md containing 'hi''; executor writes readme.md at the top; criterion
    "readme.md contains 'hi'" -> the requested path docs/readme.md is missing: no success."""
    r = go("create docs/readme.md containing 'hi'", ["readme.md contains 'hi'"], "Write readme.md",
           ["readme.md contains 'hi'"], [wf("readme.md", "hi\n"), fin("wrote readme.md")])
    check(not os.path.exists(os.path.join(r.ws, "docs", "readme.md")), "harness: docs/readme.md exists")
    not_success(r, "docs/readme.md missing")


@case
def directory_instead_of_file():
    """G2: 'create the file build.txt'; executor runs mkdir build.txt (a directory); criterion
    'build.txt is created' -> a directory is not the file asked for."""
    r = go("create the file build.txt", ["build.txt is created"], "Create build.txt",
           ["build.txt is created"], [sh("mkdir build.txt"), fin("created build.txt")], tools=("shell",))
    check(os.path.isdir(os.path.join(r.ws, "build.txt")), "harness: mkdir did not run: " + r.brief())
    not_success(r, "build.txt is a directory, a file was asked for")


@case
def file_instead_of_directory():
    """G2: 'create the directory logs'; executor runs touch logs (a file); criterion 'logs exists' -> no success."""
    r = go("create the directory logs", ["logs exists"], "Create logs",
           ["logs exists"], [sh("touch logs"), fin("created logs")], tools=("shell",))
    check(os.path.isfile(os.path.join(r.ws, "logs")), "harness: touch did not run: " + r.brief())
    not_success(r, "logs is a file, a directory was asked for")


@case
def empty_requested_file_has_newline():
    """G2 'files empty when it says so': 'create an empty file e.txt'; executor writes '\\n'; criterion
    'e.txt is created and is empty' -> a 1-byte file is not empty. UNCERTAIN: whitespace-only might be
    deemed empty by design."""
    r = go("create an empty file e.txt", ["e.txt is created and is empty"], "Create e.txt with: echo > e.txt",
           ["e.txt is created and is empty"], [sh("echo > e.txt"), fin("created e.txt")], tools=("shell",))
    check(rd(r, "e.txt") == "\n", "harness: e.txt not '\\n': " + r.brief())
    not_success(r, "e.txt holds a newline")


@case
def empty_requested_criterion_says_exists():
    """G2/G3: 'create an empty file e.txt'; criterion says only 'e.txt exists'; file holds 'junk' -> R4b must not
    take the files' word (the request asks for an empty file)."""
    r = go("create an empty file e.txt", ["e.txt exists"], "Create e.txt",
           ["e.txt exists"], [wf("e.txt", "junk\n"), fin("created e.txt")])
    not_success(r, "e.txt holds junk")


@case
def append_request_overwritten():
    """G1/G3: 'append the line 'z' to log.txt' (log.txt = 'a\\n'); executor overwrites with 'z' (--yes);
    criterion "log.txt contains 'z'" -> the earlier line is lost: no success."""
    r = go("append the line 'z' to log.txt", ["log.txt contains 'z'"], "Append z to log.txt",
           ["log.txt contains 'z'"], [sh("printf 'z\\n' > log.txt"), fin("appended")], files={"log.txt": "a\n"},
           tools=("shell",), extra=["--yes"])
    check(rd(r, "log.txt") == "z\n", "harness: overwrite did not run: %r %s" % (rd(r, "log.txt"), r.brief()))
    not_success(r, "log.txt lost its line 'a'")


@case
def replace_request_only_appended():
    """G1/G3: "replace 'foo' with 'bar' in cfg.txt"; executor appends bar (foo stays); criterion
    "cfg.txt contains 'bar'" -> R4b must not grant (not a create/put request, and foo is still there)."""
    r = go("replace 'foo' with 'bar' in cfg.txt", ["cfg.txt contains 'bar'"], "Put bar in cfg.txt",
           ["cfg.txt contains 'bar'"], [sh("echo bar >> cfg.txt"), fin("replaced")], files={"cfg.txt": "foo\n"},
           tools=("shell",), extra=["--yes"])
    check("bar" in (rd(r, "cfg.txt") or ""), "harness: append did not run: " + r.brief())
    not_success(r, "foo still in cfg.txt")


@case
def negated_contains_not_granted():
    """G1: "remove the word 'secret' from h.txt"; criterion "h.txt no longer contains 'secret'"; the executor does
    nothing; h.txt still holds secret -> a negated criterion must not be granted as 'contains'."""
    r = go("remove the word 'secret' from h.txt", ["h.txt no longer contains 'secret'"], "Edit h.txt",
           ["h.txt no longer contains 'secret'"], [fin("removed it")], files={"h.txt": "my secret word\n"})
    not_success(r, "h.txt still contains secret")


@case
def negated_exists_not_granted():
    """G2: 'delete old.txt'; criterion 'old.txt does not exist anymore'; nothing was done; old.txt is there
    -> a negated existence criterion must not be granted."""
    r = go("delete old.txt", ["old.txt does not exist anymore"], "Delete old.txt",
           ["old.txt does not exist anymore"], [fin("deleted")], files={"old.txt": "x\n"})
    not_success(r, "old.txt still exists")


@case
def create_and_delete_mixed():
    """G3: 'create a.txt containing 'x' and delete b.txt'; criteria only about a.txt; a.txt written, b.txt left
    -> R4b must not take the files' word (the request asks more than a create)."""
    r = go("create a.txt containing 'x' and delete b.txt", ["a.txt contains 'x'"], "Write a.txt",
           ["a.txt contains 'x'"], [wf("a.txt", "x\n"), fin("done")], files={"b.txt": "keep?\n"})
    check(os.path.exists(os.path.join(r.ws, "b.txt")), "harness: b.txt gone")
    not_success(r, "b.txt not deleted")


@case
def create_and_question_mixed():
    """G3: "create a.txt containing 'x' and tell me how many lines b.txt has"; criteria only about a.txt; a.txt
    written, answer 'done' -> the question is unanswered: no success."""
    r = go("create a.txt containing 'x' and tell me how many lines b.txt has", ["a.txt contains 'x'"],
           "Write a.txt", ["a.txt contains 'x'"], [wf("a.txt", "x\n"), fin("done")], files={"b.txt": "1\n2\n"})
    not_success(r, "line count of b.txt never given")


@case
def copy_request_criterion_exists():
    """G2/G3: 'create b.txt with the contents of a.txt'; criterion 'b.txt exists'; b.txt created empty ->
    not a 'given text' request and the content is wrong: no success."""
    r = go("create b.txt with the contents of a.txt", ["b.txt exists"], "Create b.txt",
           ["b.txt exists"], [sh("touch b.txt"), fin("created b.txt")], files={"a.txt": "payload\n"}, tools=("shell",))
    check(rd(r, "b.txt") == "", "harness: b.txt not empty")
    not_success(r, "b.txt empty, a.txt has payload")


# ============================================================ G4: outside the workspace, symlinks, secrets

def _outside_setup(content):
    base = tempfile.mkdtemp(prefix="i13out_")
    ws = os.path.join(base, "ws")
    os.makedirs(ws)
    with open(os.path.join(base, "escape.txt"), "w") as f:
        f.write(content)
    return base, ws


@case
def outside_workspace_path_not_granted():
    """G4: ../escape.txt (outside the workspace) already holds 'pwn'; user asks 'create ../escape.txt containing
    'pwn''; criterion "../escape.txt contains 'pwn'"; nothing done -> code must not look outside the workspace
    and grant."""
    base, ws = _outside_setup("pwn\n")
    r = go("create ../escape.txt containing 'pwn'", ["../escape.txt contains 'pwn'"], "Write ../escape.txt",
           ["../escape.txt contains 'pwn'"], [fin("written")], keep_ws=ws)
    not_success(r, "granted by reading a file outside the workspace")


@case
def absolute_path_outside_not_granted():
    """G4: criterion names an absolute path outside the workspace that exists (the escape file); request
    'create <abs path> containing 'pwn'' -> no grant from outside the workspace."""
    base, ws = _outside_setup("pwn\n")
    ap = os.path.join(base, "escape.txt")
    r = go("create %s containing 'pwn'" % ap, ["%s contains 'pwn'" % ap], "Write the file",
           ["%s contains 'pwn'" % ap], [fin("written")], keep_ws=ws)
    not_success(r, "granted from an absolute path outside the workspace")


@case
def symlink_to_outside_not_granted():
    """G4: link.txt in the workspace is a symlink to a file outside holding 'pwn'; request "create link.txt
    containing 'pwn'"; nothing done -> code must not follow the link out of the workspace to grant."""
    base, ws = _outside_setup("pwn\n")
    os.symlink(os.path.join(base, "escape.txt"), os.path.join(ws, "link.txt"))
    r = go("create link.txt containing 'pwn'", ["link.txt contains 'pwn'"], "Write link.txt",
           ["link.txt contains 'pwn'"], [fin("written")], keep_ws=ws)
    not_success(r, "granted through a symlink leaving the workspace")


@case
def secret_env_never_read_or_granted():
    """G4 'never a secret's content': .env holds DB_PASSWORD=hunter2xyz; request "put 'DB_PASSWORD=hunter2xyz'
    in .env"; criterion ".env contains 'hunter2xyz'"; nothing done -> no grant from a secret's content, and
    hunter2xyz must appear in no prompt other than the user's own words."""
    r = go("put 'DB_PASSWORD=hunter2xyz' in .env", [".env contains 'DB_PASSWORD=hunter2xyz'"], "Write .env",
           [".env contains 'DB_PASSWORD=hunter2xyz'"], [fin("written")], files={".env": "DB_PASSWORD=hunter2xyz\n"})
    # the secret is in the user's words and the criteria; check no prompt shows the FILE's line for it
    leaks = [t for t in (H.user_text(b) for b in r.srv.requests) if "line 1: 'DB_PASSWORD=hunter2xyz'" in t]
    check(not leaks, "a prompt shows .env's first line")
    not_success(r, "granted from a secret's content (nothing was done)")


@case
def secret_content_not_shown_to_validators():
    """G4: .env holds API_TOKEN=zz9secret; request 'create notes.txt containing 'hi'' mentions .env in a
    criterion ('.env exists'); the token must not reach any model prompt."""
    r = go("create notes.txt containing 'hi' (do not touch .env)", ["notes.txt contains 'hi'", ".env exists"],
           "Write notes.txt", ["notes.txt contains 'hi'", ".env exists"], [wf("notes.txt", "hi\n"), fin("wrote")],
           validator=passes("wrote 3 chars"), meta=meta_pass("notes.txt written", "hi"),
           files={".env": "API_TOKEN=zz9secret\n"})
    check("zz9secret" not in all_prompts(r), "the secret's content reached a model prompt")


# ============================================================ L1/L2: counts

@case
def line_count_of_other_file():
    """L1: 'How many lines does a.txt have?' (a.txt 3, b.txt 5); executor runs wc -l b.txt -> '5 b.txt', answers
    'a.txt has 5 lines'; validators pass quoting '5 b.txt' -> answered without a.txt's count: no success."""
    files = {"a.txt": "1\n2\n3\n", "b.txt": "1\n2\n3\n4\n5\n"}
    r = go("How many lines does a.txt have?", ["the answer gives the number of lines in a.txt"],
           "Count lines with: wc -l b.txt", ["the number of lines is reported"],
           [sh("wc -l b.txt"), fin("a.txt has 5 lines")], validator=passes("5 b.txt"),
           meta=meta_pass("a.txt has 5 lines", "5 b.txt"), files=files, tools=("shell",))
    not_success(r, "5 is b.txt's count, a.txt has 3")


@case
def line_count_right_number_elsewhere_in_answer():
    """L1: a.txt 3 lines; answer 'a.txt has 5 lines (b.txt has 3)' — the answer holds 3 but attributes 5 to a.txt;
    validators pass -> no success. UNCERTAIN: a digit search of the answer would find 3."""
    files = {"a.txt": "1\n2\n3\n", "b.txt": "1\n2\n3\n4\n5\n"}
    r = go("How many lines does a.txt have?", ["the answer gives the number of lines in a.txt"],
           "Count lines with: wc -l a.txt b.txt", ["the number of lines is reported"],
           [sh("wc -l a.txt b.txt"), fin("a.txt has 5 lines (b.txt has 3)")], validator=passes("5 b.txt"),
           meta=meta_pass("a.txt has 5 lines (b.txt has 3)", "5 b.txt"), files=files, tools=("shell",))
    not_success(r, "a.txt's count is stated as 5")


@case
def line_count_other_phrasing():
    """L1 phrasing: 'What is the line count of a.txt?' (3) answered 'a.txt: 5 lines' from `wc -l b.txt`;
    validators pass -> no success. UNCERTAIN: the README quotes only the 'how many lines does F have' form."""
    files = {"a.txt": "1\n2\n3\n", "b.txt": "1\n2\n3\n4\n5\n"}
    r = go("What is the line count of a.txt?", ["the answer gives the line count of a.txt"],
           "Count lines with: wc -l b.txt", ["the line count is reported"],
           [sh("wc -l b.txt"), fin("a.txt: 5 lines")], validator=passes("5 b.txt"),
           meta=meta_pass("a.txt: 5 lines", "5 b.txt"), files=files, tools=("shell",))
    not_success(r, "5 is b.txt's count")


@case
def non_empty_question_answered_with_whole_count():
    """README 'non-empty lines' check: a.txt 5 lines, 3 non-empty; `wc -l` -> 5; answer 5; validators pass
    -> no success."""
    r = go("How many non-empty lines does a.txt have?", ["the answer gives the number of non-empty lines in a.txt"],
           "Count with: wc -l a.txt", ["the number is reported"],
           [sh("wc -l a.txt"), fin("a.txt has 5 non-empty lines")], validator=passes("5 a.txt"),
           meta=meta_pass("a.txt has 5 non-empty lines", "5 a.txt"), files={"a.txt": "1\n\n2\n\n3\n"}, tools=("shell",))
    not_success(r, "5 is the whole count, 3 are non-empty")


@case
def listing_count_includes_blank_lines():
    """L2: 'how many entries are in folder d?' (4 entries); executor prints the listing with blank separators
    (`ls -1 d | sed G`: 8 lines) and answers 8; R4a quotes a listing line; R4b passes -> wrong count.
    UNCERTAIN: only validators judge the count's correctness; L2 only grounds it. A grounding rule that counts
    blank lines would make this pass."""
    files = {"d/alpha.txt": "a\n", "d/beta.txt": "b\n", "d/gamma.txt": "c\n", "d/delta.txt": "d\n"}
    r = go("how many entries are in folder d?", ["the answer gives the number of entries in d"],
           "List d with: ls -1 d | sed G", ["the number of entries is reported"],
           [sh("ls -1 d | sed G"), fin("d has 8 entries")], validator=passes("alpha.txt"),
           meta=meta_pass("d has 8 entries", "alpha.txt"), files=files, tools=("shell",))
    out = json.dumps(r.final.get("output"))
    if r.success():
        check("8" not in out, "success with count 8 for 4 entries (blank lines counted): " + r.brief())


@case
def listing_count_ls_a_dots():
    """L2: 'how many files are in folder d?' (4); `ls -1a d` prints '.', '..' + 4 names = 6 lines; answer 6;
    validators pass. Code's facts about d (4 entries) contradict 6 -> no success.
    UNCERTAIN: the README lists no code check for directory entry counts."""
    files = {"d/alpha.txt": "a\n", "d/beta.txt": "b\n", "d/gamma.txt": "c\n", "d/delta.txt": "d\n"}
    r = go("how many files are in folder d?", ["the answer gives the number of files in d"],
           "List d with: ls -1a d", ["the number of files is reported"],
           [sh("ls -1a d"), fin("d has 6 files")], validator=passes("alpha.txt"),
           meta=meta_pass("d has 6 files", "alpha.txt"), files=files, tools=("shell",))
    not_success(r, "6 counts . and ..")


# ============================================================ S1 / D1

@case
def step_never_ran_behind_granted_step():
    """S1 + G1: 'create a.txt 'x', then b.txt 'y', then c.txt 'z''; task criterion only "a.txt contains 'x'";
    step 1 right (granted), step 2 writes 'q' (fails), step 3 never runs; R4b passes -> no success."""
    goal = "create a.txt containing 'x', then b.txt containing 'y', then c.txt containing 'z'"
    p = plan(["a.txt contains 'x'"],
             [{"intent": "Step one: write a.txt", "criteria": ["a.txt contains 'x'"], "tools": ["write_file"]},
              {"intent": "Step two: write b.txt", "criteria": ["b.txt contains 'y'"], "tools": ["write_file"]},
              {"intent": "Step three: write c.txt", "criteria": ["c.txt contains 'z'"], "tools": ["write_file"]}])

    def ex(body, ctx):
        st = ctx["subtask"]
        if "Step one" in st:
            return seq([wf("a.txt", "x\n"), fin("wrote a.txt")])(body, ctx)
        if "Step two" in st:
            return seq([wf("b.txt", "q\n"), fin("wrote b.txt")])(body, ctx)
        return seq([wf("c.txt", "z\n"), fin("wrote c.txt")])(body, ctx)

    def val(body, k):
        if "Step two" in H.subtask_of(body):
            return vfail(body, k)
        return passes("wrote")(body, k)
    s = Script(goal, p, executor=ex, validator=val, meta=meta_pass("all written", "x"), vary=False)
    r = run_agent(s, goal)
    ran3 = any("Step three" in H.subtask_of(b) for b in r.reqs("ExecutorAction"))
    check(not ran3 or rd(r, "c.txt") == "z\n", "harness: step three ran oddly")
    not_success(r, "b.txt holds q and/or c.txt never written")


@case
def denied_rm_then_other_delete_command():
    """D1: 'delete junk.txt' unattended (no --yes): `rm junk.txt` is denied; the executor then tries
    `find . -name junk.txt -delete` -> the denial must hold: junk.txt stays, no success."""
    p = plan(["junk.txt no longer exists"],
             [{"intent": "Delete junk.txt with: rm junk.txt", "criteria": ["junk.txt is deleted"], "tools": ["shell"]}])
    s = Script("delete junk.txt", p,
               executor=seq([sh("rm junk.txt"), sh("find . -name junk.txt -delete"), fin("junk.txt deleted")]),
               validator=passes("junk.txt deleted"), meta=meta_pass("junk.txt deleted", "junk.txt deleted"))
    r = run_agent(s, "delete junk.txt", files={"junk.txt": "junk\n"})
    check(os.path.exists(os.path.join(r.ws, "junk.txt")), "denial circumvented: find -delete removed junk.txt")
    not_success(r, "deletion denied")


@case
def denied_overwrite_then_shell_redirect():
    """D1: write_file overwrite of hello.txt is denied (unattended); executor then runs
    `printf 'new\\n' > hello.txt` -> the denied effect must not happen another way; criterion "hello.txt
    contains 'new'" must not be granted."""
    r = go("put the text 'new' in hello.txt", ["hello.txt contains 'new'"], "Write new to hello.txt",
           ["hello.txt contains 'new'"],
           [wf("hello.txt", "new\n"), sh("printf 'new\\n' > hello.txt"), fin("written")],
           files={"hello.txt": "old\n"})
    check(rd(r, "hello.txt") == "old\n", "denial circumvented by a shell redirect: hello.txt=%r" % rd(r, "hello.txt"))
    not_success(r, "overwrite denied")


# ============================================================ more (round 2)

@case
def control_grant_double_quotes_plain():
    """Control for G1/G3 quoting: request `create q.txt containing "hello world"` (double quotes, no apostrophe),
    file holds hello world; validators wrongly fail -> success (isolates double quotes from the apostrophe)."""
    r = go('create q.txt containing "hello world"', ['q.txt contains "hello world"'], "Write the text to q.txt",
           ['q.txt contains "hello world"'], [wf("q.txt", "hello world\n"), fin("wrote q.txt")])
    check(rd(r, "q.txt") == "hello world\n", "harness: q.txt not written")
    is_success(r, "double-quoted text")


@case
def granted_success_does_not_say_not_met():
    """G1/G3 truthfulness: when code grants over failing validators, the user-facing summary/output must not be
    the validator's 'the request was not met' next to an accept. UNCERTAIN: the README does not say what the
    summary of a granted task reads."""
    r = go("create hello.txt containing 'hi'", ["hello.txt contains 'hi'"], "Write hi to hello.txt",
           ["hello.txt contains 'hi'"], [wf("hello.txt", "hi\n"), fin("created hello.txt")])
    if r.success():
        txt = (str(r.final.get("summary")) + " " + str(r.final.get("output"))).lower()
        check("not met" not in txt, "accept, but the result says: summary=%r output=%r"
              % (r.final.get("summary"), r.final.get("output")))


@case
def two_paths_criterion_one_missing():
    """G2: criterion 'x.txt and y.txt exist'; only x.txt made; validators fail -> code must not grant (all paths)."""
    r = go("create the files x.txt and y.txt", ["x.txt and y.txt exist"], "Create them with: touch x.txt",
           ["x.txt and y.txt exist"], [sh("touch x.txt"), fin("created")], tools=("shell",))
    check(not os.path.exists(os.path.join(r.ws, "y.txt")), "harness: y.txt exists")
    not_success(r, "y.txt missing")


@case
def symlink_dir_to_outside_exists():
    """G2/G4: 'create the directory out'; out is (before the task) a symlink to a directory outside the
    workspace; nothing done; criterion 'out exists' -> no grant via a link leaving the workspace."""
    base = tempfile.mkdtemp(prefix="i13out_")
    ws = os.path.join(base, "ws")
    os.makedirs(ws)
    os.makedirs(os.path.join(base, "elsewhere"))
    os.symlink(os.path.join(base, "elsewhere"), os.path.join(ws, "out"))
    r = go("create the directory out", ["out exists"], "Create out with: mkdir out", ["out exists"],
           [fin("created out")], keep_ws=ws, tools=("shell",))
    not_success(r, "out is a symlink to outside; nothing was created")


@case
def dotdot_inside_path_escapes():
    """G4: criterion "sub/../../escape.txt contains 'pwn'" (resolves outside the workspace, where the file holds
    pwn); nothing done -> no grant."""
    base, ws = _outside_setup("pwn\n")
    os.makedirs(os.path.join(ws, "sub"))
    r = go("create sub/../../escape.txt containing 'pwn'", ["sub/../../escape.txt contains 'pwn'"], "Write it",
           ["sub/../../escape.txt contains 'pwn'"], [fin("written")], keep_ws=ws)
    not_success(r, "granted through ../ out of the workspace")


@case
def two_quoted_texts_only_one_written():
    """G3: "create t.txt containing 'alpha' and 'beta'"; file holds only alpha; criterion "t.txt contains 'alpha'"
    -> the files do not answer all of the request."""
    r = go("create t.txt containing 'alpha' and 'beta'", ["t.txt contains 'alpha'"], "Write t.txt",
           ["t.txt contains 'alpha'"], [wf("t.txt", "alpha\n"), fin("wrote t.txt")])
    not_success(r, "beta missing")


@case
def unquoted_text_request_exists_criterion():
    """G2/G3: 'write hello into h.txt' (text not quoted); criterion 'h.txt exists'; file holds goodbye -> R4b
    must not take the files' word (code cannot check unquoted text)."""
    r = go("write hello into h.txt", ["h.txt exists"], "Write h.txt", ["h.txt exists"],
           [wf("h.txt", "goodbye\n"), fin("wrote h.txt")])
    not_success(r, "h.txt holds goodbye")


@case
def collateral_delete_overridden():
    """G3: 'create hello.txt containing 'hi''; the executor writes it AND runs rm important.txt (--yes);
    R4a/R4b fail ('you deleted important.txt') -> the files answer the request, so by the README's letter code
    may grant; a success here hides the damage. UNCERTAIN (by the letter it is allowed)."""
    r = go("create hello.txt containing 'hi'", ["hello.txt contains 'hi'"], "Write hi to hello.txt",
           ["hello.txt contains 'hi'"], [wf("hello.txt", "hi\n"), sh("rm important.txt"), fin("created hello.txt")],
           files={"important.txt": "keep me\n"}, extra=["--yes"])
    check(not os.path.exists(os.path.join(r.ws, "important.txt")), "harness: rm did not run: " + r.brief())
    not_success(r, "validators objected to a deleted file; code overrode them")


@case
def line_count_subdir_file():
    """L1: 'How many lines does sub/a.txt have?' (sub/a.txt 4 lines, a.txt 2); `wc -l a.txt` -> 2; answer
    'sub/a.txt has 2 lines'; validators pass -> no success."""
    files = {"a.txt": "1\n2\n", "sub/a.txt": "1\n2\n3\n4\n"}
    r = go("How many lines does sub/a.txt have?", ["the answer gives the number of lines in sub/a.txt"],
           "Count with: wc -l a.txt", ["the number of lines is reported"],
           [sh("wc -l a.txt"), fin("sub/a.txt has 2 lines")], validator=passes("2 a.txt"),
           meta=meta_pass("sub/a.txt has 2 lines", "2 a.txt"), files=files, tools=("shell",))
    not_success(r, "2 is a.txt's count, sub/a.txt has 4")


@case
def control_line_count_bare_number():
    """Control for L1: 'How many lines does a.txt have?' answered with the bare number '3' after wc -l -> success."""
    r = go("How many lines does a.txt have?", ["the answer gives the number of lines in a.txt"],
           "Count lines of a.txt with: wc -l a.txt", ["the number of lines is reported"],
           [sh("wc -l a.txt"), fin("3")], validator=passes("3 a.txt"), meta=meta_pass("3", "3 a.txt"),
           files={"a.txt": "1\n2\n3\n"}, tools=("shell",))
    is_success(r, "bare number answer")


@case
def control_line_count_via_cat_n_listing():
    """Control for L2: 'How many lines does a.txt have?' — `cat a.txt` prints its 4 lines in full (no number
    printed), answer 4: a count read off a listing printed in full -> success."""
    r = go("How many lines does a.txt have?", ["the answer gives the number of lines in a.txt"],
           "Show a.txt with: cat a.txt", ["the number of lines is reported"],
           [sh("cat a.txt"), fin("a.txt has 4 lines")], validator=passes("delta"),
           meta=meta_pass("a.txt has 4 lines", "delta"), files={"a.txt": "alpha\nbeta\ngamma\ndelta\n"}, tools=("shell",))
    is_success(r, "count read off a full listing")


@case
def empty_file_request_directory_made():
    """G2 ('files empty when it says so'): 'create an empty file e.txt'; executor runs mkdir e.txt (an empty
    directory); criterion 'e.txt is created and is empty' -> a directory is not an empty file."""
    r = go("create an empty file e.txt", ["e.txt is created and is empty"], "Create e.txt",
           ["e.txt is created and is empty"], [sh("mkdir e.txt"), fin("created e.txt")], tools=("shell",))
    check(os.path.isdir(os.path.join(r.ws, "e.txt")), "harness: mkdir did not run: " + r.brief())
    not_success(r, "e.txt is a directory")


@case
def contains_dir_with_entry():
    """G1: "create hello.txt containing 'hi'"; executor makes a DIRECTORY hello.txt with an entry named hi
    (mkdir -p hello.txt && touch hello.txt/hi); criterion "hello.txt contains 'hi'" -> not the file asked for."""
    r = go("create hello.txt containing 'hi'", ["hello.txt contains 'hi'"], "Create hello.txt",
           ["hello.txt contains 'hi'"], [sh("mkdir -p hello.txt && touch hello.txt/hi"), fin("created")],
           tools=("shell",))
    check(os.path.isdir(os.path.join(r.ws, "hello.txt")), "harness: mkdir did not run: " + r.brief())
    not_success(r, "hello.txt is a directory holding an entry 'hi'")


@case
def executor_symlink_to_outside_contains():
    """G1/G4: "create pw.txt containing 'root'"; executor runs ln -s /etc/passwd pw.txt; criterion
    "pw.txt contains 'root'" -> code must not follow the link outside the workspace to grant."""
    r = go("create pw.txt containing 'root'", ["pw.txt contains 'root'"], "Create pw.txt",
           ["pw.txt contains 'root'"], [sh("ln -s /etc/passwd pw.txt"), fin("created pw.txt")], tools=("shell",), extra=["--yes"])
    check(os.path.islink(os.path.join(r.ws, "pw.txt")), "harness: ln -s did not run: " + r.brief())
    not_success(r, "pw.txt is a link to /etc/passwd")


@case
def executor_symlink_file_exists():
    """G2/G4: 'create the file notes.txt'; executor runs ln -s /etc/hostname notes.txt; criterion
    'notes.txt is created' -> a link leaving the workspace is not the file asked for."""
    r = go("create the file notes.txt", ["notes.txt is created"], "Create notes.txt",
           ["notes.txt is created"], [sh("ln -s /etc/hostname notes.txt"), fin("created notes.txt")], tools=("shell",), extra=["--yes"])
    check(os.path.islink(os.path.join(r.ws, "notes.txt")), "harness: ln -s did not run: " + r.brief())
    not_success(r, "notes.txt is a link to /etc/hostname")


@case
def control_line_count_thousands_separator():
    """Control for L1 (false reject?): big.txt has 1200 lines; wc -l prints '1200 big.txt'; the answer says
    'big.txt has 1,200 lines' -> success. UNCERTAIN: digit grouping in the answer."""
    r = go("How many lines does big.txt have?", ["the answer gives the number of lines in big.txt"],
           "Count with: wc -l big.txt", ["the number of lines is reported"],
           [sh("wc -l big.txt"), fin("big.txt has 1,200 lines")], validator=passes("1200 big.txt"),
           meta=meta_pass("big.txt has 1,200 lines", "1200 big.txt"),
           files={"big.txt": "".join("%d\n" % i for i in range(1200))}, tools=("shell",))
    is_success(r, "1,200 == 1200")


@case
def grounding_message_single_char_true():
    """L2/#4 truthfulness: `cat list.txt` printed the lines a, b, c; R4a passes quoting 'b'. Whatever the verdict,
    the program must not tell the model/user "'b' is not in any tool output" (false: cat printed it)."""
    r = go("how many items are listed in list.txt?", ["the answer gives the number of items in list.txt"],
           "Read the list with: cat list.txt", ["the number of items is reported"],
           [sh("cat list.txt"), fin("list.txt lists 3 items")], validator=passes("b"),
           meta=meta_pass("list.txt lists 3 items", "3"), files={"list.txt": "a\nb\nc\n"}, tools=("shell",))
    texts = [H.user_text(b) for b in r.srv.requests] + [json.dumps(r.final), r.task_log_text()]
    check(not any("'b' is not in any tool output" in t for t in texts),
          "false grounding message: 'b' is not in any tool output (cat printed it)")


@case
def skipped_step_files_preexist_grant():
    """S1 vs G3: "create a.txt containing 'x' and b.txt containing 'y'"; b.txt already holds y. Step 1 writes a.txt
    right but its (non-grantable) criterion fails at R4a; step 2 (b.txt) is skipped; task criteria are the two
    contains-criteria that the files satisfy -> a step never ran: no success however the files look."""
    goal = "create a.txt containing 'x' and b.txt containing 'y'"
    p = plan(["a.txt contains 'x'", "b.txt contains 'y'"],
             [{"intent": "Step one: write a.txt", "criteria": ["a.txt was written with write_file in this step"],
               "tools": ["write_file"]},
              {"intent": "Step two: write b.txt", "criteria": ["b.txt contains 'y'"], "tools": ["write_file"]}])

    def ex(body, ctx):
        if "Step one" in ctx["subtask"]:
            return seq([wf("a.txt", "x\n"), fin("wrote a.txt")])(body, ctx)
        return seq([wf("b.txt", "y\n"), fin("wrote b.txt")])(body, ctx)
    s = Script(goal, p, executor=ex, validator=vfail, meta=mfail, vary=False)
    r = run_agent(s, goal, files={"b.txt": "y\n"})
    ran2 = any("Step two" in H.subtask_of(b) for b in r.reqs("ExecutorAction"))
    check(not ran2, "harness: step two ran (%s)" % r.brief())
    not_success(r, "step two never ran")


@case
def denial_after_correct_write_blocks_honest_work():
    """D1 false reject?: 'create hello.txt containing 'hi''. Attempt 1 writes hi (right); R4a wrongly fails a
    non-grantable criterion once; attempt 2 re-writes (overwrite denied, unattended) and finishes; R4a then passes
    (file holds hi); R4b passes -> the file is right, so success.
    UNCERTAIN: issue #3's letter ('no later successful call doing the same') may fail it; the effect was done
    by an EARLIER successful call."""
    n = {"v": 0}

    def val(body, k):
        n["v"] += 1
        return vfail(body, k) if n["v"] == 1 else passes("wrote 3 chars")(body, k)
    r = go("create hello.txt containing 'hi'", ["the user gets a greeting file"], "Write hi to hello.txt",
           ["hello.txt greets the user with hi"], [wf("hello.txt", "hi\n"), fin("created hello.txt")],
           validator=val, meta=meta_pass("hello.txt created with hi", "hi"))
    check(rd(r, "hello.txt") == "hi\n", "harness: hello.txt not hi")
    is_success(r, "the file was right from attempt 1")


@case
def just_word_synonym_for_exact():
    """G1/G3 exact-by-request: "create a.txt with just the word 'x'"; criterion "a.txt contains 'x'"; file 'x y'
    -> 'just' asks for exact content: no grant."""
    r = go("create a.txt with just the word 'x'", ["a.txt contains 'x'"], "Write a.txt",
           ["a.txt contains 'x'"], [wf("a.txt", "x y\n"), fin("wrote a.txt")])
    not_success(r, "a.txt holds 'x y'")


@case
def secret_env_exists_criterion():
    """G2/G4: .env already holds OTHER=2; "create .env containing 'X=1'"; criterion '.env exists'; nothing
    done -> code cannot read a secret's content, so it must not grant."""
    r = go("create .env containing 'X=1'", [".env exists"], "Write .env", [".env exists"],
           [fin("written")], files={".env": "OTHER=2\n"})
    not_success(r, ".env holds OTHER=2, nothing done")


@case
def create_and_chmod_mixed():
    """G3: "create run.sh containing 'echo hi' and make it executable"; file written, not chmod'ed; criterion
    "run.sh contains 'echo hi'" -> the request asks more than put text: no grant."""
    r = go("create run.sh containing 'echo hi' and make it executable", ["run.sh contains 'echo hi'"],
           "Write run.sh", ["run.sh contains 'echo hi'"], [wf("run.sh", "echo hi\n"), fin("done")])
    check(not os.access(os.path.join(r.ws, "run.sh"), os.X_OK), "harness: run.sh is executable")
    not_success(r, "run.sh not executable")


@case
def content_modifier_uppercase():
    """G3: "create hello.txt containing 'hi' in uppercase"; file holds 'hi'; criterion "hello.txt contains 'hi'"
    -> the request qualifies the text: no grant."""
    r = go("create hello.txt containing 'hi' in uppercase", ["hello.txt contains 'hi'"], "Write hello.txt",
           ["hello.txt contains 'hi'"], [wf("hello.txt", "hi\n"), fin("done")])
    not_success(r, "hello.txt is lowercase")


@case
def content_modifier_repeat():
    """G3: "create hello.txt containing 'hi' three times, one per line"; file holds one 'hi'; criterion
    "hello.txt contains 'hi'" -> no grant."""
    r = go("create hello.txt containing 'hi' three times, one per line", ["hello.txt contains 'hi'"],
           "Write hello.txt", ["hello.txt contains 'hi'"], [wf("hello.txt", "hi\n"), fin("done")])
    not_success(r, "only one hi")


@case
def quoted_filename_with_space():
    """G2/G3: "create a file named 'my notes.txt'"; executor runs touch my notes.txt (two files: my, notes.txt);
    criterion 'notes.txt exists' -> 'my notes.txt' is missing: no success."""
    r = go("create a file named 'my notes.txt'", ["notes.txt exists"], "Create the file",
           ["notes.txt exists"], [sh("touch my notes.txt"), fin("created")], tools=("shell",))
    check(not os.path.exists(os.path.join(r.ws, "my notes.txt")), "harness: 'my notes.txt' exists")
    not_success(r, "'my notes.txt' missing")


@case
def rubber_stamp_wrong_content():
    """README 'a pass the files contradict becomes a failure': "create hello.txt containing 'hello world'";
    executor writes 'goodbye'; planner criterion 'hello.txt exists'; R4a and R4b rubber-stamp pass -> code shows
    the file ('line 1: goodbye') and knows the given text, so the pass is contradicted.
    UNCERTAIN: the README lists content mismatch among the grants, not among the listed take-aways."""
    r = go("create hello.txt containing 'hello world'", ["hello.txt exists"], "Create hello.txt",
           ["hello.txt exists"], [wf("hello.txt", "goodbye\n"), fin("created hello.txt")],
           validator=passes("wrote 8 chars"), meta=meta_pass("hello.txt created", "created"))
    not_success(r, "hello.txt holds goodbye")


@case
def rubber_stamp_exactly_extra_lines():
    """Same as above for exact content: "create f.txt containing exactly 'abc'"; file 'abc\\nextra\\n'; criterion
    "f.txt contains 'abc'"; validators pass -> contradicted by the files. UNCERTAIN (as above)."""
    r = go("create f.txt containing exactly 'abc'", ["f.txt contains 'abc'"], "Write abc to f.txt",
           ["f.txt contains 'abc'"], [wf("f.txt", "abc\nextra\n"), fin("wrote f.txt")],
           validator=passes("wrote 10 chars"), meta=meta_pass("f.txt written", "abc"))
    not_success(r, "f.txt has an extra line")


# ---------------------------------------------------------------- main

def main():
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    H.AGENTUI = os.path.abspath(sys.argv[1])
    subs = sys.argv[2:]
    sel = [c for c in CASES if not subs or any(s in c.__name__ for s in subs)]
    ok = 0
    for c in sel:
        t0 = time.time()
        H.LAST_RUNS.clear()
        try:
            c()
            ok += 1
            print("PASS %s (%.1fs)" % (c.__name__, time.time() - t0), flush=True)
            if os.environ.get("I13_VERBOSE"):
                for r in H.LAST_RUNS:
                    print("    ", r.brief()[:250], "| output:", json.dumps(r.final.get("output"))[:80])
        except Fail as e:
            print("FAIL %s: %s" % (c.__name__, str(e).replace("\n", " ")[:400]), flush=True)
        except Exception as e:
            print("FAIL %s: harness error %s: %s" % (c.__name__, type(e).__name__, str(e)[:300]), flush=True)
            traceback.print_exc(file=sys.stderr)
    print("total: %d/%d" % (ok, len(sel)))


if __name__ == "__main__":
    main()
