#!/usr/bin/env python3
"""Black-box adversarial corpus for agentui issue #13 ("the loop tells the truth and uses what it learns").

usage: python3 run_cases.py /path/to/agentui [case-name-substring ...]

Every case starts its own scripted fake OpenAI-compatible server (fakellm.py, stdlib only) on a free
port, with a fresh --data-dir, workspace, HOME and empty config file, runs `agentui run --json` (or
`agentui memory ...`) and asserts on what the program reported, on the workspace, and on the prompts
it sent to the model.  Roles are recognised by the reply schema name in response_format
(PerceiverOut, PlanOut, ExecutorAction, Judgement = R4a, MergeOut = R4b), observed empirically.

"Success" = exit code 0 or final.directive in {success, accept} (README: exit 0 = accept/success).
"""
import json
import os
import re
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H  # noqa: E402
from harness import plan, Script, run_agent, seq, by_subtask, passes, meta_pass, tool_quote, memory_cmd  # noqa: E402

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


def sh(cmd, output=""):
    return {"tool": "shell", "args": {"command": cmd}, "output": output}


def fin(out):
    return {"tool": "finish", "output": out}


def exe_prompts(r):
    return r.reqs("ExecutorAction")


def last_user(body):
    return H.FakeLLM.last_user(body)


LINES3 = {"a.txt": "1\n2\n3\n"}
DIR4 = {"d/alpha.txt": "a\n", "d/beta.txt": "b\n", "d/gamma.txt": "c\n", "d/delta.txt": "d\n"}


# ---------------------------------------------------------------- controls (honest work must still succeed)

@case
def control_honest_count_succeeds():
    """Control: a correct run (wc -l, answer 3, evidence from the tool) ends in success, exit 0, output has 3.
    Without this, every 'not success' case below would pass trivially."""
    p = plan(["the answer gives the number of lines in a.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt", "criteria": ["a number is reported"]}])
    s = Script("count the lines in a.txt", p, executor=seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")]),
               validator=passes(), meta=meta_pass("a.txt has 3 lines", "3 a.txt"))
    r = run_agent(s, "count the lines in a.txt", files=LINES3)
    check(r.rc == 0 and r.directive in ("success", "accept"), "honest run not a success: " + r.brief())
    check("3" in (r.final.get("output") or ""), "output lacks the count: %r" % r.final.get("output"))


@case
def control_yes_rm_really_deletes():
    """Control (#3 counterpart): with --yes (sandbox active) `rm -v junk.txt` runs, the file is gone and the
    validator quotes the tool's own output ("removed 'junk.txt'") -> success is allowed and expected.
    Assumption: bubblewrap sandbox is active on this machine (agentui doctor says so)."""
    p = plan(["junk.txt no longer exists"],
             [{"intent": "Delete junk.txt with: rm -v junk.txt", "criteria": ["junk.txt is deleted"]}])
    s = Script("delete junk.txt", p, executor=seq([sh("rm -v junk.txt"), fin("removed 'junk.txt'")]),
               validator=passes(), meta=meta_pass("junk.txt was deleted", "removed 'junk.txt'"))
    r = run_agent(s, "delete junk.txt", files={"junk.txt": "junk\n"}, extra_args=["--yes"])
    check(not os.path.exists(os.path.join(r.ws, "junk.txt")), "junk.txt still exists with --yes: " + r.brief())
    check(r.rc == 0, "honest deletion not reported as success: " + r.brief())


@case
def control_normalised_evidence_passes():
    """Control for over-strictness (#4 says 'normalised substring match'): the evidence differs from the tool
    output only in whitespace runs and letter case ('TOTAL: 42' vs 'total:     42') -> still a success.
    Assumption: normalisation collapses whitespace and ignores case."""
    p = plan(["the answer gives the total from totals.txt"],
             [{"intent": "Read the total with: cat totals.txt", "criteria": ["the total number is reported"]}])
    s = Script("what is the total in totals.txt?", p,
               executor=seq([sh("cat totals.txt"), fin("the total is 42")]),
               validator=passes("TOTAL: 42"), meta=meta_pass("The total is 42", "42"))
    r = run_agent(s, "what is the total in totals.txt?", files={"totals.txt": "total:     42\n"})
    check(r.rc == 0, "normalised evidence rejected: " + r.brief())


# ---------------------------------------------------------------- #1 D accounting: task criteria not diluted

@case
def task_criterion_fail_not_diluted_by_3_subtask_passes():
    """#1: one subtask with 3 passing criteria + 1 task criterion that R4b fails (every round) -> never success."""
    p = plan(["the answer gives the number of lines in b.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt",
               "criteria": ["a number is reported", "wc was run", "the file a.txt was read"]}])
    def meta(body, k):
        return {"merged_output": "a.txt has 3 lines", "summary": "counted a.txt",
                "verdicts": [{"verdict": "fail", "failure_class": "logical",
                              "evidence": "counted a.txt, not b.txt"}] * k}
    s = Script("count the lines in b.txt", p, executor=seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")]),
               validator=passes(), meta=meta)
    r = run_agent(s, "count the lines in b.txt", files=dict(LINES3, **{"b.txt": "x\n"}))
    check(len(r.reqs("MergeOut")) >= 1, "meta-validator never asked: " + r.brief())
    not_success(r, "R4b failed the only task criterion every round")


@case
def one_of_two_task_criteria_fails_with_4_subtask_passes():
    """#1: 4 passing subtask criteria + 2 task criteria of which R4b fails the 2nd every round -> never success
    (pooled D would be 1/6)."""
    p = plan(["the answer gives the number of lines in a.txt", "the answer also gives the number of words"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt",
               "criteria": ["a number is reported", "wc was run", "a.txt was read", "the command exited 0"]}])
    def meta(body, k):
        v = [{"verdict": "pass", "evidence": "3 a.txt"}] + [
            {"verdict": "fail", "failure_class": "logical", "evidence": "no word count given"}] * (k - 1)
        return {"merged_output": "a.txt has 3 lines", "summary": "lines only", "verdicts": v}
    s = Script("count the lines and words in a.txt", p,
               executor=seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")]), validator=passes(), meta=meta)
    r = run_agent(s, "count the lines and words in a.txt", files=LINES3)
    not_success(r, "R4b failed one of two task criteria every round")


@case
def meta_unusable_is_not_verified():
    """#1 ('same when R4b cannot verify'): the meta-validator only ever answers prose -> not success."""
    p = plan(["the answer gives the number of lines in a.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt",
               "criteria": ["a number is reported", "wc was run", "a.txt was read"]}])
    s = Script("count the lines in a.txt", p, executor=seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")]),
               validator=passes(), meta=lambda b, k: "I think it is fine.")
    r = run_agent(s, "count the lines in a.txt", files=LINES3)
    not_success(r, "R4b never produced a usable verdict")


@case
def fan_in_timeout_not_success():
    """#1/#2: two parallel subtasks (sequence 1 and 1); every executor call of subtask B hangs past
    pipeline.fan_in_timeout_s = 3 (B has 2 criteria, A 1); R4b rubber-stamps -> B's work never arrived,
    so the run must not claim success.  Assumption: [pipeline] fan_in_timeout_s is a valid config key (README)."""
    p = plan(["the answer gives the line count of a.txt and of b.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt", "criteria": ["a number is reported"],
               "sequence": 1},
              {"intent": "Count lines of b.txt with: wc -l b.txt",
               "criteria": ["a number is reported", "b.txt was read"], "sequence": 1}])

    def ex(body, ctx):
        if "b.txt" in ctx["subtask"]:
            time.sleep(12)
            return sh("wc -l b.txt")
        return seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")])(body, ctx)
    s = Script("count the lines of a.txt and b.txt", p, executor=ex, validator=passes(),
               meta=meta_pass("a.txt has 3 lines and b.txt has 2 lines", "3 a.txt"))
    r = run_agent(s, "count the lines of a.txt and b.txt", files=dict(LINES3, **{"b.txt": "x\ny\n"}),
                  config="[pipeline]\nfan_in_timeout_s = 3\n", timeout=50)
    check(r.rc != 2, "config rejected / endpoint failure: %s %s" % (r.brief(), r.err[-300:]))
    not_success(r, "subtask b never reported (fan-in timeout)")


# ---------------------------------------------------------------- #2 steps that never ran

def three_step_plan(fail_step, crit_counts):
    names = ["one", "two", "three"]
    subs = []
    for i, n in enumerate(names):
        subs.append({"intent": "Step %s: count lines of %s.txt with: wc -l %s.txt" % (n, n, n),
                     "criteria": ["step %s criterion %d" % (n, j + 1) for j in range(crit_counts[i])],
                     "sequence": i + 1})
    p = plan(["all three files were counted"], subs)

    def ex(body, ctx):
        for n in names:
            if "Step %s:" % n in ctx["subtask"]:
                return seq([sh("wc -l %s.txt" % n), fin("%s.txt has 1 lines" % n)])(body, ctx)
        return fin("?")

    def val(body, k):
        q = tool_quote(body)
        st = H.subtask_of(body)
        v = [{"criterion": "", "verdict": "pass", "evidence": q}] * k
        if ("Step %s:" % fail_step) in st:
            v = v[:-1] + [{"criterion": "", "verdict": "fail", "failure_class": "logical",
                           "evidence": q, "what_to_do": "try again"}]
        return {"verdicts": v}
    files = {"%s.txt" % n: "x\n" for n in names}
    return p, ex, val, files


@case
def step1_fails_later_steps_never_ran():
    """#2: 3-step plan, step 1 fails 1 of its 4 criteria every time, steps 2-3 are then skipped;
    R4b (if asked) rubber-stamps -> never success."""
    p, ex, val, files = three_step_plan("one", [4, 1, 1])
    s = Script("count the lines of one.txt, two.txt and three.txt", p, executor=ex, validator=val,
               meta=meta_pass("all counted", "1 one.txt"))
    r = run_agent(s, "count the lines of one.txt, two.txt and three.txt", files=files)
    not_success(r, "step 1 failed; steps 2-3 never ran")


@case
def step2_fails_step3_never_ran():
    """#2: step 1 passes 4/4, step 2 fails 1 of 4, step 3 (1 criterion) never runs; R4b rubber-stamps.
    UNCERTAIN: with 'skipped counts as failed' D = 2/9 ≈ 0.22 ≤ δ; I assert the user-facing promise of the
    issue title (no success for work that never ran)."""
    p, ex, val, files = three_step_plan("two", [4, 4, 1])
    s = Script("count the lines of one.txt, two.txt and three.txt", p, executor=ex, validator=val,
               meta=meta_pass("all counted", "1 one.txt"))
    r = run_agent(s, "count the lines of one.txt, two.txt and three.txt", files=files)
    ran3 = any("Step three:" in H.subtask_of(b) for b in exe_prompts(r))
    if r.success():
        check(ran3, "success although step three never ran: " + r.brief())


@case
def subtask_fails_meta_passes():
    """A subtask whose single criterion fails every attempt; R4b rubber-stamps -> not success."""
    p = plan(["the answer gives the number of lines in a.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt", "criteria": ["a number is reported"]}])
    s = Script("count the lines in a.txt", p, executor=seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")]),
               validator=lambda b, k: {"verdicts": [{"verdict": "fail", "failure_class": "logical",
                                                     "evidence": "wrong file", "what_to_do": "redo"}] * k},
               meta=meta_pass("a.txt has 3 lines", "3"))
    r = run_agent(s, "count the lines in a.txt", files=LINES3)
    not_success(r, "R4a failed the subtask every time")


@case
def infeasible_but_validator_passes():
    """The executor gives up ('infeasible') without calling any tool; R4a and R4b rubber-stamp -> not success."""
    p = plan(["the answer gives the number of lines in a.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt", "criteria": ["a number is reported"]}])
    s = Script("count the lines in a.txt", p,
               executor=seq([{"tool": "infeasible", "output": "I cannot do this"}]),
               validator=passes("I cannot do this"), meta=meta_pass("a.txt has 3 lines", "3"))
    r = run_agent(s, "count the lines in a.txt", files=LINES3)
    not_success(r, "executor said infeasible")


# ---------------------------------------------------------------- #4 rubber stamps

@case
def rubber_stamp_no_tool_call():
    """#4: executor answers 'The result was already provided.' with no tool call at all; R4a passes
    'a single integer value is reported' quoting that sentence; R4b passes -> not success."""
    goal = "how many entries are in folder d? answer with a single integer"
    p = plan(["the answer is a single integer: the number of entries in d"],
             [{"intent": "Count the entries of d with: ls d | wc -l",
               "criteria": ["a single integer value is reported"]}])
    s = Script(goal, p, executor=seq([fin("The result was already provided.")]),
               validator=passes("The result was already provided."),
               meta=meta_pass("The result was already provided.", "The result was already provided."))
    r = run_agent(s, goal, files=DIR4)
    not_success(r, "no tool ran, no integer in the answer")


@case
def rubber_stamp_after_glob():
    """#4 (the held-out case): glob lists the 4 entries, executor finishes 'The result was already provided.';
    R4a passes quoting the executor's sentence; R4b passes -> not success."""
    goal = "how many entries are in folder d? answer with a single integer"
    p = plan(["the answer is a single integer: the number of entries in d"],
             [{"intent": "List d with glob d/* and count the entries", "tools": ["glob"],
               "criteria": ["a single integer value is reported"]}])
    s = Script(goal, p, executor=seq([{"tool": "glob", "args": {"pattern": "d/*"}},
                                      fin("The result was already provided.")]),
               validator=passes("The result was already provided."),
               meta=meta_pass("The result was already provided.", "The result was already provided."))
    r = run_agent(s, goal, files=DIR4)
    not_success(r, "answer holds no integer; evidence is the executor's own words")


@case
def evidence_only_in_executor_text():
    """#4: `ls d` shows 4 names; executor finishes 'There are 17 entries'; R4a passes quoting exactly that
    (found nowhere in the tool outputs); R4b passes with 17 -> not success."""
    goal = "how many entries are in folder d?"
    p = plan(["the answer gives the number of entries in d"],
             [{"intent": "List d with: ls d", "criteria": ["the number of entries is reported"]}])
    s = Script(goal, p, executor=seq([sh("ls d"), fin("There are 17 entries")]),
               validator=passes("There are 17 entries"), meta=meta_pass("There are 17 entries in d", "17"))
    r = run_agent(s, goal, files=DIR4)
    not_success(r, "evidence '17' appears in no tool output")


@case
def number_question_answer_without_number():
    """#4: 'How many lines does a.txt have?' — wc printed '3 a.txt', the executor finished 'Done.', R4a passes
    quoting the real tool output, R4b merges 'Done.' -> must not be a success whose answer has no number."""
    goal = "How many lines does a.txt have?"
    p = plan(["the answer gives the number of lines in a.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt", "criteria": ["the number of lines is reported"]}])
    s = Script(goal, p, executor=seq([sh("wc -l a.txt"), fin("Done.")]), validator=passes(),
               meta=meta_pass("Done.", "3 a.txt"))
    r = run_agent(s, goal, files=LINES3)
    out = json.dumps(r.final.get("output"))
    if r.success():
        check(re.search(r"\b3\b", out), "success with an answer holding no number: output=%s" % out)


@case
def path_question_answer_without_path():
    """#4: 'Which file in this folder is the largest? give its path' — `ls -S` printed 'big.bin', executor
    finished 'I found the largest file.', R4a passes quoting 'big.bin', R4b merges the vague sentence ->
    must not be a success whose answer names no path."""
    goal = "Which file in this folder is the largest? Give its path."
    p = plan(["the answer names the path of the largest file"],
             [{"intent": "Find the largest file with: ls -S | head -1", "criteria": ["the path of the largest file is given"]}])
    s = Script(goal, p, executor=seq([sh("ls -S | head -1"), fin("I found the largest file.")]),
               validator=passes(), meta=meta_pass("I found the largest file.", "big.bin"))
    r = run_agent(s, goal, files={"big.bin": "x" * 5000, "small.txt": "y\n"})
    out = json.dumps(r.final.get("output"))
    if r.success():
        check("big.bin" in out, "success with an answer naming no path: output=%s" % out)


@case
def name_question_answer_without_name():
    """#4: 'What is the name field in person.json?' — cat showed {"name": "Zorblax"}, executor finished
    'The name was found.', validators pass -> must not be a success whose answer lacks the name."""
    goal = "What is the value of the name field in person.json?"
    p = plan(["the answer gives the name from person.json"],
             [{"intent": "Read person.json with: cat person.json", "criteria": ["the name is reported"]}])
    s = Script(goal, p, executor=seq([sh("cat person.json"), fin("The name was found.")]),
               validator=passes(), meta=meta_pass("The name was found.", "Zorblax"))
    r = run_agent(s, goal, files={"person.json": '{"name": "Zorblax", "age": 7}\n'})
    out = json.dumps(r.final.get("output"))
    if r.success():
        check("Zorblax" in out, "success with an answer lacking the name: output=%s" % out)


@case
def claimed_delete_without_tool():
    """#3/#4: 'delete junk.txt' — executor claims 'junk.txt deleted' without any tool call; validators pass
    -> junk.txt is still there, so no success."""
    p = plan(["junk.txt no longer exists"],
             [{"intent": "Delete junk.txt with: rm junk.txt", "criteria": ["junk.txt is deleted"]}])
    s = Script("delete junk.txt", p, executor=seq([fin("junk.txt deleted")]),
               validator=passes("junk.txt deleted"), meta=meta_pass("junk.txt deleted", "junk.txt deleted"))
    r = run_agent(s, "delete junk.txt", files={"junk.txt": "junk\n"})
    check(os.path.exists(os.path.join(r.ws, "junk.txt")), "harness: junk.txt vanished?")
    not_success(r, "junk.txt still exists, no tool ever ran")


@case
def claimed_create_without_tool():
    """README 'How results are checked': 'create / write X' where X is not there fails. Executor claims it
    created hello.txt, never touched it; validators pass -> not success."""
    p = plan(["hello.txt exists and contains hi"],
             [{"intent": "Create hello.txt containing hi", "tools": ["write_file"],
               "criteria": ["hello.txt is created with the text hi"]}])
    s = Script("create hello.txt containing hi", p, executor=seq([fin("created hello.txt with 'hi'")]),
               validator=passes("created hello.txt"), meta=meta_pass("hello.txt created", "created"))
    r = run_agent(s, "create hello.txt containing hi")
    check(not os.path.exists(os.path.join(r.ws, "hello.txt")), "harness: hello.txt exists?")
    not_success(r, "hello.txt was never created")


# ---------------------------------------------------------------- #3 denied confirmation

def _denied_rm(validator):
    p = plan(["junk.txt no longer exists"],
             [{"intent": "Delete junk.txt with: rm junk.txt", "criteria": ["junk.txt is deleted"]}])
    s = Script("delete junk.txt", p, executor=seq([sh("rm junk.txt"), fin("junk.txt deleted")]),
               validator=validator, meta=meta_pass("junk.txt deleted", "junk.txt deleted"))
    return run_agent(s, "delete junk.txt", files={"junk.txt": "junk\n"})


@case
def denied_rm_claimed_deleted():
    """#3: non-interactive, no --yes: `rm junk.txt` is denied; executor says 'junk.txt deleted'; R4a passes
    quoting the executor -> junk.txt must still exist and the run must not be a success."""
    r = _denied_rm(passes("junk.txt deleted"))
    check(os.path.exists(os.path.join(r.ws, "junk.txt")), "junk.txt deleted without confirmation!")
    not_success(r, "the only effecting call was denied")


@case
def denied_rm_evidence_quotes_denial_output():
    """#3: like above but R4a's evidence is a verbatim line of the (denied) tool result, so a substring
    check alone would accept it -> still must not be a success."""
    r = _denied_rm(passes())
    check(os.path.exists(os.path.join(r.ws, "junk.txt")), "junk.txt deleted without confirmation!")
    not_success(r, "the only effecting call was denied (evidence quoted from the denial)")


def first_replan_P(r):
    for b in r.reqs("PlanOut"):
        m = re.search(r"Why: D=([\d.]+) P=([\d.]+)", H.user_text(b))
        if m:
            return float(m.group(2)), H.user_text(b)
    return None, ""


@case
def denied_rm_told_to_planner_and_user():
    """#3: after the denied `rm junk.txt` (and the executor's false 'junk.txt deleted'), the denial is the
    reason the subtask failed: the replan prompt's 'What failed' or the final summary/next_moves must say the
    command was denied (words: denied / confirm / approve / --yes), not only 'not grounded'."""
    r = _denied_rm(passes("junk.txt deleted"))
    not_success(r, "denied rm")
    P, replan = first_replan_P(r)
    m = re.search(r"What failed:(.*)", replan)
    text = ((m.group(1) if m else "") + json.dumps(r.final.get("summary")) + json.dumps(r.final.get("next_moves"))).lower()
    check(any(w in text for w in ("denied", "confirm", "approv", "--yes")),
          "neither the replan nor the result mentions the denial: %s" % text[:300])


@case
def denied_rm_classified_environmental():
    """#3: 'the denial is evidence for R4a and failure_class is environmental' -> after round 1 (rm denied,
    retried attempts refused because of that denial), GGS's P (share of logical failures, shown as
    'Why: D=… P=…' in the replan prompt) must be < 1."""
    r = _denied_rm(passes("junk.txt deleted"))
    not_success(r, "denied rm")
    P, replan = first_replan_P(r)
    check(P is not None, "no replan prompt with P: " + r.brief())
    check(P < 1.0, "denied rm counted as purely logical: P=%s (%s)" % (P, re.search(r"Why:.*", replan).group(0)[:200]))


# ---------------------------------------------------------------- #13 verdict matching by criterion text

@case
def verdicts_matched_by_criterion_text():
    """#13: R4a returns verdicts in the reverse order of the criteria but names each criterion; the failed
    one is 'the header line is skipped'.  Matching by text -> the retry prompt to the executor names the
    header criterion as the failure (order-matching would blame 'a number is reported')."""
    c1, c2 = "the header line is skipped", "a number is reported"
    p = plan(["the answer gives the number of data rows in t.csv"],
             [{"intent": "Count data rows of t.csv with: tail -n +2 t.csv | wc -l", "criteria": [c1, c2]}])

    def val(body, k):
        return {"verdicts": [{"criterion": c2, "verdict": "pass", "evidence": tool_quote(body)},
                             {"criterion": c1, "verdict": "fail", "failure_class": "logical",
                              "evidence": "counted all lines", "what_to_do": "skip line 1"}]}
    s = Script("count data rows of t.csv", p, executor=seq([sh("wc -l t.csv"), fin("t.csv has 3 rows")]),
               validator=val, meta=meta_pass("3 rows", "3"))
    r = run_agent(s, "count data rows of t.csv", files={"t.csv": "h\n1\n2\n"})
    summ = (r.final.get("summary") or "") + " " + json.dumps(r.final.get("next_moves"))
    check("failed" in summ or "unmet" in summ, "no failure reported: " + r.brief())
    check("the header line is skipped: counted all lines" in summ or "unmet criterion was: the header" in summ,
          "failure not attributed to the header criterion: %s" % summ[:300])
    check("a number is reported: counted all lines" not in summ, "verdict matched by order: " + summ[:300])


# ---------------------------------------------------------------- #13 one-line JSON examples

def _example_ok(sysprompt, schema):
    props = set((schema or {}).get("properties", {}))
    for ln in sysprompt.splitlines():
        i = ln.find("{")
        if "example" in ln.lower() and i >= 0:
            dec = json.JSONDecoder()
            try:
                obj, _ = dec.raw_decode(ln[i:])
            except ValueError:
                continue
            if isinstance(obj, dict) and obj and set(obj) <= props and set(schema.get("required", [])) <= set(obj):
                return True
    return False


def _probe_all_roles():
    p = plan(["the answer gives the number of lines in a.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt", "criteria": ["a number is reported"]}])
    s = Script("count the lines in a.txt", p, executor=seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")]),
               validator=passes(), meta=meta_pass("a.txt has 3 lines", "3 a.txt"))
    return run_agent(s, "count the lines in a.txt", files=LINES3)


def _json_example_case(name):
    r = _probe_all_roles()
    reqs = r.reqs(name)
    check(reqs, "role %s never called: %s" % (name, r.brief()))
    b = reqs[0]
    check(_example_ok(H.FakeLLM.system(b), H.FakeLLM.schema(b)),
          "%s system prompt has no one-line JSON example matching its schema" % name)


@case
def json_example_perceiver():
    """#13: R1's prompt has a one-line JSON example that parses and uses only schema keys (incl. required)."""
    _json_example_case("PerceiverOut")


@case
def json_example_agent_validator():
    """#13: R4a's prompt has a one-line JSON example that parses and fits the Judgement schema."""
    _json_example_case("Judgement")


@case
def json_example_meta_validator():
    """#13: R4b's prompt has a one-line JSON example that parses and fits the MergeOut schema."""
    _json_example_case("MergeOut")


# ---------------------------------------------------------------- #8 memory reaches prompts

@case
def remembered_rule_in_next_planner_prompt():
    """#8: `agentui memory remember "never use curl for downloads"` (default space) -> the next task's planner
    prompt contains that rule."""
    import tempfile
    dd = tempfile.mkdtemp(prefix="i13dd_")
    pr = memory_cmd(dd, "remember", "never use curl for downloads")
    check(pr.returncode == 0, "remember failed: %s" % pr.stderr[-300:])
    r = _run_simple(dd)
    pl = r.reqs("PlanOut")
    check(pl, "planner never called")
    check(all("never use curl for downloads" in json.dumps(b["messages"]) for b in pl),
          "remembered rule missing from the planner prompt")


@case
def remembered_avoid_rule_in_planner_prompt():
    """#8/#5: `remember --avoid "do not modify anything under vendor/"` -> in the next planner prompt."""
    import tempfile
    dd = tempfile.mkdtemp(prefix="i13dd_")
    pr = memory_cmd(dd, "remember", "--avoid", "do not modify anything under vendor/")
    check(pr.returncode == 0, "remember failed: %s" % pr.stderr[-300:])
    r = _run_simple(dd)
    pl = r.reqs("PlanOut")
    check(pl and "do not modify anything under vendor/" in json.dumps(pl[0]["messages"]),
          "avoid rule missing from the planner prompt")


@case
def remembered_tool_rule_in_executor_prompt():
    """#8: `remember --space tool:shell "prefer wc over awk for counting"` -> shown to the executor offered shell."""
    import tempfile
    dd = tempfile.mkdtemp(prefix="i13dd_")
    pr = memory_cmd(dd, "remember", "--space", "tool:shell", "prefer wc over awk for counting")
    check(pr.returncode == 0, "remember failed: %s" % pr.stderr[-300:])
    r = _run_simple(dd)
    ex = exe_prompts(r)
    check(ex, "executor never called")
    check("prefer wc over awk for counting" in json.dumps(ex[0]["messages"]),
          "tool:shell rule missing from the executor prompt")


@case
def remembered_never_rule_enforced_even_with_yes():
    """#8 + README: `remember --space tool:shell "never: touch"` -> `touch made.txt` is refused even with --yes;
    the file never appears and the run does not claim success."""
    import tempfile
    dd = tempfile.mkdtemp(prefix="i13dd_")
    pr = memory_cmd(dd, "remember", "--space", "tool:shell", "never: touch")
    check(pr.returncode == 0, "remember failed: %s" % pr.stderr[-300:])
    p = plan(["made.txt exists"], [{"intent": "Create made.txt with: touch made.txt",
                                     "criteria": ["made.txt is created"]}])
    s = Script("create made.txt", p, executor=seq([sh("touch made.txt"), fin("made.txt created")]),
               validator=passes(), meta=meta_pass("made.txt created", "made.txt"))
    r = run_agent(s, "create made.txt", data_dir=dd, extra_args=["--yes"])
    check(not os.path.exists(os.path.join(r.ws, "made.txt")), "never: rule ignored, made.txt created")
    not_success(r, "the only effecting call was refused by a remembered rule")


def _run_simple(dd):
    p = plan(["the answer gives the number of lines in a.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt", "criteria": ["a number is reported"]}])
    s = Script("count the lines in a.txt", p, executor=seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")]),
               validator=passes(), meta=meta_pass("a.txt has 3 lines", "3 a.txt"))
    return run_agent(s, "count the lines in a.txt", files=LINES3, data_dir=dd)


# ---------------------------------------------------------------- #5/#6 MUST NOT and blocked targets obeyed in code

@case
def replan_must_not_tool_enforced_in_code():
    """#5: after round 1 fails logically with read_file, the replan directive says MUST NOT read_file; the
    (disobedient) planner re-plans with read_file anyway -> the code must not hand read_file to the executor
    again in that round (and must not run it)."""
    p = plan(["the answer gives the number of rows of data.csv"],
             [{"intent": "Read data.csv and count rows", "tools": ["read_file"], "criteria": ["a number is reported"]}])

    def ex(body, ctx):
        return seq([{"tool": "read_file", "args": {"path": "data.csv"}}, fin("data.csv has 9 rows")])(body, ctx)

    def val(body, k):
        return {"verdicts": [{"verdict": "fail", "failure_class": "logical", "evidence": "counted wrong",
                              "what_to_do": "use a different method"}] * k}
    # this replanner ignores MUST NOT and keeps read_file
    s = Script("count rows of data.csv", p, executor=ex, validator=val, meta=meta_pass("9", "9"),
               planner=lambda body, n: p)
    r = run_agent(s, "count rows of data.csv", files={"data.csv": "a\nb\n"})
    idx_second_plan = None
    for i, b in enumerate(r.srv.requests):
        if H.schema_name(b) == "PlanOut" and "MUST NOT" in H.user_text(b) and "read_file" in H.user_text(b).split("MUST NOT", 1)[1][:300]:
            idx_second_plan = i
            break
    check(idx_second_plan is not None, "no replan forbade read_file (cannot test): " + r.brief())
    later = []
    for b in r.srv.requests[idx_second_plan + 1:]:
        if H.schema_name(b) == "PlanOut":
            break  # later rounds may legitimately narrow the list again (GGS urgency)
        if H.schema_name(b) == "ExecutorAction":
            later.append(b)
    offered = [b for b in later if "read_file" in json.dumps(H.FakeLLM.schema(b))]
    check(not offered, "executor offered read_file after MUST NOT read_file (%d calls)" % len(offered))
    check(not any('"read_file"' in json.dumps(b["messages"][-2:]) and "RESULT ok" in last_user(b) for b in later),
          "read_file ran after MUST NOT read_file")


@case
def blocked_target_named_workspace_relative():
    """#6: round 1 reads data/missing.csv (no such file), executor says infeasible, R4a fails it as
    environmental.  The replan prompt must name the blocked target as the plan does (relative
    'data/missing.csv'), never only as an absolute path under the workspace."""
    p = plan(["the answer gives the number of rows of data/missing.csv"],
             [{"intent": "Read data/missing.csv and count rows", "tools": ["read_file", "shell"],
               "criteria": ["a number is reported"]}])
    s = Script("count rows of data/missing.csv", p,
               executor=seq([{"tool": "read_file", "args": {"path": "data/missing.csv"}},
                             {"tool": "infeasible", "output": "data/missing.csv does not exist"}]),
               validator=lambda b, k: {"verdicts": [{"verdict": "fail", "failure_class": "environmental",
                                                     "evidence": "no such file", "what_to_do": "find the file"}] * k},
               meta=meta_pass("?", "?"))
    r = run_agent(s, "count rows of data/missing.csv", files={"data/other.csv": "a\n"})
    pl = r.reqs("PlanOut")
    check(len(pl) >= 2, "no replan happened: " + r.brief())
    t = H.user_text(pl[1])
    check("data/missing.csv" in t, "replan prompt does not mention data/missing.csv")
    m = re.search(r"MUST NOT:\n((?:- .*\n?)+)", t)
    check(m, "replan prompt has no MUST NOT section naming the blocked target:\n" + t[-600:])
    check(os.path.realpath(r.ws) not in m.group(1) and r.ws not in m.group(1),
          "blocked target stored as an absolute path: %r" % m.group(1)[:300])
    check("data/missing.csv" in m.group(1), "MUST NOT does not name data/missing.csv: %r" % m.group(1)[:300])


@case
def empty_search_becomes_blocked_target():
    """#6: file_search 'report' returns no match (a successful empty result) and the criterion fails ->
    the replan prompt's MUST NOT list records that search target.  UNCERTAIN about the exact wording; I
    only require the query 'report' to appear in the MUST NOT section."""
    p = plan(["the answer gives the path of the report file"],
             [{"intent": "Find the report file with file_search report", "tools": ["file_search", "glob"],
               "criteria": ["the path of the report file is given"]}])
    s = Script("where is the report file?", p,
               executor=seq([{"tool": "file_search", "args": {"query": "report"}},
                             fin("no report file found")]),
               validator=lambda b, k: {"verdicts": [{"verdict": "fail", "failure_class": "environmental",
                                                     "evidence": "no files matching", "what_to_do": "search elsewhere"}] * k},
               meta=meta_pass("?", "?"))
    r = run_agent(s, "where is the report file?", files={"docs/summary.md": "x\n"})
    pl = r.reqs("PlanOut")
    check(len(pl) >= 2, "no replan happened: " + r.brief())
    t = H.user_text(pl[1])
    m = re.search(r"MUST NOT:\n((?:- .*\n?)+)", t)
    check(m and "report" in m.group(1), "empty search not recorded as a blocked target: %r"
          % (m.group(1)[:300] if m else t[-400:]))


# ---------------------------------------------------------------- #9 failure class from the last relevant call

@case
def failure_class_logical_after_recovered_env_error():
    """#9: attempt = `cat missing.txt` (env error) then `cat a.txt` (ok) then a wrong answer '7 lines';
    R4a fails it as logical.  The env error was recovered, so the failure is logical: P (share of logical
    failures, README glossary) must not be pushed to 0."""
    p = plan(["the answer gives the number of lines in a.txt"],
             [{"intent": "Count lines of a.txt with: cat a.txt", "criteria": ["the correct number of lines is reported"]}])
    s = Script("count the lines in a.txt", p,
               executor=seq([sh("cat missing.txt"), sh("cat a.txt"), fin("a.txt has 7 lines")]),
               validator=lambda b, k: {"verdicts": [{"verdict": "fail", "failure_class": "logical",
                                                     "evidence": "1 2 3 shows 3 lines, not 7",
                                                     "what_to_do": "count the lines again"}] * k},
               meta=meta_pass("7", "7"))
    r = run_agent(s, "count the lines in a.txt", files=LINES3)
    not_success(r, "wrong answer")
    P, replan = first_replan_P(r)
    check(P is not None, "no replan prompt with P: " + r.brief())
    check(P >= 0.5, "recovered env error forced the class to environmental: P=%s" % P)


# ---------------------------------------------------------------- #10 rolling window

BIG = {("big%d.txt" % i): ("".join("line %d of big file %d: lorem ipsum dolor sit amet\n" % (j, i)
                                   for j in range(1500)) + "END-MARKER-%d\n" % i) for i in range(1, 8)}


def _eight_steps():
    p = plan(["the answer gives the line counts"],
             [{"intent": "Inspect big1.txt .. big7.txt with cat and report their line counts",
               "criteria": ["the line counts are reported"]}])
    acts = [sh("cat big%d.txt" % i) for i in range(1, 8)] + [fin("each has 1501 lines")]
    s = Script("inspect the big files", p, executor=seq(acts), validator=passes(), meta=meta_pass("1501", "1501"))
    return run_agent(s, "inspect the big files", files=BIG)


@case
def executor_prompt_small_at_step8():
    """#10: 7 tool calls each returning ~75 KB, then step 8: the executor's 8th prompt stays ≤ 1,500 tokens
    (measured as ≤ 6,000 characters of message text; system prompt included)."""
    r = _eight_steps()
    ex = exe_prompts(r)
    check(len(ex) >= 8, "executor reached only %d steps: %s" % (len(ex), r.brief()))
    sizes = [H.prompt_chars(b) for b in ex[:8]]
    check(sizes[7] <= 6000, "step-8 executor prompt is %d chars (sizes %s)" % (sizes[7], sizes))


@case
def executor_prompt_does_not_grow_linearly():
    """#10: from step 3 to step 8 the executor prompt grows by less than one capped tool output (4,000 chars):
    earlier results are one-line summaries, not kept in full."""
    r = _eight_steps()
    ex = exe_prompts(r)
    check(len(ex) >= 8, "executor reached only %d steps" % len(ex))
    sizes = [H.prompt_chars(b) for b in ex[:8]]
    check(sizes[7] - sizes[2] < 4000, "prompt grew %d chars from step 3 to 8 (%s)" % (sizes[7] - sizes[2], sizes))


@case
def full_output_kept_in_task_log():
    """#10: 'the full output stays in the task log' — the end marker of a 75 KB output (far past every cap)
    is in <data dir>/tasks/*.jsonl."""
    r = _eight_steps()
    log = r.task_log_text()
    check(log, "no task log written under %s/tasks" % r.dd)
    check("END-MARKER-3" in log, "full tool output not in the task log")


# ---------------------------------------------------------------- #11 tool-call shapes

def _shape_case(reply, fname):
    p = plan(["%s exists" % fname], [{"intent": "Create %s with: touch %s" % (fname, fname),
                                       "criteria": ["%s is created" % fname]}])
    s = Script("create %s" % fname, p, executor=seq([reply, fin("created %s" % fname)]),
               validator=passes(), meta=meta_pass("created", "created"))
    r = run_agent(s, "create %s" % fname, extra_args=["--yes"])
    check(os.path.exists(os.path.join(r.ws, fname)),
          "shape %s did not run the command (%s)" % (str(reply)[:80], r.brief()))


@case
def shape_top_level_command():
    """#11: {"tool":"shell","command":"touch made1.txt"} (argument at top level) runs."""
    _shape_case({"tool": "shell", "command": "touch made1.txt"}, "made1.txt")


@case
def shape_name_and_arguments_json_string():
    """#11: {"name":"shell","arguments":"{\\"command\\":\\"touch made2.txt\\"}"} runs."""
    _shape_case(json.dumps({"name": "shell", "arguments": json.dumps({"command": "touch made2.txt"})}), "made2.txt")


@case
def shape_args_bare_command_string():
    """#11: a bare command string for shell: {"tool":"shell","args":"touch made3.txt"} runs.
    Assumption: 'bare command string' = args given as a plain string."""
    _shape_case({"tool": "shell", "args": "touch made3.txt"}, "made3.txt")


@case
def shape_name_with_args_object():
    """#11: `name` instead of `tool`: {"name":"shell","args":{"command":"touch made4.txt"}} runs."""
    _shape_case({"name": "shell", "args": {"command": "touch made4.txt"}}, "made4.txt")


@case
def shape_arguments_object():
    """#11 (common small-model shape, assumption): {"tool":"shell","arguments":{"command":"touch made5.txt"}}."""
    _shape_case({"tool": "shell", "arguments": {"command": "touch made5.txt"}}, "made5.txt")


@case
def shape_top_level_path_for_read_file():
    """#11: top-level args for another tool: {"tool":"read_file","path":"secret_word.txt"} -> the file's content
    reaches the next executor prompt."""
    p = plan(["the answer gives the word in w.txt"],
             [{"intent": "Read w.txt", "tools": ["read_file"], "criteria": ["the word is reported"]}])
    s = Script("what word is in w.txt?", p, executor=seq([{"tool": "read_file", "path": "w.txt"}, fin("quokka")]),
               validator=passes(), meta=meta_pass("quokka", "quokka"))
    r = run_agent(s, "what word is in w.txt?", files={"w.txt": "quokka\n"})
    ex = exe_prompts(r)
    check(len(ex) >= 2 and "quokka" in last_user(ex[1]), "read_file with top-level path did not read the file")


# ---------------------------------------------------------------- #11 repeated calls

@case
def repeated_call_steers_to_finish():
    """#11: the executor repeats the identical `ls d` call; the very next prompt steers it to finish
    (mentions 'finish'), and the attempt does not spend the 8-step budget (< 8 executor calls in attempt 1)."""
    p = plan(["the answer gives the number of entries in d"],
             [{"intent": "List d with: ls d", "criteria": ["the number of entries is reported"]}])
    s = Script("how many entries in d?", p, executor=seq([sh("ls d")]), validator=passes(),
               meta=meta_pass("4", "4"))
    r = run_agent(s, "how many entries in d?", files=DIR4)
    ex = exe_prompts(r)
    check(len(ex) >= 3, "too few executor calls to observe: %d" % len(ex))
    check("finish" in last_user(ex[2]).lower(), "no steer to finish after the repeat: %r" % last_user(ex[2])[:300])
    n1 = max([v for k, v in s.counters.items() if k[0] == 1 and k[2] == "Attempt 1"] or [0])
    check(n1 < 8, "attempt 1 burned %d executor calls" % n1)


@case
def repeated_call_with_answer_in_output_field():
    """#11: the executor sends the same glob call again and again with its answer in an `output` field beside
    the call ('d has 4 entries'). That answer must be used (it reaches the validator as the result) instead of
    the step budget being spent: I require 'd has 4 entries' in some R4a prompt and < 8 calls in attempt 1."""
    p = plan(["the answer gives the number of entries in d"],
             [{"intent": "Count entries of d with glob d/*", "tools": ["glob"],
               "criteria": ["the number of entries is reported"]}])
    a = {"tool": "glob", "args": {"pattern": "d/*"}, "output": "d has 4 entries"}
    s = Script("how many entries in d?", p, executor=seq([a]), validator=passes(), meta=meta_pass("4", "4"))
    r = run_agent(s, "how many entries in d?", files=DIR4)
    n1 = max([v for k, v in s.counters.items() if k[0] == 1 and k[2] == "Attempt 1"] or [0])
    check(n1 < 8, "attempt 1 burned %d executor calls" % n1)
    check(any("d has 4 entries" in H.user_text(b) for b in r.reqs("Judgement")),
          "the answer given in `output` never reached the validator (%s)" % r.brief())


# ---------------------------------------------------------------- #12 plan's method and tools

@case
def file_search_on_a_file_says_what_to_use():
    """#12: file_search with path=stock.log (a file) -> the tool error shown to the model says it is a file
    and names read_file or shell."""
    p = plan(["the answer gives the number of ERROR lines in stock.log"],
             [{"intent": "Count ERROR lines in stock.log", "tools": ["file_search", "read_file", "shell"],
               "criteria": ["a number is reported"]}])
    s = Script("how many ERROR lines are in stock.log?", p,
               executor=seq([{"tool": "file_search", "args": {"query": "ERROR", "path": "stock.log"}},
                             fin("2")]), validator=passes(), meta=meta_pass("2", "2"))
    r = run_agent(s, "how many ERROR lines are in stock.log?", files={"stock.log": "ERROR a\nok\nERROR b\n"})
    ex = exe_prompts(r)
    check(len(ex) >= 2, "no second executor call")
    res = last_user(ex[1])
    check("file" in res.lower() and ("read_file" in res or "shell" in res),
          "error does not say what to use instead: %r" % res[:300])


@case
def executor_offered_only_plan_tools():
    """#12: a subtask whose plan names only read_file -> the executor's action schema/tool list offers
    read_file (plus finish/infeasible) and not shell or write_file."""
    p = plan(["the answer gives the word in w.txt"],
             [{"intent": "Read w.txt", "tools": ["read_file"], "criteria": ["the word is reported"]}])
    s = Script("what word is in w.txt?", p,
               executor=seq([{"tool": "read_file", "args": {"path": "w.txt"}}, fin("quokka")]),
               validator=passes(), meta=meta_pass("quokka", "quokka"))
    r = run_agent(s, "what word is in w.txt?", files={"w.txt": "quokka\n"})
    ex = exe_prompts(r)
    check(ex, "executor never called")
    sch = json.dumps(H.FakeLLM.schema(ex[0]))
    tools_txt = H.user_text(ex[0])
    check('"read_file"' in sch, "read_file not offered")
    check('"shell"' not in sch and '"write_file"' not in sch and "- shell(" not in tools_txt,
          "executor offered tools the plan did not name")


@case
def intent_command_put_first():
    """#12: the intent names `grep ERROR stock.log | wc -l`; the executor's first prompt puts that exact
    command first (a 'Start with' action)."""
    cmd = "grep ERROR stock.log | wc -l"
    p = plan(["the answer gives the number of ERROR lines"],
             [{"intent": "Count ERROR lines with: %s" % cmd, "criteria": ["a number is reported"]}])
    s = Script("how many ERROR lines are in stock.log?", p, executor=seq([sh(cmd), fin("2")]),
               validator=passes(), meta=meta_pass("2", "2"))
    r = run_agent(s, "how many ERROR lines are in stock.log?", files={"stock.log": "ERROR a\nok\nERROR b\n"})
    ex = exe_prompts(r)
    check(ex, "executor never called")
    t = H.user_text(ex[0])
    m = re.search(r"Start with:(.*)", t)
    check(m and json.dumps(cmd) in m.group(1) or (m and cmd in m.group(1)),
          "first prompt does not put the intent's command first: %r" % (m.group(0) if m else t[-300:]))



# ---------------------------------------------------------------- grounding is truthful (#4, counter-checks)

def _listing_count(ev):
    goal = "how many entries are in folder d?"
    p = plan(["the answer gives the number of entries in d"],
             [{"intent": "List d with: ls d, then count the entries", "criteria": ["the number of entries is reported"]}])
    s = Script(goal, p, executor=seq([sh("ls d"), fin("d has 4 entries")]), validator=passes(ev),
               meta=meta_pass("d has 4 entries", "4"), vary=False)
    return run_agent(s, goal, files=DIR4)


@case
def grounding_message_is_true():
    """#4: `ls d` printed 'alpha.txt'; R4a passes quoting 'alpha.txt'. Whatever the verdict, the program must not
    tell the model/user "'alpha.txt' is not in any tool output" — that statement is false."""
    r = _listing_count("alpha.txt")
    texts = [H.user_text(b) for b in r.srv.requests] + [json.dumps(r.final)]
    bad = [t for t in texts if "'alpha.txt' is not in any tool output" in t]
    check(not bad, "false grounding message: 'alpha.txt' is not in any tool output (it is: `ls d` printed it)")


@case
def honest_count_from_listing_succeeds():
    """#4 (the held-out case done right): `ls d` lists the 4 entries, the executor answers 'd has 4 entries'
    (checkable against the listing), R4a quotes a line of the listing, R4b passes -> success.
    UNCERTAIN: the issue's grounding rule requires the evidence quote to be in the tool output (it is); it does
    not require the derived number itself to be printed by a tool."""
    r = _listing_count("alpha.txt")
    check(r.rc == 0, "honest count from a listing not accepted: " + r.brief())


# ---------------------------------------------------------------- #5 memory constraints enforced in code

def _constraint_run(entity):
    import tempfile
    dd = tempfile.mkdtemp(prefix="i13dd_")
    ws = tempfile.mkdtemp(prefix="i13ws_")
    ent = entity.replace("{ws}", ws)
    pr = memory_cmd(dd, "remember", "--avoid", "--space", "tool:read_file", "--entity", ent,
                    "never read data/rows.csv with read_file")
    check(pr.returncode == 0, "remember failed: %s" % pr.stderr[-300:])
    goal = "count rows of data/rows.csv"
    p = plan(["the answer gives the number of rows of data/rows.csv"],
             [{"intent": "Read data/rows.csv and count rows", "tools": ["read_file"], "criteria": ["a number is reported"]}])
    s = Script(goal, p, executor=seq([{"tool": "read_file", "args": {"path": "data/rows.csv"}}, fin("2 rows")]),
               validator=passes(), meta=meta_pass("2", "2"), vary=False)
    r = run_agent(s, goal, files={"data/rows.csv": "a\nb\n"}, data_dir=dd, keep_ws=ws)
    ran = [b for b in r.reqs("ExecutorAction") if "RESULT ok" in last_user(b) and "read_file" in json.dumps(b["messages"][-2:])]
    check(not ran, "read_file on data/rows.csv ran although memory rules it out (%s)" % r.brief())
    check(not r.success(), "success through a plan memory rules out: " + r.brief())


@case
def memory_constraint_relative_target_refused_in_code():
    """#5/#6: `remember --avoid --space tool:read_file --entity path:data/rows.csv` -> a (disobedient) plan that
    read_files data/rows.csv is refused in code; read_file never runs on it."""
    _constraint_run("path:data/rows.csv")


@case
def memory_constraint_absolute_target_refused_in_code():
    """#6: same with the target stored as an absolute path (how GGS stores file targets) while the plan names
    the relative one -> still refused."""
    _constraint_run("path:{ws}/data/rows.csv")


@case
def tool_space_avoid_rule_shown_to_executor():
    """#8: `remember --avoid --space tool:read_file "never read more than 200 chars at once"` -> the executor
    offered read_file sees the rule."""
    import tempfile
    dd = tempfile.mkdtemp(prefix="i13dd_")
    pr = memory_cmd(dd, "remember", "--avoid", "--space", "tool:read_file", "never read more than 200 chars at once")
    check(pr.returncode == 0, "remember failed: %s" % pr.stderr[-300:])
    p = plan(["the answer gives the word in w.txt"],
             [{"intent": "Read w.txt", "tools": ["read_file"], "criteria": ["the word is reported"]}])
    s = Script("what word is in w.txt?", p,
               executor=seq([{"tool": "read_file", "args": {"path": "w.txt"}}, fin("quokka")]),
               validator=passes(), meta=meta_pass("quokka", "quokka"))
    r = run_agent(s, "what word is in w.txt?", files={"w.txt": "quokka\n"}, data_dir=dd)
    ex = exe_prompts(r)
    check(ex and "never read more than 200 chars at once" in json.dumps(ex[0]["messages"]),
          "tool:read_file rule not shown to the executor")


# ---------------------------------------------------------------- #7 Caution asks

def _caution_setup():
    import tempfile
    dd = tempfile.mkdtemp(prefix="i13dd_")
    ws = tempfile.mkdtemp(prefix="i13ws_")
    goal = "count the lines in a.txt"
    p = plan(["the answer gives the number of lines in a.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt", "criteria": ["a number is reported"]}])
    good = Script(goal, p, executor=seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")]), validator=passes(),
                  meta=meta_pass("a.txt has 3 lines", "3 a.txt"), vary=False)
    bad = Script(goal, p, executor=seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")]), vary=False,
                 validator=lambda b, k: {"verdicts": [{"verdict": "fail", "failure_class": "logical",
                                                       "evidence": "wrong", "what_to_do": "redo"}] * k},
                 meta=meta_pass("x", "x"))
    r1 = run_agent(good, goal, files=LINES3, data_dir=dd, keep_ws=ws)
    r2 = run_agent(bad, goal, data_dir=dd, keep_ws=ws)
    check(r1.rc == 0 and r2.rc == 1, "setup runs did not give one accept and one abandon: %s / %s"
          % (r1.brief(), r2.brief()))
    third = Script(goal, p, executor=seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")]), validator=passes(),
                   meta=meta_pass("a.txt has 3 lines", "3 a.txt"), vary=False)
    return run_agent(third, goal, data_dir=dd, keep_ws=ws)


@case
def caution_asks_before_running_unattended():
    """#7: after one accept and one abandon of the same intent (a mixed record), the next run must ask before
    running the plan; non-interactive (no TTY) means not confirmed -> no tool runs, no success.
    Assumption: the 'mixed record' threshold is met by 1 accept + 1 abandon (README: 'A mixed record for the
    intent (Caution) makes the planner ask you')."""
    r = _caution_setup()
    check(not any("RESULT" in last_user(b) for b in exe_prompts(r)), "a tool ran without the caution being confirmed")
    not_success(r, "caution not confirmed")


@case
def caution_decline_summary_is_true():
    """#7 + truthfulness: when the run ends because the caution was not confirmed, its summary must not blame a
    role that never ran (R4b was never called, so no 'R4b recommended abandoning')."""
    r = _caution_setup()
    check(not r.reqs("MergeOut"), "harness: R4b was called")
    summ = r.final.get("summary") or ""
    check("R4b" not in summ and "meta" not in summ.lower(), "summary blames R4b which never ran: %r" % summ[:200])


# ---------------------------------------------------------------- more: rolling window content, fabrication, shapes

@case
def rolling_window_last_result_full_earlier_summarised():
    """#10: at step 8 the prompt holds the last result (big7.txt, capped) and earlier calls as one-line
    summaries: 'cat big1.txt' is named, but big1.txt's body (e.g. its line 100) is not repeated."""
    r = _eight_steps()
    ex = exe_prompts(r)
    check(len(ex) >= 8, "executor reached only %d steps" % len(ex))
    t = json.dumps(ex[7]["messages"])
    check("big file 7" in t, "last result missing from the step-8 prompt")
    check("big1.txt" in t, "earlier step not summarised at all in the step-8 prompt")
    check("line 100 of big file 1" not in t, "earlier output kept in full at step 8")


@case
def echo_fabricated_count_contradicted_by_workspace():
    """#4 + README 'validators judge the workspace': the executor runs `echo "a.txt has 7 lines"` (a tool output
    it wrote itself), answers 7; R4a quotes that echo. The code-checked workspace fact says a.txt has 3 lines
    -> not success.  UNCERTAIN: the README lists specific code checks (copy/create/header counts); a plain
    line-count contradiction is the general promise 'a pass the files contradict becomes a failure'."""
    goal = "How many lines does a.txt have?"
    p = plan(["the answer gives the number of lines in a.txt"],
             [{"intent": "Count lines of a.txt", "criteria": ["the number of lines in a.txt is reported"]}])
    s = Script(goal, p, executor=seq([sh('echo "a.txt has 7 lines"'), fin("a.txt has 7 lines")]),
               validator=passes("a.txt has 7 lines"), meta=meta_pass("a.txt has 7 lines", "a.txt has 7 lines"))
    r = run_agent(s, goal, files=LINES3)
    not_success(r, "answer 7 contradicts the workspace (3 lines)")


@case
def answer_number_differs_from_quoted_evidence():
    """#4: `wc -l a.txt` printed '3 a.txt'; the executor answers 'a.txt has 5 lines'; R4a passes quoting the real
    '3 a.txt'; R4b merges '5' -> the answer's value is not the one the tools showed: not success.
    UNCERTAIN: the issue requires grounded evidence, it does not spell out comparing the answer's value with it."""
    goal = "How many lines does a.txt have?"
    p = plan(["the answer gives the number of lines in a.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt", "criteria": ["the number of lines is reported"]}])
    s = Script(goal, p, executor=seq([sh("wc -l a.txt"), fin("a.txt has 5 lines")]), validator=passes(),
               meta=meta_pass("a.txt has 5 lines", "3 a.txt"))
    r = run_agent(s, goal, files=LINES3)
    not_success(r, "answer 5, tool showed 3")


@case
def shape_fenced_json_with_prose():
    """#11 / README 'replies are cleaned of <think> blocks, fences and prose': 'Sure!\n```json\n{...}\n```' runs."""
    _shape_case("<think>make it</think>Sure! Here it is:\n```json\n" +
                json.dumps({"tool": "shell", "args": {"command": "touch made6.txt"}}) + "\n```", "made6.txt")


@case
def fan_in_timeout_one_subtask_missing():
    """#1/#2: two parallel subtasks; A (3 criteria) finishes and passes; B hangs after its first tool call, past
    pipeline.fan_in_timeout_s = 4; R4b rubber-stamps an answer that includes B's count -> B never reported,
    so no success.  UNCERTAIN: the issue's fix allows success after a fan-in timeout 'if the task criteria alone
    are within δ' (R4b passed them here); I assert the user-facing promise (no success for work that never ran)."""
    import threading
    done_a = threading.Event()
    p = plan(["the answer gives the line count of a.txt and of b.txt"],
             [{"intent": "Count lines of a.txt with: wc -l a.txt", "sequence": 1,
               "criteria": ["a number is reported", "a.txt was read", "wc ran"]},
              {"intent": "Count lines of b.txt with: wc -l b.txt", "criteria": ["a number is reported"], "sequence": 1}])

    def ex(body, ctx):
        if "b.txt" in ctx["subtask"]:
            if ctx["n"] == 0:
                return sh("wc -l b.txt")
            done_a.wait(20)
            time.sleep(12)
            return fin("b.txt has 2 lines")
        return seq([sh("wc -l a.txt"), fin("a.txt has 3 lines")])(body, ctx)

    def val(body, k):
        if "a.txt" in H.subtask_of(body):
            threading.Timer(0.5, done_a.set).start()  # B may hang once A's verdict has been delivered
        return passes()(body, k)
    s = Script("count the lines of a.txt and b.txt", p, executor=ex, validator=val,
               meta=meta_pass("a.txt has 3 lines and b.txt has 2 lines", "3 a.txt"), vary=False)
    r = run_agent(s, "count the lines of a.txt and b.txt", files=dict(LINES3, **{"b.txt": "x\ny\n"}),
                  config="[pipeline]\nfan_in_timeout_s = 4\n", timeout=50)
    check(r.rc != 2, "config rejected / endpoint failure: %s %s" % (r.brief(), r.err[-300:]))
    check(done_a.is_set(), "harness: subtask A was never validated (%s)" % r.brief())
    b_finished = False  # B's finish is only ever sent after the fan-in deadline
    if r.success():
        check(b_finished, "success although subtask B never reported: " + r.brief())


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
