"""The code plan validator: whether a plan may run, and what the planner is re-asked when it may
not — a blocked tool or target, what memory says must not be done, the previous plan again under
break_symmetry, a copy of the prompt's example, a question's plan without a check."""

from __future__ import annotations

from collections.abc import Collection

from agentui.contracts import ActionDirective
from agentui.roles.actions import COMMAND_TOOLS, REPEATED_PLAN
from agentui.roles.plan_normaliser import norm
from agentui.roles.plan_schema import PlanOut, PlanState

COPIED_EXAMPLE = ("the plan copies the example (app.log, ERROR) instead of this request: write the "
                  "task criteria, their verify commands and the steps for THIS request")
NO_CHECK = ("no task criterion has a check: give the criterion about the answer a check, one "
            "read-only shell command that prints the value asked for by another method than the "
            "step's")


def has_check(plan: PlanOut) -> bool:
    return any(c.check.strip() for c in plan.task_criteria)


def plan_problem(plan: PlanOut, st: PlanState, known_tools: Collection[str] | None) -> str | None:
    """The problem that keeps the plan from running, or None. Tool names not in `known_tools`
    (None: no registry) are taken off the steps first: an unknown name means "any tool"."""
    for i, s in enumerate(plan.subtasks, 1):
        if known_tools is not None:
            s.tools = [t for t in s.tools if t in known_tools]
        used = set(s.tools) & st.blocked_tools
        if used:
            return f"subtask {i} uses blocked tool(s) {', '.join(sorted(used))}"
        text = f"{s.intent}\n{s.context}"
        for bt in st.blocked_targets:
            tool, _, target = bt.partition(":")
            # a blocked command named in the step is that command again; a blocked path or query
            # named in a step that may use another tool is a thing to reach another way — the
            # executor refuses the blocked call itself
            other_way = tool not in COMMAND_TOOLS and bool(set(s.tools) - {tool})
            may_use = not s.tools or tool in s.tools
            if len(target) >= 3 and target in text and may_use and not other_way:
                return f"subtask {i} repeats the blocked target '{target}' with {tool}"
        for tool, target, rule in st.memory_constraints:  # v0.8 Key Invariant: memory MUST NOT
            if len(target) >= 3 and target in text and (not s.tools or tool in s.tools):
                return (f"subtask {i} uses {tool} on {target!r}, which memory says must not be "
                        f"done ({rule[:120]})")
    if (st.directive is not None and st.directive.directive == ActionDirective.BREAK_SYMMETRY
            and not st.directive.steps_passed and st.last_plan is not None
            and st.blocked_tools <= st.last_blocked
            and set(st.blocked_targets) <= st.last_blocked_targets):
        # a tool or shell command blocked since the last plan makes the same steps run another
        # way: the executor cannot use it. When every step passed and the final check failed the
        # result, the same steps run again told why (plan_normaliser.told_why)
        old = {norm(s.intent) for s in st.last_plan.subtasks}
        new = {norm(s.intent) for s in plan.subtasks}
        if new == old:
            return REPEATED_PLAN
    return None


def reask(problem: str | None, told: str | None, plan: PlanOut, dropped: list[str], *,
          more: bool, asks_value: bool) -> str | None:
    """What to re-ask a plan the validator let through (`problem` None; otherwise `problem`):
    a plan that copied the prompt's example, or a plan for a request that asks for a value whose
    task criteria carry no check. Each is asked once (`told` is what the last re-ask said) and only
    while a re-ask is left (`more`); a plan that does it again runs."""
    if problem is not None or not more:
        return problem
    if told not in (COPIED_EXAMPLE, NO_CHECK) and any(d.startswith("copied: ") for d in dropped):
        return COPIED_EXAMPLE
    if told != NO_CHECK and not has_check(plan) and asks_value:
        return NO_CHECK  # a plan still without one runs, and R4b cannot confirm it
    return None
