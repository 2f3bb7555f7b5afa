"""Text and JSON views of the tree shared by `agentui tree status` and the TUI's tree pane."""

from __future__ import annotations

from typing import Any

from agentui.tree.model import Node, Selection


def node_state(n: Node) -> str:
    """passed | stuck | open (a parent is open until every child passed)."""
    if n.passes:
        return "passed"
    if n.is_leaf and n.attempts >= n.max_attempts:
        return "stuck"
    return "open"


MARK = {"passed": "[x]", "open": "[ ]", "stuck": "[!]"}


def rows(root: Node) -> list[tuple[int, Node]]:
    """(depth, node) in selection order (siblings by (order, id))."""
    out: list[tuple[int, Node]] = []

    def visit(n: Node, d: int) -> None:
        out.append((d, n))
        for c in sorted(n.children, key=Node.key):
            visit(c, d + 1)

    visit(root, 0)
    return out


def outline(root: Node, sel: Selection | None = None) -> list[str]:
    cur = sel.node.id if sel is not None and sel.node is not None else None
    lines = []
    for d, n in rows(root):
        arrow = "  ← next" if n.id == cur else ""
        lines.append(f"{'  ' * d}{MARK[node_state(n)]} {n.id}: {n.title} ({n.attempts}/{n.max_attempts}){arrow}")
    return lines


def status_doc(root: Node, sel: Selection, run_state: dict[str, Any] | None) -> dict[str, Any]:
    nodes = [{"id": n.id, "depth": d, "title": n.title, "state": node_state(n), "attempts": n.attempts,
              "max_attempts": n.max_attempts, "leaf": n.is_leaf} for d, n in rows(root)]
    return {
        "selection": {"status": sel.status, "id": sel.node.id if sel.node else None, "path": sel.path or None},
        "nodes": nodes,
        "counts": {"nodes": len(nodes), "passed": sum(1 for x in nodes if x["state"] == "passed"),
                   "stuck": sum(1 for x in nodes if x["state"] == "stuck")},
        "run_state": run_state,
    }
