"""Every transition row, runner-owned reset, bottom-up passes, immutability, decomposition (#16)."""

from __future__ import annotations

import pytest

from agentui.tree.transitions import add_children, apply_iteration, immutability_errors
from tests.unit.tree.helpers import leaf, parent


def tree():
    return parent("root", leaf("a", 0), leaf("b", 1))


@pytest.mark.parametrize(("status", "guard", "passes", "attempts"), [
    ("done", "pass", True, 0),
    ("done", "fail", False, 1),
    ("retry", "skipped", False, 1),
])
def test_transition_rows(status, guard, passes, attempts) -> None:
    prev = tree()
    r = apply_iteration(prev, prev, "a", status, guard)
    a = r.tree.find("a")
    assert (a.passes, a.attempts, r.status, r.agent_errors) == (passes, attempts, status, [])
    assert prev.find("a").attempts == 0 and not prev.find("a").passes  # inputs untouched


def test_decomposed_keeps_attempts_and_needs_new_children() -> None:
    prev = tree()
    prev.find("a").attempts = 1
    nxt = add_children(prev, "a", [{"title": "one", "goal": "g1"}, {"title": "two"}], max_attempts=2)
    r = apply_iteration(prev, nxt, "a", "decomposed", "skipped")
    a = r.tree.find("a")
    assert r.status == "decomposed" and a.attempts == 1 and not a.passes
    assert [(c.id, c.order, c.max_attempts, c.attempts) for c in a.children] == [("a.1", 1, 2, 0), ("a.2", 2, 2, 0)]
    # decomposed without children is an agent error: retry, attempts + 1
    r = apply_iteration(prev, prev, "a", "decomposed", "skipped")
    assert r.status == "retry" and r.tree.find("a").attempts == 2
    assert r.agent_errors == ["status=decomposed but selected node 'a' did not gain children (prev=0, next=0)"]


def test_done_or_retry_must_not_add_children() -> None:
    prev = tree()
    nxt = add_children(prev, "a", [{"title": "x"}], max_attempts=3)
    r = apply_iteration(prev, nxt, "a", "done", "pass")
    assert r.status == "retry" and not r.tree.find("a").passes and r.tree.find("a").children == []
    assert r.agent_errors == ["status=done but selected node 'a' gained children (prev=0, next=1)"]


def test_attempts_saturate_at_max() -> None:
    prev = tree()
    prev.find("a").attempts = 3
    r = apply_iteration(prev, prev, "a", "retry", "skipped")
    assert r.tree.find("a").attempts == 3


def test_runner_owned_fields_are_reset_from_previous_tree() -> None:
    prev = tree()
    nxt = prev.copy()
    nxt.find("b").passes = True      # the agent claims b passed
    nxt.find("b").attempts = 0
    prev.find("b").attempts = 2
    nxt.find("a").title = "renamed"  # open nodes may be edited
    r = apply_iteration(prev, nxt, "a", "retry", "skipped")
    assert r.status == "retry" and r.agent_errors == []
    assert r.tree.find("b").passes is False and r.tree.find("b").attempts == 2
    assert r.tree.find("a").title == "renamed" and r.tree.find("a").attempts == 1


def test_new_nodes_added_by_agent_start_open_at_zero() -> None:
    prev = tree()
    nxt = prev.copy()
    c = leaf("c", 2, passes=True, attempts=2)
    nxt.children.append(c)
    r = apply_iteration(prev, nxt, "a", "retry", "skipped")
    assert (r.tree.find("c").passes, r.tree.find("c").attempts) == (False, 0)


def test_parents_pass_bottom_up() -> None:
    prev = parent("root", parent("p", leaf("a", 0), leaf("b", 1, passes=True)), leaf("z", 1))
    r = apply_iteration(prev, prev, "a", "done", "pass")
    assert r.tree.find("p").passes and not r.tree.passes
    assert r.newly_passed == ["a", "p"]
    prev2 = r.tree
    r2 = apply_iteration(prev2, prev2, "z", "done", "pass")
    assert r2.tree.passes and r2.newly_passed == ["root", "z"]


def test_passed_nodes_are_immutable_edit_is_agent_error_retry() -> None:
    prev = tree()
    prev.find("b").passes = True
    nxt = prev.copy()
    nxt.find("b").goal = "rewritten"
    nxt.find("a").title = "this edit is discarded with the rest"
    r = apply_iteration(prev, nxt, "a", "done", "pass")
    assert r.status == "retry" and r.agent_errors == ["passed node 'b' changed in the new tree"]
    assert r.tree.find("a").attempts == 1 and not r.tree.find("a").passes
    assert r.tree.find("b").goal == "goal b" and r.tree.find("a").title == "title a"


def test_immutability_missing_and_moved() -> None:
    prev = parent("root", parent("p", leaf("x", 0, passes=True)), leaf("q", 1))
    moved = prev.copy()
    moved.find("p").children = []
    moved.find("q").children = [leaf("x", 0, passes=True)]
    assert immutability_errors(prev, moved) == ["passed node 'x' moved from parent 'p' to 'q'"]
    gone = prev.copy()
    gone.find("p").children = []
    assert immutability_errors(prev, gone) == ["passed node 'x' missing in the new tree"]


def test_open_nodes_may_be_removed_or_reordered() -> None:
    prev = tree()
    nxt = prev.copy()
    nxt.children = [nxt.find("a")]
    nxt.find("a").order = 5
    r = apply_iteration(prev, nxt, "a", "retry", "skipped")
    assert r.agent_errors == [] and [c.id for c in r.tree.children] == ["a"]


def test_bad_status_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        apply_iteration(tree(), tree(), "a", "stuck", "skipped")


def test_children_of_a_64_character_id_get_distinct_valid_ids() -> None:
    """Found by an outside tester: `<id>.1` was cut back to 64 characters, i.e. to the parent's id."""
    from agentui.tree.model import invariant_errors
    from agentui.tree.schema import MAX_ID_LEN

    long_id = "x" * MAX_ID_LEN
    prev = parent("root", leaf(long_id, 0))
    nxt = add_children(prev, long_id, [{"title": "one"}, {"title": "two"}], max_attempts=3)
    ids = [c.id for c in nxt.find(long_id).children]
    assert ids == ["x" * 62 + ".1", "x" * 62 + ".2"]
    assert invariant_errors(nxt) == []
    r = apply_iteration(prev, nxt, long_id, "decomposed", "skipped")
    assert (r.status, r.agent_errors) == ("decomposed", [])


def test_max_children_is_bounded_by_the_reply_schema() -> None:
    """max_children = 9 was accepted, then every 9-child decomposition failed to parse (#16)."""
    from pydantic import ValidationError

    from agentui.tree.agent import PlannerDecision
    from agentui.tree.layout import TreeConfig
    from agentui.tree.schema import MAX_CHILDREN

    assert PlannerDecision.model_json_schema()["properties"]["children"]["maxItems"] == MAX_CHILDREN
    assert TreeConfig(max_children=MAX_CHILDREN).max_children == MAX_CHILDREN
    with pytest.raises(ValidationError):
        TreeConfig(max_children=MAX_CHILDREN + 1)
