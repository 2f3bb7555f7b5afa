"""The goal tree: nodes, canonical JSON, invariants and leftmost-open-leaf selection.

Decision log (runner-decisions.md): JSON only, siblings sorted by (order, id), all validation
errors collected and reported together, sorted; selection is depth-first over sorted siblings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentui.tree.schema import schema_errors


@dataclass
class Node:
    id: str
    title: str
    goal: str = ""
    order: int = 0
    acceptance: list[str] = field(default_factory=list)
    passes: bool = False
    attempts: int = 0
    max_attempts: int = 3
    children: list[Node] = field(default_factory=list)
    guard: str | None = None  # optional per-node guard; the config's guard otherwise

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def key(self) -> tuple[int, str]:
        return (self.order, self.id)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id, "order": self.order, "title": self.title, "goal": self.goal,
            "acceptance": list(self.acceptance), "passes": self.passes, "attempts": self.attempts,
            "max_attempts": self.max_attempts, "children": [c.to_dict() for c in self.children],
        }
        if self.guard is not None:
            d["guard"] = self.guard
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Node:
        """From a schema-valid dict (call `schema_errors` first)."""
        return cls(id=d["id"], order=d["order"], title=d["title"], goal=d["goal"],
                   acceptance=list(d["acceptance"]), passes=d["passes"], attempts=d["attempts"],
                   max_attempts=d["max_attempts"], guard=d.get("guard"),
                   children=[cls.from_dict(c) for c in d["children"]])

    def copy(self) -> Node:
        return Node.from_dict(self.to_dict())

    def sort_children(self) -> None:
        self.children.sort(key=Node.key)
        for c in self.children:
            c.sort_children()

    def walk(self, path: str = "") -> Iterator[tuple[str, Node]]:
        """(path, node) depth-first, siblings in stored order; path is ids joined by '/'."""
        here = f"{path}/{self.id}" if path else self.id
        yield here, self
        for c in self.children:
            yield from c.walk(here)

    def shallow(self) -> dict[str, Any]:
        """The node's own fields with its children as their ids in (order, id) order: two trees are
        equal when every pair of nodes with one id is shallow-equal (linear, unlike nested dicts)."""
        d = self.to_dict_own()
        d["children"] = [c.id for c in sorted(self.children, key=Node.key)]
        return d

    def to_dict_own(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id, "order": self.order, "title": self.title, "goal": self.goal,
            "acceptance": list(self.acceptance), "passes": self.passes, "attempts": self.attempts,
            "max_attempts": self.max_attempts,
        }
        if self.guard is not None:
            d["guard"] = self.guard
        return d

    def find(self, node_id: str) -> Node | None:
        for _, n in self.walk():
            if n.id == node_id:
                return n
        return None

    def parent_of(self, node_id: str) -> Node | None:
        for _, n in self.walk():
            if any(c.id == node_id for c in n.children):
                return n
        return None

    def path_of(self, node_id: str) -> str | None:
        for p, n in self.walk():
            if n.id == node_id:
                return p
        return None


# -- canonical JSON ------------------------------------------------------------------------------


def canonical_text(root: Node) -> str:
    """Sorted keys, two-space indent, siblings sorted by (order, id), UTF-8, trailing newline."""
    return json.dumps(_sorted_dict(root), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def _sorted_dict(n: Node) -> dict[str, Any]:
    """`to_dict` with siblings in (order, id) order, without copying the tree first."""
    d = n.to_dict_own()
    d["children"] = [_sorted_dict(c) for c in sorted(n.children, key=Node.key)]
    return d


def canonical_json_text(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def atomic_write(path: Path, text: str) -> None:
    """Write via a temp file and rename, so a crash never leaves half a state file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_tree(path: Path, root: Node) -> None:
    atomic_write(path, canonical_text(root))


# -- validation ----------------------------------------------------------------------------------


class TreeInvalid(Exception):
    """A tree that failed parsing, its schema or its invariants; `errors` is sorted."""

    def __init__(self, errors: list[str], source: str = "tree.json") -> None:
        self.errors = sorted(errors)
        self.source = source
        super().__init__(f"{source}: " + "; ".join(self.errors))


MAX_TREE_DEPTH = 100  # levels of nodes (root = 1); deeper trees are refused before any recursive check


def invariant_errors(root: Node) -> list[str]:
    """Semantic checks the schema cannot express, all collected, sorted."""
    return raw_invariant_errors(root.to_dict())


def raw_invariant_errors(doc: Any) -> list[str]:
    """The invariants on the parsed JSON itself, so they are reported alongside schema errors
    (runner-decisions.md: all errors collected and reported together). Fields of the wrong type are
    skipped here: the schema reports those."""
    errors: list[str] = []
    seen: dict[str, tuple[str, str]] = {}
    stack: list[tuple[Any, str, str]] = [(doc, "", "$")]
    while stack:
        d, parent, jpath = stack.pop()
        if not isinstance(d, dict):
            continue
        nid = d.get("id")
        path = f"{parent}/{_label(nid)}" if parent else _label(nid)
        if isinstance(nid, str):
            if nid in seen:
                # two nodes with one id have the same id path: the JSON paths tell them apart
                errors.append(f"duplicate id '{nid}' at {path} ({jpath}; first at {seen[nid][1]})")
            else:
                seen[nid] = (path, jpath)
        ma, at = _int(d.get("max_attempts")), _int(d.get("attempts"))
        if ma is not None and ma <= 0:
            errors.append(f"{path}: max_attempts must be > 0 (is {ma})")
        if ma is not None and at is not None and not 0 <= at <= max(ma, 0):
            errors.append(f"{path}: attempts {at} outside 0..max_attempts {ma}")
        kids = d.get("children")
        if not isinstance(kids, list):
            continue
        keys = [(_int(c.get("order")), c.get("id")) for c in kids if isinstance(c, dict)]
        if len(keys) == len(kids) and all(o is not None and isinstance(i, str) for o, i in keys) \
                and keys != sorted(keys):
            errors.append(f"{path}: children must be sorted by (order, id)")
        # reversed so the depth-first visit (and so "first at") follows the stored order
        stack.extend((c, path, f"{jpath}.children[{i}]") for i, c in reversed(list(enumerate(kids))))
    return sorted(errors)


def guard_problem(command: str) -> str:
    """Why a guard command can never be spawned ('' = it can be tried)."""
    return "contains a NUL character (no shell command can hold one)" if "\0" in command else ""


def guard_problems(root: Node) -> list[str]:
    """Guards `validate` rejects; `step` records the same as a runner error (guard), no attempt used."""
    return sorted(f"{p}: guard {guard_problem(n.guard)}" for p, n in root.walk() if n.guard and guard_problem(n.guard))


def _label(nid: Any) -> str:
    return nid if isinstance(nid, str) and nid else "?"


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def depth_error(doc: Any) -> str | None:
    """Iteratively, so a hostile tree cannot exhaust the recursion limit of the checks after it."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        d, depth = stack.pop()
        if not isinstance(d, dict) or not isinstance(d.get("children"), list):
            continue
        if depth >= MAX_TREE_DEPTH and d["children"]:
            return f"the tree is deeper than {MAX_TREE_DEPTH} levels (the limit); flatten it"
        stack.extend((c, depth + 1) for c in d["children"])
    return None


def parse_tree(text: str, *, source: str = "tree.json", canonicalize: bool = False) -> Node:
    """Parse + schema + invariants, every error reported together. `canonicalize` sorts siblings
    before the invariant check (for trees the agent edited; the runner rewrites them canonically)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise TreeInvalid([f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"], source) from None
    except RecursionError:
        raise TreeInvalid([f"not valid JSON: nested deeper than Python's parser allows (the tree's limit is "
                           f"{MAX_TREE_DEPTH} levels)"], source) from None
    except ValueError as e:  # e.g. an integer longer than Python's 4300-digit conversion limit
        raise TreeInvalid([f"not valid JSON: {str(e).split(';')[0]}"], source) from None
    deep = depth_error(doc)
    if deep:
        raise TreeInvalid([deep], source)
    errs = schema_errors(doc)
    if errs:
        raise TreeInvalid(errs + raw_invariant_errors(doc), source)
    root = Node.from_dict(doc)
    if canonicalize:
        root.sort_children()
    errs = invariant_errors(root)
    if errs:
        raise TreeInvalid(errs, source)
    return root


def load_tree(path: Path, *, canonicalize: bool = False) -> Node:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TreeInvalid([f"{path} does not exist (run `agentui tree init`)"], str(path)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise TreeInvalid([f"cannot read {path}: {e}"], str(path)) from None
    return parse_tree(text, source=str(path), canonicalize=canonicalize)


# -- selection -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Selection:
    status: str  # "open" | "stuck" | "complete"
    node: Node | None = None
    path: str = ""

    def line(self) -> str:
        if self.node is None:
            return f"select: status={self.status}"
        n = self.node
        return f"select: status={self.status} id={n.id} path={self.path} attempts={n.attempts}/{n.max_attempts}"


def derive_passes(root: Node) -> None:
    """Parents pass exactly when all their children pass (bottom-up); leaves keep theirs."""
    for c in root.children:
        derive_passes(c)
    if root.children:
        root.passes = all(c.passes for c in root.children)


def select(root: Node) -> Selection:
    """The leftmost open leaf (siblings by (order, id)); stuck when its attempts are exhausted."""

    def visit(n: Node, path: str) -> Selection | None:
        here = f"{path}/{n.id}" if path else n.id
        if n.children:
            for c in sorted(n.children, key=Node.key):
                found = visit(c, here)
                if found is not None:
                    return found
            return None
        if n.passes:
            return None
        status = "stuck" if n.attempts >= n.max_attempts else "open"
        return Selection(status, n, here)

    return visit(root, "") or Selection("complete")


@dataclass(frozen=True)
class Entry:
    node: Node
    parent: Node | None
    path: str


def index(root: Node) -> dict[str, Entry]:
    """Every node by id, with its parent and id path, in one walk (the first of a duplicate id
    wins; a valid tree has none). Lookups that walked the tree per node made a step quadratic."""
    out: dict[str, Entry] = {}
    stack: list[tuple[Node, Node | None, str]] = [(root, None, "")]
    while stack:
        n, parent, path = stack.pop()
        here = f"{path}/{n.id}" if path else n.id
        out.setdefault(n.id, Entry(n, parent, here))
        stack.extend((c, n, here) for c in reversed(n.children))
    return out


def depth_of(root: Node, node_id: str) -> int:
    p = root.path_of(node_id)
    return 0 if p is None else p.count("/")
