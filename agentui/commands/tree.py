"""`agentui tree`: the deterministic goal-tree runner.

    agentui tree init "GOAL" [--title T] [--id ID] [--acceptance A]... [--guard CMD]
    agentui tree validate [--write-schema] | select | status [--json]
    agentui tree start [--run-id ID] | step [--yes] | run [--max-iterations N] [--yes] | recover
    agentui tree add PARENT TITLE [--goal G] [-a A]... [--guard CMD] [--order N] [--id ID]
    agentui tree edit ID [--title T] [--goal G] [-a A]... [--guard CMD | --no-guard] [--order N]
    agentui tree move ID PARENT [--order N] | remove ID | reset ID | unstick ID [--more N]

Exit codes: 0 ok / an open leaf, 1 invalid state or an error, 2 the tree is complete, 3 stuck,
4 a run-wide limit (run_max_iterations / run_max_tokens / run_max_wall_s) is reached;
2 also when nothing ran: no usable LLM, or another run holds the tree.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_ERROR, EXIT_COMPLETE, EXIT_STUCK, EXIT_LIMIT = 0, 1, 2, 3, 4
EXIT_USAGE = 2  # like every command: bad input or no usable LLM (nothing ran); see docs/tree.md


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", metavar="DIR", help="the repository holding .agentui/ (default: cwd)")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    add = sub.add_parser  # the CLI adds the global options to every action (`tree step --base-url URL`)
    p = add("init", help="write .agentui/ (layout, schema, config) and a one-node tree from a goal")
    p.add_argument("goal", nargs="+", help="the goal in plain language")
    p.add_argument("--title", help="short title (default: the goal's first line)")
    p.add_argument("--id", dest="node_id", help="root node id (default: a slug of the title)")
    p.add_argument("--acceptance", "-a", action="append", default=[], metavar="TEXT",
                   help="an acceptance criterion (repeatable)")
    p.add_argument("--guard", default="", metavar="CMD", help="guard command run after `done` (exit 0 = pass)")
    p.add_argument("--max-attempts", type=int, default=3, metavar="N", help="attempts before a leaf is stuck")
    p.add_argument("--force", action="store_true", help="replace an existing tree")
    p = add("validate", help="check tree.json against schema.json and the invariants (all errors)")
    p.add_argument("--write-schema", action="store_true",
                   help="first rewrite state/schema.json from this agentui's built-in schema")
    add("select", help="print the leftmost open leaf")
    p = add("status", help="the tree with node states, attempts and the run state")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p = add("start", help="create branch runner/<run-id> and commit the state")
    p.add_argument("--run-id", metavar="ID", help="run id (default: UTC time + random suffix)")
    add("recover", help="record an iteration a killed step left unfinished (step and run do it first)")
    p = add("add", help="add an open leaf under an open node")
    p.add_argument("parent", help="the parent node's id")
    p.add_argument("title", nargs="+", help="the new node's title")
    p.add_argument("--goal", default="", help="what it must achieve (default: the title)")
    p.add_argument("--acceptance", "-a", action="append", default=[], metavar="TEXT", help="repeatable")
    p.add_argument("--guard", metavar="CMD", help="its own guard (default: the config's)")
    p.add_argument("--order", type=int, metavar="N", help="its place among the siblings (default: last)")
    p.add_argument("--id", dest="node_id", metavar="ID", help="its id (default: <parent>.<k>)")
    p.add_argument("--max-attempts", type=int, default=3, metavar="N")
    p = add("edit", help="change an open node's title, goal, acceptance, guard, max_attempts or order")
    p.add_argument("node")
    p.add_argument("--title")
    p.add_argument("--goal")
    p.add_argument("--acceptance", "-a", action="append", metavar="TEXT",
                   help="replaces the node's criteria (repeatable)")
    p.add_argument("--clear-acceptance", action="store_true", help="remove every criterion")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--guard", metavar="CMD")
    g.add_argument("--no-guard", action="store_true", help="use the config's guard")
    p.add_argument("--max-attempts", type=int, metavar="N")
    p.add_argument("--order", type=int, metavar="N")
    p = add("move", help="move an open node (and its subtree) under another open node")
    p.add_argument("node")
    p.add_argument("parent")
    p.add_argument("--order", type=int, metavar="N")
    p = add("remove", help="remove an open node and its subtree (none of it passed)")
    p.add_argument("node")
    p = add("reset", help="attempts back to 0 on an open node and the open nodes under it")
    p.add_argument("node")
    p = add("unstick", help="give a stuck leaf another go: attempts back to 0, or --more N attempts")
    p.add_argument("node")
    p.add_argument("--more", type=int, metavar="N", help="raise max_attempts by N instead")
    for name, text in (("step", "run one iteration on the selected leaf"),
                       ("run", "run iterations until complete, stuck, an error or --max-iterations")):
        p = add(name, help=text)
        p.add_argument(
            "--yes",
            "-y",
            action="store_true",
            help="approve confirmations for commands that run inside the OS sandbox (see agentui run --help)",
        )
        p.add_argument("--no-preflight", action="store_true", help=argparse.SUPPRESS)
        if name == "run":
            p.add_argument("--max-iterations", type=int, metavar="N", help="override config max_iterations")
    for sp in sub.choices.values():
        sp.add_argument("--repo", metavar="DIR", default=argparse.SUPPRESS, help="repository (default: cwd)")


def _err(msg: str) -> int:
    print(f"agentui tree: {msg}", file=sys.stderr)
    return EXIT_ERROR


def _exit_for(status: str) -> int:
    return {"open": EXIT_OK, "complete": EXIT_COMPLETE, "stuck": EXIT_STUCK, "limit": EXIT_LIMIT}.get(
        status, EXIT_ERROR
    )


def run(args: argparse.Namespace) -> int:
    from agentui.tree.layout import StateError, TreeLayout
    from agentui.tree.model import TreeInvalid

    repo = Path(getattr(args, "repo", None) or Path.cwd()).expanduser()
    if not repo.is_dir():
        return _err(f"--repo {repo} is not a directory")
    action = getattr(args, "action", None) or "status"
    lay = TreeLayout(repo)
    try:
        if action == "init":
            return _init(args, repo)
        if not lay.exists():
            return _err(f"no tree at {lay.tree}; start with: agentui tree init \"your goal\" --guard \"make test\"")
        if action == "validate":
            return _validate(lay, write_schema=bool(getattr(args, "write_schema", False)))
        if action == "select":
            from agentui.tree.model import load_tree, select

            s = select(load_tree(lay.tree))
            print(s.line())
            return _exit_for(s.status)
        if action == "status":
            return _status(lay, as_json=bool(getattr(args, "json", False)))
        if action in EDITS:
            return _edit(args, lay, action)
        return _drive(args, lay, action)
    except TreeInvalid as e:
        print(f"agentui tree: invalid state in {e.source}:", file=sys.stderr)
        for line in e.errors:
            print(f"  - {line}", file=sys.stderr)
        return EXIT_ERROR
    except StateError as e:
        return _err(str(e))


def _init(args: argparse.Namespace, repo: Path) -> int:
    from agentui.tree.layout import init_layout

    goal = " ".join(args.goal).strip()
    if not goal:
        return _err('give a goal, e.g. agentui tree init "add a --version flag" --guard "make test"')
    if args.max_attempts < 1:
        return _err("--max-attempts must be at least 1")
    lay = init_layout(repo, goal, title=args.title, node_id=args.node_id, acceptance=args.acceptance,
                      guard=args.guard, max_attempts=args.max_attempts, force=args.force)
    print(f"wrote {lay.root}/ (state/tree.json, schema.json, config.toml, assumptions.md, questions.md)")
    if not args.guard:
        print(f"note: no guard command yet; set `guard` in {lay.config} (a `done` cannot pass without one)")
    print("next: commit .agentui/, then `agentui tree start`")
    return EXIT_OK


def _validate(lay: Any, *, write_schema: bool = False) -> int:
    from agentui.tree.model import TreeInvalid, guard_problem, guard_problems, load_tree

    if write_schema:
        lay.write_schema()
        print(f"wrote {lay.schema}")
    problems = lay.schema_problems()
    try:
        root = load_tree(lay.tree)  # raises TreeInvalid with every error
        tree_errors = guard_problems(root)  # a guard no shell can run: step would record a runner error
    except TreeInvalid as e:
        root, tree_errors = None, e.errors
    cfg = lay.load_config()
    if guard_problem(cfg.guard):
        problems.append(f"config.toml: guard {guard_problem(cfg.guard)}")
    if problems:  # reported together, each line naming its file
        raise TreeInvalid([f"tree.json: {x}" for x in tree_errors] + problems, str(lay.state))
    if tree_errors or root is None:
        raise TreeInvalid(tree_errors, str(lay.tree))
    lay.load_run_state()
    nodes = list(root.walk())
    passed = sum(1 for _, n in nodes if n.passes)
    print(f"valid: {len(nodes)} node(s), {passed} passed ({lay.tree})")
    return EXIT_OK


def _status(lay: Any, *, as_json: bool) -> int:
    from agentui.tree.model import load_tree, select
    from agentui.tree.view import outline, status_doc

    root = load_tree(lay.tree)
    s = select(root)
    rs = lay.load_run_state()
    if as_json:
        doc = status_doc(root, s, rs)
        cfg = lay.load_config()
        doc["limits"] = {"iterations": cfg.run_max_iterations, "tokens": cfg.run_max_tokens,
                         "seconds": cfg.run_max_wall_s}
        print(json.dumps(doc, sort_keys=True, ensure_ascii=False))
        return _exit_for(s.status)
    if rs:
        from agentui.tree.layout import run_totals

        last = rs.get("last") or {}
        print(f"run {rs['run_id']} · next iteration {rs['next_iteration']}"
              + (f" · last: {last.get('node')} {last.get('status')} (guard {last.get('guard')})" if last else ""))
        cfg, used = lay.load_config(), run_totals(rs, lay.run_seconds(rs["run_id"]))

        def of(n: float, limit: float, unit: str) -> str:
            return f"{n:g}{unit}" + (f" of {limit:g}{unit}" if limit else "")

        print(
            f"used: {of(used['iterations'], cfg.run_max_iterations, ' iterations')}, "
            f"{of(used['tokens'], cfg.run_max_tokens, ' tokens')}, "
            f"{of(round(used['seconds']), cfg.run_max_wall_s, ' s')}"
        )
    else:
        print("run: not started (agentui tree start)")
    for line in outline(root, s):
        print(line)
    print(s.line())
    return _exit_for(s.status)


EDITS = ("add", "edit", "move", "remove", "reset", "unstick")


def _edit(args: argparse.Namespace, lay: Any, action: str) -> int:
    """Apply one edit under the run lock and write the tree; on the run's branch the edit is
    committed (tree.json alone), so the next step starts from a clean working tree."""
    from agentui.tree import edit as E
    from agentui.tree.lock import RunLocked
    from agentui.tree.model import Node

    fields: dict[str, Any] = {}
    if action == "edit":
        fields = {k: getattr(args, k) for k in ("title", "goal", "max_attempts", "order")
                  if getattr(args, k) is not None}
        if args.acceptance is not None or args.clear_acceptance:
            fields["acceptance"] = [] if args.clear_acceptance else args.acceptance
        if args.guard is not None or args.no_guard:
            fields["guard"] = None if args.no_guard else args.guard
        if not fields:
            return _err("nothing to change: give --title, --goal, -a, --guard, --max-attempts or --order")

    def change(tree: Node) -> tuple[Node, str]:
        if action == "add":
            title = " ".join(args.title).strip()
            tree, nid = E.add(tree, args.parent, title=title, goal=args.goal or title, acceptance=args.acceptance,
                              guard=args.guard, order=args.order, node_id=args.node_id, max_attempts=args.max_attempts)
            return tree, f"add {nid} under {args.parent}"
        if action == "edit":
            return E.edit(tree, args.node, **fields), f"edit {args.node}"
        if action == "move":
            return E.move(tree, args.node, args.parent, order=args.order), f"move {args.node} under {args.parent}"
        if action == "remove":
            tree, n = E.remove(tree, args.node)
            return tree, f"remove {args.node}" + (f" and {n - 1} node(s) under it" if n > 1 else "")
        if action == "reset":
            return E.reset(tree, args.node), f"reset attempts of {args.node}"
        return E.unstick(tree, args.node, more=args.more), f"unstick {args.node}"

    try:
        done = E.apply(lay, change)
    except RunLocked as e:
        print(f"agentui tree {action}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except E.EditError as e:
        return _err(f"{action}: {e}")
    print(f"{done.what}: wrote {lay.tree}")
    if done.commit:
        print(f"committed {done.commit[:12]} on {done.branch}")
    else:
        print("not committed (no run on this branch): commit it before the next step")
    return EXIT_OK


def _drive(args: argparse.Namespace, lay: Any, action: str) -> int:
    import asyncio

    from agentui.cli import load_from_args
    from agentui.config_write import api_key_from_keychain
    from agentui.tree.git import GitError
    from agentui.tree.runner import NotReady, RunLocked, TreeRunner

    loaded = load_from_args(args)
    if action in ("step", "run"):
        api_key_from_keychain(loaded)  # a key saved from Settings, as `agentui run` reads it
    runner = TreeRunner(lay, loaded.config, yes=bool(getattr(args, "yes", False)),
                        preflight=not getattr(args, "no_preflight", False))
    try:
        if action == "start":
            rid = runner.start(getattr(args, "run_id", None))
            print(f"started run {rid} on branch runner/{rid}; next: agentui tree step (or run)")
            return EXIT_OK
        if action == "recover":
            rec = runner.recover()
            print(f"recovered iteration {rec.iteration} ({rec.node}): {rec.message}" if rec is not None
                  else "nothing to recover: no iteration was left unfinished")
            return EXIT_OK
        if action == "run" and args.max_iterations is not None and args.max_iterations < 1:
            return _err("--max-iterations must be at least 1")
        runner.listeners.append(_printer)
        if action == "step":
            res, sig = asyncio.run(_with_signals(runner, runner.step))
        else:
            res, sig = asyncio.run(_with_signals(runner, lambda: runner.run(getattr(args, "max_iterations", None))))
        if sig is not None:  # the iteration was recorded as a runner error and committed
            print(f"agentui tree {action}: {runner.interrupt_reason}", file=sys.stderr)
            return 128 + sig
    except GitError as e:
        return _err(str(e))
    except RunLocked as e:  # nothing ran, nothing was written
        print(f"agentui tree {action}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except NotReady as e:  # no usable endpoint / memory: nothing ran, nothing was committed
        print(f"agentui tree {action}: {e}", file=sys.stderr)
        return EXIT_USAGE
    if res.iteration is None:
        print(res.message)
    elif res.status in ("complete", "stuck"):
        print(f"tree {res.status}")

    if res.status == "error":
        print(f"agentui tree: runner error in iteration {res.iteration}: {res.error} (no attempt used; "
              f"see {lay.iterations}/)", file=sys.stderr)
    return _exit_for(res.status)


async def _with_signals(runner: Any, work: Any) -> tuple[Any, int | None]:
    """Ctrl+C, SIGTERM and SIGHUP (what `timeout`, CI runners and a closed terminal send) all end
    a step the same way: the iteration is recorded as a runner error (`interrupted`, no attempt),
    committed, the guard's process group stopped; the caller exits 128 + the signal."""
    import asyncio

    from agentui.commands.run import SIGNALS, catch_stop_signals, release_stop_signals

    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    caught: list[int] = []

    def on_signal(sig: Any) -> None:
        if caught or main is None:  # a second signal while the iteration is being recorded: ignored
            return
        caught.append(sig)
        runner.interrupt_reason = f"interrupted ({SIGNALS[sig]})"
        main.cancel()

    installed = catch_stop_signals(loop, on_signal)
    try:
        return await work(), None
    except asyncio.CancelledError:
        if not caught:
            raise
        return None, caught[0]
    finally:
        release_stop_signals(loop, installed, stopping=bool(caught))


def _printer(event: dict[str, Any]) -> None:
    if event.get("kind") == "warning":
        print(f"warning: {event['message']}", file=sys.stderr, flush=True)
        return
    if event.get("kind") != "iteration":
        return
    if event["phase"] == "start":
        print(f"iteration {event['iteration']} · {event['path']}", flush=True)
    elif event["phase"] == "recovered":
        print(f"iteration {event['iteration']} · {event['node']} (recovered)\n  {event['message']}", flush=True)
    else:
        print(f"  {event['agent_status']} · guard {event['guard']} · {event['message']}", flush=True)
