#!/usr/bin/env python3
"""Black-box cases, part 13: question plans are trimmed before the executor gets them, and a failed attempt
repeated in other words counts as a verbatim repeat.

usage: python3 run_cases13.py /path/to/agentui [case-name-substring ...]

Claims under test (change description, paraphrased):
 1. TRIM (t_*). Only when the request is a question (asks for a value, makes/changes nothing):
    a. a step naming a file the request does not name and the workspace does not have (stem . 2-5 letters, hidden
       names included) is dropped with its criteria, only when some other step remains;
    b. a step that is not first in sequence and begins with verify/confirm/ensure/validate/make sure/double-check/
       check if|whether|that is dropped, when some other step remains ("Check the value of" is not such a step);
    c. chained steps are merged into one subtask (as before); then criteria about HOW the work was done (read,
       extracted, stored in a variable, parsed, executed, run, checked, opened, loaded, searched, processed,
       accessed) are dropped when the step keeps a criterion asking for a value (number/count/total, path/file
       name, name). A value criterion is never dropped. Task criteria are not touched.
    Requests that make or change something keep the plan as written.
 2. REPEAT (r_*). After a correction, an attempt that FAILS again (infeasible / out of steps) with exactly the same
    tool calls and results as the attempt before is a verbatim repeat whatever the words: no further attempt in
    that round, failure reason begins "the corrected attempt repeated the failed one verbatim". A COMPLETED attempt
    with the same calls but a different answer is not a repeat and is judged again.

Observation (black box): the round-0 SubTask envelopes in the bus recording (data-dir/recordings/*.bus.jsonl,
those listed by the round-0 DispatchManifest) give the step texts and criteria the executor gets; the executor
prompts of round 1 (sent to the fake server) must not contain a dropped step's text; ExecutionResult /
SubTaskOutcome envelopes of the round-0 subtask give attempts and failure_reason; Judgement requests before the
first replan show whether R4a judged an attempt; the MergeOut prompt shows the task criteria.
ctl_* = the change must act; atk_* = it must not (or a wrong answer must not succeed). Docstrings marked
UNCERTAIN go beyond the description. I13_VERBOSE=1 prints each run's rc/directive/summary.
"""
import glob
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
PHRASE = "the corrected attempt repeated the failed one verbatim"


class Fail(Exception):
    pass


def check(c, m):
    if not c:
        raise Fail(m)


def sh(cmd):
    return {"tool": "shell", "args": {"command": cmd}}


def fin(o="done"):
    return {"tool": "finish", "output": o}


def inf(o):
    return {"tool": "infeasible", "output": o}


def mfail(body, k):
    return {"merged_output": "the answer is wrong", "summary": "wrong answer",
            "verdicts": [{"verdict": "fail", "failure_class": "logical",
                          "evidence": "the reported number does not match the file"}] * k}


def mkws(files=None):
    base = tempfile.mkdtemp(prefix="i13c13_")
    TMP.append(base)
    ws = os.path.join(base, "ws")
    os.makedirs(ws)
    for name, c in (files or {}).items():
        p = os.path.join(ws, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", newline="", encoding="utf-8") as f:
            f.write(c)
    return ws


# ------------------------------------------------------------------ observation helpers
def envelopes(r):
    out = []
    for f in glob.glob(os.path.join(r.dd, "recordings", "*.bus.jsonl")):
        with open(f, errors="replace") as fh:
            for ln in fh:
                try:
                    d = json.loads(ln)
                except Exception:
                    continue
                if isinstance(d, dict) and "type" in d:
                    out.append(d)
    return out


def round0_subtasks(r):
    envs = envelopes(r)
    ids = None
    for e in envs:
        if e["type"] == "DispatchManifest" and (e.get("payload") or {}).get("round") == 0:
            ids = e["payload"].get("subtask_ids") or []
            break
    check(ids is not None, "no round-0 DispatchManifest recorded: " + r.brief())
    by = {e["payload"]["subtask_id"]: e["payload"] for e in envs if e["type"] == "SubTask"}
    return [by[i] for i in ids if i in by]


def round1_requests(r, name):
    """Requests of one role before the second planner call (= round 0 of the task)."""
    out, plans = [], 0
    for b in r.srv.requests:
        n = H.schema_name(b)
        if n == "PlanOut":
            plans += 1
            if plans > 1:
                break
        elif n == name:
            out.append(b)
    return out


def exec_prompts_r1(r):
    return [next((m.get("content") or "" for m in b.get("messages", []) if m.get("role") == "user"), "")
            for b in round1_requests(r, "ExecutorAction")]


def show_plan(subs):
    return json.dumps([{"seq": s.get("sequence"), "intent": s.get("intent"),
                        "crit": [c.get("criterion") for c in s.get("success_criteria") or []]} for s in subs])[:900]


# ------------------------------------------------------------------ TRIM cases
ANSWER = [sh("echo answer 42"), fin("42")]


def run_plan(goal, steps, files=None, tcs=None, executor=None, meta=None, validator=None):
    p = plan(tcs or ["the answer gives the value asked for"], steps)
    ws = mkws(files)
    acts = executor or ANSWER

    def ex(body, ctx):
        if callable(acts):
            return acts(body, ctx)
        return acts[min(ctx["n"], len(acts) - 1)]
    s = Script(goal, p, executor=ex, validator=validator or passes(), meta=meta or meta_pass("42", "answer 42"))
    r = run_agent(s, goal, keep_ws=ws, extra_args=["--yes"], timeout=60)
    TMP.append(r.dd)
    check(r.rc != "timeout", "agentui run timed out after %.0fs" % r.wall)
    return r


def expect_plan(r, kept=(), dropped=(), ckept=(), cdropped=(), n_subtasks=None):
    subs = round0_subtasks(r)
    check(subs, "no round-0 subtask recorded: " + r.brief())
    intents = "\n".join(s.get("intent") or "" for s in subs)
    crits = [c.get("criterion") or "" for s in subs for c in s.get("success_criteria") or []]
    prompts = "\n".join(exec_prompts_r1(r))
    plan_s = show_plan(subs)
    for k in kept:
        check(k in intents, "step %s was dropped (must stay); dispatched plan: %s" % (json.dumps(k), plan_s))
    for d in dropped:
        check(d not in intents, "step %s was kept (must be dropped); dispatched plan: %s" % (json.dumps(d), plan_s))
        check(d not in prompts, "dropped step %s still reached the executor's prompt" % json.dumps(d))
    for k in ckept:
        check(k in crits, "criterion %s was dropped (must stay); dispatched plan: %s" % (json.dumps(k), plan_s))
    for d in cdropped:
        check(d not in crits, "criterion %s was kept (must be dropped); dispatched plan: %s"
              % (json.dumps(d), plan_s))
        check(("- " + d + "\n") not in prompts + "\n", "dropped criterion %s still in the executor's prompt"
              % json.dumps(d))
    if n_subtasks is not None:
        check(len(subs) == n_subtasks, "expected %d subtask(s) in round 0, got %d: %s"
              % (n_subtasks, len(subs), plan_s))
    return subs


def st(intent, criteria, seq=None, tools=("shell",)):
    d = {"intent": intent, "criteria": list(criteria), "tools": list(tools)}
    if seq is not None:
        d["sequence"] = seq
    return d


def tcase(name, goal, steps, files=None, kept=(), dropped=(), ckept=(), cdropped=(), n_subtasks=None, doc="",
          tcs=None):
    def f():
        r = run_plan(goal, steps, files, tcs=tcs)
        expect_plan(r, kept, dropped, ckept, cdropped, n_subtasks)
    f.__name__ = name
    f.__doc__ = doc
    CASES.append(f)


NOTES = {"notes.txt": "alpha\nbeta\ngamma\n"}
Q_LINES = "How many lines does notes.txt have?"
Q_RUN = "Run script.py with python3 and tell me the number it prints."
Q_TODO = "Which file contains TODO?"
SCRIPT = {"script.py": "print(42)\n"}
COUNT = "Count the lines of notes.txt with wc -l"
VAL = "the number of lines is reported"

# ---- controls: must trim
tcase("ctl_t_brief_hidden_and_verify", Q_LINES,
      [st(COUNT, ["the content of notes.txt is read successfully", VAL]),
       st("Save the count to .counts.txt", [".counts.txt holds the count"]),
       st("Verify the count matches the wc output", ["the count is verified"])], NOTES,
      kept=[COUNT], dropped=[".counts.txt", "Verify the count"], ckept=[VAL],
      cdropped=["the content of notes.txt is read successfully", ".counts.txt holds the count",
                "the count is verified"], n_subtasks=1,
      doc="Brief's example: hidden absent .counts.txt step (a) and a later Verify step (b) dropped with their "
          "criteria; 'read successfully' dropped next to a value criterion (c).")
tcase("ctl_t_unnamed_answer_file", Q_TODO,
      [st("Find the file with grep -rl TODO .", ["the file name is reported"]),
       st("Write the file name to answer.txt", ["answer.txt holds the file name"])],
      {"src/a.py": "# TODO fix\n", "src/b.py": "pass\n"},
      kept=["grep -rl TODO"], dropped=["answer.txt"], ckept=["the file name is reported"],
      cdropped=["answer.txt holds the file name"],
      doc="A plain (not hidden) absent file answer.txt the request does not name: step dropped (a).")
tcase("ctl_t_hidden_json", Q_RUN,
      [st("Run python3 script.py and print its output", ["the number printed is reported"]),
       st("Store the number in .result.json for later", ["the number is stored in .result.json"])], SCRIPT,
      kept=["Run python3 script.py"], dropped=[".result.json"],
      cdropped=["the number is stored in .result.json"], doc="Hidden .result.json step dropped (a).")
tcase("ctl_t_check_verbs_a", Q_RUN,
      [st("Run python3 script.py and print its output", ["the number printed is reported"]),
       st("Confirm the number is an integer", ["the number is an integer"]),
       st("Double-check the output of the script", ["the output was double-checked"]),
       st("Make sure the script exited with status 0", ["the exit status is 0"])], SCRIPT,
      kept=["Run python3 script.py"], dropped=["Confirm the number", "Double-check the output",
                                                "Make sure the script"],
      cdropped=["the number is an integer", "the exit status is 0"],
      doc="Later steps starting Confirm / Double-check / Make sure are dropped (b).")
tcase("ctl_t_check_verbs_b", Q_LINES,
      [st(COUNT, [VAL]), st("Ensure the count is right", ["the count is right"]),
       st("Validate the result against cat -n", ["the result is valid"]),
       st("Check whether the count is positive", ["the count is positive"])], NOTES,
      kept=[COUNT], dropped=["Ensure the count", "Validate the result", "Check whether the count"],
      cdropped=["the count is right", "the count is positive"],
      doc="Later steps starting Ensure / Validate / Check whether are dropped (b).")
tcase("ctl_t_check_verbs_c", Q_LINES,
      [st(COUNT, [VAL]), st("Check if wc agrees with cat -n", ["wc agrees"]),
       st("Check that the number is printed", ["the number is printed"]),
       st("verify the answer once more", ["the answer is verified"])], NOTES,
      kept=[COUNT], dropped=["Check if wc agrees", "Check that the number", "verify the answer"],
      cdropped=["wc agrees", "the answer is verified"],
      doc="Later steps starting Check if / Check that / lower-case verify are dropped (b).")
HOW1 = ["notes.txt is opened", "the content is read", "the output is parsed", "wc is executed",
        "the command is run", "the result is stored in a variable"]
tcase("ctl_t_how_criteria_1", Q_LINES, [st(COUNT, [VAL] + HOW1)], NOTES, kept=[COUNT], ckept=[VAL], cdropped=HOW1,
      doc="One step; six how-criteria (opened, read, parsed, executed, run, stored in a variable) dropped next to "
          "a count criterion (c).")
HOW2 = ["the files were loaded", "the workspace is searched", "the matches are processed", "src is accessed",
        "each file is checked", "the matching lines are extracted", "the file list was read successfully"]
tcase("ctl_t_how_criteria_2_path", Q_TODO, [st("Find the file with grep -rl TODO .", ["the file path is reported"]
                                               + HOW2)],
      {"src/a.py": "# TODO fix\n", "src/b.py": "pass\n"}, ckept=["the file path is reported"], cdropped=HOW2,
      doc="How-criteria (loaded, searched, processed, accessed, checked, extracted, read successfully) dropped "
          "next to a PATH criterion (c).")
tcase("ctl_t_how_next_to_name", "What is the name of the author in meta.txt?",
      [st("Print the author line of meta.txt with grep author meta.txt",
          ["the author's name is reported", "meta.txt is read successfully"])], {"meta.txt": "author: Ada Lovelace\n"},
      ckept=["the author's name is reported"], cdropped=["meta.txt is read successfully"],
      doc="How-criterion dropped next to a NAME criterion (c).")
tcase("ctl_t_merge_chained", Q_LINES,
      [st("Read notes.txt with cat", ["the content is read"]),
       st("Count the lines of notes.txt with wc -l", [VAL, "wc is executed"])], NOTES,
      kept=["Read notes.txt with cat", "Count the lines of notes.txt with wc -l"], ckept=[VAL],
      cdropped=["the content is read", "wc is executed"], n_subtasks=1,
      doc="Two needed chained steps (workspace file) are merged into ONE subtask (as before); the merged step's "
          "how-criteria from both steps dropped next to the value criterion.")
tcase("ctl_t_multiline_question", "notes.txt is in the workspace.\nHow many lines does it have?",
      [st(COUNT, [VAL]), st("Record the count in tally.csv", ["tally.csv holds the count"])], NOTES,
      kept=[COUNT], dropped=["tally.csv"], ckept=[VAL],
      doc="Multi-line request whose second line is the question: absent tally.csv step dropped.")

# ---- attacks: must keep
tcase("atk_t_nonq_append_keeps", "Append the line done to notes.txt.",
      [st("Append done to notes.txt with echo done >> notes.txt",
          ["notes.txt is read successfully", "the line done is appended"]),
       st("Verify that notes.txt ends with done", ["the last line is done"]),
       st("Write a log line to .applog.txt", [".applog.txt holds a log line"])], NOTES,
      kept=["Append done", "Verify that notes.txt", ".applog.txt"],
      ckept=["notes.txt is read successfully", "the last line is done", ".applog.txt holds a log line"],
      doc="A change request: verify step, hidden-file step and how-criterion all stay.")
tcase("atk_t_nonq_count_into_file", "Count the lines of notes.txt and write the number to count.txt.",
      [st(COUNT, ["the content is read", "the number of lines is reported"]),
       st("Write the number to count.txt", ["count.txt holds the number"]),
       st("Confirm count.txt holds the number", ["count.txt is confirmed"]),
       st("Write a note to .meta.txt", [".meta.txt is written"])], NOTES,
      kept=[COUNT, "Write the number to count.txt", "Confirm count.txt", ".meta.txt"],
      ckept=["the content is read", "count.txt is confirmed"],
      doc="Count-and-write request (makes a file): nothing trimmed although it asks for a number.")
tcase("atk_t_nonq_question_mark_sort", "Can you sort names.txt into sorted.txt?",
      [st("Sort names.txt into sorted.txt with sort", ["names.txt is loaded", "sorted.txt has the sorted lines"]),
       st("Check that sorted.txt is sorted", ["sort -c reports no error"])], {"names.txt": "b\na\n"},
      kept=["Sort names.txt", "Check that sorted.txt"], ckept=["names.txt is loaded", "sort -c reports no error"],
      doc="A '?' request that makes a file is not a question: steps and criteria stay.")
tcase("atk_t_multiline_makes", "How many lines does notes.txt have?\nWrite the number to count.txt.",
      [st(COUNT, ["the content is read", VAL]), st("Write the number to count.txt", ["count.txt holds it"]),
       st("Verify count.txt holds the number", ["count.txt holds the number"])], NOTES,
      kept=[COUNT, "Write the number to count.txt", "Verify count.txt"], ckept=["the content is read"],
      doc="Multi-line request: a question line then a write line -> not a question, plan kept.")
tcase("atk_t_existing_subfolder_file", "What port does the app use?",
      [st("Read src/conf/settings.ini with cat", ["the file content is shown"]),
       st("Report the port number from it", ["the port number is reported"])],
      {"src/conf/settings.ini": "[app]\nport = 8080\n"}, kept=["src/conf/settings.ini", "Report the port"],
      doc="A needed step names a file the request does not name but that exists in a subfolder: kept.")
tcase("atk_t_existing_hidden_file", "What is the value of PORT?",
      [st("Read .config.json with cat", ["the file content is shown"]),
       st("Report the PORT value", ["the PORT value is reported"])], {".config.json": "{\"PORT\": 8080}\n"},
      kept=[".config.json", "Report the PORT"], doc="Hidden but EXISTING .config.json: kept.")
tcase("atk_t_request_names_absent_hidden", "Is there a .settings.ini file? If so, tell me the PORT it sets.",
      [st("List all files with ls -a", ["the file list is shown"]),
       st("Print the PORT line of .settings.ini with grep PORT .settings.ini", ["the PORT value is reported"])],
      NOTES, kept=["ls -a", "grep PORT .settings.ini"],
      doc="The request itself names .settings.ini (absent): the step naming it stays.")
tcase("atk_t_request_name_other_case", "Does OUT.LOG exist, and how many lines does it have?",
      [st("Look for the file with ls", ["the file list is shown"]),
       st("Count the lines of out.log with wc -l", ["the number of lines is reported"])], NOTES,
      kept=["Look for the file", "Count the lines of out.log"],
      doc="UNCERTAIN: the request names OUT.LOG, the step out.log (other letter case, absent): kept.")
tcase("atk_t_dot_slash_existing", "How many words are in data.txt?",
      [st("List the workspace with ls", ["the file list is shown"]),
       st("Count the words of ./data.txt with wc -w", ["the number of words is reported"])],
      {"data.txt": "one two three\n"}, kept=["List the workspace", "./data.txt"],
      doc="'./data.txt' in a step (request says data.txt, file exists): kept.")
tcase("atk_t_dot_slash_request", "How many words are in ./draft.md?",
      [st("List the workspace with ls -la", ["the file list is shown"]),
       st("Count the words of draft.md with wc -w", ["the number of words is reported"])], NOTES,
      kept=["ls -la", "Count the words of draft.md"],
      doc="Request names ./draft.md (absent), the step draft.md: kept.")
tcase("atk_t_url_in_step", "What is the newest Python version listed on the python.org downloads page?",
      [st("Fetch https://www.python.org/downloads/index.html with curl -s and print it",
          ["the page content is shown"]),
       st("Report the newest version number on the page", ["the version number is reported"])], NOTES,
      kept=["https://www.python.org/downloads/index.html", "Report the newest version"],
      doc="A needed fetch step holds a URL whose last part looks like a file name (index.html): a URL is not a "
          "workspace file, the step must stay.")
tcase("atk_t_version_numbers", "Which version of the tool is installed?",
      [st("Run ./tool --version (it prints something like v1.2.3)", ["the version output is shown"], tools=["shell"]),
       st("Report the version string, e.g. 1.2.3 or v2.10.0", ["the version is reported"])],
      {"tool": "#!/bin/sh\necho v1.2.3\n"}, kept=["./tool --version", "Report the version string, e.g. 1.2.3"],
      doc="Version numbers (v1.2.3, 2.10.0) and 'e.g.' are not file names: both steps kept.")
tcase("atk_t_all_steps_hidden", Q_LINES,
      [st("Write the output of wc -l notes.txt to .tmp_count.txt", ["the file is written"]),
       st("Print the number stored in .tmp_count.txt", ["the number of lines is reported"])], NOTES,
      kept=["Write the output of wc -l notes.txt to .tmp_count.txt", "Print the number stored in .tmp_count.txt"],
      doc="Every step names the absent .tmp_count.txt: 'only when some other step remains' -> the plan keeps its "
          "steps (dropping step 1 alone would leave step 2 reading a file nobody writes).")
tcase("atk_t_single_step_hidden", Q_LINES,
      [st("Count with wc -l notes.txt > .tmp.txt and print .tmp.txt", [VAL])], NOTES,
      kept=["Count with wc -l notes.txt > .tmp.txt"], doc="Single step naming an absent file: kept (nothing remains).")
tcase("atk_t_first_step_verify", Q_LINES,
      [st("Verify that notes.txt exists, then count its lines with wc -l", ["the line count is printed"]),
       st("Report the count", [VAL])], NOTES,
      kept=["Verify that notes.txt exists", "Report the count"],
      doc="A FIRST step starting with 'Verify' is not a check of an earlier one: kept.")
tcase("atk_t_checking_wording", "How many ERROR lines does app.log have?",
      [st("Show the size of app.log with ls -l", ["the size is shown"]),
       st("Checking the log: count ERROR lines in app.log with grep -c ERROR app.log",
          ["the number of ERROR lines is reported"])], {"app.log": "ok\nERROR x\nERROR y\n"},
      kept=["ls -l", "Checking the log"], doc="'Checking ...' is not in the check-step list: kept.")
tcase("atk_t_check_value_of", "What is mode set to in config.ini?",
      [st("Open config.ini with cat", ["the file content is shown"]),
       st("Check the value of mode and report it", ["the value of mode is reported"])], {"config.ini": "mode=fast\n"},
      kept=["Open config.ini", "Check the value of mode"], doc="'Check the value of mode' (brief's example): kept.")
tcase("atk_t_value_crit_with_how_word", Q_TODO,
      [st("Find the file with grep -rln TODO .",
          ["the file path is read from the output", "the number of matching files is extracted",
           "the author's name is parsed from the file", "the total is stored in a variable", "the file name is reported",
           "grep is run and the count of files is printed"])],
      {"src/a.py": "# TODO by Ada\n"},
      ckept=["the file path is read from the output", "the number of matching files is extracted",
             "the author's name is parsed from the file", "the total is stored in a variable",
             "the file name is reported", "grep is run and the count of files is printed"],
      doc="Criteria that ask for a value (path, number, name, total) but use how-words are never dropped.")
tcase("atk_t_only_how_criteria", Q_LINES, [st(COUNT, ["notes.txt is read successfully", "wc is executed"])], NOTES,
      ckept=["notes.txt is read successfully", "wc is executed"],
      doc="A step with ONLY how-criteria (no value criterion) keeps them.")


def case_task_criteria_untouched():
    """Task criteria (R4b's) with how-words are not touched by (c): the Meta-Validator prompt lists them all."""
    tcs = ["notes.txt is read successfully", "the number of lines of notes.txt is given", "wc is executed"]
    r = run_plan(Q_LINES, [st(COUNT, [VAL, "the content is read"])], NOTES, tcs=tcs,
                 executor=[sh("wc -l notes.txt"), fin("3")])
    expect_plan(r, ckept=[VAL], cdropped=["the content is read"])
    m = r.reqs("MergeOut")
    check(m, "inconclusive: R4b never asked: " + r.brief())
    t = H.user_text(m[0])
    for c in tcs:
        check(c in t, "task criterion %s missing from the Meta-Validator's prompt" % json.dumps(c))


case_task_criteria_untouched.__name__ = "atk_t_task_criteria_untouched"
CASES.append(case_task_criteria_untouched)


def case_wrong_answer():
    """A question whose plan is trimmed (hidden file + verify step dropped); the executor reports a WRONG number
    (5; notes.txt has 3 lines), R4a passes, R4b fails it: the task must not end in success."""
    r = run_plan(Q_LINES, [st(COUNT, ["the content is read", VAL]),
                           st("Write the count to .counts.txt", [".counts.txt holds it"]),
                           st("Verify the count against cat -n", ["the count is verified"])], NOTES,
                 executor=[sh("wc -l notes.txt"), fin("5")], meta=mfail)
    expect_plan(r, dropped=[".counts.txt", "Verify the count"])
    check(not r.success(), "a wrong answer ended in success: " + r.brief())


case_wrong_answer.__name__ = "atk_t_wrong_answer_r4b_fails"
CASES.append(case_wrong_answer)


def case_wrong_answer_r4a():
    """UNCERTAIN (beyond the description): the dropped Verify step would have caught a wrong count; here R4a fails
    the wrong answer (5) of the only step, R4b passes whatever it is shown -> still no success in round 0 and the
    answer '5' must never be the accepted output."""
    def val(body, k):
        return {"verdicts": [{"criterion": "", "verdict": "fail", "failure_class": "logical",
                              "evidence": "3 notes.txt", "what_to_do": "report 3"}] * k}
    r = run_plan(Q_LINES, [st(COUNT, [VAL]), st("Verify the count against cat -n", ["the count is verified"])],
                 NOTES, executor=[sh("wc -l notes.txt"), fin("5")], validator=val)
    check(not (r.success() and "5" in str(r.final.get("output"))), "wrong answer accepted: " + r.brief())


case_wrong_answer_r4a.__name__ = "atk_t_wrong_answer_r4a_fails"
CASES.append(case_wrong_answer_r4a)


# ------------------------------------------------------------------ REPEAT cases
RGOAL = Q_RUN
RPLAN = plan(["the answer gives the number script.py prints"],
             [st("Run python3 script.py and report the number it prints", ["the number printed is reported"])])
BOOM = {"script.py": "import sys\nsys.exit('boom')\n"}


def rfail(body, k):
    return {"verdicts": [{"criterion": "", "verdict": "fail", "failure_class": "logical",
                          "evidence": "no number was printed", "what_to_do": "make the script print the number"}] * k}


def run_repeat(by_attempt, files=None, goal=RGOAL, validator=None, p=None):
    """by_attempt(k, n) -> action for attempt k (1-based), step n of round 0; later rounds give up at once."""
    ws = mkws(files if files is not None else BOOM)

    def ex(body, ctx):
        if ctx["round"] > 1:
            return inf("giving up in the replan round")
        k = int(ctx["attempt"].split()[1])
        return by_attempt(k, ctx["n"])
    s = Script(goal, p or RPLAN, executor=ex, validator=validator or rfail, meta=meta_pass("42"))
    r = run_agent(s, goal, keep_ws=ws, extra_args=["--yes"], timeout=60)
    TMP.append(r.dd)
    check(r.rc != "timeout", "agentui run timed out after %.0fs" % r.wall)
    return r


def r0_outcome(r):
    subs = round0_subtasks(r)
    check(subs, "no round-0 subtask: " + r.brief())
    sid = subs[0]["subtask_id"]
    envs = envelopes(r)
    atts = [e["payload"] for e in envs if e["type"] == "ExecutionResult" and e["payload"].get("subtask_id") == sid]
    outs = [e["payload"] for e in envs if e["type"] == "SubTaskOutcome" and e["payload"].get("subtask_id") == sid]
    return atts, (outs[0] if outs else {})


def att_brief(atts):
    return json.dumps([{"a": a.get("attempt"), "status": a.get("status"), "out": (a.get("output") or "")[:40],
                        "calls": [(c.get("target") or "")[:40] for c in a.get("tool_calls") or []]} for a in atts])[:700]


def expect_repeat(r):
    atts, out = r0_outcome(r)
    fr = out.get("failure_reason") or ""
    check(fr.startswith(PHRASE), "not counted as a verbatim repeat: failure_reason=%s; attempts=%s"
          % (json.dumps(fr[:200]), att_brief(atts)))
    check(len(atts) == 2, "the correction loop went on after the repeat: %d attempts in round 0: %s"
          % (len(atts), att_brief(atts)))


def expect_no_repeat(r, min_attempts=3):
    atts, out = r0_outcome(r)
    fr = out.get("failure_reason") or ""
    check(PHRASE not in fr, "wrongly counted as a verbatim repeat: failure_reason=%s; attempts=%s"
          % (json.dumps(fr[:200]), att_brief(atts)))
    check(len(atts) >= min_attempts, "only %d attempts in round 0 (expected >= %d): %s; reason=%s"
          % (len(atts), min_attempts, att_brief(atts), json.dumps(fr[:150])))
    return atts, out


def rcase(name, fn, doc):
    fn.__name__ = name
    fn.__doc__ = doc
    CASES.append(fn)


RUN = sh("python3 script.py")


def _c1():
    r = run_repeat(lambda k, n: RUN if n == 0 else inf(["the script crashes with boom",
                                                        "python3 script.py exits with an error (boom) again",
                                                        "third words"][k - 1]))
    expect_repeat(r)


rcase("ctl_r_infeasible_reworded", _c1, "Same call, same result, infeasible in other words -> repeat, 2 attempts.")


def _c2():
    r = run_repeat(lambda k, n: sh("python3 script.py; echo step %d" % n))
    expect_repeat(r)
    atts, out = r0_outcome(r)
    check(all("steps" in (a.get("infeasible_reason") or "") for a in atts),
          "inconclusive: attempts did not run out of steps: " + att_brief(atts))


rcase("ctl_r_out_of_steps_twice", _c2, "Both attempts run out of steps with the same calls and results -> repeat.")


def _c3():
    r = run_repeat(lambda k, n: [sh("cat script.py"), RUN,
                                 inf("attempt %d: it fails, reason %s" % (k, "x" * k))][min(n, 2)])
    expect_repeat(r)


rcase("ctl_r_two_calls_reworded", _c3, "Two identical calls each attempt, infeasible reworded -> repeat.")


def _c4():
    p = plan(["build.log holds the build output"],
             [st("Run bash build.sh and write its output to build.log", ["build.log holds the output"])])
    r = run_repeat(lambda k, n: sh("bash build.sh") if n == 0 else inf(["build fails", "the build still fails"][min(k, 2) - 1]),
                   files={"build.sh": "echo compiling; exit 3\n"}, goal="Run build.sh and write its output to build.log.",
                   p=p)
    expect_repeat(r)


rcase("ctl_r_nonquestion_request", _c4, "The repeat rule does not depend on the request being a question.")


def _c5():
    calls = {1: sh("python3 script.py"), 2: sh("python3 -u script.py"), 3: sh("python3 -u script.py")}
    r = run_repeat(lambda k, n: calls[min(k, 3)] if n == 0 else inf("failure words number %d" % k))
    atts, out = r0_outcome(r)
    fr = out.get("failure_reason") or ""
    check(len(atts) == 3, "inconclusive: expected 3 attempts, got %s" % att_brief(atts))
    check(fr.startswith(PHRASE), "attempt 3 repeats attempt 2 (other words) but not counted: %s; %s"
          % (json.dumps(fr[:200]), att_brief(atts)))


rcase("ctl_r_repeat_of_second", _c5,
      "Attempt 2 differs from 1, attempt 3 repeats 2 in other words -> failure reason names the repeat.")


def _c6():
    r = run_repeat(lambda k, n: inf(["I cannot do this", "This is not possible for me"][min(k, 2) - 1]))
    expect_repeat(r)


rcase("ctl_r_no_calls_reworded", _c6,
      "UNCERTAIN: both attempts infeasible with NO tool calls in other words: same (no) calls, same (no) results.")


def _a1():
    calls = {1: sh("python3 script.py"), 2: sh("python3 ./script.py"), 3: sh("python3 -X dev script.py")}
    expect_no_repeat(run_repeat(lambda k, n: calls[min(k, 3)] if n == 0 else inf("script fails")))


rcase("atk_r_different_calls", _a1, "Different command each attempt, same words -> not a repeat (3 attempts).")


def _a2():
    expect_no_repeat(run_repeat(lambda k, n: RUN if n == 0 else inf("script fails (%d)" % k),
                                files={"script.py": "import sys, time\nsys.exit('boom %d' % time.time_ns())\n"}))


rcase("atk_r_different_results", _a2, "Same call but its output differs each time -> not a repeat.")


def _a3():
    cmd = "n=$(cat .n 2>/dev/null || echo 0); n=$((n+1)); echo $n > .n; echo boom; exit $n"
    expect_no_repeat(run_repeat(lambda k, n: sh(cmd) if n == 0 else inf("the command fails, try %d" % k)))


rcase("atk_r_results_differ_in_exit_code", _a3,
      "Same call, same printed text 'boom' but exit code 1, 2, 3 -> the results differ, not a repeat.")


def _a4():
    judged = []

    def val(body, k):
        judged.append(1)
        if len(judged) == 1:
            return rfail(body, k)
        return passes("42")(body, k)
    r = run_repeat(lambda k, n: sh("python3 script.py") if n == 0 else fin(["the script printed 42",
                                                                           "42"][min(k, 2) - 1]),
                   files={"script.py": "print(42)\n"}, validator=val)
    atts, out = r0_outcome(r)
    fr = out.get("failure_reason") or ""
    check(PHRASE not in fr, "a completed attempt with another answer was counted as a repeat: " + json.dumps(fr[:200]))
    nj = len(round1_requests(r, "Judgement"))
    check(nj >= 2, "the completed second attempt (other answer) was not judged again: %d R4a calls; %s"
          % (nj, att_brief(atts)))
    check(r.success(), "second attempt judged pass but task not accepted: " + r.brief())


rcase("atk_r_completed_other_answer", _a4,
      "Attempt 2 completes with the same call and a different answer -> judged again by R4a (which passes).")


def _a5():
    r = run_repeat(lambda k, n: RUN if n == 0 else (inf("the script fails") if k == 1 else fin("boom")),
                   validator=rfail)
    atts, out = r0_outcome(r)
    fr = out.get("failure_reason") or ""
    check(PHRASE not in fr or len(atts) >= 3,
          "infeasible then COMPLETED with same call counted as a failed repeat: %s; %s" % (json.dumps(fr[:200]),
                                                                                       att_brief(atts)))
    check(len(round1_requests(r, "Judgement")) >= 1, "the completed second attempt was never judged: " + att_brief(atts))


rcase("atk_r_infeasible_then_completes", _a5,
      "Attempt 1 infeasible, attempt 2 same call but COMPLETES (answer 'boom') -> not a failed repeat, judged.")


def _a6():
    def f(k, n):
        seqs = {1: [RUN], 2: [RUN, sh("cat script.py")], 3: [RUN, sh("cat script.py"), sh("ls")]}[min(k, 3)]
        return seqs[n] if n < len(seqs) else inf("still failing")
    expect_no_repeat(run_repeat(f))


rcase("atk_r_extra_call", _a6, "Attempt 2 = attempt 1's call plus one more call -> not a repeat.")


def _a7():
    def f(k, n):
        seqs = {1: [sh("cat script.py"), RUN], 2: [RUN, sh("cat script.py")], 3: [sh("cat script.py"), RUN]}[min(k, 3)]
        return seqs[n] if n < len(seqs) else inf("fails, take %d" % k)
    expect_no_repeat(run_repeat(f))


rcase("atk_r_reordered_calls", _a7, "UNCERTAIN: same two calls in the other order -> not 'exactly the same'.")


def _a8():
    calls = {1: sh("python3 script.py"), 2: sh("python3 -u script.py"), 3: sh("python3 script.py")}
    r = run_repeat(lambda k, n: calls[min(k, 3)] if n == 0 else inf("failure words number %d" % k))
    atts, out = r0_outcome(r)
    fr = out.get("failure_reason") or ""
    check(len(atts) == 3, "inconclusive: expected 3 attempts, got %s" % att_brief(atts))
    check(PHRASE not in fr, "attempt 3 repeats attempt 1 (not the attempt before) but was counted: "
          + json.dumps(fr[:200]))


rcase("atk_r_repeat_of_first_not_previous", _a8,
      "Attempt 3 equals attempt 1 but not attempt 2 (the attempt before) -> not a verbatim repeat.")


def _a9():
    script = "import sys, time\nsys.stdout.write('x' * 6000 + ' %d\\n' % time.time_ns())\nsys.exit(1)\n"
    expect_no_repeat(run_repeat(lambda k, n: RUN if n == 0 else inf("fails %d" % k), files={"script.py": script}))


rcase("atk_r_results_differ_after_6000_chars", _a9,
      "UNCERTAIN: results differ only after 6000 identical characters (a truncating comparison would miss it).")


def _a10():
    def f(k, n):
        if k == 1:
            return RUN if n == 0 else inf("the script fails")
        return sh("python3 script.py; echo attempt %d step %d" % (k, n))  # runs out of steps, calls differ by k
    expect_no_repeat(run_repeat(f))


rcase("atk_r_infeasible_then_out_of_steps", _a10,
      "Attempt 1: one call then infeasible; attempts 2 and 3 run out of steps with other calls (each attempt its "
      "own commands) -> not a repeat, 3 attempts.")

# ---- added after the first run
tcase("ctl_t_imperative_tell_me", "Tell me the number of lines in notes.txt.",
      [st(COUNT, [VAL, "notes.txt is opened"]), st("Save the number to .cache/lines.txt", ["the cache is written"]),
       st("Confirm the number with cat -n", ["the number is confirmed"])], NOTES,
      kept=[COUNT], dropped=[".cache/lines.txt", "Confirm the number"], ckept=[VAL], cdropped=["notes.txt is opened"],
      doc="An imperative 'Tell me the number ...' is a question too: absent .cache/lines.txt step and Confirm step "
          "dropped, how-criterion dropped.")
tcase("ctl_t_hidden_step_first", Q_LINES,
      [st("Dump the output of wc -l notes.txt into .wc.txt", [".wc.txt is written"]),
       st("Report the number of lines of notes.txt using wc -l", [VAL])], NOTES,
      kept=["Report the number of lines"], dropped=[".wc.txt"],
      doc="The absent-file step is the FIRST one; the value step (second) remains alone.")
tcase("ctl_t_name_contains_request_name", Q_LINES,
      [st(COUNT, [VAL]), st("Write a summary to old_notes.txt", ["old_notes.txt holds a summary"])], NOTES,
      kept=[COUNT], dropped=["old_notes.txt"],
      doc="old_notes.txt is not a name the request gives (the request names notes.txt, a part of it): dropped.")
tcase("atk_t_parallel_steps_per_step_rule", "How many lines do a.txt and b.txt have?",
      [st("Count the lines of a.txt with wc -l", ["the number of lines of a.txt is reported", "a.txt is opened"],
          seq=1),
       st("Show b.txt with cat", ["b.txt is opened"], seq=1)], {"a.txt": "1\n2\n", "b.txt": "x\n"},
      kept=["Count the lines of a.txt", "Show b.txt"], ckept=["the number of lines of a.txt is reported",
                                                              "b.txt is opened"],
      doc="UNCERTAIN (same sequence numbers are not 'chained', so not merged): the rule is per step, so b.txt's "
          "step, which has no value criterion, keeps its how-criterion 'b.txt is opened'.")
tcase("atk_t_polite_question_deletes", "Could you delete old.txt?",
      [st("Delete old.txt with rm old.txt", ["old.txt is removed"]),
       st("Verify that old.txt is gone", ["ls shows no old.txt"]), st("Log it to .trash.log", ["logged"])],
      {"old.txt": "x\n"}, kept=["Delete old.txt", "Verify that old.txt is gone", ".trash.log"],
      doc="A '?' request that changes something (delete) is not a question: plan kept.")
tcase("atk_t_question_and_write_one_line", "What is 6 times 7? Write it to result.txt.",
      [st("Compute 6*7 with echo $((6*7))", ["the product is printed"]),
       st("Write the product to result.txt", ["result.txt holds 42"]),
       st("Make sure result.txt holds 42", ["cat shows 42"])], {},
      kept=["Compute 6*7", "Write the product to result.txt", "Make sure result.txt"],
      doc="One line: a question plus a write -> not a question, plan kept.")

tcase("ctl_t_question_word_write_quoted", "How many times does the word 'write' appear in notes.txt?",
      [st("Count the word with grep -o write notes.txt | wc -l", ["the number of matches is reported"]),
       st("Store the count in .wordcount.txt", [".wordcount.txt holds the count"]),
       st("Double-check the count with grep -c write notes.txt", ["the count is double-checked"])],
      {"notes.txt": "write this\nand write that\n"},
      kept=["grep -o write"], dropped=[".wordcount.txt", "Double-check the count"],
      doc="A question that merely quotes the word 'write' asks to make nothing: still trimmed.")
tcase("ctl_t_question_about_rm", "How many files would rm *.tmp delete?",
      [st("Count the .tmp files with ls *.tmp | wc -l", ["the number of files is reported"]),
       st("Verify the count with find . -name '*.tmp'", ["the count is verified"])], {"a.tmp": "", "b.tmp": ""},
      kept=["ls *.tmp | wc -l"], dropped=["Verify the count"],
      doc="UNCERTAIN: a question that mentions a deleting command but asks only for a number is a question.")
tcase("atk_t_question_then_also_fix", "How many lines does notes.txt have? Also fix the typo in line 2.",
      [st(COUNT, [VAL, "the content is read"]), st("Fix the typo in line 2 of notes.txt with sed", ["line 2 is fixed"]),
       st("Verify that line 2 is fixed", ["sed -n 2p shows the fixed line"]), st("Back up to .notes.bak.txt", ["backed up"])],
      NOTES, kept=[COUNT, "Fix the typo", "Verify that line 2", ".notes.bak.txt"], ckept=["the content is read"],
      doc="A question followed by 'Also fix ...' changes something: plan kept.")
tcase("atk_t_long_extension_not_a_name", Q_LINES,
      [st(COUNT, [VAL]), st("Compare with the total in tally.backup and out.c", ["the totals agree"])], NOTES,
      kept=[COUNT, "tally.backup and out.c"],
      doc="'tally.backup' (6-letter extension) and 'out.c' (1 letter) are not file names by the 2-5 letter rule: "
          "the step stays (it is no check step either).")
tcase("ctl_t_quoted_and_punctuated_names", Q_LINES,
      [st(COUNT, [VAL]), st("Save the count to `tally.csv`.", ["tally.csv is written"]),
       st("Append the count to 'runs/history.log'", ["the history is updated"])], NOTES,
      kept=[COUNT], dropped=["`tally.csv`", "runs/history.log"],
      doc="File names in backticks / quotes / followed by a full stop / in an absent folder are still names: "
          "dropped.")

tcase("atk_t_question_then_delete", "How many lines does notes.txt have? Then delete old.txt.",
      [st(COUNT, [VAL, "the content is read"]), st("Delete old.txt with rm old.txt", ["old.txt is removed"]),
       st("Verify that old.txt is gone", ["ls shows no old.txt"])], dict(NOTES, **{"old.txt": "x\n"}),
      kept=[COUNT, "Delete old.txt", "Verify that old.txt is gone"], ckept=["the content is read"],
      doc="A question followed by 'Then delete old.txt.' changes something: plan kept (companion of "
          "atk_t_question_then_also_fix with another verb).")
tcase("atk_t_question_then_fix_only", "How many lines does notes.txt have? Fix the typo in line 2.",
      [st(COUNT, [VAL]), st("Fix the typo in line 2 of notes.txt with sed", ["line 2 is fixed"]),
       st("Verify that line 2 is fixed", ["sed -n 2p shows the fixed line"])], NOTES,
      kept=[COUNT, "Fix the typo", "Verify that line 2"],
      doc="Companion: 'Fix the typo' without 'Also': plan kept.")
tcase("atk_t_fix_request_alone", "Fix the typo in line 2 of notes.txt.",
      [st("Fix the typo in line 2 of notes.txt with sed", ["notes.txt is read", "line 2 is fixed"]),
       st("Verify that line 2 is fixed", ["sed -n 2p shows the fixed line"])], NOTES,
      kept=["Fix the typo", "Verify that line 2"], ckept=["notes.txt is read"],
      doc="Companion: a plain 'Fix ...' request (no question) keeps its plan.")
tcase("atk_t_question_then_rename", "Which file contains TODO? Rename it to todo_done.py.",
      [st("Find the file with grep -rl TODO .", ["the file name is reported"]),
       st("Rename the file to todo_done.py with mv", ["todo_done.py exists"]),
       st("Confirm todo_done.py exists", ["ls shows todo_done.py"])], {"src/a.py": "# TODO\n"},
      kept=["grep -rl TODO", "Rename the file", "Confirm todo_done.py"],
      doc="A question followed by a rename: plan kept.")

tcase("atk_t_question_then_update", "How many lines does notes.txt have? Update line 2 to say hi.",
      [st(COUNT, [VAL]), st("Update line 2 of notes.txt to hi with sed -i", ["line 2 is hi"]),
       st("Verify that line 2 now says hi", ["sed -n 2p shows hi"])], NOTES,
      kept=[COUNT, "Update line 2", "Verify that line 2 now says hi"],
      doc="A question followed by 'Update line 2 ...' changes a file: plan kept.")
tcase("atk_t_question_then_install", "How many lines does notes.txt have? Install cowsay too.",
      [st(COUNT, [VAL]),
       st("Install cowsay with pip install cowsay", ["pip reports cowsay installed"]),
       st("Check that cowsay runs", ["cowsay prints a cow"])], NOTES,
      kept=[COUNT, "Install cowsay", "Check that cowsay runs"],
      doc="A question followed by 'Install cowsay too.' changes the system: plan kept.")


def _c7():
    p = plan(["the answer names the file with TODO"],
             [st("Find the file containing TODO with file_search", ["the file name is reported"],
                 tools=("file_search", "shell"))])
    orders = {1: {"query": "TODO", "path": "."}, 2: {"path": ".", "query": "TODO"}, 3: {"query": "TODO", "path": "."}}
    r = run_repeat(lambda k, n: {"tool": "file_search", "args": orders[min(k, 3)]} if n == 0
                   else inf(["nothing found", "no file has it"][min(k, 2) - 1]), files=NOTES, goal=Q_TODO, p=p)
    expect_repeat(r)


rcase("ctl_r_same_call_args_reordered", _c7,
      "UNCERTAIN: the same file_search call with its arguments in another key order (same call) and the same "
      "(empty) result, infeasible in other words -> repeat.")


def main():
    H.AGENTUI = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else "/work/adversarial/agentui-dev"
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
            print("FAIL %s: %s" % (c.__name__, str(e).replace("\n", " ")[:900]), flush=True)
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
