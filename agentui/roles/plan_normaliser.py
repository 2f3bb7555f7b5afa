"""Turning the model's plan into the plan that runs, by code and without an LLM: checks that are no
runnable command and what the plan copied from the prompt's example go, repeated steps fold into
one, and a question's plan keeps only what answers it, in one step."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from agentui.roles import grounding as G
from agentui.roles.actions import _runnable
from agentui.roles.plan_prompt import EXAMPLE_WORDS
from agentui.roles.plan_schema import PlanCriterion, PlanOut, PlanState, PlanStep, TaskCriterion
from agentui.tools import fsaccess

#: a file name: a stem, a dot and an extension of 2–5 characters ("port.txt", not "e.g"); hidden
#: ones too (".hidden_name.txt"), but not an extension alone (".txt")
_FILE_NAME = re.compile(r"(?<![\w/.~-])((?:~?/)?\.?\w[\w./-]*\.[A-Za-z][A-Za-z0-9]{1,4})\b")
#: a step that checks what an earlier step did ("Check if the found file contains 'TODO' with: …")
_VERIFIES = re.compile(r"\W*(?:then\s+)?(?:verify|confirm|ensure|validate|make sure|"
                       r"double[- ]?check|check (?:if|whether|that))\b", re.IGNORECASE)
#: a criterion about how a step worked, not what it found ("the content is read successfully")
_PROCESS = re.compile(r"\b(?:is|are|was|were|been|gets?)\s+(?:successfully\s+|correctly\s+)?"
                      r"(?:read|opened|loaded|parsed|extracted|stored|kept|executed|run|searched|"
                      r"checked|processed|accessed)\b", re.IGNORECASE)
#: a placeholder in angle brackets ("<a command>"), not a redirection ("wc -l < f.txt")
_PLACEHOLDER = re.compile(r"<[A-Za-z][^<>|;&]*\s[^<>|;&]*>")


def norm(s: str) -> str:
    """Text as compared for repeats: case, punctuation and spacing aside."""
    return re.sub(r"\W+", " ", s.casefold()).strip()


def one_step(steps: list[PlanStep]) -> PlanStep:
    """A question's steps as one subtask (one numbered line each), so one executor carries the
    answer through them: steps that share no shell variables cannot pass a value along, and a
    separate "check" step after the answering one judges the answer on a side question."""
    criteria = list({c.criterion: c for s in steps for c in s.success_criteria}.values())[:8]
    # one step per line: the executor's first call is the first line's command
    # (actions.suggested_call); one line per step: joined, "file_search X; then check …" reads as
    # one shell command
    intent = "\n".join(f"{i}. {' '.join(s.intent.split())}" for i, s in enumerate(steps, 1))
    return PlanStep(intent=intent, success_criteria=criteria,
                    sequence=1, tools=list(dict.fromkeys(t for s in steps for t in s.tools)),
                    context=" ".join(s.context for s in steps if s.context))


def _unasked_files(text: str, request: str, workspace: Path) -> list[str]:
    """The file names in `text` that the request does not name and the workspace does not have."""
    low = request.casefold()
    return [f for f in _FILE_NAME.findall(text)
            if f.casefold() not in low and not fsaccess.holds(workspace, f)]


def question_only(plan: PlanOut, request: str, workspace: Path) -> list[str]:
    """For a question (it asks for a value and to make or change nothing): drop the steps that name
    a file the request never named and the workspace does not have, the later steps that only
    check what an earlier one did, and the criteria that name such a file, when something else is
    left; a task criterion list left empty asks for the answer (keeping a dropped criterion's check
    when it names no such file). A question may change no file, so a step that writes one, or
    reads one nobody made, can only fail the answer on a side issue; the validators and the task
    criteria's checks judge the answer. Returns what was dropped."""
    dropped: list[str] = []
    first = min(s.sequence for s in plan.subtasks)
    steps = [s for s in plan.subtasks if not (_unasked_files(s.intent, request, workspace)
                                              or s.sequence > first and _VERIFIES.match(s.intent))]
    if steps and len(steps) < len(plan.subtasks):
        dropped += [s.intent for s in plan.subtasks if s not in steps]
        plan.subtasks = steps
    def unasked(text: str) -> bool:
        return bool(_unasked_files(text, request, workspace))

    for s in plan.subtasks:
        kept = [c for c in s.success_criteria if not unasked(c.criterion)]
        if kept and len(kept) < len(s.success_criteria):
            dropped += [c.criterion for c in s.success_criteria if c not in kept]
            s.success_criteria = kept
    task_kept = [c for c in plan.task_criteria if not unasked(c.criterion)]
    if len(task_kept) < len(plan.task_criteria):
        dropped += [c.criterion for c in plan.task_criteria if c not in task_kept]
        # a dropped criterion's check still computes the answer unless it names such a file too
        check = next((c.check for c in plan.task_criteria if c.check and not unasked(c.check)), "")
        plan.task_criteria = task_kept or [TaskCriterion(
            criterion=f"the answer to the question is reported: {request[:200]}", verify=check)]
    return dropped


def judged_on_the_answer(steps: list[PlanStep]) -> list[str]:
    """A question's step is judged on the value it reports, not on how it got it: where a step has
    a criterion that asks for a value (a number, a path, a name), its criteria about the process
    that ask for none ("the content is read successfully") go, as a right answer reached in one
    call would fail them. Returns what was dropped."""
    dropped: list[str] = []
    for s in steps:
        kept = [c for c in s.success_criteria
                if G.asks_for(c.criterion) is not None or not _PROCESS.search(c.criterion)]
        if len(kept) < len(s.success_criteria) and any(G.asks_for(c.criterion) for c in kept):
            dropped += [c.criterion for c in s.success_criteria if c not in kept]
            s.success_criteria = kept
    return dropped


def copies_example(text: str, request: str) -> bool:
    """The text names a word of the prompt's example request that this request does not."""
    low, asked = text.casefold(), request.casefold()
    return any(re.search(rf"(?<![\w.]){re.escape(w)}(?![\w])", low) and w not in asked
               for w in EXAMPLE_WORDS)


def without_example(plan: PlanOut, request: str) -> list[str]:
    """Criteria, checks and steps copied from the prompt's example into a plan for another request
    go ("copied: …"); a check that is a placeholder, or prose rather than a command, goes ("check:
    …"). Returns what was dropped."""
    dropped: list[str] = []
    groups: list[Sequence[PlanCriterion]] = [plan.task_criteria,
                                             *(st.success_criteria for st in plan.subtasks)]
    for crits in groups:
        for c in crits:
            c.check = " ".join(c.check.split())
            if c.check and (_PLACEHOLDER.search(c.check) or not _runnable(c.check)):
                dropped.append(f"check: {c.check}")
                c.check = ""
            elif c.check and copies_example(c.check, request):
                dropped.append(f"copied: {c.check}")
                c.check = ""
    steps = [st for st in plan.subtasks if not copies_example(f"{st.intent} {st.context}", request)]
    if steps and len(steps) < len(plan.subtasks):
        dropped += [f"copied: {st.intent}" for st in plan.subtasks if st not in steps]
        plan.subtasks = steps
    kept = [c for c in plan.task_criteria if not copies_example(c.criterion, request)]
    if len(kept) < len(plan.task_criteria):
        dropped += [f"copied: {c.criterion}" for c in plan.task_criteria if c not in kept]
        plan.task_criteria = kept or [
            TaskCriterion(criterion=f"the result does what the request asks: {request[:200]}")]
    return dropped


def without_duplicates(plan: PlanOut) -> int:
    """Fold each step whose intent and context repeat an earlier step's into that step (its criteria
    added to the first's); how many were folded. A repeat does the same work again when the first
    passed, and when it failed it is skipped and counted failed anyway."""
    kept: dict[tuple[str, str], PlanStep] = {}
    for st in sorted(plan.subtasks, key=lambda x: x.sequence):
        first = kept.setdefault((norm(st.intent), norm(st.context)), st)
        if first is not st:
            have = {norm(c.criterion) for c in first.success_criteria}
            first.success_criteria += [c for c in st.success_criteria
                                       if norm(c.criterion) not in have]
    folded = len(plan.subtasks) - len(kept)
    firsts = {id(k) for k in kept.values()}
    plan.subtasks = [st for st in plan.subtasks if id(st) in firsts]  # in the planner's order
    return folded


def told_why(st: PlanState, plan: PlanOut) -> None:
    """After a round whose steps all passed and whose result the final check failed, steps
    repeated from the last plan carry the task criterion that failed in their context: the
    executor's attempt then differs from the one rejected."""
    d = st.directive
    if d is None or not d.steps_passed or st.last_plan is None:
        return
    old = {norm(s.intent) for s in st.last_plan.subtasks}
    # one line: a criterion cannot forge prompt lines
    said = " ".join(d.failed_criterion.split())[:200]
    why = f"The final check rejected the last result of these steps on: {said}. " \
          "Show in your output, from what the tools return, that it holds."
    for s in plan.subtasks:
        if norm(s.intent) in old and why not in s.context:
            s.context = f"{s.context} {why}".strip()


#: a change the normaliser made: its task-log kind and what it changed
Change = tuple[str, dict[str, object]]


def steps_to_run(plan: PlanOut, request: str, workspace: Path, *,
                 question: bool) -> tuple[list[PlanStep], list[Change]]:
    """The steps to dispatch, in order, and each change made: repeated steps folded; for a
    question, only what answers it, a chain of steps merged into one, each judged on its answer."""
    changes: list[Change] = []
    if folded := without_duplicates(plan):
        changes.append(("plan_duplicates", {"folded": folded}))
    if question and (dropped := question_only(plan, request, workspace)):
        changes.append(("plan_question_only", {"dropped": dropped}))
    steps = sorted(plan.subtasks, key=lambda s: s.sequence)
    if question and len(steps) > 1 and len({s.sequence for s in steps}) == len(steps):
        # a chain of steps, not parallel parts (each of those carries its own answer)
        steps = [one_step(steps)]
        changes.append(("plan_merged", {"steps": len(plan.subtasks)}))
    if question and (dropped := judged_on_the_answer(steps)):
        changes.append(("plan_process_criteria", {"dropped": dropped}))
    return steps, changes
