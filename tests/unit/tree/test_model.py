"""State model: schema, invariants (all errors, sorted), canonical bytes, selection (#16)."""

from __future__ import annotations

import json

import pytest

from agentui.tree.model import (
    Node,
    TreeInvalid,
    canonical_text,
    derive_passes,
    invariant_errors,
    load_tree,
    parse_tree,
    select,
    write_tree,
)
from agentui.tree.schema import SCHEMA, schema_errors
from tests.unit.tree.helpers import leaf, parent


def test_schema_forbids_unknown_fields_and_collects_every_error_sorted() -> None:
    doc = leaf("a").to_dict()
    doc["mode"] = "execute"
    doc["attempts"] = -1
    doc["children"] = [{"id": "b"}]
    del doc["goal"]
    errs = schema_errors(doc)
    assert errs == sorted(errs)
    assert "$: unknown field 'mode' (additionalProperties is false)" in errs
    assert "$: missing required field 'goal'" in errs
    assert "$.attempts: -1 is below the minimum 0" in errs
    assert "$.children[0]: missing required field 'title'" in errs
    assert len(errs) >= 4 + 7  # the child misses 8 of 9 fields
    assert SCHEMA["$defs"]["node"]["additionalProperties"] is False


def test_schema_types_and_id_pattern() -> None:
    doc = leaf("a").to_dict()
    doc["passes"] = "yes"
    doc["order"] = 1.5
    doc["id"] = "has space"
    errs = schema_errors(doc)
    assert "$.passes: expected boolean, got string" in errs
    assert "$.order: expected integer, got number" in errs
    assert any(e.startswith("$.id: 'has space' does not match") for e in errs)
    assert schema_errors([1]) == ["$: expected object, got array"]


def test_invariants_unique_ids_attempt_bounds_sorted_children_all_reported() -> None:
    t = parent("root", leaf("b", 1), leaf("a", 1, attempts=4, max_attempts=3), leaf("b", 2, max_attempts=0))
    errs = invariant_errors(t)
    assert errs == sorted(errs)
    assert errs == [
        "duplicate id 'b' at root/b ($.children[2]; first at $.children[0])",
        "root/a: attempts 4 outside 0..max_attempts 3",
        "root/b: max_attempts must be > 0 (is 0)",
        "root: children must be sorted by (order, id)",
    ]


def test_parse_reports_schema_then_invariants_and_not_json() -> None:
    with pytest.raises(TreeInvalid) as e:
        parse_tree("{not json")
    assert e.value.errors[0].startswith("not valid JSON")
    t = parent("root", leaf("b", 0), leaf("a", 0))
    with pytest.raises(TreeInvalid) as e:
        parse_tree(json.dumps(t.to_dict()))
    assert e.value.errors == ["root: children must be sorted by (order, id)"]
    # an agent-edited tree may be canonicalized before the check
    assert [c.id for c in parse_tree(json.dumps(t.to_dict()), canonicalize=True).children] == ["a", "b"]


def test_canonical_write_is_byte_stable_and_sorted(tmp_path) -> None:
    t = parent("root", leaf("z", 0), leaf("a", 2), leaf("m", 0))
    p = tmp_path / "tree.json"
    write_tree(p, t)
    first = p.read_bytes()
    again = load_tree(p)
    write_tree(p, again)
    assert p.read_bytes() == first
    text = first.decode()
    assert text.endswith("}\n") and '\n  "acceptance"' in text
    assert [c["id"] for c in json.loads(text)["children"]] == ["m", "z", "a"]
    # key order is sorted at every level
    assert list(json.loads(text)) == sorted(json.loads(text))
    # non-ASCII stays UTF-8, not \u escapes
    t.title = "café ✓"
    assert "café ✓" in canonical_text(t)


def test_selection_is_leftmost_open_leaf_by_order_then_id() -> None:
    t = parent("root",
               parent("p2", leaf("x", 0), order=2),
               parent("p1", leaf("c", 1), leaf("b", 0, passes=True), leaf("a", 1), order=1))
    t.sort_children()
    s = select(t)
    assert (s.status, s.node.id, s.path) == ("open", "a", "root/p1/a")
    assert s.line() == "select: status=open id=a path=root/p1/a attempts=0/3"
    t.find("a").passes = True
    assert select(t).node.id == "c"
    t.find("c").passes = True
    assert select(t).path == "root/p2/x"


def test_stuck_when_attempts_reach_max_and_complete_when_all_pass() -> None:
    t = parent("root", leaf("a", 0, attempts=3, max_attempts=3), leaf("b", 1))
    s = select(t)
    assert (s.status, s.node.id) == ("stuck", "a")  # the run stops; it never skips ahead
    t.find("a").passes = True
    t.find("b").passes = True
    derive_passes(t)
    assert t.passes and select(t).status == "complete"
    assert select(t).line() == "select: status=complete"


def test_node_roundtrip_keeps_optional_guard() -> None:
    n = leaf("a")
    n.guard = "pytest -q"
    assert Node.from_dict(n.to_dict()).guard == "pytest -q"
    assert "guard" not in leaf("b").to_dict()


def test_schema_and_invariant_errors_are_reported_together_sorted() -> None:
    """Schema errors no longer hide the invariants that can still be checked (#16, held-out corpus)."""
    doc = parent("root", leaf("b", 2, attempts=9, max_attempts=3), leaf("a", 1, max_attempts=0),
                 leaf("b", 3)).to_dict()
    doc["extra"] = 1
    del doc["children"][1]["goal"]
    with pytest.raises(TreeInvalid) as e:
        parse_tree(json.dumps(doc))
    assert e.value.errors == [
        "$.children[1]: missing required field 'goal'",
        "$: unknown field 'extra' (additionalProperties is false)",
        "duplicate id 'b' at root/b ($.children[2]; first at $.children[0])",
        "root/a: max_attempts must be > 0 (is 0)",
        "root/b: attempts 9 outside 0..max_attempts 3",
        "root: children must be sorted by (order, id)",
    ]


def test_hostile_json_is_an_invalid_state_not_a_crash() -> None:
    huge = json.dumps(leaf("a").to_dict()).replace('"attempts": 0', '"attempts": ' + "9" * 5000)
    with pytest.raises(TreeInvalid) as e:
        parse_tree(huge)
    assert e.value.errors[0].startswith("not valid JSON: Exceeds the limit (4300 digits)")

    def deep(n: int) -> str:
        one = ('{{"id":"n{}","order":0,"title":"t","goal":"g","acceptance":[],"passes":false,"attempts":0,'
               '"max_attempts":1,"children":[')
        return "".join(one.format(i) for i in range(n)) + "]}" * n

    for n in (3000, 101):  # past json's own recursion guard, and just past our documented limit
        with pytest.raises(TreeInvalid) as e:
            parse_tree(deep(n))
        assert "100 levels" in e.value.errors[0], n
    assert parse_tree(deep(100)).id == "n0"  # the limit itself is fine


def test_guard_with_a_nul_character_is_reported() -> None:
    from agentui.tree.model import guard_problems

    t = parent("root", leaf("a"), leaf("b", 1))
    t.children[1].guard = "true\0false"
    assert guard_problems(parse_tree(json.dumps(t.to_dict()))) == [
        "root/b: guard contains a NUL character (no shell command can hold one)"]
