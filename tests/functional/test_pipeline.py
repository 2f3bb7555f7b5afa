"""Whole tasks through every macro-state (issue #3), over the fake LLM with real tools."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from agentui.contracts import ConfirmationChoice, Role
from tests.fakellm import Reply
from tests.functional.pipeline import (
    call,
    finish,
    infeasible,
    merge,
    perceive,
    plan,
    run_task,
    sub,
    verdicts,
)
from tests.procs import sleeper_pid

FAST = {"ggs": {"time_budget_ms": 10**9}}
P = "plausible"  # for macro-state tests whose executor answers without a tool (grounding: test_truth.py)


def happy(fake, answer="2"):
    fake.script("perceiver", [perceive("count the txt files")])
    fake.script("planner", [plan(["the answer is the count"], sub("count .txt files", "a number is reported",
                                                                   tools=["shell"]), checks=[f"printf '{answer}\\n'"])])
    fake.script("executor", [call("shell", command=f"echo {answer}"), finish(answer)])
    fake.script("agent_validator", [verdicts("pass", quote=answer)])
    fake.script("meta_validator", [merge(answer, "pass", summary=f"{answer} txt files")])


async def test_accept_first_try(fakellm, tmp_path):
    happy(fakellm)
    r = await run_task(fakellm, tmp_path, "how many txt files?", **FAST)
    assert r.types() == ["UserInput", "TaskSpec", "SubTask", "DispatchManifest", "ExecutionResult",
                         "SubTaskOutcome", "OutcomeSummary", "FinalResult"]
    f = r.final
    assert f.directive.value == "accept" and f.prev_directive.value == "init" and f.replans == 0
    assert f.loss.D == 0.0 and f.output == "2" and f.answer == "2"
    assert r.stats["llm_calls"] == 6 and r.stats["tool_calls"] == 1
    assert set(r.stats["by_role"]) == {"perceiver", "planner", "executor", "agent_validator", "meta_validator"}
    # one Megram from GGS, tagged with the kind of work, saying what worked (not the request)
    [m] = r.of("Megram")
    assert m.space == "intent:count_files" and m.state == "accept"
    assert m.content == 'worked (accept) for "count files": 1 step(s) [shell]; calls that worked: shell `echo 2`'

    # every envelope routes as the spec's contract tables allow; GGS is the only FinalResult sender
    assert {e.sender for e in r.envelopes if e.type == "FinalResult"} == {Role.GGS}
    log = (tmp_path / "data" / "tasks" / f"{f.task_id}.jsonl").read_text().splitlines()
    kinds = {__import__("json").loads(x)["kind"] for x in log}
    assert {"llm", "tool", "envelope", "end"} <= kinds
    assert (tmp_path / "data" / "recordings" / f"{f.task_id}.bus.jsonl").is_file()
    assert r.audit_kinds == []  # the Auditor sees a healthy run: no false positives


async def test_correction_then_match(fakellm, tmp_path):
    fakellm.script("perceiver", [perceive("say hello into hello.txt")])
    fakellm.script("planner", [plan(["hello.txt contains hello"], sub("write hello.txt", "file holds hello"))])
    fakellm.script("executor", [call("write_file", path="hello.txt", content="helo"), finish("wrote helo"),
                                call("write_file", path="hello2.txt", content="hello"),
                                call("shell", command="mv hello2.txt hello.txt"),
                                finish("wrote hello")])
    fakellm.script("agent_validator", [verdicts("fail:logical"), verdicts("pass", quote="mv hello2.txt hello.txt")])
    fakellm.script("meta_validator", [merge("hello.txt written", "pass")])
    r = await run_task(fakellm, tmp_path, "write hello to hello.txt", pipeline={"correction_budget": 2},
                       confirm=_approve, **FAST)
    assert r.types().count("CorrectionSignal") == 1
    assert r.final.directive.value == "accept"
    [outcome] = r.of("SubTaskOutcome")
    assert [len(a.failed_criteria) for a in outcome.gap_trajectory] == [1, 0]
    assert (tmp_path / "ws" / "hello.txt").read_text() == "hello"
    assert r.of("ConfirmationRequest"), "mv over an existing file must ask"
    assert r.audit_kinds == []  # the Auditor sees a healthy run: no false positives


async def test_a_correction_that_repeats_the_failed_attempt_verbatim_ends_the_loop(fakellm, tmp_path):
    """#13: the 1.5B executor answered two corrections with the very calls that had failed; each
    cost an executor round and a validator call. Equal evidence gets the equal verdict, no LLM call,
    and no more of the correction budget."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "n.txt").write_text("1\n2\n")
    fakellm.script("perceiver", [perceive("how many lines has n.txt")])
    fakellm.responder("planner", lambda _r: plan(["the line count is given"],
                                                   sub("count the lines of n.txt", "the count is reported")))

    def executor(req):  # the shell's command; once GGS has blocked it and it is refused, read_file
        last = str(req["messages"][-1])
        if "blocked for this task" in last:
            return call("read_file", path="n.txt")
        if "RESULT" in last:
            return finish("it has 7 lines")
        return call("shell", command="cat n.txt")
    fakellm.responder("executor", executor)
    fakellm.script("agent_validator", [verdicts("fail:logical")] * 3)
    r = await run_task(fakellm, tmp_path, "how many lines has n.txt", pipeline={"correction_budget": 2},
                       ggs={"max_replans": 1, "time_budget_ms": 10**9})
    assert r.final.directive.value == "abandon"
    outcomes = r.of("SubTaskOutcome")
    # each plan round: attempt 1 judged by the LLM, its verbatim repeat not, and no third attempt
    assert r.types().count("CorrectionSignal") == len(outcomes)
    assert len(fakellm.calls("agent_validator")) == len(outcomes)
    assert [[len(a.failed_criteria) for a in o.gap_trajectory] for o in outcomes] == [[1, 1]] * len(outcomes)
    assert all(o.failure_reason.startswith("the corrected attempt repeated the failed one verbatim")
               for o in outcomes)


async def test_a_question_plan_reaches_the_executor_as_its_answer_step(fakellm, tmp_path):
    """run-script on 1e0d435 (#13): the plan ran the script, read it back, then read output.txt (a
    file nobody made), and the merged step carried "the content is read successfully". What the
    executor gets: one step without the made-up read, judged on the number it reports."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "script.py").write_text("print(6 * 7)\n")
    fakellm.script("perceiver", [perceive("run script.py")])
    fakellm.responder("planner", lambda _r: plan(
        ["the number printed is reported"],
        sub("Run it with: python3 script.py", "the output is a number", seq=1),
        sub("Read the content of script.py with: cat script.py", "the content is read successfully", seq=2),
        sub("Read the content of output.txt with: cat output.txt", "output.txt is read", seq=3),
        sub("Check if the number is right with: python3 script.py", "the number is checked", seq=4),
        checks=["awk 'BEGIN{print 6*7}'"]))
    fakellm.responder("executor", lambda req: finish("42") if "RESULT" in str(req["messages"][-1])
                      else call("shell", command="python3 script.py"))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", quote="42"))
    fakellm.responder("meta_validator", lambda _r: merge("42", "pass"))
    r = await run_task(fakellm, tmp_path, "Run script.py with python3 and tell me the number it prints.",
                       confirm=_approve, **FAST)
    [st] = r.of("SubTask")
    assert st.intent == "1. Run it with: python3 script.py\n2. Read the content of script.py with: cat script.py"
    assert [c.criterion for c in st.success_criteria] == ["the output is a number"]
    assert r.final.directive.value == "accept"


async def test_a_failed_attempt_repeated_in_other_words_is_a_repeat(fakellm, tmp_path):
    """#13 on 1e0d435: the 1.5B executor sent the same offline web_search in three attempts and
    reported each infeasible in other words; the words are no evidence, so the second attempt is
    the repeat that ends the loop and the third is never asked for."""
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("find the release date")])
    fakellm.responder("planner", lambda _r: plan(["the date is given"], sub("look up the date", "a date is reported")))
    said = iter(f"no network, try {i}" for i in range(10))
    fakellm.responder("executor", lambda req: infeasible(next(said)) if "ERROR" in str(req["messages"][-1])
                      else call("read_file", path="missing.txt"))
    r = await run_task(fakellm, tmp_path, "find the release date", pipeline={"correction_budget": 2},
                       ggs={"max_replans": 1, "time_budget_ms": 10**9})
    assert r.final.directive.value == "abandon"
    outcomes = r.of("SubTaskOutcome")
    assert [[a.attempt for a in o.gap_trajectory] for o in outcomes] == [[1, 2]] * len(outcomes)
    assert all(o.failure_reason.startswith("the corrected attempt repeated the failed one verbatim")
               for o in outcomes)


@pytest.mark.parametrize("content", ["Hello, world", "Hello, world!!"])
async def test_a_validators_fail_stands_even_when_the_file_holds_the_text(fakellm, tmp_path, content):
    """Code never grants a pass: with hello.txt holding exactly the asked text and the validators
    failing it, the task is not accepted; code reads the file only to take a pass away."""
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("write Hello, world to hello.txt")])
    fakellm.responder("planner", lambda _r: plan(
        ["hello.txt contains exactly 'Hello, world'"],
        sub("create hello.txt with the text Hello, world",
            "The file hello.txt exists and contains the text 'Hello, world'"),
        checks=["cat hello.txt"]))
    fakellm.responder("executor", lambda req: (finish("done") if "RESULT" in str(req["messages"][-1])
                                               else call("write_file", path="hello.txt", content=content)))
    fakellm.responder("agent_validator", lambda _r: verdicts("fail:environmental"))
    fakellm.responder("meta_validator", lambda _r: merge("hello.txt written", "fail:logical"))
    r = await run_task(fakellm, tmp_path, "Create hello.txt containing exactly: Hello, world",
                       pipeline={"correction_budget": 0}, ggs={"max_replans": 1, "time_budget_ms": 10**9})
    assert (tmp_path / "ws" / "hello.txt").read_text() == content
    assert r.final.directive.value == "abandon"
    assert all(v.verdict.value == "fail" for o in r.of("SubTaskOutcome") for v in o.criteria_verdicts)


@pytest.mark.parametrize("content", ["", "oops"])
async def test_r4b_fail_stands_over_files_that_look_right(fakellm, tmp_path, content):
    """Every step passed and R4b failed the result: its fail stands whatever the files show (an
    empty __init__.py as asked, or not); the task ends not-done."""
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("make the tree")])
    fakellm.responder("planner", lambda _r: plan(["src/app and tests exist and src/app/__init__.py exists"],
                                                   sub("mkdir -p src/app tests and touch src/app/__init__.py",
                                                       "src/app/__init__.py exists"),
                                                   checks=["ls -d src/app tests src/app/__init__.py"]))
    fakellm.responder("executor", lambda req: (finish("made") if "RESULT" in str(req["messages"][-1]) else
                                               call("shell", command="mkdir -p src/app tests && "
                                                    f"printf '{content}' > src/app/__init__.py")))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", quote="mkdir -p src/app tests"))
    fakellm.responder("meta_validator", lambda _r: merge("made", "fail:logical"))
    r = await run_task(fakellm, tmp_path,
                       "Create the directories src/app and tests, and an empty file src/app/__init__.py.",
                       confirm=_approve, ggs={"max_replans": 1, "time_budget_ms": 10**9})
    assert (tmp_path / "ws" / "src" / "app" / "__init__.py").read_text() == content
    assert r.final.directive.value == "abandon"


async def test_no_code_granted_pass_for_a_task_that_also_changed_what_nobody_asked_for(fakellm, tmp_path):
    """An outside tester (#13): hello.txt written as asked, and `rm important.txt` besides (approved);
    the validators failed it, code granted it over them from hello.txt alone — and a replan that
    only rewrote hello.txt was accepted, the deletion hidden. A change nobody asked for, in any
    attempt or round, keeps code's word out."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "important.txt").write_text("keep me\n")
    fakellm.script("perceiver", [perceive("create hello.txt containing 'hi'")])
    fakellm.responder("planner", lambda _r: plan(["hello.txt contains 'hi'"],
                                                   sub("Write hi to hello.txt", "hello.txt contains 'hi'")))
    step = {"n": 0}

    def executor(_req):
        step["n"] += 1
        return [call("write_file", path="hello.txt", content="hi\n"), call("shell", command="rm important.txt"),
                finish("created hello.txt")][(step["n"] - 1) % 3]
    fakellm.responder("executor", executor)
    fakellm.responder("agent_validator", lambda _r: verdicts("fail:logical"))
    fakellm.responder("meta_validator", lambda _r: merge("not met", "fail:logical"))
    r = await run_task(fakellm, tmp_path, "create hello.txt containing 'hi'", confirm=_approve,
                       pipeline={"correction_budget": 0}, ggs={"max_replans": 1, "time_budget_ms": 10**9})
    assert not (tmp_path / "ws" / "important.txt").exists()
    assert r.final.directive.value == "abandon"
    assert all("important.txt" in o.changes for o in r.of("SubTaskOutcome"))


async def _approve(_req):
    return ConfirmationChoice.APPROVE


def _env_wall(fake, rounds_ok_after=1):
    fake.script("perceiver", [perceive("print the port from settings")])
    fake.script("planner", [plan(["the port is printed"], sub("read settings.ini", "the port value is shown",
                                                               tools=["read_file"]), checks=["grep port config.ini"]),
                            plan(["the port is printed"], sub("read config.ini instead", "the port value is shown",
                                                               tools=["read_file"]), checks=["grep port config.ini"])])
    fake.script("executor", [call("read_file", path="settings.ini"), infeasible("settings.ini does not exist"),
                             call("read_file", path="config.ini"), finish("port=8080")])
    fake.script("agent_validator", [verdicts("pass", quote="port=8080")])
    fake.script("meta_validator", [merge("8080", "pass")])


async def test_change_path_on_environmental_wall_then_accept(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "config.ini").write_text("port=8080\n")
    _env_wall(fakellm)
    r = await run_task(fakellm, tmp_path, "what port is configured?", **FAST)
    [d] = r.of("PlanDirective")
    assert d.directive.value == "change_path" and d.prev_directive.value == "init"
    assert d.blocked_tools == []
    assert d.blocked_targets == ["read_file:settings.ini"]  # workspace-relative, as plans name it (#13)
    assert d.loss.D == 1.0 and d.loss.P == 0.0
    # R4a classified from the evidence without an LLM call on the failed attempt
    assert len(fakellm.calls("agent_validator")) == 1
    f = r.final
    assert f.directive.value == "accept" and f.prev_directive.value == "change_path" and f.replans == 1
    # the planner saw the directive and the blocked target
    replan_prompt = fakellm.calls("planner")[1]["messages"][1]["content"]
    assert "CHANGE_PATH" in replan_prompt and "settings.ini" in replan_prompt
    # GGS wrote one Megram for the blocked target (tool:/path: tags) and one for the accept
    spaces = sorted(m.space for m in r.of("Megram"))
    assert spaces == ["intent:read_settings", "tool:read_file"]
    # the accept's lesson: what worked, and the dead end it replaced, as calls a planner can use
    [sop] = [m for m in r.of("Megram") if m.space.startswith("intent:")]
    assert "calls that worked: read_file `config.ini`" in sop.content
    assert "instead of: read_file `settings.ini` (" in sop.content
    assert r.audit_kinds == []  # the Auditor sees a healthy run: no false positives


async def test_executor_refuses_blocked_target_and_duplicates(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    _env_wall(fakellm)
    # second round: the model insists on the blocked file, then repeats a call, then finishes
    fakellm._scripts["executor"].clear()
    fakellm._scripts["planner"].pop()
    fakellm.script("planner", [plan(["the port is printed"], sub("find the port", "the port value is shown"),
                                    checks=["echo port=8080"])])
    fakellm.script("executor", [call("read_file", path="settings.ini"), infeasible("missing"),
                                call("read_file", path="settings.ini"),
                                call("shell", command="echo 8080"), call("shell", command="echo 8080"),
                                finish("8080")])
    r = await run_task(fakellm, tmp_path, "what port?", **FAST)
    ex = fakellm.calls("executor")
    msgs = [m["content"] for m in ex[-1]["messages"] if m["role"] == "user"]
    assert any("is blocked for this task" in m for m in msgs)
    assert any("already made this exact call" in m for m in msgs)
    results = r.of("ExecutionResult")
    assert [c.tool for c in results[-1].tool_calls] == ["shell"]  # refused calls never ran
    assert r.final.directive.value == "accept"


async def test_refine_when_loss_improves(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("summarise two logs")])
    fakellm.script("planner", [
        plan(["both logs summarised"], sub("summarise a.log and b.log", "a summarised", "b summarised", mode=P)),
        plan(["both logs summarised"], sub("summarise a.log and b.log", "a summarised", "b summarised", mode=P)),
        plan(["both logs summarised"], sub("summarise b.log", "b summarised", mode=P)),
    ])
    fakellm.script("executor", [finish("nothing"), finish("a: ok"), finish("a: ok, b: ok")])
    fakellm.script("agent_validator", [verdicts("fail:environmental", "fail:environmental"),
                                       verdicts("pass", "fail:environmental"), verdicts("pass")])
    fakellm.script("meta_validator", [merge("a: ok, b: ok", "pass")])
    r = await run_task(fakellm, tmp_path, "summarise the logs", **FAST)
    ds = r.of("PlanDirective")
    assert [d.directive.value for d in ds] == ["change_path", "refine"]
    assert ds[1].grad_l < -0.1 and ds[1].urgency.value == "low" and ds[1].prev_directive.value == "change_path"
    assert r.final.directive.value == "accept" and r.final.prev_directive.value == "refine"
    assert r.audit_kinds == []  # the Auditor sees a healthy run: no false positives


async def test_break_symmetry_then_change_approach_then_accept(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "x.bin").write_text("data")  # the read succeeds: the failure is logical
    fakellm.script("perceiver", [perceive("compute the checksum")])
    fakellm.script("planner", [
        plan(["checksum shown"], sub("compute checksum by reading", "checksum printed", "it is sha256",
                                     tools=["read_file"], mode=P)),
        plan(["checksum shown"], sub("compute checksum with shell", "checksum printed", "it is sha256", tools=["shell"],
                                     mode=P)),
        plan(["checksum shown"], sub("compute it with python", "checksum printed", mode=P)),
    ])
    fakellm.script("executor", [call("read_file", path="x.bin"), finish("no idea"),
                                call("shell", command="false"), finish("maybe 42"),
                                finish("abc123")])
    fakellm.script("agent_validator", [verdicts("fail:logical", "fail:logical"),
                                       verdicts("pass", "fail:logical"), verdicts("pass")])
    fakellm.script("meta_validator", [merge("abc123", "pass")])
    r = await run_task(fakellm, tmp_path, "checksum please", **FAST)
    ds = r.of("PlanDirective")
    assert [d.directive.value for d in ds] == ["break_symmetry", "change_approach"]
    assert ds[0].blocked_tools == ["read_file"] and ds[0].failure_class.value == "logical"
    assert ds[1].prev_directive.value == "break_symmetry"
    # the executor is never offered a blocked tool: the action schema's enum excludes it
    second = fakellm.calls("executor")[2]
    assert "read_file" not in str(second["response_format"]["json_schema"]["schema"]["properties"]["tool"])
    assert r.final.directive.value == "accept"
    assert r.audit_kinds == []  # the Auditor sees a healthy run: no false positives


async def test_success_when_D_within_delta(fakellm, tmp_path):
    # close enough: every step passed, R4b passed the verifiable task criterion and failed only a
    # plausible one, D = 1/5 ≤ δ
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("describe the repo")])
    fakellm.script("planner", [Reply.json({
        "task_criteria": [{"criterion": "described", "check": "ls -a"},
                          {"criterion": "the description reads well", "mode": "plausible"}],
        "subtasks": [sub("describe", "a", "b", "c", mode=P)]})])
    fakellm.script("executor", [finish("a b c")])
    fakellm.script("agent_validator", [verdicts("pass", "pass", "pass")])
    fakellm.script("meta_validator", [merge("a b c", "pass", "fail:logical")])
    r = await run_task(fakellm, tmp_path, "describe", **FAST)
    f = r.final
    assert f.directive.value == "success" and f.loss.D == 0.2 and f.replans == 0
    assert f.output == "a b c"  # text, never a dict of step outputs
    assert "PlanDirective" not in r.types()
    assert r.audit_kinds == []  # the Auditor sees a healthy run: no false positives
    # R4b judged with what the criterion's check printed, numbered by the criterion it checks
    prompt = fakellm.calls("meta_validator")[0]["messages"][-1]["content"]
    assert "\n\nChecks run by code now:\n1. check `ls -a` → exit 0: " in prompt, prompt


async def test_a_failed_step_is_never_close_enough(fakellm, tmp_path):
    # 3 of 4 step criteria passed (D of the steps 0.25 ≤ δ), but the failed step carries the result
    # and the task criteria were never checked: no success, the task replans
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("describe the repo")])
    fakellm.responder("planner", lambda _r: plan(["described"], sub("describe", "a", "b", "c", "d", mode=P)))
    fakellm.responder("executor", lambda _r: finish("a b c"))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass", "pass", "pass", "fail:logical"))
    r = await run_task(fakellm, tmp_path, "describe", ggs={"max_replans": 1, "time_budget_ms": 10**9})
    [req, *_] = r.of("ReplanRequest")
    assert [v.evidence for v in req.task_criteria_verdicts] == [
        "not run: a step failed, so the result was never checked"]
    assert r.final.directive.value == "abandon" and r.final.answer is None
    assert r.of("PlanDirective")[0].loss.D == 0.4


def _always_fail(fake, intent="fetch the report"):
    fake.script("perceiver", [perceive(intent)])
    fake.responder("planner", lambda _r: plan(["report fetched"], sub("fetch report.pdf", "report saved")))
    fake.responder("executor", lambda _r: infeasible("network unreachable"))


async def test_abandon_when_budget_exhausted(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    _always_fail(fakellm)
    r = await run_task(fakellm, tmp_path, "fetch the report", ggs={"max_replans": 1, "time_budget_ms": 10**9})
    f = r.final
    assert [d.directive.value for d in r.of("PlanDirective")] == ["change_path"]
    assert f.directive.value == "abandon" and f.loss.Omega >= 0.8 and f.replans == 1
    assert "budget exhausted" in f.summary
    assert 2 <= len(f.next_moves) <= 3
    assert any("network unreachable" in m for m in f.next_moves)
    assert [m.state for m in r.of("Megram")][-1] == "abandon"
    assert r.audit_kinds == []  # the Auditor sees a healthy run: no false positives


async def test_law2_abandon_after_two_worsening_rounds(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("tidy the notes")])
    fakellm.responder("planner", lambda _r: plan(["notes tidy"], sub("tidy", "a", "b", "c", mode=P)))
    fakellm.responder("executor", lambda _r: finish("tried"))
    fakellm.script("agent_validator", [verdicts("pass", "pass", "fail:environmental"),
                                       verdicts("pass", "fail:environmental", "fail:environmental"),
                                       verdicts("fail:environmental", "fail:environmental", "fail:environmental")])
    r = await run_task(fakellm, tmp_path, "tidy", ggs={"max_replans": 10, "time_budget_ms": 10**9})
    ds = r.of("PlanDirective")
    assert [d.directive.value for d in ds] == ["change_path", "refine"]
    assert ds[1].urgency.value == "high"
    f = r.final
    assert f.directive.value == "abandon" and "Law 2" in f.summary and f.grad_l > 0.1
    # the Auditor reports exactly the replan round that went on with a rising loss
    assert r.audit_kinds == ["convergence_failure"]


async def test_task_criteria_failure_reaches_ggs_as_real_failure(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("list the three largest files")])
    fakellm.script("planner", [plan(["three files listed"], sub("list files", "files listed", mode=P)),
                               plan(["three files listed"], sub("list the 3 largest files by size", "3 files listed",
                                                                mode=P))])
    fakellm.script("executor", [finish("a, b"), finish("a, b, c")])
    fakellm.script("agent_validator", [verdicts("pass"), verdicts("pass")])
    fakellm.script("meta_validator", [merge("a, b", "fail:logical"), merge("a, b, c", "pass")])
    r = await run_task(fakellm, tmp_path, "three largest files", **FAST)
    [req] = r.of("ReplanRequest")
    assert req.reason == "task_criteria" and req.task_criteria_verdicts[0].verdict.value == "fail"
    [d] = r.of("PlanDirective")
    assert d.loss.D == 0.5 and d.directive.value != "success"  # a failed task criterion is never close enough
    assert r.final.directive.value == "accept"
    assert r.audit_kinds == []  # the Auditor sees a healthy run: no false positives


async def test_meta_validator_parse_failure_ends_unverified_without_a_replan(fakellm, tmp_path):
    # R4b's unusable replies say nothing about the approach (#12 item 4, #13): no replan that redoes
    # checked work, and no success either — the task ends unverified with the checked results
    (tmp_path / "ws").mkdir()
    happy(fakellm)
    fakellm._scripts["meta_validator"].clear()
    fakellm.script("meta_validator", [Reply.fault("garbage"), Reply.fault("garbage"), merge("2", "pass")])
    r = await run_task(fakellm, tmp_path, "count", **FAST)
    [req] = r.of("ReplanRequest")
    assert req.reason == "verification_output" and "re-ask" in req.gap_summary
    assert r.final.directive.value == "abandon" and r.final.replans == 0
    assert r.final.summary.startswith("Not verified") and r.final.partial_result
    assert fakellm.pending("meta_validator") == 1 and not r.of("PlanDirective")


async def test_role_llm_down_mid_task_ends_with_the_infra_outcome_not_a_hang(fakellm, tmp_path):
    """An endpoint failing mid-task (5xx after retries) ends the task as an endpoint failure (#12):
    no FinalResult from GGS, no replan, no Megram, the message names the endpoint."""
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("do it")])
    fakellm.responder("planner", lambda _r: plan(["done"], sub("do it", "it is done")))
    fakellm.responder("executor", lambda _r: Reply.fault("http500"))
    t0 = time.monotonic()
    r = await run_task(fakellm, tmp_path, "do it", ggs={"max_replans": 1, "time_budget_ms": 10**9})
    assert time.monotonic() - t0 < 20
    assert r.end.final is None and r.end.infra is not None
    assert r.end.infra["endpoint"] == fakellm.base_url and "HTTP 500" in r.end.infra["said"]
    assert not r.of("PlanDirective") and not r.of("Megram") and not r.of("FinalResult")
    assert len(fakellm.calls("planner")) == 1
    assert r.stats["by_role"]["executor"]["errors"] >= 1


async def test_planner_failure_goes_through_ggs(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("x")])
    fakellm.responder("planner", lambda _r: Reply.fault("garbage"))
    r = await run_task(fakellm, tmp_path, "x", ggs={"max_replans": 1, "time_budget_ms": 10**9},
                       pipeline={"plan_reasks": 0})
    manifests = r.of("DispatchManifest")
    assert manifests and all(m.subtask_ids == [] and m.planner_error for m in manifests)
    assert r.final.directive.value == "abandon"


async def test_sequences_run_in_order_and_feed_context(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("two steps")])
    fakellm.script("planner", [plan(["both done"], sub("step one", "one done", seq=1, mode=P),
                                                sub("step two", "two done", seq=2, mode=P))])
    fakellm.script("executor", [finish("ONE-OUTPUT"), finish("two")])
    fakellm.script("agent_validator", [verdicts("pass"), verdicts("pass")])
    fakellm.script("meta_validator", [merge("one, two", "pass")])
    r = await run_task(fakellm, tmp_path, "two steps", **FAST)
    second = fakellm.calls("executor")[1]["messages"][1]["content"]
    assert "Subtask: step two" in second and "ONE-OUTPUT" in second
    assert r.final.directive.value == "accept"
    assert r.audit_kinds == []  # the Auditor sees a healthy run: no false positives


async def test_failed_step_skips_later_sequences(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("two steps")])
    fakellm.responder("planner", lambda _r: plan(["both"], sub("one", "a", seq=1), sub("two", "b", seq=2)))
    fakellm.responder("executor", lambda _r: infeasible("permission denied"))
    r = await run_task(fakellm, tmp_path, "two steps", ggs={"max_replans": 1, "time_budget_ms": 10**9})
    skipped = [o for o in r.of("SubTaskOutcome") if (o.failure_reason or "").startswith("skipped")]
    assert len(skipped) == 2  # once per round
    assert len(fakellm.calls("executor")) == 2  # step two never ran
    assert r.final.directive.value == "abandon"


async def test_no_success_while_a_step_of_the_plan_never_ran(fakellm, tmp_path):
    """#13, found by an outside tester: step 1 passes 4 of 4, step 2 fails 1 of 4, step 3 never
    runs: D = 2/9 ≤ δ read as "close enough" → success, exit 0, for a plan a third of which never ran."""
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("three steps")])
    fakellm.responder("planner", lambda _r: plan(["all three done"], sub("one", "a1", "a2", "a3", "a4", seq=1, mode=P),
                                                 sub("two", "b1", "b2", "b3", "b4", seq=2, mode=P),
                                                 sub("three", "c1", seq=3, mode=P)))
    fakellm.responder("executor", lambda _r: finish("did it"))
    fakellm.responder("agent_validator", lambda req: verdicts(*(
        ["pass"] * 4 if "Subtask: one" in str(req["messages"][-1]) else ["pass", "pass", "pass", "fail:logical"])))
    r = await run_task(fakellm, tmp_path, "three steps", pipeline={"correction_budget": 0},
                       ggs={"max_replans": 1, "time_budget_ms": 10**9})
    skipped = [o for o in r.of("SubTaskOutcome") if (o.failure_reason or "").startswith("skipped")]
    assert skipped and all(o.intent == "three" for o in skipped)
    assert r.final.directive.value == "abandon"
    assert r.of("PlanDirective"), "D ≤ δ with a step that never ran replans, it does not stop as success"


async def test_cancellation_kills_tool_processes_within_a_second(fakellm, tmp_path):
    from agentui.config import Config  # noqa: F401
    from agentui.llm import LLMPool
    from agentui.runtime import Runtime
    from tests.functional.pipeline import config_for

    ws = tmp_path / "ws"
    ws.mkdir()
    fakellm.script("perceiver", [perceive("wait")])
    fakellm.script("planner", [plan(["waited"], sub("wait", "waited"))])
    marker = f"30.{os.getpid()}4"  # found by its command line: a `$$` in bubblewrap's PID namespace is no host pid
    fakellm.script("executor", [call("shell", command=f"sleep {marker}")])
    cfg = config_for(fakellm, tmp_path / "data")
    rt = Runtime(cfg, workspace=ws, data_dir=tmp_path / "data", pool=LLMPool(cfg))
    await rt.start()
    tap = rt.bus.tap("t")
    tid = await rt.submit("wait 30 s")
    pid = 0
    for _ in range(400):
        if pid := sleeper_pid(marker):
            break
        await asyncio.sleep(0.05)
    assert pid, "the tool never started"
    t0 = time.monotonic()
    await rt.cancel(tid)
    end = await rt.wait(tid)
    for _ in range(20):
        if not _alive(pid):
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the tool process survived cancellation")
    assert time.monotonic() - t0 < 1.0
    assert end.cancelled
    await asyncio.sleep(0.1)
    types = [e.type for e in tap.drain()]
    after = types[types.index("TaskCancelled") + 1:]
    assert set(after) <= {"LLMUsage", "TaskCancelled"}
    await rt.stop()


async def test_greeting_fast_path_needs_no_llm(fakellm, tmp_path):
    r = await run_task(fakellm, tmp_path, "hello!", **FAST)
    assert r.end.reply is not None and r.end.final is None
    assert fakellm.calls() == []
    assert r.types() == ["UserInput", "PerceiverReply"]
    assert r.audit_kinds == []  # the Auditor sees a healthy run: no false positives


async def test_conversational_question_is_answered_by_r1_alone(fakellm, tmp_path):
    fakellm.script("perceiver", [Reply.json({"kind": "chat", "reply": "A list is mutable; a tuple is not."})])
    r = await run_task(fakellm, tmp_path, "what is the difference between a python list and a tuple?", **FAST)
    assert r.end.reply.text.startswith("A list is mutable")
    assert r.stats["llm_calls"] == 1


async def test_clarification_answer_then_commit(fakellm, tmp_path):
    happy(fakellm)
    fakellm._scripts["perceiver"].clear()
    fakellm.script("perceiver", [Reply.json({"kind": "clarify", "question": "Count what?"}),
                                 perceive("count the txt files")])
    asked = []

    async def clarify(req):
        asked.append(req)
        return "txt files"

    r = await run_task(fakellm, tmp_path, "count", clarify=clarify, **FAST)
    assert [q.question for q in asked] == ["Count what?"] and asked[0].round == 1
    second = fakellm.calls("perceiver")[1]["messages"][1]["content"]
    assert "txt files" in second
    spec = r.of("TaskSpec")[0]
    assert spec.raw_input == "count" and spec.intent == "count files"  # the kind of work (memory's key)
    assert r.final.directive.value == "accept"
    assert r.audit_kinds == []  # the Auditor sees a healthy run: no false positives


async def test_empty_clarification_answer_proceeds(fakellm, tmp_path):
    happy(fakellm)
    fakellm._scripts["perceiver"].clear()
    fakellm.script("perceiver", [Reply.json({"kind": "clarify", "question": "Which?", "intent": "count"})])
    r = await run_task(fakellm, tmp_path, "count", **FAST)  # default handler answers ""
    assert len(fakellm.calls("perceiver")) == 1
    assert r.of("TaskSpec")[0].intent == "count"
    assert r.final.directive.value == "accept"


async def test_perceiver_unusable_reply_carries_raw_text(fakellm, tmp_path):
    happy(fakellm)
    fakellm._scripts["perceiver"].clear()
    fakellm.script("perceiver", [Reply.fault("garbage"), Reply.fault("garbage")])
    r = await run_task(fakellm, tmp_path, "how many txt files?", **FAST)
    assert r.of("TaskSpec")[0].intent == "count files"  # read by code from the request
    assert r.final.directive.value == "accept"
    assert r.stats["by_role"]["perceiver"]["parse_failures"] == 2


async def test_perceiver_endpoint_down_ends_the_task_as_an_endpoint_failure(fakellm, tmp_path):
    """v0.7 §R1's pass-through is for an unusable reply; a failing endpoint ends the task (#12)."""
    happy(fakellm)
    fakellm._scripts["perceiver"].clear()
    fakellm.script("perceiver", [Reply.fault("http500")])
    r = await run_task(fakellm, tmp_path, "how many txt files?", **FAST)
    assert r.end.infra is not None and not r.of("TaskSpec") and not fakellm.calls("planner")


async def test_denied_confirmation_is_an_environmental_failure(fakellm, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "keep.txt").write_text("precious")
    fakellm.script("perceiver", [perceive("delete keep.txt")])
    fakellm.responder("planner", lambda _r: plan(["keep.txt removed"], sub("remove keep.txt", "file gone")))
    fakellm.responder("executor", lambda r: call("shell", command="rm keep.txt")
                      if len(r["messages"]) == 2 else infeasible("the user denied the deletion"))
    r = await run_task(fakellm, tmp_path, "delete keep.txt", ggs={"max_replans": 1, "time_budget_ms": 10**9})
    assert (ws / "keep.txt").read_text() == "precious"
    assert r.of("ConfirmationRequest") and all(d.decision.value == "deny" for d in r.of("ConfirmationDecision"))
    outcome = r.of("SubTaskOutcome")[0]
    assert outcome.criteria_verdicts[0].failure_class.value == "environmental"
    assert r.final.directive.value == "abandon"


async def test_second_task_with_same_intent_uses_first_outcome_in_planner_prompt(fakellm, tmp_path):
    from agentui.clock import SystemClock
    from agentui.ids import UuidIds
    from agentui.memory import open_memory

    db = tmp_path / "memory.leveldb"
    happy(fakellm)
    r1 = await run_task(fakellm, tmp_path, "how many txt files?", memory=open_memory(db, SystemClock(), UuidIds()),
                        **FAST)
    assert r1.final.directive.value == "accept"
    first_prompt = fakellm.calls("planner")[0]["messages"][1]["content"]
    assert "SHOULD PREFER" not in first_prompt
    happy(fakellm)  # a new process, the same intent
    r2 = await run_task(fakellm, tmp_path, "how many txt files now?", memory=open_memory(db, SystemClock(), UuidIds()),
                        **FAST)
    second_prompt = fakellm.calls("planner")[1]["messages"][1]["content"]
    assert ("SHOULD PREFER:\n- worked (accept) for \"count files\": 1 step(s) [shell]; "
            "calls that worked: shell `echo 2` [memory ") in second_prompt
    assert r2.final.directive.value == "accept"


async def test_naive_retry_ablation_takes_ggs_seat(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "config.ini").write_text("port=8080\n")
    _env_wall(fakellm)
    r = await run_task(fakellm, tmp_path, "what port is configured?", ablation="naive-retry", **FAST)
    [d] = r.of("PlanDirective")
    assert d.directive.value == "refine" and d.blocked_targets == [] and d.blocked_tools == []
    assert "Naive retry" in d.rationale
    assert r.final.directive.value == "accept"
    assert r.of("Megram") == []  # no gradient controller, no memory writes


async def test_plan_validator_rejects_blocked_tool_and_reasks(fakellm, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "x.bin").write_text("data")
    fakellm.script("perceiver", [perceive("checksum")])
    fakellm.script("planner", [
        plan(["shown"], sub("checksum by reading", "printed", tools=["read_file"])),
        plan(["shown"], sub("checksum by reading again", "printed", tools=["read_file"])),  # blocked: rejected
        plan(["shown"], sub("compute it with shell instead", "printed", tools=["shell"], mode=P)),
    ])
    fakellm.script("executor", [call("read_file", path="x.bin"), finish("?"), finish("abc")])
    fakellm.script("agent_validator", [verdicts("fail:logical"), verdicts("pass")])
    fakellm.script("meta_validator", [merge("abc", "pass")])
    r = await run_task(fakellm, tmp_path, "checksum", **FAST)
    [d] = r.of("PlanDirective")
    assert d.directive.value == "break_symmetry" and d.blocked_tools == ["read_file"]
    reask = fakellm.calls("planner")[2]["messages"][1]["content"]
    assert "rejected: subtask 1 uses blocked tool(s) read_file" in reask
    assert [s.intent for s in r.of("SubTask")] == ["checksum by reading", "compute it with shell instead"]
    assert r.final.directive.value == "accept"


async def test_a_reask_rejected_for_the_same_problem_ends_the_reasks(fakellm, tmp_path):
    """#13: on the 1.5B model a re-ask rejected for the very problem it was told about was never
    fixed by the next one (7 of 7); each cost a ~800-token planner call. One re-ask, not two."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "x.bin").write_text("data")
    fakellm.script("perceiver", [perceive("checksum")])
    fakellm.script("planner", [plan(["shown"], sub("checksum by reading", "printed", tools=["read_file"]))])
    fakellm.responder("planner", lambda _r: plan(["shown"], sub("checksum by reading again", "printed",
                                                                 tools=["read_file"])))
    fakellm.script("executor", [call("read_file", path="x.bin"), finish("?")])
    fakellm.script("agent_validator", [verdicts("fail:logical")])
    r = await run_task(fakellm, tmp_path, "checksum", pipeline={"plan_reasks": 2, "correction_budget": 0},
                       ggs={"max_replans": 1, "time_budget_ms": 10**9})
    calls = fakellm.calls("planner")
    assert len(calls) == 3  # the first plan, the replan, its one re-ask — no second re-ask
    assert "rejected: subtask 1 uses blocked tool(s) read_file" in calls[2]["messages"][1]["content"]
    assert r.final.directive.value == "abandon"


async def test_a_plan_repeated_under_break_symmetry_after_its_reask_ends_the_task(fakellm, tmp_path):
    """#13: under break_symmetry the 1.5B planner repeated the failed plan, then again after the
    re-ask; GGS ordered break_symmetry once more and got the same plan twice more (2 planner calls,
    ~1,600 prompt tokens) before abandoning: 5 of 5 stored runs. Abandon at once, and say why."""
    (tmp_path / "ws").mkdir()
    fakellm.script("perceiver", [perceive("sum the numbers")])
    fakellm.responder("planner", lambda _r: plan(["the sum is shown"], sub("sum them with: bc", "a number",
                                                                            tools=["read_file"]), checks=["ls"]))
    fakellm.script("executor", [finish("10")])
    fakellm.script("agent_validator", [verdicts("fail:logical")])
    r = await run_task(fakellm, tmp_path, "sum the numbers", pipeline={"plan_reasks": 1, "correction_budget": 0},
                       ggs={"max_replans": 3, "time_budget_ms": 10**9})
    [d] = r.of("PlanDirective")
    assert d.directive.value == "break_symmetry"
    assert len(fakellm.calls("planner")) == 3  # the plan, the replan, its re-ask — no second round
    assert r.final.directive.value == "abandon"
    assert "the planner found no plan unlike the one that failed" in r.final.summary


async def test_the_same_steps_with_a_newly_blocked_tool_are_not_a_repeated_plan(fakellm, tmp_path):
    """#13 (4 of 14 tasks over HTTP on 4e180a2): GGS ordered break_symmetry and blocked shell; the
    1.5B planner kept the steps' words but dropped shell from their tools, and the plan was rejected
    as a repeat, ending the task. With the failing command (here `ls`) blocked the executor cannot run
    the same way: the plan runs, and the executor finds the answer with another tool."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "b.txt").write_text("TODO: fix the parser\n")
    ask = "Which file in this folder contains the word TODO?"
    fakellm.script("perceiver", [perceive(ask)])
    fakellm.responder("planner", lambda r: plan(["a file name is reported"], sub(
        "Find the file holding TODO", "a file name is reported",
        tools=["file_search"] if "Directive:" in r["messages"][1]["content"] else ["shell", "file_search"]),
        checks=["grep -l TODO *.txt"]))

    def executor(r):
        tools = r["response_format"]["json_schema"]["schema"]["properties"]["tool"]["enum"]
        if len(r["messages"]) > 2:
            return finish("b.txt" if "shell" not in tools else "none")
        return call("shell", command="ls") if "shell" in tools else call("file_search", query="TODO")
    fakellm.responder("executor", executor)
    fakellm.responder("agent_validator", lambda r: verdicts(
        "pass" if "b.txt" in r["messages"][-1]["content"] else "fail:logical"))
    fakellm.responder("meta_validator", lambda _r: merge("b.txt", "pass"))
    r = await run_task(fakellm, tmp_path, ask, pipeline={"plan_reasks": 1, "correction_budget": 0},
                       ggs={"max_replans": 2, "time_budget_ms": 10**9})
    [d] = r.of("PlanDirective")
    assert d.directive.value == "break_symmetry" and d.blocked_targets == ["shell:ls"]
    assert len(fakellm.calls("planner")) == 2  # the replan was taken, not re-asked as a repeat
    assert r.final.directive.value == "accept" and "b.txt" in str(r.final.output)


CHECK_ROWS = "sed 1d data.csv | wc -l"


async def test_a_logical_failure_in_shell_blocks_its_commands_not_the_shell(fakellm, tmp_path):
    """#13 (csv-rows over HTTP on c086234): "How many data rows does data.csv have, not counting the
    header?" — the 1.5B executor ran `wc -l data.csv | tail -n +2` twice and guessed; break_symmetry
    blocked `shell`, and with read_file and web_search left it read the file, answered "2", then
    searched the web (offline) and the task was abandoned. The shell is where commands run, not one
    kind of tool: the failing commands are blocked — in the planner's MUST NOT, its plan validator
    and the executor — and the shell stays, so another command can count the rows."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "data.csv").write_text("name,n\na,1\nb,2\nc,3\nd,4\ne,5\n")
    ask = "How many data rows does data.csv have, not counting the header?"
    bad, good = "wc -l 'data.csv' | tail -n +2", "tail -n +2 data.csv | wc -l"
    fakellm.script("perceiver", [perceive(ask)])
    fakellm.script("planner", [
        plan(["the answer gives the number of data rows"], sub(f"Count the rows with: {bad}", "a number is reported",
                                                                 tools=["shell"]), checks=[CHECK_ROWS]),
        plan(["the answer gives the number of data rows"], sub(f"Count the rows with: {bad}", "a number is reported",
                                                                 tools=["shell"]),
             checks=[CHECK_ROWS]),  # repeats the blocked command
        plan(["the answer gives the number of data rows"], sub(f"Count the rows with: {good}", "a number is reported",
                                                                 tools=["shell"]), checks=[CHECK_ROWS]),
    ])

    def executor(r):
        tools = r["response_format"]["json_schema"]["schema"]["properties"]["tool"]["enum"]
        assert "shell" in tools  # never taken away
        last = r["messages"][-1]["content"]
        if len(r["messages"]) == 2:
            return call("shell", command=bad)  # the old command first, as the 1.5B executor did
        if "blocked for this task" in last:
            return call("shell", command=good)
        return finish("5" if "5" in last else "6")
    fakellm.responder("executor", executor)
    fakellm.responder("agent_validator", lambda r: verdicts(
        "pass" if "5" in r["messages"][-1]["content"] else "fail:logical", quote="5"))
    fakellm.responder("meta_validator", lambda _r: merge("5", "pass"))
    r = await run_task(fakellm, tmp_path, ask, pipeline={"plan_reasks": 1, "correction_budget": 0},
                       ggs={"max_replans": 2, "time_budget_ms": 10**9})
    [d] = r.of("PlanDirective")
    assert d.directive.value == "break_symmetry"
    assert d.blocked_tools == [] and d.blocked_targets == [f"shell:{bad}"]
    replan, reask = fakellm.calls("planner")[1:3]
    assert f"retrying shell:{bad}" in replan["messages"][1]["content"]
    # the command as it runs, not a Python repr (the outside tester's `grep -c 'b' …` came back as \'b\')
    assert f"repeats the blocked target '{bad}' with shell" in reask["messages"][1]["content"]
    # refused when tried, never named to the executor: told "Do not retry: <command>", the 1.5B
    # executor ran that very command (csv-rows on 9de5b02)
    later = [c for c in fakellm.calls("executor") if good in c["messages"][1]["content"]]
    assert later and all(bad not in c["messages"][1]["content"] for c in later if len(c["messages"]) == 2)
    assert any("blocked for this task" in c["messages"][-1]["content"] for c in later)
    assert r.final.directive.value == "accept" and "5" in str(r.final.output)


async def test_blocked_commands_accumulate_over_logical_rounds(fakellm, tmp_path):
    """A planner sent from command A to B must not be let back to A: the outside tester's A → B → A
    (heldout/issue13/run_cases14.py). Each logical-failure order blocks every shell command failed so
    far, as the targets of environmental failures accumulate."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "n.txt").write_text("1\n2\n")
    cmds = ["wc -l n.txt", "cat n.txt | wc -l", "grep -c . n.txt", "awk 'END{print NR}' n.txt"]
    fakellm.script("perceiver", [perceive("how many lines has n.txt")])
    fakellm.script("planner", [plan(["the count is given"], sub(f"count with: {c}", "the count is reported",
                                                                 tools=["shell"])) for c in cmds])

    def executor(r):
        if len(r["messages"]) > 2:
            return finish("7")
        return call("shell", command=r["messages"][1]["content"].split("count with: ")[1].split("\n")[0])
    fakellm.responder("executor", executor)
    fakellm.responder("agent_validator", lambda _r: verdicts("fail:logical"))
    r = await run_task(fakellm, tmp_path, "how many lines has n.txt",
                       pipeline={"plan_reasks": 0, "correction_budget": 0},
                       ggs={"max_replans": 3, "time_budget_ms": 10**9, "law2_kill": 3})
    ds = r.of("PlanDirective")
    assert len(ds) >= 2 and all(d.directive.value in ("break_symmetry", "change_approach") for d in ds)
    assert all(d.blocked_tools == [] for d in ds)
    assert [d.blocked_targets for d in ds[:3]] == [[f"shell:{c}" for c in cmds[:i]] for i in (1, 2, 3)][:len(ds)]
    assert r.final.directive.value == "abandon"


async def test_steps_that_passed_run_again_told_why_when_the_final_check_failed_them(fakellm, tmp_path):
    """#13 (write-hello over HTTP on 32bfaad): the step wrote hello.txt and passed its check; the
    meta-validator failed the task ("not 4 lines", a fact nowhere in the evidence); under
    break_symmetry, with no failed step and so no tool to leave, the planner repeated its plan, which
    was rejected as a repeat and the task abandoned. The same steps now run again, told which task
    criterion the final check failed, and the task can end in accept. (The request is one code
    cannot read off the files: "containing exactly the text: Hello, world" is now granted by code
    in the first round.)"""
    ws = tmp_path / "ws"
    ws.mkdir()
    ask = "Write a friendly greeting into hello.txt"
    fakellm.script("perceiver", [perceive(ask)])
    fakellm.responder("planner", lambda _r: plan(["hello.txt holds Hello, world"], sub(
        "Create hello.txt with: Hello, world", "hello.txt holds the text", tools=["write_file"], mode=P)))

    def executor(r):
        told = "The final check rejected" in r["messages"][1]["content"]
        if len(r["messages"]) == 2:
            return call("write_file", path="hello.txt", content="Hello, world")
        return finish("hello.txt now reads: Hello, world" if told else "hello.txt has 12 characters")
    fakellm.responder("executor", executor)
    fakellm.responder("agent_validator", lambda _r: verdicts("pass"))
    fakellm.responder("meta_validator", lambda r: merge("hello.txt written", "pass" if "now reads" in
                                                        r["messages"][-1]["content"] else "fail:logical"))
    async def yes(_req):  # noqa: ANN001, ANN202 - writing hello.txt again overwrites it: asked, approved
        return ConfirmationChoice.APPROVE

    r = await run_task(fakellm, tmp_path, ask, pipeline={"plan_reasks": 1, "correction_budget": 0},
                       ggs={"max_replans": 2, "time_budget_ms": 10**9}, confirm=yes)
    [d] = r.of("PlanDirective")
    assert d.directive.value == "break_symmetry" and d.blocked_tools == [] and d.steps_passed
    assert "Every step passed its checks, but the final check rejected the result" in d.rationale
    assert len(fakellm.calls("planner")) == 2  # the repeated plan was taken, not re-asked
    # no tool failed: the order is to fix what failed, not to leave a tool (index-md on c086234)
    replan = fakellm.calls("planner")[1]["messages"][1]["content"]
    assert ("Directive: BREAK_SYMMETRY: every step passed its own checks, but the final check rejected the "
            "result; fix the details that failed so the result is what the request asks.") in replan
    assert "completely different kind of tool" not in replan
    second = fakellm.calls("executor")[2]["messages"][1]["content"]
    assert ("The final check rejected the last result of these steps on: hello.txt holds Hello, world. "
            "Show in your output, from what the tools return, that it holds.") in second
    assert r.final.directive.value == "accept"
    assert (ws / "hello.txt").read_text() == "Hello, world"


async def test_a_scope_the_user_never_named_does_not_reach_the_planner(fakellm, tmp_path):
    """#13 (uppercase over HTTP): the 1.5B perceiver wrote the scope "files/folders/docs/in.txt,
    docs/out.txt" for a request naming in.txt and out.txt; the planner read docs/in.txt, which does
    not exist, and the task failed. Such a scope is dropped; a named one still reaches the plan."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "in.txt").write_text("hello\n")
    ask = "Write the contents of in.txt converted to upper case into a new file out.txt."
    fakellm.script("perceiver", [Reply.json({"kind": "task", "scope": "files/folders/docs/in.txt, docs/out.txt"})])
    happy_rest = plan(["out.txt holds HELLO"], sub("Convert with: tr a-z A-Z < in.txt > out.txt", "out.txt written",
                                                 tools=["shell"], mode=P))
    fakellm.script("planner", [happy_rest])
    fakellm.script("executor", [call("shell", command="tr a-z A-Z < in.txt > out.txt"), finish("out.txt written")])
    fakellm.script("agent_validator", [verdicts("pass")])
    fakellm.script("meta_validator", [merge("out.txt written", "pass")])
    r = await run_task(fakellm, tmp_path, ask, **FAST)
    [spec] = r.of("TaskSpec")
    assert spec.constraints.scope is None and spec.intent == "write text" and spec.raw_input == ask
    assert "Scope:" not in fakellm.calls("planner")[0]["messages"][1]["content"]
    assert (ws / "out.txt").read_text() == "HELLO\n"
    fakellm.script("perceiver", [Reply.json({"kind": "task", "scope": "in.txt"})])
    fakellm.script("planner", [happy_rest])
    fakellm.script("executor", [call("shell", command="tr a-z A-Z < in.txt > out.txt"), finish("out.txt written")])
    fakellm.script("agent_validator", [verdicts("pass")])
    fakellm.script("meta_validator", [merge("out.txt written", "pass")])
    await run_task(fakellm, tmp_path, ask, **FAST, confirm=_approve)
    assert "Scope: in.txt" in fakellm.calls("planner")[1]["messages"][1]["content"]


async def _approve(_req):  # noqa: ANN001, ANN202
    return ConfirmationChoice.APPROVE


async def test_a_question_plan_does_not_ask_for_a_file_the_user_never_named(fakellm, tmp_path):
    """#13 (json-field over HTTP): for "Which port is configured in config.json?" the 1.5B planner
    added a step `echo 'Port: $PORT' > port.txt` and the criteria "the port number is written to
    port.txt"; a question may change no file, so the task failed on them twice though 8080 was
    found. That step and those criteria go; the answer stands."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.json").write_text('{"host": "localhost", "port": 8080}\n')
    ask = "Which port is configured in config.json?"
    fakellm.script("perceiver", [perceive(ask)])
    fakellm.script("planner", [plan(["the extracted port number is reported in port.txt"],
                                    sub("Find the port in config.json with: grep port config.json",
                                        "the port number is reported", tools=["shell"]),
                                    sub("Write the port to a file with: echo 'Port: $PORT' > port.txt",
                                        "the port number is written to port.txt", seq=2, tools=["shell"]),
                                    checks=["grep -o '[0-9][0-9]*' config.json"])])
    fakellm.script("executor", [call("shell", command="grep port config.json"), finish("8080")])
    fakellm.script("agent_validator", [verdicts("pass", quote="8080")])
    fakellm.script("meta_validator", [merge("8080", "pass")])
    r = await run_task(fakellm, tmp_path, ask, **FAST)
    [st] = r.of("SubTask")
    assert "port.txt" not in st.intent and [c.criterion for c in st.success_criteria] == ["the port number is reported"]
    [crit] = r.of("DispatchManifest")[0].task_criteria
    assert crit.criterion == "the answer to the question is reported: Which port is configured in config.json?"
    assert crit.check.startswith("grep -o")  # the dropped criterion's check still computes the answer
    assert r.final.directive.value == "accept" and "8080" in str(r.final.output)
    assert not (ws / "port.txt").exists()


def _alive(pid: int) -> bool:
    """Running, not a zombie: in a container whose pid 1 does not reap, a killed sandboxed process
    (a grandchild under bwrap) stays a zombie that `kill -0` still finds."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


async def test_a_step_the_plan_repeats_runs_once_with_both_checks(fakellm, tmp_path):
    # wall-settings on the 1.5B model: "Read settings.ini and tell me the value of mode" four times
    # in one plan; the repeats ran the same work again, or were skipped and counted failed (#13)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "settings.ini").write_text("mode = turbo\n")
    ask = "Read settings.ini and tell me the value of mode."
    fakellm.script("perceiver", [perceive(ask)])
    step = "Read settings.ini and tell me the value of mode"
    fakellm.responder("planner", lambda _r: plan(["the value of mode is reported"], sub(step, "mode is read", seq=1),
                                                 sub(step, "mode is read", "the value is shown", seq=2),
                                                 sub(step + ".", "mode is read", seq=3),
                                                 sub("Say the value of mode", "the value is said", seq=4)))
    fakellm.responder("executor", lambda r: call("read_file", path="settings.ini") if len(r["messages"]) == 2
                      else finish("turbo"))
    fakellm.responder("agent_validator", lambda r: verdicts("pass", "pass", quote="mode = turbo")
                      if "the value is shown" in r["messages"][1]["content"] else verdicts("pass", quote="turbo"))
    fakellm.responder("meta_validator", lambda _r: merge("turbo", "pass"))
    r = await run_task(fakellm, tmp_path, ask)
    subtasks = r.of("SubTask")
    assert [s.intent for s in subtasks] == [step, "Say the value of mode"]
    assert [c.criterion for c in subtasks[0].success_criteria] == ["mode is read", "the value is shown"]
    assert r.final.directive.value == "accept"
