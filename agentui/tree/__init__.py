"""The deterministic goal-tree runner (`agentui tree`; spec/runner-decisions.md).

A task tree in `.agentui/state/tree.json` is worked leaf by leaf: each iteration runs one role
pipeline task on the leftmost open leaf with fresh context; the runner — not the agent — owns
`passes` and `attempts`, runs the guard, and commits every iteration.
"""

from agentui.tree.model import (
    Node,
    Selection,
    TreeInvalid,
    canonical_text,
    load_tree,
    parse_tree,
    select,
    write_tree,
)

__all__ = ["Node", "Selection", "TreeInvalid", "canonical_text", "load_tree", "parse_tree", "select", "write_tree"]
