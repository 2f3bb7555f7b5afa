"""Tree builders for the runner's unit tests."""

from __future__ import annotations

from agentui.tree.model import Node


def leaf(nid: str, order: int = 0, *, passes: bool = False, attempts: int = 0, max_attempts: int = 3) -> Node:
    return Node(id=nid, order=order, title=f"title {nid}", goal=f"goal {nid}", acceptance=[f"{nid} ok"],
                passes=passes, attempts=attempts, max_attempts=max_attempts)


def parent(nid: str, *children: Node, order: int = 0) -> Node:
    n = leaf(nid, order)
    n.children = list(children)
    return n
