"""Memory keys on the kind of work: like tasks meet, unlike ones do not, whatever their wording.

Real LevelDB, the fake LLM over HTTP, real tools. The perceiver is scripted to copy the whole request
into its intent, as a small model does: code, not the model, decides the kind of work.
"""

from __future__ import annotations

import asyncio
import json

from agentui.clock import SystemClock
from agentui.describe import detail
from agentui.ids import UuidIds
from agentui.memory import open_memory
from tests.functional.pipeline import call, finish, merge, perceive, plan, run_task, sub, verdicts

FAST = {"ggs": {"time_budget_ms": 10**9}}
FAIL_FAST = {"ggs": {"time_budget_ms": 10**9, "max_replans": 1}}

SIZE_BY_EXT = ("As a student, you are required to calculate the total size of all files with a specific "
               "extension in 'problem_directory'.")
COUNT_DIRS = ("As a student, you are given a task to determine the number of directories (including "
              "subdirectories) in 'problem_directory'.")
SIZE_OTHER_WORDS = "How much disk space do the .log files under problem_directory take up together?"


def _failing(fake, request: str) -> None:
    """Every round: the step runs a command that fails, the validators fail it."""
    fake.responder("perceiver", lambda _r: perceive(request))
    fake.responder("planner", lambda _r: plan(["the total is given"],
                                              sub("Sum the sizes with: du -cb problem_directory/*.ext",
                                                  "a number is reported", tools=["shell"]),
                                              checks=["du -cb problem_directory/*.ext"]))
    fake.responder("executor", lambda r: call("shell", command="du -cb problem_directory/*.ext")
                   if len(r["messages"]) == 2 else finish("no total"))
    fake.responder("agent_validator", lambda _r: verdicts("fail:environmental"))
    fake.responder("meta_validator", lambda _r: merge("no total", "fail:environmental"))


def _happy(fake, request: str, command: str, answer: str) -> None:
    fake.responder("perceiver", lambda _r: perceive(request))
    fake.responder("planner", lambda _r: plan(["the answer is given"],
                                              sub(f"Run: {command}", "a number is reported", tools=["shell"]),
                                              checks=[command]))
    fake.responder("executor", lambda r: call("shell", command=command) if len(r["messages"]) == 2 else finish(answer))
    fake.responder("agent_validator", lambda _r: verdicts("pass", quote=answer))
    fake.responder("meta_validator", lambda _r: merge(answer, "pass"))


def _calibration(tmp_path, task_id: str) -> dict:
    log = (tmp_path / "data" / "tasks" / f"{task_id}.jsonl").read_text().splitlines()
    # the harness's seeded ids start again in each run: the task's last calibration is this run's
    return [r for r in map(json.loads, log) if r["kind"] == "memory_calibration"][-1]


def _planner_prompt(fake, nth: int) -> str:
    return fake.calls("planner")[nth]["messages"][1]["content"]


def _workspace(tmp_path):
    ws = tmp_path / "ws"
    (ws / "problem_directory" / "a" / "b").mkdir(parents=True, exist_ok=True)
    (ws / "problem_directory" / "x.log").write_text("12345\n")
    return ws


async def test_requests_sharing_their_first_words_but_not_their_work_share_no_lesson(fakellm, tmp_path):
    _workspace(tmp_path)
    db = tmp_path / "memory.leveldb"
    _failing(fakellm, SIZE_BY_EXT)
    r1 = await run_task(fakellm, tmp_path, SIZE_BY_EXT, memory=open_memory(db, SystemClock(), UuidIds()), **FAIL_FAST)
    assert r1.final.directive.value == "abandon"

    n = len(fakellm.calls("planner"))
    _happy(fakellm, COUNT_DIRS, "find problem_directory -mindepth 1 -type d | wc -l", "2")
    r2 = await run_task(fakellm, tmp_path, COUNT_DIRS, memory=open_memory(db, SystemClock(), UuidIds()), **FAST)
    prompt = _planner_prompt(fakellm, n)
    assert "MUST NOT" not in prompt and "du -cb" not in prompt and "total size" not in prompt
    assert r2.final.directive.value == "accept"
    assert r2.of("TaskSpec")[0].intent == "count directories in a directory tree"
    cal = _calibration(tmp_path, r2.final.task_id)
    assert cal["spaces"] == ["intent:count_directories"] and cal["megrams"] == []
    # what the first task left: a lesson in its own kind's space, in commands, not its request
    written = {m.space for m in r1.of("Megram") if m.space.startswith("intent:")}
    assert written == {"intent:sum_size"}
    [lesson] = [m for m in r1.of("Megram") if m.space.startswith("intent:")]
    assert "student" not in lesson.content and "problem_directory'" not in lesson.content
    assert "du -cb problem_directory/*.ext" in lesson.content


async def test_requests_sharing_their_work_but_not_their_words_share_the_lesson(fakellm, tmp_path):
    _workspace(tmp_path)
    db = tmp_path / "memory.leveldb"
    _failing(fakellm, SIZE_BY_EXT)
    r1 = await run_task(fakellm, tmp_path, SIZE_BY_EXT, memory=open_memory(db, SystemClock(), UuidIds()), **FAIL_FAST)
    assert r1.final.directive.value == "abandon"
    [lesson] = [m for m in r1.of("Megram") if m.space.startswith("intent:")]

    n = len(fakellm.calls("planner"))
    # the model words this one its own way; code still reads the same kind of work
    _happy(fakellm, "find out the disk space that log files use", "du -cb problem_directory/*.log | tail -1", "6")
    r2 = await run_task(fakellm, tmp_path, SIZE_OTHER_WORDS, memory=open_memory(db, SystemClock(), UuidIds()), **FAST)
    prompt = _planner_prompt(fakellm, n)
    assert "MUST NOT:\n" in prompt and "du -cb problem_directory/*.ext" in prompt
    cal = _calibration(tmp_path, r2.final.task_id)
    assert cal["spaces"] == ["intent:sum_size"] and cal["megrams"] == [lesson.id]
    must_not = prompt.split("MUST NOT:\n")[1].split("\n")[0]
    assert must_not.startswith(
        '- failed (abandon) for "sum size by extension": avoid shell `du -cb problem_directory/*.ext` '
        "(du: cannot access 'problem_directory/*.ext': No such file or directory)"
    )
    assert f"[memory {lesson.id}, " in must_not  # where the lesson came from
    assert "student" not in prompt.split("Request (verbatim)")[0] + prompt.split("Intent:")[1]
    assert r2.final.directive.value == "accept"
    # the plan names the Megrams it was made with, on the bus, for the UI and ACP to show
    [manifest] = [e for e in r2.envelopes if e.type == "DispatchManifest"]
    assert manifest.payload.memory_ids == [lesson.id]
    assert detail(manifest).endswith(f"planned with memory {lesson.id}")


async def test_a_drifting_model_intent_still_meets_the_request_kind(fakellm, tmp_path):
    """The model's intent reads as another kind than the request: the lesson goes to both spaces,
    and a later task with the request's kind finds it."""
    _workspace(tmp_path)
    db = tmp_path / "memory.leveldb"
    _happy(fakellm, "list the directory tree", "find problem_directory -mindepth 1 -type d | wc -l", "2")
    r1 = await run_task(fakellm, tmp_path, COUNT_DIRS, memory=open_memory(db, SystemClock(), UuidIds()), **FAST)
    assert r1.of("TaskSpec")[0].intent == "list directories in a directory tree"
    spaces = sorted(m.space for m in r1.of("Megram"))
    assert spaces == ["intent:count_directories", "intent:list_directories"]
    assert len({m.content for m in r1.of("Megram")}) == 1

    n = len(fakellm.calls("planner"))
    _happy(fakellm, "How many folders are in problem_directory?", "find problem_directory -type d | wc -l", "3")
    r2 = await run_task(fakellm, tmp_path, "How many folders are in problem_directory?",
                        memory=open_memory(db, SystemClock(), UuidIds()), **FAST)
    prompt = _planner_prompt(fakellm, n)
    assert "SHOULD PREFER:\n- worked (accept) for \"list directories in a directory tree\": 1 step(s) [shell]; " \
           "calls that worked: shell `find problem_directory -mindepth 1 -type d | wc -l` [memory " in prompt
    assert r2.final.directive.value == "accept"


# unseen requests of four kinds, run one after another with one data dir; the kind each is, by hand
SEQUENCE = [
    ("As a student, you are required to calculate the total size of all files in 'problem_directory'.", "size"),
    ("As a student, you are given a task to determine the number of directories in 'problem_directory'.", "dirs"),
    ("How many lines does problem_directory/x.log have?", "lines"),
    ("What is the combined size of everything under problem_directory?", "size"),
    ("Count the folders inside problem_directory, nested ones included.", "dirs"),
    ("As a student, you need to find how many lines the file problem_directory/x.log contains.", "lines"),
    ("Tell me how much disk space problem_directory uses.", "size"),
    ("How many subdirectories does problem_directory have?", "dirs"),
]


async def test_a_sequence_of_unseen_tasks_meets_only_lessons_of_its_own_kind(fakellm, tmp_path):
    """Every plan in a run of mixed tasks on one memory is shown lessons only from earlier tasks of
    its own kind: odd tasks fail (a lesson to avoid), even ones succeed (a lesson to follow)."""
    from agentui.llm import LLMPool
    from agentui.runtime import Runtime
    from tests.functional.pipeline import config_for

    _workspace(tmp_path)
    mem = open_memory(tmp_path / "memory.leveldb", SystemClock(), UuidIds())
    cfg = config_for(fakellm, tmp_path / "data", ggs={"time_budget_ms": 10**9, "max_replans": 1})
    kind_of: dict[str, str] = {}  # Megram id → the kind of the task that wrote it
    for i, (request, kind) in enumerate(SEQUENCE):
        if i % 2:
            _failing(fakellm, request)
        else:
            _happy(fakellm, request, "echo 3", "3")
        rt = Runtime(cfg, workspace=tmp_path / "ws", data_dir=tmp_path / "data", pool=LLMPool(cfg), ids=UuidIds(),
                     memory=mem, close_memory=False)
        await rt.start()
        tap = rt.bus.tap("test")
        end = await rt.run_task(request, timeout=30)
        await asyncio.sleep(0.05)
        envs = tap.drain()
        await rt.stop()
        assert end.final is not None
        shown = _calibration(tmp_path, end.final.task_id)["megrams"]
        assert all(kind_of[mid] == kind for mid in shown), (request, [kind_of[m] for m in shown])
        if i >= 3:  # by now every kind has an earlier task: its lessons are found
            assert shown, request
        kind_of.update({e.payload.id: kind for e in envs if e.type == "Megram"})
    await mem.close()


SIZE_RULE = ('worked (success) for "sum size by extension": 1 step(s) [shell]; calls that worked: '
             "shell `du -cb problem_directory/*.log | tail -1`")


async def test_another_kinds_rule_and_mixed_record_neither_reach_a_plan_nor_pause_it(fakellm, tmp_path):
    """A consolidated rule and a mixed record (memory's Caution band, which asks the user and shows
    the lessons in the question) of one kind of work: a request with the same first words and other
    work meets neither and is asked nothing; the same work in other words meets both."""
    from agentui.contracts import ConfirmationChoice
    from agentui.memory import ENV_LOCAL
    from agentui.memory.workkind import request_space

    _workspace(tmp_path)
    db = tmp_path / "memory.leveldb"
    mem = open_memory(db, SystemClock(), UuidIds())
    space = request_space(SIZE_BY_EXT)
    assert space == "intent:sum_size"
    rule = mem.remember(SIZE_RULE, level="C", space=space, entity=ENV_LOCAL, sigma=1.0)
    good = mem.remember('worked (accept) for "sum size": 1 step(s) [shell]', level="M", space=space,
                        entity=ENV_LOCAL, sigma=1.0, f=0.9, k=0.05)
    bad = mem.remember('failed (abandon) for "sum size": avoid shell `du -cb problem_directory/*.ext`', level="M",
                       space=space, entity=ENV_LOCAL, sigma=-1.0, f=0.9, k=0.05)
    await mem.close()
    asked: list = []

    async def confirm(req):  # noqa: ANN001, ANN202
        asked.append(req)
        return ConfirmationChoice.APPROVE

    _happy(fakellm, COUNT_DIRS, "find problem_directory -mindepth 1 -type d | wc -l", "2")
    r1 = await run_task(fakellm, tmp_path, COUNT_DIRS, confirm=confirm,
                        memory=open_memory(db, SystemClock(), UuidIds()), **FAST)
    assert r1.final.directive.value == "accept" and asked == []
    cal = _calibration(tmp_path, r1.final.task_id)
    assert (cal["megrams"], cal["caution"], cal["prefer"], cal["must_not"]) == ([], [], [], [])
    assert "du -cb" not in _planner_prompt(fakellm, 0) and "sum size" not in _planner_prompt(fakellm, 0)
    [manifest] = [e.payload for e in r1.envelopes if e.type == "DispatchManifest"]
    assert manifest.memory_ids == []

    n = len(fakellm.calls("planner"))
    _happy(fakellm, "find out the disk space that log files use", "du -cb problem_directory/*.log | tail -1", "6")
    r2 = await run_task(fakellm, tmp_path, SIZE_OTHER_WORDS, confirm=confirm,
                        memory=open_memory(db, SystemClock(), UuidIds()), **FAST)
    assert r2.final.directive.value == "accept"
    [caution] = asked  # the mixed record of its own kind: asked once, its lessons in the question
    assert caution.caution and any("du -cb problem_directory/*.ext" in x for x in caution.reasons)
    cal = _calibration(tmp_path, r2.final.task_id)
    assert cal["megrams"][0] == rule.id and set(cal["megrams"]) == {rule.id, good.id, bad.id}
    assert SIZE_RULE in _planner_prompt(fakellm, n)
