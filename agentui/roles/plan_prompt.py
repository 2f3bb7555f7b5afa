"""The planner's prompt: its system prompt (agentui/roles/prompts/planner.md) and the user message
built from the request, memory's advice, what is blocked and GGS's directive."""

from __future__ import annotations

from agentui.contracts import ActionDirective, PlanDirective
from agentui.roles.actions import WORKSPACE_LINE
from agentui.roles.plan_schema import PlanState
from agentui.roles.prompts import load

PROMPT = load("planner")
SYSTEM = PROMPT.text
#: the system prompt of a re-ask after an unusable reply: no example, and fewer subtasks
SHORT_SYSTEM = PROMPT.rules + " One subtask if you can."

#: words of the prompt's example request; in a plan for a request without them, they were copied
EXAMPLE_WORDS = ("app.log", "error")

DIRECTIVE_TEXT = {
    ActionDirective.REFINE:
        "REFINE: the approach is right; tighten parameters, fix the details that failed.",
    ActionDirective.CHANGE_PATH:
        "CHANGE_PATH: the approach is right but the environment blocked it; use the same kind of "
        "tool on a different target, path or command.",
    ActionDirective.CHANGE_APPROACH:
        "CHANGE_APPROACH: the method was logically wrong; use a different method.",
    ActionDirective.BREAK_SYMMETRY:
        "BREAK_SYMMETRY: stuck with a wrong approach; use a completely different kind of tool and "
        "a plan unlike the previous one.",
}
#: break_symmetry / change_approach after a round whose steps all passed and whose result only the
#: final check failed: no tool failed, so the order is to fix what failed, not to change tools
STEPS_PASSED_TEXT = ("{name}: every step passed its own checks, but the final check rejected the "
                     "result; fix the details that failed so the result is what the request asks.")


def directive_text(d: PlanDirective) -> str:
    """The planner's one-line order for a directive."""
    if d.steps_passed and d.directive in (ActionDirective.BREAK_SYMMETRY,
                                          ActionDirective.CHANGE_APPROACH):
        return STEPS_PASSED_TEXT.format(name=d.directive.value.upper())
    return DIRECTIVE_TEXT[d.directive]


def plan_messages(st: PlanState, tools: list[str], must_not: list[str], prefer: list[str],
                  problem: str | None, *, short: bool = False) -> list[dict[str, str]]:
    """The planner's messages for one attempt: `tools` are the names it may use, `must_not` and
    `prefer` memory's advice, `problem` why its previous plan was rejected; `short` is the re-ask
    after an unusable reply (no example, no memory advice)."""
    spec = st.spec
    if short:
        prefer = []
    lines = [WORKSPACE_LINE, f"Tools: {', '.join(tools)}"]
    if spec.history:  # a follow-up names what it refers to only through these
        earlier = "\n".join(f"- {t[:300]}" for t in spec.history[-3:])
        lines.append(f"Earlier in this session:\n{earlier}")
    lines += [f"Request (verbatim): {spec.raw_input}", f"Intent: {spec.intent}"]
    if spec.constraints.scope:
        lines.append(f"Scope: {spec.constraints.scope}")
    if st.located:
        lines.append("Paths:\n" + "\n".join(f"- {x}" for x in st.located))
    forbidden = [*must_not, *(f"tool {t}" for t in sorted(st.blocked_tools)),
                 *(f"retrying {t}" for t in st.blocked_targets)]
    if forbidden:
        lines.append("MUST NOT:\n" + "\n".join(f"- {x}" for x in forbidden[:12]))
    if prefer:
        lines.append("SHOULD PREFER:\n" + "\n".join(f"- {x}" for x in prefer[:6]))
    if st.directive is not None:
        d = st.directive
        lines.append(f"This is replan round {st.round}. Directive: {directive_text(d)}")
        lines.append(f"Why: {d.rationale[:600]}")
        if st.last_plan is not None:
            prev = "; ".join(s.intent[:120] for s in st.last_plan.subtasks)
            lines.append(f"Previous plan: {prev}")
    if problem:
        lines.append(f"Your previous plan was rejected: {problem}. Produce a corrected plan.")
    return [{"role": "system", "content": SHORT_SYSTEM if short else SYSTEM},
            {"role": "user", "content": "\n".join(lines)}]
