"""The agent side of one iteration: the tree planner's execute-or-decompose decision (its own
structured LLM call, role `tree_planner`) and one role-pipeline task on the leaf.

Outcome mapping (documented in docs/tree.md, One iteration):

| pipeline end                                   | agent status | attempt |
|------------------------------------------------|--------------|---------|
| tree planner: decompose with valid children    | decomposed   | no      |
| FinalResult accept / success                   | done → guard | on guard fail |
| FinalResult abandon                            | retry        | yes     |
| PerceiverReply (no task was run)               | retry        | yes     |
| TaskEnd.infra (the endpoint failed)            | runner error | no, stop |
| any other directive                            | runner error | no, stop |
| cancelled by the iteration timeout             | runner error | no, stop |
| LLM endpoint down / reply unparseable          | runner error | no, stop |
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentui.roles.prompts import load
from agentui.tree.model import Node, index
from agentui.tree.schema import MAX_CHILDREN
from agentui.tree.view import MARK, node_state


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


PLANNER_PROMPT = load("tree_planner")  # agentui/roles/prompts/tree_planner.md; field $max_children


CHARS_PER_TOKEN = 4  # the usual estimate for English text and code
TREE_BUDGET_TOKENS = 1000  # the tree's share of the planner prompt, whatever the tree's size
GOAL_CHARS = 2000  # the node's own goal, and each acceptance criterion below
CRITERION_CHARS = 300
MAX_CRITERIA = 10
TITLE_CHARS = 80


def planner_messages(node: Node, tree: Node, *, max_children: int,
                     budget_tokens: int = TREE_BUDGET_TOKENS) -> list[dict[str, str]]:
    """The node in full (bounded) and the tree around it summarised within `budget_tokens`: the
    prompt stays the same size for 10 nodes or 10,000, so any tree fits a small model's context."""
    crits = [f"- {_clip(a, CRITERION_CHARS)}" for a in node.acceptance[:MAX_CRITERIA]]
    if len(node.acceptance) > MAX_CRITERIA:
        crits.append(f"- … and {len(node.acceptance) - MAX_CRITERIA} more")
    crit = "\n".join(crits) or "- (none given)"
    user = (f"Node {node.id}: {node.title}\nGoal: {_clip(node.goal, GOAL_CHARS)}\nAcceptance:\n{crit}\n\n"
            "Where it sits in the tree (read-only):\n" + "\n".join(tree_summary(tree, node.id, budget_tokens)))
    return [{"role": "system", "content": PLANNER_PROMPT.render(max_children=max_children)},
            {"role": "user", "content": user}]


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _row(n: Node, note: str = "") -> str:
    return f"{MARK[node_state(n)]} {n.id}: {_clip(n.title, TITLE_CHARS)}{note}"


def tree_summary(tree: Node, node_id: str, budget_tokens: int = TREE_BUDGET_TOKENS) -> list[str]:
    """Counts for the whole tree, the node's ancestors (nearest first when some must go) and its
    siblings (nearest first), each dropped part counted, all within `budget_tokens` (estimated at
    CHARS_PER_TOKEN characters a token)."""
    idx = index(tree)
    entry = idx.get(node_id)
    states = [node_state(e.node) for e in idx.values()]
    passed, stuck = states.count("passed"), states.count("stuck")
    open_leaves = sum(1 for e in idx.values() if e.node.is_leaf and node_state(e.node) == "open")
    head = f"The tree has {len(idx)} nodes: {passed} passed, {stuck} stuck, {open_leaves} open leaves."
    if entry is None:
        return [head]
    budget = budget_tokens * CHARS_PER_TOKEN - len(head) - 200  # 200: headings and the "not shown" lines
    chain: list[Node] = []
    p = entry.parent
    while p is not None:
        chain.append(p)  # nearest first
        p = idx[p.id].parent
    kept_chain: list[str] = []
    for depth_up, a in enumerate(chain):
        line = _row(a)
        if len(line) + 1 > budget // 2 - sum(len(x) + 1 for x in kept_chain) and depth_up > 0:
            break
        kept_chain.append(line)
    budget -= sum(len(x) + 1 for x in kept_chain)
    sibs = sorted(entry.parent.children, key=Node.key) if entry.parent is not None else [entry.node]
    at = next(i for i, c in enumerate(sibs) if c.id == node_id)
    lo, hi = at, at + 1
    used = len(_row(entry.node, "  ← this node")) + 1
    while lo > 0 or hi < len(sibs):  # grow the window around the node, nearer siblings first
        grew = False
        for j in ((lo - 1,) if lo > 0 else ()) + ((hi,) if hi < len(sibs) else ()):
            cost = len(_row(sibs[j])) + 1
            if used + cost > budget:
                continue
            used += cost
            grew = True
            if j < lo:
                lo = j
            else:
                hi = j + 1
        if not grew:
            break
    lines = [head]
    if chain:
        lines.append("Ancestors (root first):")
        if len(kept_chain) < len(chain):
            lines.append(f"  … {len(chain) - len(kept_chain)} higher ancestors not shown")
        lines += [f"  {x}" for x in reversed(kept_chain)]
        lines.append("The node and its siblings, in order:")
    if lo > 0:
        lines.append(f"  … {lo} earlier siblings ({sum(1 for c in sibs[:lo] if c.passes)} passed) not shown")
    lines += [f"  {_row(c, '  ← this node' if c.id == node_id else '')}" for c in sibs[lo:hi]]
    if hi < len(sibs):
        rest = sibs[hi:]
        lines.append(f"  … {len(rest)} later siblings ({sum(1 for c in rest if c.passes)} passed) not shown")
    elsewhere = len(idx) - len(chain) - len(sibs)
    if elsewhere > 0:
        lines.append(f"{elsewhere} nodes elsewhere in the tree are not shown (counted above).")
    return lines


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


def task_text(node: Node, *, history: str = "", failure: str = "", progress: str = "") -> str:
    """The one task the pipeline gets: the leaf's goal and criteria, what earlier iterations found
    (progress notes, capped by the config), plus what went wrong last time."""
    parts = [node.goal.strip() or node.title]
    if node.acceptance:
        parts.append("Done when: " + "; ".join(a.strip() for a in node.acceptance) + ".")
    notes = [ln[2:] for ln in progress.splitlines() if ln.startswith("- ")]
    if notes:
        parts.append("Notes from earlier iterations of this tree:\n" + "\n".join(f"- {n}" for n in notes))
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
    tree_text: str | None = None  # tree.json as the agent left it, read before the guard ran


def map_task_end(end: Any) -> AgentOutcome:
    """A runtime TaskEnd onto the agent status model (the table above)."""
    infra = getattr(end, "infra", None)
    if infra:  # the LLM endpoint failed — not a verdict on the leaf
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
