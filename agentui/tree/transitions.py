"""Runner-owned state transitions (decision log 2026-01-17 "Runner-owned state transition
semantics" and "Agent-declared status model").

Order of application: reset runner-owned fields from the previous tree → check immutability and
the status invariant → apply the transition row to the selected leaf → derive parents' `passes`
bottom-up → sort siblings. A violation by the agent turns the iteration into a `retry` on the
previous tree (attempts + 1); it never raises past `apply_iteration`.

| status     | guard   | passes    | attempts            |
|------------|---------|-----------|---------------------|
| done       | pass    | true      | unchanged           |
| done       | fail    | unchanged | +1 (saturates)      |
| retry      | skipped | unchanged | +1 (saturates)      |
| decomposed | skipped | unchanged | unchanged           |
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentui.tree.model import Node, derive_passes, index, invariant_errors
from agentui.tree.schema import MAX_ID_LEN

STATUSES = ("done", "retry", "decomposed")
GUARDS = ("pass", "fail", "skipped")


def reset_runner_owned(prev: Node, nxt: Node) -> None:
    """Overwrite `passes`/`attempts` in `nxt` from `prev`; nodes new in `nxt` start open at 0."""
    owned = {n.id: (n.passes, n.attempts) for _, n in prev.walk()}
    for _, n in nxt.walk():
        n.passes, n.attempts = owned.get(n.id, (False, 0))


def immutability_errors(prev: Node, nxt: Node) -> list[str]:
    """Passed nodes must exist in `nxt`, under the same parent, identical by value (sorted)."""
    errors: list[str] = []
    old, new = index(prev), index(nxt)
    for nid, e in old.items():
        n = e.node
        if not n.passes:
            continue
        hit = new.get(nid)
        if hit is None:
            errors.append(f"passed node '{nid}' missing in the new tree")
            continue
        pp, np_ = e.parent, hit.parent
        if (pp.id if pp else None) != (np_.id if np_ else None):
            errors.append(f"passed node '{nid}' moved from parent '{pp.id if pp else None}' to "
                          f"'{np_.id if np_ else None}'")
        # own fields and child ids: a passed node's children are passed nodes, each compared in turn
        if n.shallow() != hit.node.shallow() or (_subtree_open(n) and _sorted(n) != _sorted(hit.node)):
            errors.append(f"passed node '{nid}' changed in the new tree")
    return sorted(errors)


def _subtree_open(n: Node) -> bool:
    """A passed node with an open child (a hand-edited tree): its children are not compared on
    their own, so the whole subtree is."""
    return any(not c.passes for c in n.children)


def _sorted(n: Node) -> dict:
    t = n.copy()
    t.sort_children()
    return t.to_dict()


def status_errors(prev: Node, nxt: Node, selected: str, status: str) -> list[str]:
    before = prev.find(selected)
    after = nxt.find(selected)
    if after is None:
        return [f"selected node '{selected}' missing in the new tree"]
    b, a = len(before.children) if before else 0, len(after.children)
    if status == "decomposed" and a <= b:
        return [f"status=decomposed but selected node '{selected}' did not gain children (prev={b}, next={a})"]
    if status in ("done", "retry") and a > b:
        return [f"status={status} but selected node '{selected}' gained children (prev={b}, next={a})"]
    return []


def _bump(n: Node) -> None:
    if n.attempts < n.max_attempts:  # attempts saturate at max_attempts (stuck), never overflow
        n.attempts += 1


@dataclass
class Applied:
    tree: Node
    status: str  # the effective status (an agent violation turns it into "retry")
    agent_errors: list[str] = field(default_factory=list)
    newly_passed: list[str] = field(default_factory=list)


def apply_iteration(prev: Node, nxt: Node, selected: str, status: str, guard: str) -> Applied:
    """The tree after one iteration. `nxt` is the tree as the agent left it (may equal `prev`)."""
    if status not in STATUSES or guard not in GUARDS:
        raise ValueError(f"bad status/guard {status!r}/{guard!r}")
    nxt = nxt.copy()
    reset_runner_owned(prev, nxt)
    problems = immutability_errors(prev, nxt) + status_errors(prev, nxt, selected, status)
    nxt.sort_children()
    problems += [f"tree invariant: {e}" for e in invariant_errors(nxt)]
    if problems:
        # an agent error: its edits are discarded and it costs an attempt
        nxt = prev.copy()
        status, guard = "retry", "skipped"
    node = nxt.find(selected)
    if node is None:  # cannot happen after the checks above; keep the tree consistent anyway
        raise ValueError(f"selected node {selected!r} not in tree")
    if status == "done" and guard == "pass":
        node.passes = True
    elif (status == "done" and guard == "fail") or status == "retry":
        _bump(node)
    was = {n.id for _, n in prev.walk() if n.passes}
    derive_passes(nxt)
    nxt.sort_children()
    newly = sorted(n.id for _, n in nxt.walk() if n.passes and n.id not in was)
    return Applied(tree=nxt, status=status, agent_errors=sorted(problems), newly_passed=newly)


def child_id(parent_id: str, k: int) -> str:
    """`<parent>.<k>`, within the id length limit: a long parent id gives up its tail, never the
    suffix (cutting the suffix made every child of a 64-character id equal to its parent)."""
    suffix = f".{k}"
    return parent_id[: MAX_ID_LEN - len(suffix)] + suffix


def add_children(tree: Node, parent_id: str, specs: list[dict], *, max_attempts: int) -> Node:
    """A copy of `tree` with runner-numbered children `<parent>.<i>` under `parent_id`.

    IDs are assigned by the runner, never by an LLM (v0.6 invariant); order follows the list.
    """
    out = tree.copy()
    parent = out.find(parent_id)
    if parent is None:
        raise ValueError(f"no node {parent_id!r}")
    taken = {n.id for _, n in out.walk()}
    base = len(parent.children)
    for i, spec in enumerate(specs, start=1):
        k = base + i
        nid = child_id(parent_id, k)
        while nid in taken:
            k += 1
            nid = child_id(parent_id, k)
        taken.add(nid)
        parent.children.append(
            Node(
                id=nid,
                order=base + i,
                title=str(spec["title"])[:200],
                goal=str(spec.get("goal", "")),
                acceptance=[str(a) for a in spec.get("acceptance", [])],
                max_attempts=max_attempts,
            )
        )
    out.sort_children()
    return out
