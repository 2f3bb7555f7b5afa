"""The agent side of one iteration: the tree planner's execute-or-decompose decision (its own
structured LLM call, role `tree_planner`) and one role-pipeline task on the leaf.

Outcome mapping (documented in the README, issue #16):

| pipeline end                                   | agent status | attempt |
|------------------------------------------------|--------------|---------|
| tree planner: decompose with valid children    | decomposed   | no      |
| FinalResult accept / success                   | done → guard | on guard fail |
| FinalResult abandon                            | retry        | yes     |
| PerceiverReply (no task was run)               | retry        | yes     |
| TaskEnd.infra (#12: the endpoint failed)       | runner error | no, stop |
| any other directive                            | runner error | no, stop |
| cancelled by the iteration timeout             | runner error | no, stop |
| LLM endpoint down / reply unparseable          | runner error | no, stop |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentui.tree.model import Node
from agentui.tree.schema import MAX_CHILDREN


class ChildSpec(BaseModel):
    # no min_length: an empty title is an invalid decomposition (agent error → retry), not a parse error
    title: str = Field(max_length=120, description="short imperative title")
    goal: str = Field("", max_length=600, description="what this child must achieve")
    acceptance: list[str] = Field(default_factory=list, max_length=4, description="checkable criteria")


class PlannerDecision(BaseModel):
    """The tree planner's reply: run the leaf as one task, or split it into ordered children."""

    decision: Literal["execute", "decompose"]
    reason: str = Field("", max_length=400)
    children: list[ChildSpec] = Field(default_factory=list, max_length=MAX_CHILDREN)
    assumptions: list[str] = Field(default_factory=list, max_length=4)
    questions: list[str] = Field(default_factory=list, max_length=4)


PLANNER_SYSTEM = (
    "You decide how to work one node of a task tree. Answer `execute` when one focused task by a "
    "coding agent with shell and file tools can finish the node's goal and acceptance criteria. Answer "
    "`decompose` only when the node is clearly too large for one task: then give 2 to {max_children} "
    "ordered children, each small, concrete and checkable, that together achieve the goal. Record "
    "assumptions you make and questions for the human; never wait for answers."
)


def planner_messages(node: Node, tree_outline: list[str], *, max_children: int) -> list[dict[str, str]]:
    crit = "\n".join(f"- {a}" for a in node.acceptance) or "- (none given)"
    user = (f"Node {node.id}: {node.title}\nGoal: {node.goal}\nAcceptance:\n{crit}\n\n"
            "The whole tree (read-only):\n" + "\n".join(tree_outline))
    return [{"role": "system", "content": PLANNER_SYSTEM.format(max_children=max_children)},
            {"role": "user", "content": user}]


def decomposition_problems(d: PlannerDecision, *, max_children: int) -> list[str]:
    """Why a `decompose` answer cannot become children (empty = valid), sorted."""
    probs = []
    n = len(d.children)
    if n < 2 or n > max_children:
        probs.append(f"decompose needs 2..{max_children} children, got {n}")
    titles = [c.title.strip().lower() for c in d.children]
    if len(set(titles)) != len(titles):
        probs.append("children titles must be distinct")
    if any(not c.title.strip() for c in d.children):
        probs.append("a child has an empty title")
    return sorted(probs)


def goal_md(node: Node, path: str) -> str:
    crit = "".join(f"- {a}\n" for a in node.acceptance) or "- (none given)\n"
    return f"# {node.title}\n\nNode `{node.id}` (path `{path}`)\n\n## Goal\n\n{node.goal}\n\n## Acceptance\n\n{crit}"


def task_text(node: Node, *, history: str = "", failure: str = "") -> str:
    """The one task the pipeline gets: the leaf's goal and criteria, plus what went wrong last time."""
    parts = [node.goal.strip() or node.title]
    if node.acceptance:
        parts.append("Done when: " + "; ".join(a.strip() for a in node.acceptance) + ".")
    if history:
        parts.append("Previous attempt: " + history.strip()[:800])
    if failure:
        parts.append("The check failed last time; its output ends with:\n" + failure.strip()[-1500:])
    parts.append("Work in the current directory. Do not edit .agentui/.")
    return "\n\n".join(parts)


@dataclass
class AgentOutcome:
    status: str = ""  # done | retry | decomposed; "" when `internal` is set
    summary: str = ""
    internal: str = ""  # runner-internal failure kind: timeout | llm | parse | pipeline
    detail: str = ""
    decision: dict[str, Any] | None = None
    children: list[dict[str, Any]] = field(default_factory=list)
    agent_errors: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    task_id: str = ""
    stats: dict[str, Any] = field(default_factory=dict)


def map_task_end(end: Any) -> AgentOutcome:
    """A runtime TaskEnd onto the agent status model (the table above)."""
    infra = getattr(end, "infra", None)
    if infra:  # #12: the LLM endpoint failed — not a verdict on the leaf
        return AgentOutcome(internal="llm", detail=f"LLM endpoint failed: {infra.get('message') or infra}")
    if end.cancelled:
        kind = "timeout" if "timed out" in (end.reason or "") else "pipeline"
        return AgentOutcome(internal=kind, detail=f"pipeline task cancelled: {end.reason}")
    if end.final is not None:
        f = end.final
        d = getattr(f.directive, "value", str(f.directive))
        if d in ("accept", "success"):
            return AgentOutcome(status="done", summary=f.summary)
        if d == "abandon":
            return AgentOutcome(status="retry", summary=f.summary, questions=list(f.next_moves))
        return AgentOutcome(internal="llm", detail=f"pipeline ended with {d}: {f.summary}")
    if end.reply is not None:
        return AgentOutcome(status="retry",
                            summary="the pipeline answered without running a task: " + end.reply.text[:300])
    return AgentOutcome(internal="pipeline", detail="the pipeline ended without a result")


def outcome_file(o: AgentOutcome) -> dict[str, Any]:
    return {"status": o.status or "error", "summary": o.summary or o.detail}


def data_subdir(iter_dir: Path) -> Path:
    return iter_dir / "pipeline"
