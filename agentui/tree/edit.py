"""Edits to the tree by the user (`agentui tree add|edit|move|remove|reset|unstick`, and the
terminal UI's tree screen).

Each edit returns a new tree and leaves the one it was given alone. The rules are the runner's:
passed nodes are immutable (follow-up work becomes new nodes), the result must pass the schema
and the invariants, and ids the user does not choose are numbered by the runner like a
decomposition's (`<parent>.<k>`). `apply` is how both front ends write one: under the run lock,
and on the run's branch as one commit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentui.tree.model import (
    Node,
    TreeInvalid,
    canonical_text,
    index,
    load_tree,
    parse_tree,
    write_tree,
)
from agentui.tree.transitions import child_id

if TYPE_CHECKING:
    from agentui.tree.layout import TreeLayout


class EditError(Exception):
    """The edit is refused; the message says why."""


def _checked(tree: Node) -> Node:
    """The tree re-read from its canonical text: every schema and invariant error, or the tree."""
    try:
        return parse_tree(canonical_text(tree), source="the edited tree")
    except TreeInvalid as e:
        raise EditError("; ".join(e.errors)) from None


def _open_node(tree: Node, node_id: str, what: str) -> Node:
    e = index(tree).get(node_id)
    if e is None:
        raise EditError(f"no node '{node_id}' in the tree")
    if e.node.passes:
        raise EditError(f"'{node_id}' has passed: passed nodes are immutable; {what}")
    return e.node


def add(tree: Node, parent_id: str, *, title: str, goal: str = "", acceptance: list[str] | None = None,
        guard: str | None = None, order: int | None = None, node_id: str | None = None,
        max_attempts: int = 3) -> tuple[Node, str]:
    """A new open leaf under `parent_id` (last among its siblings unless `order` is given)."""
    out = tree.copy()
    parent = _open_node(out, parent_id, "add the follow-up work under an open node")
    taken = set(index(out))
    if node_id is None:
        k = len(parent.children) + 1
        node_id = child_id(parent_id, k)
        while node_id in taken:
            k += 1
            node_id = child_id(parent_id, k)
    elif node_id in taken:
        raise EditError(f"id '{node_id}' is taken")
    if order is None:
        order = max((c.order for c in parent.children), default=0) + (1 if parent.children else 0)
    parent.children.append(Node(id=node_id, order=order, title=title, goal=goal,
                                acceptance=list(acceptance or []), guard=guard or None,
                                max_attempts=max_attempts))
    return _checked(out), node_id


def edit(tree: Node, node_id: str, **fields: Any) -> Node:
    """Change an open node's own fields: title, goal, acceptance, guard ('' removes it),
    max_attempts, order. `passes` and `attempts` stay runner-owned (see `reset` and `unstick`)."""
    allowed = {"title", "goal", "acceptance", "guard", "max_attempts", "order"}
    bad = sorted(set(fields) - allowed)
    if bad:
        raise EditError(f"cannot edit {', '.join(bad)} (editable: {', '.join(sorted(allowed))})")
    out = tree.copy()
    n = _open_node(out, node_id, "add a new node for follow-up work")
    for k, v in fields.items():
        if k == "guard":
            v = v or None
        elif k == "acceptance":
            v = list(v)
        setattr(n, k, v)
    return _checked(out)


def move(tree: Node, node_id: str, new_parent_id: str, *, order: int | None = None) -> Node:
    """Move an open node (with its subtree) under another open node."""
    out = tree.copy()
    idx = index(out)
    n = _open_node(out, node_id, "it stays where it passed")
    if idx[node_id].parent is None:
        raise EditError("the root cannot be moved")
    target = _open_node(out, new_parent_id, "a passed node takes no new children")
    if idx[new_parent_id].path == idx[node_id].path or idx[new_parent_id].path.startswith(idx[node_id].path + "/"):
        raise EditError(f"cannot move '{node_id}' under itself or its own subtree")
    old = idx[node_id].parent
    assert old is not None
    old.children = [c for c in old.children if c.id != node_id]
    n.order = order if order is not None else max((c.order for c in target.children), default=0) + (
        1 if target.children else 0)
    target.children.append(n)
    return _checked(out)


def reset(tree: Node, node_id: str) -> Node:
    """Attempts back to 0 on an open node and every open node under it."""
    out = tree.copy()
    _open_node(out, node_id, "nothing to reset")
    start = index(out)[node_id].node
    stack = [start]
    while stack:
        n = stack.pop()
        if not n.passes:
            n.attempts = 0
        stack.extend(n.children)
    return _checked(out)


def unstick(tree: Node, node_id: str, *, more: int | None = None) -> Node:
    """A stuck leaf gets another go: `more` extra attempts (max_attempts raised), or its attempts
    back to 0."""
    out = tree.copy()
    n = _open_node(out, node_id, "it is not stuck")
    if n.children:
        raise EditError(f"'{node_id}' is not a leaf; unstick the stuck leaf under it (`agentui tree select`)")
    if n.attempts < n.max_attempts:
        raise EditError(f"'{node_id}' is not stuck ({n.attempts}/{n.max_attempts} attempts used)")
    if more is not None:
        if more < 1:
            raise EditError("--more must be at least 1")
        n.max_attempts += more
    else:
        n.attempts = 0
    return _checked(out)


def remove(tree: Node, node_id: str) -> tuple[Node, int]:
    """Remove an open node with its subtree; returns the tree and how many nodes went. A subtree
    holding a passed node stays: passed nodes are immutable."""
    out = tree.copy()
    n = _open_node(out, node_id, "it stays in the record")
    parent = index(out)[node_id].parent
    if parent is None:
        raise EditError("the root cannot be removed")
    gone = [m for _, m in n.walk()]
    passed = [m.id for m in gone if m.passes]
    if passed:
        raise EditError(f"'{passed[0]}' under '{node_id}' has passed: passed nodes are immutable; "
                        "remove the open nodes under it one by one")
    parent.children = [c for c in parent.children if c.id != node_id]
    return _checked(out), len(gone)


def reorder(tree: Node, node_id: str, step: int) -> Node:
    """Move an open node `step` places among its siblings (negative: earlier). Only open siblings
    get a new order, and only where the new place needs it; passed siblings keep theirs."""
    out = tree.copy()
    n = _open_node(out, node_id, "it keeps its place")
    parent = index(out)[node_id].parent
    if parent is None:
        raise EditError("the root has no siblings")
    seq = sorted(parent.children, key=Node.key)
    i = next(k for k, c in enumerate(seq) if c.id == node_id)
    j = min(max(i + step, 0), len(seq) - 1)
    if j == i:
        raise EditError(f"'{node_id}' is already {'first' if step < 0 else 'last'} among its siblings")
    seq.insert(j, seq.pop(i))
    before = seq[j - 1].key() if j > 0 else None
    after = seq[j + 1].key() if j + 1 < len(seq) else None
    # first try the moved node alone: an order between its new neighbours
    bounds = [o for k in (before, after) if k is not None for o in (k[0] - 1, k[0], k[0] + 1)]
    for o in sorted(set(bounds), key=lambda o: abs(o - n.order)):
        if (before is None or before < (o, n.id)) and (after is None or (o, n.id) < after):
            n.order = o
            return _checked(out)
    # else number the open siblings along the new sequence, passed ones fixed
    prev: tuple[int, str] | None = None
    for c in seq:
        if not c.passes and prev is not None and c.key() <= prev:
            c.order = prev[0] if (prev[0], c.id) > prev else prev[0] + 1
        prev = c.key()
    if sorted(parent.children, key=Node.key) != seq:
        raise EditError(f"'{node_id}' cannot be placed there: the passed siblings keep their order")
    return _checked(out)


@dataclass(frozen=True)
class Applied:
    """One written edit: what it did, and its commit on the run's branch (None: written only)."""

    what: str
    commit: str | None = None
    branch: str | None = None


def apply(lay: TreeLayout, change: Callable[[Node], tuple[Node, str]]) -> Applied:
    """Load the tree, `change` it (a new tree and what was done, or EditError) and write it, all
    under the run lock (RunLocked when a run holds the tree: the running tree is never edited
    under it). On the run's branch the edit is committed — tree.json alone — so the next step
    starts from a clean working tree; elsewhere it is only written."""
    from agentui.tree import git as G
    from agentui.tree.lock import RunLock

    lock = RunLock(lay.repo) if G.is_repo(lay.repo) else None
    if lock is not None:
        lock.acquire()
    try:
        tree, what = change(load_tree(lay.tree))
        write_tree(lay.tree, tree)
        rs = lay.load_run_state() if lock is not None else None
        if rs and rs.get("branch") and G.current_branch(lay.repo) == rs["branch"]:
            sha = G.commit_paths(lay.repo, f"chore(tree): {what}\n\nrun {rs['run_id']} edit\n", [lay.tree])
            return Applied(what, sha, rs["branch"])
        return Applied(what)
    finally:
        if lock is not None:
            lock.release()
