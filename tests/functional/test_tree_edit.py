"""Editing the tree from the CLI: add, edit, move, reset, unstick — real subprocesses, a temp
git repo; passed nodes stay immutable and each edit on the run's branch is one commit."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from agentui.tree.layout import TreeLayout
from agentui.tree.model import Node, load_tree, write_tree
from tests.functional.treeharness import git, make_repo, subjects


def _tree(repo, *args):
    return subprocess.run([sys.executable, "-m", "agentui.cli", "tree", "--repo", str(repo), *args],
                          capture_output=True, text=True, timeout=60)


def _ok(repo, *args):
    r = _tree(repo, *args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def test_add_edit_move_are_checked_and_committed_on_the_runs_branch(tmp_path):
    repo = make_repo(tmp_path / "repo")
    _ok(repo, "init", "two files", "--id", "root", "--guard", "true")
    _ok(repo, "start", "--run-id", "r1")
    r = _ok(repo, "add", "root", "write", "a.txt", "-a", "a.txt exists", "--guard", "test -f a.txt")
    assert "add root.1 under root" in r.stdout
    _ok(repo, "add", "root", "write b.txt", "--id", "b")
    _ok(repo, "edit", "b", "--title", "write b2.txt", "-a", "b2.txt exists", "--max-attempts", "5")
    _ok(repo, "move", "b", "root.1")
    assert subjects(repo)[-4:] == ["chore(tree): add root.1 under root", "chore(tree): add b under root",
                                   "chore(tree): edit b", "chore(tree): move b under root.1"]
    assert git(repo, "status", "--porcelain") == ""  # the next step starts clean
    t = load_tree(TreeLayout(repo).tree)
    a = t.find("root.1")
    assert (a.title, a.goal, a.acceptance, a.guard) == ("write a.txt", "write a.txt", ["a.txt exists"], "test -f a.txt")
    [b] = a.children
    assert (b.id, b.title, b.acceptance, b.max_attempts, b.attempts) == ("b", "write b2.txt", ["b2.txt exists"], 5, 0)
    assert _tree(repo, "select").stdout.startswith("select: status=open id=b path=root/root.1/b")

    # refusals: exit 1, one line, nothing written
    before = (TreeLayout(repo).tree.read_bytes(), subjects(repo))
    for args, why in ((["move", "root.1", "b"], "under itself or its own subtree"),
                      (["move", "root", "b"], "the root cannot be moved"),
                      (["add", "nope", "x"], "no node 'nope'"),
                      (["add", "root", "x", "--id", "b"], "id 'b' is taken"),
                      (["edit", "b", "--title", "t" * 201], "longer than 200"),
                      (["edit", "b", "--max-attempts", "0"], "max_attempts must be > 0"),
                      (["edit", "b"], "nothing to change"),
                      (["unstick", "b"], "is not stuck")):
        r = _tree(repo, *args)
        assert r.returncode == 1 and why in r.stderr, (args, r.stderr)
        assert "Traceback" not in r.stderr
    assert (TreeLayout(repo).tree.read_bytes(), subjects(repo)) == before


def test_passed_nodes_stay_immutable_and_a_stuck_leaf_can_be_unstuck(tmp_path):
    repo = make_repo(tmp_path / "repo")
    _ok(repo, "init", "x", "--id", "root", "--guard", "true")
    lay = TreeLayout(repo)
    write_tree(lay.tree, Node(id="root", title="root", children=[
        Node(id="done", order=0, title="passed", passes=True),
        Node(id="s", order=1, title="stuck", attempts=3, max_attempts=3),
        Node(id="p", order=2, title="parent", children=[
            Node(id="p.1", order=0, title="tried twice", attempts=2),
            Node(id="p.2", order=1, title="passed too", passes=True)])]))
    _ok(repo, "start", "--run-id", "r1")
    assert _tree(repo, "select").returncode == 3  # stuck
    for args in (["edit", "done", "--title", "x"], ["move", "done", "p"], ["add", "done", "x"],
                 ["reset", "done"], ["move", "p.2", "root"]):
        r = _tree(repo, *args)
        assert r.returncode == 1 and "passed nodes are immutable" in r.stderr, (args, r.stderr)
    _ok(repo, "unstick", "s", "--more", "2")
    s = load_tree(lay.tree).find("s")
    assert (s.attempts, s.max_attempts) == (3, 5)
    assert _tree(repo, "select").stdout.startswith("select: status=open id=s")
    _ok(repo, "edit", "s", "--max-attempts", "3")  # stuck again
    _ok(repo, "unstick", "s")
    assert load_tree(lay.tree).find("s").attempts == 0
    _ok(repo, "reset", "p")
    p = load_tree(lay.tree).find("p")
    assert [(c.id, c.attempts, c.passes) for c in p.children] == [("p.1", 0, False), ("p.2", 0, True)]
    assert subjects(repo)[-4:] == ["chore(tree): unstick s", "chore(tree): edit s", "chore(tree): unstick s",
                                   "chore(tree): reset attempts of p"]
    assert json.loads(lay.run_state.read_text())["next_iteration"] == 1  # edits are not iterations


def test_an_edit_is_refused_while_a_run_holds_the_tree(tmp_path):
    from agentui.tree.lock import RunLock

    repo = make_repo(tmp_path / "repo")
    _ok(repo, "init", "x", "--id", "root", "--guard", "true")
    _ok(repo, "start", "--run-id", "r1")
    held = RunLock(repo.resolve())
    held.acquire()
    try:
        r = _tree(repo, "add", "root", "more work")
        assert r.returncode == 2 and f"another run holds this tree (pid {os.getpid()})" in r.stderr, r.stderr
    finally:
        held.release()
    _ok(repo, "add", "root", "more work")


def test_edits_outside_a_run_are_written_not_committed(tmp_path):
    repo = make_repo(tmp_path / "repo")
    _ok(repo, "init", "x", "--id", "root", "--guard", "true")
    before = subjects(repo)
    r = _ok(repo, "add", "root", "more work")
    assert "not committed" in r.stdout and subjects(repo) == before
    assert load_tree(TreeLayout(repo).tree).find("root.1").title == "more work"


def test_remove_takes_an_open_subtree_and_keeps_passed_nodes(tmp_path):
    repo = make_repo(tmp_path / "repo")
    _ok(repo, "init", "x", "--id", "root", "--guard", "true")
    lay = TreeLayout(repo)
    write_tree(lay.tree, Node(id="root", title="root", children=[
        Node(id="done", order=0, title="passed", passes=True),
        Node(id="p", order=1, title="parent", children=[
            Node(id="p.1", order=0, title="open"), Node(id="p.2", order=1, title="passed too", passes=True)]),
        Node(id="q", order=2, title="open parent", children=[Node(id="q.1", order=0, title="open child")])]))
    _ok(repo, "start", "--run-id", "r1")
    before = (lay.tree.read_bytes(), subjects(repo))
    for args, why in ((["remove", "root"], "the root cannot be removed"),
                      (["remove", "done"], "passed nodes are immutable"),
                      (["remove", "p"], "'p.2' under 'p' has passed"),
                      (["remove", "nope"], "no node 'nope'")):
        r = _tree(repo, *args)
        assert r.returncode == 1 and why in r.stderr, (args, r.stderr)
    assert (lay.tree.read_bytes(), subjects(repo)) == before
    r = _ok(repo, "remove", "q")
    assert "remove q and 1 node(s) under it: wrote" in r.stdout
    _ok(repo, "remove", "p.1")
    t = load_tree(lay.tree)
    assert [c.id for c in t.children] == ["done", "p"] and [c.id for c in t.find("p").children] == ["p.2"]
    assert subjects(repo)[-2:] == ["chore(tree): remove q and 1 node(s) under it", "chore(tree): remove p.1"]
    assert git(repo, "status", "--porcelain") == ""


def test_reorder_moves_an_open_node_among_its_siblings_and_passed_ones_keep_their_order():
    from agentui.tree.edit import EditError, reorder

    def ids(t):
        return [c.id for c in sorted(t.children, key=Node.key)]

    t = Node(id="root", title="r", children=[Node(id="a", order=0, title="a"), Node(id="b", order=1, title="b"),
                                               Node(id="c", order=2, title="c")])
    up = reorder(t, "c", -1)
    assert ids(up) == ["a", "c", "b"] and ids(t) == ["a", "b", "c"]  # a new tree; the given one unchanged
    assert ids(reorder(up, "c", -1)) == ["c", "a", "b"]
    assert ids(reorder(t, "a", 2)) == ["b", "c", "a"]
    # equal orders (ties broken by id): the open siblings are renumbered where needed
    tie = Node(id="root", title="r", children=[Node(id=x, order=0, title=x) for x in ("a", "b", "c")])
    assert ids(reorder(tie, "c", -2)) == ["c", "a", "b"]
    # a passed sibling keeps its order; the open node moves around it
    mixed = Node(id="root", title="r", children=[Node(id="a", order=0, title="a", passes=True),
                                                   Node(id="b", order=0, title="b")])
    moved = reorder(mixed, "b", -1)
    assert ids(moved) == ["b", "a"] and moved.find("a").order == 0
    for tree, nid, step, why in ((t, "a", -1, "already first"), (t, "c", 1, "already last"),
                                 (mixed, "a", 1, "passed nodes are immutable"), (t, "root", 1, "no siblings")):
        try:
            reorder(tree, nid, step)
        except EditError as e:
            assert why in str(e), (nid, str(e))
        else:
            raise AssertionError(f"{nid} {step} was not refused")
