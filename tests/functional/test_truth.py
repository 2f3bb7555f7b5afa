"""Issues #13, #35: the loop tells the truth. Whole tasks over the fake LLM with real tools: a failed
task criterion, an unverified result, a fan-in timeout, skipped steps, a failed step that carries
the answer and a denied confirmation must never end in `success`/`accept`. Code never grants a
pass a validator failed; an answer must be printed by a task criterion's check, which code runs
for real through the gate."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentui.roles import loss as L
from tests.fakellm import Reply
from tests.functional.pipeline import call, finish, merge, perceive, plan, run_task, sub

ONE_REPLAN = {"ggs": {"max_replans": 1, "time_budget_ms": 10**9}}


def grounded(*vs: str, quote: str = "alpha") -> Reply:
    """R4a verdicts whose passes quote `quote` (which the tools printed)."""
    out: list[dict[str, Any]] = []
    for v in vs:
        if v == "pass":
            out.append({"verdict": "pass", "evidence": quote})
        else:
            out.append({"verdict": "fail", "failure_class": v.split(":")[1], "evidence": "not met",
                        "what_to_do": "do it properly"})
    return Reply.json({"verdicts": out})


def checks_run(tmp_path) -> list[dict]:
    """The criteria's checks code ran, as the task log recorded them."""
    return [d for f in sorted((tmp_path / "data" / "tasks").glob("*.jsonl"))
            for d in map(json.loads, f.read_text().splitlines()) if d.get("kind") == "check_result"]


def task_reasons(r) -> str:  # noqa: ANN001
    """Every task-criterion verdict's evidence the ReplanRequests carried."""
    return " ".join(v.evidence for q in r.of("ReplanRequest") for v in q.task_criteria_verdicts)


def _echo_executor(fake, word: str = "alpha") -> None:
    """Every attempt: one real shell call printing `word`, then finish with it."""
    fake.responder("executor", lambda r: call("shell", command=f"echo {word}")
                   if len(r["messages"]) == 2 else finish(word))


async def test_failed_task_criterion_is_not_diluted_into_success(fakellm, tmp_path):
    # 3 passing subtask criteria + 1 failing task criterion was D = 0.25 ≤ δ → success, exit 0
    fakellm.script("perceiver", [perceive("name the largest file")])
    fakellm.responder("planner", lambda _r: plan(["the largest file is named"],
                                                 sub("find the largest file", "a", "b", "c", tools=["shell"])))
    _echo_executor(fakellm)
    fakellm.responder("agent_validator", lambda _r: grounded("pass", "pass", "pass"))
    fakellm.responder("meta_validator", lambda _r: merge("alpha", "fail:logical"))
    r = await run_task(fakellm, tmp_path, "largest file?", **ONE_REPLAN)
    req = r.of("ReplanRequest")[0]
    assert [v.verdict.value for v in req.task_criteria_verdicts] == ["fail"]
    first = r.of("PlanDirective")[0]
    # the failed task criterion weighs in D, and the round is a replan, never "close enough"
    assert first.loss.D == round(L.distance(req.outcomes, req.task_criteria_verdicts, failure=True), 6) > 0
    assert first.directive.value not in ("success", "accept") and first.steps_passed
    assert r.final.directive.value == "abandon"


async def test_unverified_result_is_not_success(fakellm, tmp_path):
    # R4b could not verify (its LLM answered garbage): the task criteria count as failed, so no success
    fakellm.script("perceiver", [perceive("name the largest file")])
    fakellm.responder("planner", lambda _r: plan(["the largest file is named"],
                                                 sub("find the largest file", "a", "b", "c", tools=["shell"])))
    _echo_executor(fakellm)
    fakellm.responder("agent_validator", lambda _r: grounded("pass", "pass", "pass"))
    fakellm.responder("meta_validator", lambda _r: Reply.fault("garbage"))
    r = await run_task(fakellm, tmp_path, "largest file?", **ONE_REPLAN)
    reqs = r.of("ReplanRequest")
    assert reqs and all(q.reason == "verification_output" for q in reqs)
    assert r.final.directive.value == "abandon"


async def test_fan_in_timeout_is_not_success(fakellm, tmp_path):
    # one subtask matches with 3 criteria, its sibling never reports: that is not "close enough"
    fakellm.script("perceiver", [perceive("two things at once")])
    fakellm.responder("planner", lambda _r: plan(["both reported"],
                                                 sub("quick part", "a", "b", "c", tools=["shell"]),
                                                 sub("slow part", "d", tools=["shell"])))

    def executor(r):
        if "Subtask: slow part" in r["messages"][1]["content"]:
            return Reply.fault("hang")
        return call("shell", command="echo alpha") if len(r["messages"]) == 2 else finish("alpha")

    fakellm.responder("executor", executor)
    fakellm.responder("agent_validator", lambda _r: grounded("pass", "pass", "pass"))
    # the default one call in flight: the fan-in timeout cancels the hung straggler's call
    r = await run_task(fakellm, tmp_path, "both", pipeline={"fan_in_timeout_s": 0.5}, **ONE_REPLAN)
    reqs = r.of("ReplanRequest")
    assert reqs and reqs[0].reason == "fan_in_timeout"
    missing = [o for o in reqs[0].outcomes if o.intent == "slow part"]
    assert missing and [v.verdict.value for v in missing[0].criteria_verdicts] == ["fail"]
    assert reqs[0].task_criteria_verdicts and reqs[0].task_criteria_verdicts[0].verdict.value == "fail"
    assert r.final.directive.value == "abandon"


async def test_fan_in_timeout_frees_the_endpoint_at_default_parallelism(fakellm, tmp_path):
    """With the default one LLM call in flight per endpoint, a straggler's hung stream used to hold
    the endpoint until its idle timeout; at the fan-in timeout its stream is now closed (the server
    sees the hang-up) and the next round's calls run at once (#12, #13)."""
    fakellm.script("perceiver", [perceive("two things at once")])
    fakellm.responder("planner", lambda _r: plan(["both reported"],
                                                 sub("quick part", "a", tools=["shell"]),
                                                 sub("slow part", "d", tools=["shell"])))
    stalled: list[int] = []

    def executor(r):
        if "Subtask: slow part" in r["messages"][1]["content"] and not stalled:
            stalled.append(1)
            return Reply.stream('{"tool": "sh', tail="idle")  # tokens, then silence, connection open
        return call("shell", command="echo alpha") if len(r["messages"]) == 2 else finish("alpha")

    fakellm.responder("executor", executor)
    fakellm.responder("agent_validator", lambda _r: grounded("pass"))
    fakellm.responder("meta_validator", lambda _r: merge("alpha", "pass"))
    # idle timeout far beyond the task's deadline: only cancelling the straggler frees the endpoint
    r = await run_task(fakellm, tmp_path, "both", timeout=25, pipeline={"fan_in_timeout_s": 1.0},
                       llm={"idle_timeout_s": 3600.0}, **ONE_REPLAN)
    assert r.runtime.config.llm.max_parallel == 1
    reqs = r.of("ReplanRequest")
    assert reqs and reqs[0].reason == "fan_in_timeout" and any(
        o.intent == "slow part" for o in reqs[0].outcomes if o.failure_reason and "fan-in" in o.failure_reason)
    [straggler] = [s for s in fakellm.streams if s["tail"] == "idle"]
    assert straggler["disconnected"] and straggler["t_end"] is not None  # the server saw the hang-up
    # the next round got the endpoint (not after 3600 s): R2 replanned and R3 called the model again
    replan = fakellm.calls("planner")[1:]
    assert replan and any(c["_t"] > replan[0]["_t"] for c in fakellm.calls("executor"))
    assert r.end.final is not None  # the task ended on its own, before its deadline


async def test_skipped_steps_count_as_failed(fakellm, tmp_path):
    # step 1 fails 1 of 4 criteria; steps 2 and 3 never run: was D = 0.25 → success
    fakellm.script("perceiver", [perceive("three steps")])
    fakellm.responder("planner", lambda _r: plan(
        ["all three done"], sub("step one", "a", "b", "c", "d", seq=1, tools=["shell"]),
        sub("step two", "e", seq=2), sub("step three", "f", seq=3)))
    _echo_executor(fakellm)
    fakellm.responder("agent_validator", lambda _r: grounded("pass", "pass", "pass", "fail:logical"))
    r = await run_task(fakellm, tmp_path, "three steps", **ONE_REPLAN)
    req = r.of("ReplanRequest")[0]
    skipped = [o for o in req.outcomes if o.intent in ("step two", "step three")]
    assert len(skipped) == 2 and all(o.criteria_verdicts[0].verdict.value == "fail" for o in skipped)
    # the result was never checked: the task criterion counts as failed and not run (#35)
    assert [(v.verdict.value, v.evidence) for v in req.task_criteria_verdicts] == \
        [("fail", "not run: a step failed, so the result was never checked")]
    d = r.of("PlanDirective")[0]
    # 3 of the steps' 6 criteria failed or never ran, and the unchecked task criterion weighs on top
    assert d.loss.D == round(L.distance(req.outcomes, req.task_criteria_verdicts, failure=True), 6) > 0.5
    assert d.loss.P == 1.0  # the skipped ones say nothing about P: the one real failure was logical
    assert r.final.directive.value == "abandon"
    assert len([c for c in fakellm.calls("executor") if "Subtask: step two" in c["messages"][1]["content"]]) == 0


async def test_a_failed_step_that_carries_the_answer_is_never_close_enough(fakellm, tmp_path):
    # issue #35 on the 1.5B model: 4 steps, 3 passed, the last one (the one that carries the answer)
    # failed; R4b is not asked after a failed step, D was pooled from the steps alone (1/4 ≤ δ) and
    # GGS ended `success`, exit 0, with a dict of step outputs as the "answer"
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one two\nthree\n")
    ask = "Write the total number of lines plus words in the .txt files into total.txt."
    fakellm.script("perceiver", [perceive(ask)])
    fakellm.responder("planner", lambda _r: plan(
        ["total.txt holds the number of lines plus words in the .txt files"],
        sub("count the lines with: cat *.txt | wc -l", "the line count is printed", seq=1, tools=["shell"]),
        sub("count the words with: cat *.txt | wc -w", "the word count is printed", seq=2, tools=["shell"]),
        sub("list the .txt files with: ls *.txt", "the files are listed", seq=3, tools=["shell"]),
        sub("write the sum of the two counts into total.txt", "total.txt holds the sum", seq=4,
            tools=["shell", "write_file"]),
        checks=["cat total.txt"]))

    def executor(r):
        last = "write the sum" in r["messages"][1]["content"]
        if len(r["messages"]) > 2:
            return finish("2 + 3" if last else "one two three")
        return call("shell", command="echo 2 + 3" if last else "cat a.txt")
    fakellm.responder("executor", executor)
    fakellm.responder("agent_validator", lambda r: grounded(
        "fail:logical" if "write the sum" in r["messages"][1]["content"] else "pass", quote="one two"))
    fakellm.responder("meta_validator", lambda _r: merge("5", "pass"))
    r = await run_task(fakellm, tmp_path, ask, **ONE_REPLAN)
    req = r.of("ReplanRequest")[0]
    assert [o.status.value for o in req.outcomes] == ["matched", "matched", "matched", "failed"]
    # D from the steps alone is 1/4 ≤ δ: the unchecked task criterion keeps it from "close enough"
    assert [v.evidence for v in req.task_criteria_verdicts] == \
        ["not run: a step failed, so the result was never checked"]
    assert all(d.directive.value != "success" for d in r.of("PlanDirective"))
    assert r.final.directive.value == "abandon" and r.final.answer is None
    assert not fakellm.calls("meta_validator")  # never asked: no answer was ever checked


def _denied_rm(fakellm, tmp_path):
    """A plan to `rm junk.txt`; the executor claims success whatever happened; nobody approves."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "junk.txt").write_text("still here")
    fakellm.script("perceiver", [perceive("delete junk.txt")])
    fakellm.responder("planner", lambda _r: plan(["junk.txt no longer exists"],
                                                 sub("delete junk.txt with rm", "junk.txt is deleted",
                                                     tools=["shell"])))
    fakellm.responder("executor", lambda r: call("shell", command="rm junk.txt")
                      if len(r["messages"]) == 2 else finish("junk.txt deleted"))
    fakellm.responder("agent_validator", lambda _r: grounded("pass", quote="junk.txt deleted"))
    fakellm.responder("meta_validator", lambda _r: merge("junk.txt deleted", "pass"))
    return ws


async def test_denied_deletion_cannot_be_accepted(fakellm, tmp_path):
    # the executor claims success after the user said no; a lenient validator would pass it
    ws = _denied_rm(fakellm, tmp_path)
    r = await run_task(fakellm, tmp_path, "delete junk.txt", **ONE_REPLAN)
    assert (ws / "junk.txt").read_text() == "still here"
    outcome = r.of("SubTaskOutcome")[0]
    assert outcome.status.value == "failed"
    v = outcome.criteria_verdicts[0]
    assert v.failure_class.value == "environmental" and "denied" in v.evidence
    assert r.of("ReplanRequest")[0].reason == "gate"  # the denied round went back to GGS, not to accept
    assert r.final.directive.value == "abandon"  # round 2: the refusal after the denial is that denial
    assert len(fakellm.calls("agent_validator")) < len(r.of("ExecutionResult"))  # a denial needs no LLM


async def test_a_denial_holds_through_the_corrections_and_is_said_on_abandon(fakellm, tmp_path):
    """An outside tester (#13): after the denied `rm`, the corrected attempt's `rm` was refused
    unrecorded ("denied earlier in this task"), its bare claim failed as "not grounded", so the
    denial read as a logical failure (P = 1, break_symmetry) and the user was told to restate
    the goal. The refusal is recorded as the denial it is: environmental, and said to the user."""
    ws = _denied_rm(fakellm, tmp_path)
    r = await run_task(fakellm, tmp_path, "delete junk.txt", pipeline={"correction_budget": 2}, **ONE_REPLAN)
    assert (ws / "junk.txt").read_text() == "still here"
    results = r.of("ExecutionResult")
    assert len(results) >= 2
    assert results[1].tool_calls and results[1].tool_calls[0].error.startswith("denied by user earlier in this task")
    for o in r.of("SubTaskOutcome"):
        assert [v.failure_class.value for v in o.criteria_verdicts] == ["environmental"]
    d = r.of("PlanDirective")[0]
    assert d.loss.P == 0.0 and d.directive.value == "change_path"
    assert r.final.directive.value == "abandon"
    assert r.final.next_moves[0].startswith("You denied shell 'rm junk.txt': run the task again and approve it")
    assert not fakellm.calls("agent_validator")  # every verdict came from the denial, none from the model


async def test_rubber_stamped_pass_without_a_value_is_rejected(fakellm, tmp_path):
    # the held-out failure: glob listed the entries, the executor "finished" with no answer, R4a
    # passed "a single integer value" quoting that sentence, R4b passed, GGS accepted, exit 0
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in ("a.csv", "b.csv", "c.csv", "d.csv"):
        (ws / n).write_text("x")
    fakellm.script("perceiver", [perceive("how many csv files are there")])
    fakellm.responder("planner", lambda _r: plan(["the answer is a single integer"],
                                                 sub("count the csv files", "a single integer value is reported",
                                                     tools=["glob"])))
    fakellm.responder("executor", lambda r: call("glob", pattern="*.csv")
                      if len(r["messages"]) == 2 else finish("The result was already provided."))
    fakellm.responder("agent_validator", lambda _r: grounded("pass", quote="The result was already provided."))
    fakellm.responder("meta_validator", lambda _r: merge("The result was already provided.", "pass"))
    r = await run_task(fakellm, tmp_path, "how many csv files are there?", **ONE_REPLAN)
    v = r.of("SubTaskOutcome")[0].criteria_verdicts[0]
    assert v.verdict.value == "fail" and v.failure_class.value == "logical"
    assert "what to do" in v.evidence and "number" in v.evidence
    assert r.final.directive.value == "abandon"


async def test_pass_quoting_nothing_the_tools_returned_is_rejected(fakellm, tmp_path):
    # a number IS reported, but no tool ever printed it: the validator's quote is the executor's own text
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("a\nb\nc\n")
    fakellm.script("perceiver", [perceive("count the lines of notes.txt")])
    fakellm.responder("planner", lambda _r: plan(["the line count is given"],
                                                 sub("count lines in notes.txt", "the line count is reported",
                                                     tools=["read_file"])))
    fakellm.responder("executor", lambda r: call("read_file", path="notes.txt")
                      if len(r["messages"]) == 2 else finish("notes.txt has 7 lines"))
    fakellm.responder("agent_validator", lambda _r: grounded("pass", quote="notes.txt has 7 lines"))
    fakellm.responder("meta_validator", lambda _r: merge("7", "pass"))
    r = await run_task(fakellm, tmp_path, "lines in notes.txt?", **ONE_REPLAN)
    v = r.of("SubTaskOutcome")[0].criteria_verdicts[0]
    assert v.verdict.value == "fail" and "not grounded" in v.evidence
    assert r.final.directive.value == "abandon"


async def test_grounded_pass_is_kept(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("a\nb\nc\n")
    fakellm.script("perceiver", [perceive("count the lines of notes.txt")])
    fakellm.script("planner", [plan(["the line count is given"],
                                    sub("count lines in notes.txt", "the line count is reported", tools=["shell"]))])
    fakellm.script("executor", [call("shell", command="wc -l < notes.txt"), finish("notes.txt has 3 lines")])
    fakellm.script("agent_validator", [grounded("pass", quote="wc -l says: 3")])  # paraphrased, value printed
    fakellm.script("meta_validator", [merge("3", "pass")])
    r = await run_task(fakellm, tmp_path, "lines in notes.txt?", **ONE_REPLAN)
    assert r.final.directive.value == "accept" and r.final.output == "3"


async def test_a_denied_call_is_never_asked_again_in_the_same_task(fakellm, tmp_path):
    # after a "no", GGS's later directives may unblock the target (change_approach blocks no
    # targets); the executor must still not put the same question to the user twice
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "junk.txt").write_text("x")
    fakellm.script("perceiver", [perceive("delete junk.txt")])
    fakellm.responder("planner", lambda _r: plan(["junk.txt gone"], sub("rm junk.txt", "gone", tools=["shell"])))
    fakellm.responder("executor", lambda r: call("shell", command="rm junk.txt") if len(r["messages"]) == 2
                      else finish("done"))
    fakellm.responder("agent_validator", lambda _r: grounded("pass", quote="rm junk.txt"))
    fakellm.responder("meta_validator", lambda _r: merge("removed", "pass"))
    r = await run_task(fakellm, tmp_path, "delete junk", ggs={"time_budget_ms": 10**9})
    assert len(r.of("ConfirmationRequest")) == 1
    assert (ws / "junk.txt").read_text() == "x"
    assert r.final.directive.value == "abandon"


# -- code never grants a count R4b failed; a check catches a wrong one; a question never changes
# -- its own file (#13, #35) ------------------------------------------------------------------------
POEM = "the quick brown fox\njumps over the lazy dog\n"
WORDS = "wc -w < poem.txt"  # the plan's check: another method than the step's `wc poem.txt`


def _poem_question(fake, tmp_path, intent: str) -> None:
    """ws/poem.txt, and "How many words are in poem.txt?" planned as one step: `intent`, its task
    criterion checked by WORDS."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "poem.txt").write_text(POEM)
    fake.script("perceiver", [perceive("How many words are in poem.txt?")])
    fake.responder("planner", lambda _r: plan(["the answer gives the number of words in poem.txt"],
                                              sub(intent, "a number is reported", tools=["shell", "write_file"]),
                                              checks=[WORDS]))


def _cycling(steps: list[Reply]):
    """An executor that replies with `steps` in turn, from the first again after the last."""
    n = {"i": 0}

    def executor(_r):
        n["i"] += 1
        return steps[(n["i"] - 1) % len(steps)]
    return executor


def _word_count_task(fake, tmp_path, answer: str, *, r4b: str, write: bool = False, cmd: str = "wc poem.txt",
                     named: str | None = None) -> None:
    """The executor runs `cmd` and answers `answer`; R4b names `named` (default: `answer`) and says `r4b`."""
    _poem_question(fake, tmp_path, "Count the words in poem.txt with: wc poem.txt")
    steps = ([call("write_file", path="poem.txt", content=POEM, append=True)] if write else []) + \
        [call("shell", command=cmd), finish(answer)]
    fake.responder("executor", _cycling(steps))
    fake.responder("agent_validator", lambda _r: Reply.json({"verdicts": [{"verdict": "pass", "evidence": answer}]}))
    fake.responder("meta_validator", lambda _r: merge(answer, r4b, answer=named))


async def test_a_right_count_the_meta_validator_failed_is_not_accepted(fakellm, tmp_path):
    # the 1.5B R4b failed "poem.txt has 2 lines, 9 words, 44 characters" for "How many words…?";
    # code used to count the words itself and grant the pass over R4b's fail. Code never grants
    # (#35): the fail stands, even with the plan's own check printing 9 — R4b is the judge
    _word_count_task(fakellm, tmp_path, "poem.txt has 2 lines, 9 words, 44 characters", r4b="fail:logical",
                     named="9")
    r = await run_task(fakellm, tmp_path, "How many words are in poem.txt?", **ONE_REPLAN)
    assert {(c["command"], c["output"].strip()) for c in checks_run(tmp_path)} == {(WORDS, "9")}
    assert r.final.directive.value == "abandon" and r.final.answer is None
    assert not r.of("OutcomeSummary")
    verdicts = [v for q in r.of("ReplanRequest") for v in q.task_criteria_verdicts
                if v.criterion == "the answer gives the number of words in poem.txt"]
    assert verdicts and all(v.verdict.value == "fail" and "checked by code" not in v.evidence for v in verdicts)
    assert len(fakellm.calls("planner")) == 2  # R4b's fail went back to the planner


@pytest.mark.parametrize("answer", ["poem.txt has 18 words", "about 9 words", "2 lines, 9 or 10 words",
                                    "poem.txt: 2 lines, 9 chars"])
async def test_a_wrong_or_hedged_count_gets_no_grant(fakellm, tmp_path, answer):
    _word_count_task(fakellm, tmp_path, answer, r4b="fail:logical")
    r = await run_task(fakellm, tmp_path, "How many words are in poem.txt?", **ONE_REPLAN)
    assert r.final.directive.value == "abandon"


async def test_a_question_never_writes_the_file_it_asks_about(fakellm, tmp_path):
    # the 1.5B executor appended poem.txt to itself, then counted 18 words (R4b passed it); and wrote
    # its answer over config.json. A question's files are read only: the write is refused unrun
    _word_count_task(fakellm, tmp_path, "poem.txt has 2 lines, 9 words, 44 characters", r4b="pass", write=True,
                     named="9")
    r = await run_task(fakellm, tmp_path, "How many words are in poem.txt?", **ONE_REPLAN)
    assert (tmp_path / "ws" / "poem.txt").read_text() == POEM
    assert r.final.directive.value == "accept"
    assert r.final.answer == "9"  # the answer R4b named, which the plan's check printed
    [confirmed] = [v for v in r.of("OutcomeSummary")[0].task_criteria_verdicts
                   if v.criterion == "a check confirms the answer"]
    assert confirmed.verdict.value == "pass" and f"check `{WORDS}` → exit 0: 9" in confirmed.evidence
    prompts = " ".join(m["content"] for req in fakellm.calls("executor") for m in req["messages"])
    assert "REFUSED: the request only reads poem.txt; do not change it. It asks a question." in prompts


async def test_a_question_about_a_folder_refuses_a_new_file_and_asks_for_the_answer(fakellm, tmp_path):
    # find-todo on the 1.5B model: after file_search printed b.txt it wrote TODO.txt, was told "the
    # request only reads TODO.txt" (a file it invented) and wrote it again, attempt after attempt.
    # The folder is named as a path: code reads the paths a question names, not its wording (#35)
    notes = tmp_path / "ws" / "notes"
    notes.mkdir(parents=True)
    (notes / "a.txt").write_text("nothing here\n")
    (notes / "b.txt").write_text("TODO: fix the parser\n")
    ask = "Which file in ./notes contains the word TODO?"
    fakellm.script("perceiver", [perceive(ask)])
    fakellm.responder("planner", lambda _r: plan(["a file name is reported"], sub(
        "Find the file holding TODO with: grep -l TODO notes/*", "a file name is reported",
        tools=["shell", "write_file"]), checks=["grep -rl TODO notes"]))
    steps = [call("shell", command="grep -l TODO notes/*"),
             call("write_file", path="notes/TODO.txt", content="fix the parser"), finish("notes/b.txt")]
    fakellm.responder("executor", _cycling(steps))
    fakellm.responder("agent_validator", lambda _r: grounded("pass", quote="notes/b.txt"))
    fakellm.responder("meta_validator", lambda _r: merge("notes/b.txt", "pass"))
    r = await run_task(fakellm, tmp_path, ask, **ONE_REPLAN)
    assert not (notes / "TODO.txt").exists()
    assert r.final.directive.value == "accept" and r.final.answer == "notes/b.txt"
    last = fakellm.calls("executor")[-1]["messages"][-1]["content"]
    assert last.startswith("REFUSED: the request asks a question and changes no file; do not write notes/TODO.txt.")
    assert '{"tool": "finish"' in last and "only reads" not in last


TODO_CHECK = "grep -l TODO *.txt"  # the plan's check: prints b.txt


def _todo_task(fake, tmp_path, answer: str, r4b: str) -> str:
    """find-todo: ws/{a,b,c}.txt, b.txt holds TODO; the executor greps and finishes with `answer`."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, text in (("a.txt", "all done\n"), ("b.txt", "TODO: fix the parser\n"), ("c.txt", "nothing\n")):
        (ws / name).write_text(text)
    ask = "Which file in this folder contains the word TODO? Answer with the file name."
    fake.script("perceiver", [perceive(ask)])
    fake.responder("planner", lambda _r: plan(["the file name containing the word TODO is returned"], sub(
        "Find the file holding TODO with: grep -rl TODO .", "a file name is reported", tools=["shell"]),
        checks=[TODO_CHECK]))
    fake.responder("executor", _cycling([call("shell", command="grep -rl TODO ."), finish(answer)]))
    fake.responder("agent_validator", lambda _r: grounded("pass", quote="b.txt"))
    fake.responder("meta_validator", lambda _r: merge(answer, r4b))
    return ask


async def test_the_file_that_holds_the_word_is_not_granted_over_the_meta_validators_fail(fakellm, tmp_path):
    # find-todo in process on the 1.5B model: grep printed ./b.txt, the executor answered ./b.txt,
    # and R4b failed it three rounds running ("'./b.txt', which does not contain the word TODO");
    # code used to grep the folder itself and grant the pass. Code never grants (#35): even with the
    # plan's check printing b.txt, R4b's fail stands and the task is not accepted
    ask = _todo_task(fakellm, tmp_path, "./b.txt", "fail:logical")
    r = await run_task(fakellm, tmp_path, ask, **ONE_REPLAN)
    assert r.final.directive.value == "abandon" and r.final.answer is None
    assert not r.of("OutcomeSummary")
    reqs = r.of("ReplanRequest")
    assert reqs and all(q.reason == "task_criteria" for q in reqs)
    for q in reqs:
        by = {v.criterion: v for v in q.task_criteria_verdicts}
        assert by["a check confirms the answer"].verdict.value == "pass"  # the check printed b.txt…
        mine = by["the file name containing the word TODO is returned"]
        assert mine.verdict.value == "fail" and "checked by code" not in mine.evidence  # …R4b's fail stands
    assert len(fakellm.calls("planner")) == 2


async def test_a_file_that_does_not_hold_the_word_is_not_accepted(fakellm, tmp_path):
    # both validators pass a wrong file name: the plan's check, run for real, prints another one
    ask = _todo_task(fakellm, tmp_path, "a.txt", "pass")
    r = await run_task(fakellm, tmp_path, ask, **ONE_REPLAN)
    assert r.final.directive.value == "abandon" and r.final.answer is None
    assert f"not verified: no check printed the answer 'a.txt' (check `{TODO_CHECK}` → exit 0: b.txt)" \
        in task_reasons(r)


async def test_a_wrong_word_count_is_caught_by_the_plans_check(fakellm, tmp_path):
    # the tools printed 18 (grounded), both validators pass: the plan's check, run for real after
    # the work, prints 9, so the answer 18 is not verified (code no longer counts words itself)
    _word_count_task(fakellm, tmp_path, "poem.txt has 4 lines, 18 words, 88 characters", r4b="pass",
                     cmd="echo 4 18 88", named="18")
    r = await run_task(fakellm, tmp_path, "How many words are in poem.txt?", **ONE_REPLAN)
    assert r.final.directive.value == "abandon" and r.final.answer is None
    assert f"not verified: no check printed the answer '18' (check `{WORDS}` → exit 0: 9)" in task_reasons(r)


MD_GOAL = "Write the names of all .md files in this folder, sorted, one per line, into index.txt."
#: the plan's check: silent and non-zero unless index.txt is exactly the sorted listing
INDEX_CHECK = "ls *.md | cmp -s - index.txt"


def _index_task(fake, tmp_path, content: str, r4b: str) -> None:
    """ws holds three .md files and a .txt; the executor writes `content` into index.txt with
    printf (which writes exactly what it is given; write_file would end the last line itself)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in ("zeta.md", "alpha.md", "mid.md", "notes.txt"):
        (ws / n).write_text("x\n")
    fake.script("perceiver", [perceive(MD_GOAL)])
    fake.responder("planner", lambda _r: plan(["index.txt lists the .md files sorted"],
                                              sub("write the sorted .md names into index.txt", "index.txt is written",
                                                  tools=["shell"]), checks=[INDEX_CHECK]))
    printf = "printf '" + content.replace("\n", "\\n") + "' > index.txt"
    fake.responder("executor", lambda r: call("shell", command=printf)
                   if len(r["messages"]) == 2 else finish("index.txt written"))
    fake.responder("agent_validator", lambda _r: Reply.json({"verdicts": [{"verdict": "pass",
                                                                           "evidence": "index.txt written"}]}))
    fake.responder("meta_validator", lambda _r: merge("index.txt", r4b))


async def test_a_right_listing_the_meta_validator_failed_is_not_accepted(fakellm, tmp_path):
    # code used to read index.txt itself and grant the pass over R4b's fail; it never grants (#35):
    # the listing is right and the plan's check holds, yet R4b's fail stands
    _index_task(fakellm, tmp_path, "alpha.md\nmid.md\nzeta.md\n", "fail:logical")
    r = await run_task(fakellm, tmp_path, MD_GOAL, **ONE_REPLAN)
    assert (tmp_path / "ws" / "index.txt").read_text() == "alpha.md\nmid.md\nzeta.md\n"
    assert {(c["command"], c["exit_code"]) for c in checks_run(tmp_path)} == {(INDEX_CHECK, 0)}
    assert r.final.directive.value == "abandon"
    verdicts = [v for q in r.of("ReplanRequest") for v in q.task_criteria_verdicts]
    assert verdicts and all(v.verdict.value == "fail" and "checked by code" not in v.evidence for v in verdicts)


@pytest.mark.parametrize("content,accepted", [("alpha.md\nmid.md\nzeta.md\n", True),
                                               ("alpha.md\nmid.md\nzeta.md", False),  # no line end: wc -l says 2
                                               ("zeta.md\nalpha.md\nmid.md\n", False),  # not sorted
                                               ("./alpha.md\n./mid.md\n./zeta.md\n", False),  # paths
                                               ("alpha.md\nmid.md\n", False)])
async def test_a_listing_the_plans_check_contradicts_is_not_accepted(fakellm, tmp_path, content, accepted):
    # both validators pass whatever index.txt holds: the plan's check, run for real after the work,
    # takes the pass away from a listing that is not exactly the sorted names
    _index_task(fakellm, tmp_path, content, "pass")
    r = await run_task(fakellm, tmp_path, MD_GOAL, **ONE_REPLAN)
    assert (r.final.directive.value == "accept") is accepted
    if not accepted:
        assert f"not met: check `{INDEX_CHECK}` → exit 1: (no output)" in task_reasons(r)


async def test_a_refused_call_sent_again_ends_the_attempt(fakellm, tmp_path):
    # find-todo on the 1.5B model (751f0f9): the executor read b.txt, then sent the same refused
    # write_file 7 times until its 8 steps ran out, twice. A refused call sent again is a repeat:
    # the model is told so once, and the second repeat ends the attempt with what the tools showed
    _poem_question(fakellm, tmp_path, "Count the words with: wc -w poem.txt")
    script = [call("shell", command="wc -w poem.txt")] + [call("write_file", path="poem.txt", content="x")] * 7
    fakellm.script("executor", script + [finish("never reached")] * 20)
    fakellm.responder("agent_validator", lambda _r: Reply.json({"verdicts": [{"verdict": "pass",
                                                                              "evidence": "9 poem.txt"}]}))
    fakellm.responder("meta_validator", lambda _r: merge("9 poem.txt", "pass", answer="9"))
    r = await run_task(fakellm, tmp_path, "How many words are in poem.txt?", **ONE_REPLAN)
    assert (tmp_path / "ws" / "poem.txt").read_text() == POEM
    assert len(fakellm.calls("executor")) == 4  # the call, the refusal, its repeat (told), its second repeat
    assert "9 poem.txt" in str(r.final.output)
    assert r.final.directive.value == "accept" and r.final.answer == "9"  # the plan's check printed 9
