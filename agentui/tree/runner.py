"""The iteration runner: `start`, `step` (one iteration) and `run` (until complete/stuck/error).

One iteration: validate state → select the leftmost open leaf → clean tree check →
rewrite context/ → agent (tree planner, then one pipeline task) → guard when `done` → runner-owned
transitions → canonical tree + run state → iteration logs → one commit. Runner-internal failures
(timeout, LLM down or unparseable, guard spawn error, git failure) keep the previous tree and
consume no attempt, and the run stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agentui.clock import Clock, SystemClock
from agentui.ids import IdFactory, UuidIds
from agentui.tree import git as G
from agentui.tree.agent import (
    AgentOutcome,
    PlannerDecision,
    decomposition_problems,
    goal_md,
    map_task_end,
    outcome_file,
    planner_messages,
    task_text,
)
from agentui.tree.env import AgentEnv, NotReady, open_env
from agentui.tree.guard import run_guard
from agentui.tree.layout import StateError, TreeConfig, TreeLayout, limit_reached, run_totals
from agentui.tree.lock import RunLock, RunLocked
from agentui.tree.model import (
    Node,
    TreeInvalid,
    atomic_write,
    canonical_json_text,
    canonical_text,
    depth_of,
    guard_problem,
    load_tree,
    parse_tree,
    select,
)
from agentui.tree.transitions import add_children, apply_iteration

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass
class StepResult:
    status: str  # open | complete | stuck | error | limit — the tree after the iteration (or why none ran)
    iteration: int | None = None
    node: str | None = None
    agent_status: str | None = None  # done | retry | decomposed | error
    guard: str | None = None
    message: str = ""
    commit: str | None = None
    error: str = ""

    def line(self) -> str:
        if self.iteration is None:
            return self.message or f"tree {self.status}"
        s = f"iteration {self.iteration} · {self.node} · {self.agent_status} · guard {self.guard}"
        return s + (f" · {self.message}" if self.message else "")


Listener = Callable[[dict[str, Any]], None]


class TreeRunner:
    def __init__(self, layout: TreeLayout, agent_config: Any, *, clock: Clock | None = None,
                 ids: IdFactory | None = None, yes: bool = False, preflight: bool = True,
                 confirm: Callable[[Any], Any] | None = None, memory: Any = None) -> None:
        self.lay = layout
        self.repo = layout.repo
        self.agent_config = agent_config
        self.clock = clock or SystemClock()
        self.ids = ids or UuidIds()
        self.yes = yes
        self.preflight = preflight
        self.confirm = confirm  # asks the user (the TUI's modal); else --yes approves, no --yes denies
        self.memory = memory  # a store the caller holds open (the TUI's); else the data dir's is opened
        self.interrupt_reason = "interrupted (Ctrl+C)"  # the CLI names SIGTERM/SIGHUP before it cancels
        self.listeners: list[Listener] = []
        self.runtime: Any = None  # the running iteration's Runtime (the TUI taps its bus)
        self._lock = RunLock(self.repo)
        self._lock_depth = 0
        self._parsed: tuple[str, Node | TreeInvalid] | None = None

    def _emit(self, event: dict[str, Any]) -> None:
        for fn in list(self.listeners):
            with contextlib.suppress(Exception):
                fn(event)

    @contextlib.contextmanager
    def locked(self) -> Any:
        """Hold the tree's run lock (re-entrant within this runner): `run` keeps it across its steps.
        Raises RunLocked when another process holds it."""
        if self._lock_depth == 0:
            G.require_repo(self.repo)
            self._lock.acquire()
        self._lock_depth += 1
        try:
            yield
        finally:
            self._lock_depth -= 1
            if self._lock_depth == 0:
                self._lock.release()

    # -- start ----------------------------------------------------------------------------------
    def start(self, run_id: str | None = None) -> str:
        with self.locked():
            return self._start(run_id)

    def _start(self, run_id: str | None) -> str:
        G.require_repo(self.repo)
        load_tree(self.lay.tree)
        self.lay.load_config()
        rid = run_id or f"{self.clock.now():%Y%m%d-%H%M%S}-{self.ids.new('run').replace('-', '')[-6:]}"
        if not RUN_ID.match(rid):
            raise StateError(f"run id {rid!r} must match {RUN_ID.pattern}")
        G.require_clean(self.repo, allow=(".agentui/",))  # start commits .agentui/ itself
        branch = f"runner/{rid}"
        G.create_branch(self.repo, branch)
        self.lay.write_run_state({"run_id": rid, "branch": branch, "next_iteration": 1, "last": None})
        G.commit_all(self.repo, f"chore(tree): start run {rid}\n\nbranch {branch}\n")
        return rid

    # -- step -----------------------------------------------------------------------------------
    async def step(self) -> StepResult:
        """One iteration. Raises NotReady (nothing written, nothing committed) when no LLM endpoint
        answers or the memory store cannot be used; RunLocked when another run holds the tree;
        GitError / StateError / TreeInvalid on bad state. An iteration a killed step left unfinished
        is recorded first (`recover`)."""
        with self.locked():
            return await self._step()

    async def _step(self) -> StepResult:
        lay = self.lay
        G.require_repo(self.repo)
        branch = G.require_step_branch(self.repo)  # refuse main/master before anything else
        cfg = lay.load_config()
        rs = lay.load_run_state()
        if rs is None:
            raise StateError("no run started here; run `agentui tree start` first")
        _require_run_branch(rs, branch)
        if self._recover(rs, branch) is not None:
            rs = lay.load_run_state() or rs
        tree = load_tree(lay.tree)
        sel = select(tree)
        if sel.status != "open":
            return StepResult(sel.status, message=sel.line())
        reached = limit_reached(cfg, run_totals(rs, lay.run_seconds(rs["run_id"])))
        if reached:
            return StepResult("limit", message=f"run limit reached: {reached}; raise it in {lay.config} to go on")
        G.require_clean(self.repo)
        it = lay.iteration_dir(rs["run_id"], int(rs["next_iteration"]))
        if it.exists():
            raise StateError(f"{it} already exists (iteration logs are append-only); fix next_iteration "
                             f"in {lay.run_state}")

        def busy(url: str, wait_s: float) -> None:
            self._emit({"kind": "warning", "message": f"{url} is up but busy (another generation still running); "
                                                      f"waiting up to {wait_s:g} s for it to finish"})

        if cfg.executor == "acp" and not cfg.decompose:  # no agentui LLM call in the iteration: none needed
            env = AgentEnv(pool=None, memory=None, owns_memory=False, memory_kind="none")
        else:  # before anything is written: NotReady commits nothing
            env = await open_env(self.agent_config, clock=self.clock, ids=self.ids, preflight=self.preflight,
                                 memory=self.memory, wait_busy=busy, memory_mode=cfg.memory,
                                 idle_cap_s=cfg.iteration_timeout_s)
        for w in env.warnings:
            self._emit({"kind": "warning", "message": w})
        try:
            return await self._iterate(cfg, rs, tree, sel, env, branch)
        finally:
            await env.aclose()

    async def _iterate(self, cfg: TreeConfig, rs: dict[str, Any], tree: Node, sel: Any,  # noqa: C901, PLR0912, PLR0915
                       env: AgentEnv, branch: str) -> StepResult:
        """The iteration proper, in order; every path ends in one commit — unless HEAD left `branch`
        meanwhile: then nothing is committed (never onto main/master: the git policy)."""
        lay = self.lay
        run_id, n = rs["run_id"], int(rs["next_iteration"])
        it = lay.iteration_dir(run_id, n)
        it.mkdir(parents=True)
        node = sel.node
        assert node is not None
        t0 = time.monotonic()
        last = rs.get("last") or {}
        history, failure = self._write_context(node, sel.path, last, run_id)
        before_text = canonical_text(tree)
        atomic_write(it / "tree.before.json", before_text)
        self._emit({"kind": "iteration", "phase": "start", "iteration": n, "node": node.id, "path": sel.path})

        interrupted = False
        try:
            out, guard, guard_exit, t_agent, t_guard = await self._work(tree, node, cfg, it, t0, history, failure,
                                                                        env)
        except asyncio.CancelledError:
            # Ctrl+C: record the iteration (no attempt used), commit, then let the cancel through
            interrupted = True
            out, guard, guard_exit = AgentOutcome(internal="interrupted", detail=self.interrupt_reason), "skipped", None
            t_agent, t_guard = time.monotonic() - t0, 0.0
        except Exception as e:  # noqa: BLE001 — a runner bug must still end the iteration (logged, no attempt)
            out = AgentOutcome(internal="internal", detail=f"{type(e).__name__}: {e}")
            guard, guard_exit = "skipped", None
            t_agent, t_guard = time.monotonic() - t0, 0.0
        moved = self._branch_moved(branch)
        if moved:
            out, guard, guard_exit = AgentOutcome(internal="git", detail=moved), "skipped", None

        agent_errors = list(out.agent_errors)
        if out.internal:
            new_tree, status = tree, "error"
            atomic_write(it / "runner_error.log", f"runner error ({out.internal}): {out.detail}\n")
        else:
            if out.status == "decomposed":
                nxt = add_children(tree, node.id, out.children, max_attempts=cfg.max_attempts) \
                    if out.children else tree
            else:
                try:
                    nxt = self._agent_tree(out.tree_text)  # as the agent left it, read before the guard ran
                except TreeInvalid as e:
                    nxt, out.status, guard = tree, "retry", "skipped"
                    agent_errors += [f"tree.json after the agent: {x}" for x in e.errors]
            applied = apply_iteration(tree, nxt, node.id, out.status, guard)
            new_tree, status = applied.tree, applied.status
            agent_errors += applied.agent_errors
            if applied.status != out.status:
                guard = "skipped"
            if agent_errors:
                atomic_write(it / "agent_error.log", "".join(f"agent error: {e}\n" for e in sorted(agent_errors)))
        after_text = before_text if new_tree is tree else canonical_text(new_tree)
        atomic_write(lay.tree, after_text)  # also restores a tree the agent (or the guard) broke or edited
        atomic_write(it / "tree.after.json", after_text)
        atomic_write(it / "output.json", canonical_json_text(outcome_file(out)))
        header = f"iteration {n} · {node.id}"
        lay.append_note("assumptions", out.assumptions, header)
        lay.append_note("questions", out.questions, header)
        after = new_tree.find(node.id) or node
        summary = (out.summary or out.detail)[:2000]
        if not out.internal and summary:  # what this iteration found, for the nodes after it
            verdict = status + (f", guard {guard}" if guard != "skipped" else "")
            lay.add_progress(f"iteration {n} · {node.id} ({verdict}): {summary}", cfg.progress_notes_bytes)
        rs["next_iteration"] = n + 1
        rs["last"] = {"iteration": n, "node": node.id, "status": status, "guard": guard, "summary": summary,
                      "error": out.internal or None}
        used = run_totals(rs)
        rs["totals"] = {"iterations": used["iterations"] + 1, "tokens": used["tokens"] + _tokens(out.stats)}
        lay.add_run_seconds(run_id, time.monotonic() - t0)
        lay.write_run_state(rs)
        msg = G.commit_message(node.id, status, guard, attempts=after.attempts, max_attempts=after.max_attempts,
                               run_id=run_id, iteration=n, error=out.internal,
                               children=len(after.children) - len(node.children))
        commit, git_error = None, ""
        try:
            moved = moved or self._branch_moved(branch)  # the last look before a commit lands somewhere
            if moved:
                raise G.GitError(moved)
            commit = G.commit_all(self.repo, msg)
        except G.GitError as e:
            git_error = str(e)
            atomic_write(it / "runner_error.log", f"runner error (git): {e}\n")
            # a runner error keeps the previous tree and uses no attempt, commit or not
            new_tree, status = tree, "error"
            atomic_write(lay.tree, before_text)
            atomic_write(it / "tree.after.json", before_text)
            rs["last"] = {**rs["last"], "status": "error", "error": "git"}
            lay.write_run_state(rs)
        meta = {
            "run_id": run_id, "iteration": n, "node_id": node.id, "path": sel.path, "status": status,
            "guard": guard, "guard_exit": guard_exit, "summary": summary,
            "runner_error": (out.internal or ("git" if git_error else None)),
            "agent_errors": sorted(agent_errors), "commit": commit, "commit_message": msg.splitlines()[0],
            "durations_s": {"agent": round(t_agent, 3), "guard": round(t_guard, 3),
                            "total": round(time.monotonic() - t0, 3)},
            "tokens": out.stats, "task_id": out.task_id or None, "memory": env.memory_kind,
        }
        atomic_write(it / "meta.json", canonical_json_text(meta))
        after_sel = select(new_tree)
        res = StepResult("error" if (out.internal or git_error) else after_sel.status, iteration=n,
                         node=node.id, agent_status=status, guard=guard, commit=commit,
                         message=msg.splitlines()[0], error=out.detail if out.internal else git_error)
        self._emit({"kind": "iteration", "phase": "end", **asdict(res)})
        if interrupted:
            raise asyncio.CancelledError
        return res

    def _branch_moved(self, branch: str) -> str:
        """Why the iteration must not commit here ('' when HEAD is still on the run's branch)."""
        try:
            now = G.current_branch(self.repo)
        except G.GitError as e:
            return str(e)
        if now == branch:
            return ""
        where = f"'{now}'" if now else "a detached HEAD"
        return (f"HEAD moved from '{branch}' to {where} during the iteration; nothing was committed — "
                f"`git checkout {branch}` (the iteration's files come along), commit, then step again")

    async def _work(self, tree: Node, node: Node, cfg: TreeConfig, it: Path, t0: float, history: str,
                    failure: str, env: AgentEnv) -> tuple[AgentOutcome, str, int | None, float, float]:
        """The agent, then the guard when it says `done`, within one deadline."""
        deadline = t0 + cfg.iteration_timeout_s
        bad = guard_problem(node.guard or cfg.guard)
        if bad:  # it could never be spawned: say so before the agent spends the iteration
            return AgentOutcome(internal="guard", detail=f"guard {bad}"), "skipped", None, 0.0, 0.0
        out = await self._agent(tree, node, cfg, it, deadline, history, failure, env)
        t_agent = time.monotonic() - t0
        guard, guard_exit, t_guard = "skipped", None, 0.0
        if not out.internal and out.status in ("done", "retry"):
            # the tree as the agent left it, taken before the guard runs: a guard that writes
            # tree.json (a build step, a formatter) must not be blamed on the agent
            out.tree_text = self._read_tree_text()
        if not out.internal and out.status == "done" and self._edits_rejected(tree, node, out.tree_text):
            return out, "skipped", None, t_agent, 0.0  # an agent error: a retry, and retries skip the guard
        if not out.internal and out.status == "done":
            cmd = node.guard or cfg.guard
            if not cmd:
                out.internal, out.detail = "guard", f"no guard configured: set `guard` in {self.lay.config}"
            else:
                g = await run_guard(cmd, self.repo, timeout_s=deadline - time.monotonic(),
                                    output_cap=cfg.guard_output_cap_bytes)
                atomic_write(it / "guard.log", g.log)
                t_guard, guard_exit = g.seconds, g.exit_code
                if g.outcome in ("timeout", "error"):
                    out.internal = "timeout" if g.outcome == "timeout" else "guard"
                    out.detail = g.error
                else:
                    guard = g.outcome
        return out, guard, guard_exit, t_agent, t_guard

    def _read_tree_text(self) -> str | None:
        try:
            return self.lay.tree.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def _agent_tree(self, text: str | None) -> Node:
        """The tree the agent left (`text` read right after it finished); TreeInvalid when broken.
        Parsed once per text: the guard check and the transitions both ask (callers never mutate it)."""
        if text is None:
            return load_tree(self.lay.tree, canonicalize=True)  # missing or unreadable: load_tree says which
        if self._parsed is None or self._parsed[0] is not text:
            try:
                got: Node | TreeInvalid = parse_tree(text, source=str(self.lay.tree), canonicalize=True)
            except TreeInvalid as e:
                got = e
            self._parsed = (text, got)
        got = self._parsed[1]
        if isinstance(got, TreeInvalid):
            raise got
        return got

    def _edits_rejected(self, tree: Node, node: Node, text: str | None) -> bool:
        """Whether the tree the agent left is an agent error (broken, a passed node edited, children
        added on done): the iteration becomes a retry, so the guard must not run."""
        try:
            nxt = self._agent_tree(text)
        except TreeInvalid:
            return True
        return bool(apply_iteration(tree, nxt, node.id, "done", "pass").agent_errors)

    async def run(self, max_iterations: int | None = None) -> StepResult:
        with self.locked():  # held across the steps: no other run slips in between two of them
            cfg = self.lay.load_config()
            limit = max_iterations or cfg.max_iterations
            res = StepResult("open", message="no iteration ran")
            for _ in range(limit):
                res = await self.step()
                if res.status != "open":
                    return res
            return res

    # -- crash recovery -------------------------------------------------------------------------
    def recover(self) -> StepResult | None:
        """Record an iteration a killed step left unfinished; None when there is none."""
        with self.locked():
            G.require_repo(self.repo)
            branch = G.require_step_branch(self.repo)
            rs = self.lay.load_run_state()
            if rs is None:
                raise StateError("no run started here; run `agentui tree start` first")
            _require_run_branch(rs, branch)
            return self._recover(rs, branch)

    def _recover(self, rs: dict[str, Any], branch: str) -> StepResult | None:
        """An iteration directory for the committed run state's next iteration, without meta.json,
        is one a killed step left: no other step can be running (this runner holds the lock). It
        is recorded as a runner error (`crash`, no attempt used) in that same directory: the tree
        and run state go back to the last commit, the run state moves past it, and whatever the
        killed step left in the working tree is committed with the record, as after Ctrl+C."""
        lay = self.lay
        head_rs = _committed_json(self.repo, lay.run_state)
        if not isinstance(head_rs, dict) or not isinstance(head_rs.get("run_id"), str) \
                or not isinstance(head_rs.get("next_iteration"), int):
            return None
        run_id, n = head_rs["run_id"], head_rs["next_iteration"]
        self._fill_in_meta(head_rs)
        it = lay.iteration_dir(run_id, n)
        if not it.is_dir() or (it / "meta.json").exists():
            return None
        lock = G.index_lock(self.repo)
        if lock is not None:
            raise G.GitError(f"iteration {n} was left unfinished by a killed step and {lock} exists (a git command "
                             f"is running, or the killed one left it): if no git command is running, delete it "
                             f"and step again")
        tree_text = G.committed_text(self.repo, lay.tree)
        try:
            tree = parse_tree(tree_text or "", source=f"HEAD:{lay.tree}")
        except TreeInvalid as e:
            raise StateError(f"iteration {n} was left unfinished by a killed step, and the committed tree is "
                             f"not valid ({'; '.join(e.errors)}); fix it, commit, then step again") from None
        sel = select(tree)
        node = sel.node or tree
        detail = (f"the step running iteration {n} was killed before it finished; the next step recorded it: "
                  f"the tree of the last commit is kept, no attempt used, and what the killed step left in the "
                  f"working tree is committed with this record")
        atomic_write(lay.tree, canonical_text(tree))
        atomic_write(it / "runner_error.log", f"runner error (crash): {detail}\n")
        used = run_totals(head_rs)
        del used["seconds"]
        rs = {**head_rs, "next_iteration": n + 1,
              "last": {"iteration": n, "node": node.id, "status": "error", "guard": "skipped", "summary": detail,
                       "error": "crash"},
              "totals": {**used, "iterations": used["iterations"] + 1}}
        lay.write_run_state(rs)
        msg = G.commit_message(node.id, "error", "skipped", attempts=node.attempts, max_attempts=node.max_attempts,
                               run_id=run_id, iteration=n, error="crash")
        moved = self._branch_moved(branch)
        if moved:
            raise G.GitError(moved)
        commit = G.commit_all(self.repo, msg)
        meta = {
            "run_id": run_id, "iteration": n, "node_id": node.id, "path": sel.path or node.id, "status": "error",
            "guard": "skipped", "guard_exit": None, "summary": detail, "runner_error": "crash", "agent_errors": [],
            "commit": commit, "commit_message": msg.splitlines()[0], "durations_s": {}, "tokens": {},
            "task_id": None, "memory": None, "recovered": True,
        }
        atomic_write(it / "meta.json", canonical_json_text(meta))
        res = StepResult("open", iteration=n, node=node.id, agent_status="error", guard="skipped", commit=commit,
                         message=msg.splitlines()[0], error="crash")
        self._emit({"kind": "warning", "message": f"iteration {n} ({node.id}) was left unfinished by a killed step; "
                                                  f"recorded as a runner error (crash), no attempt used"})
        self._emit({"kind": "iteration", "phase": "recovered", **asdict(res)})
        return res

    def _fill_in_meta(self, head_rs: dict[str, Any]) -> None:
        """A step killed after its commit landed, before it wrote meta.json: the commit and the run
        state it committed say what happened, so the iteration's meta.json is written from them."""
        last = head_rs.get("last")
        if not isinstance(last, dict) or not isinstance(last.get("iteration"), int):
            return
        n, run_id = last["iteration"], head_rs["run_id"]
        it = self.lay.iteration_dir(run_id, n)
        if not it.is_dir() or (it / "meta.json").exists():
            return
        msg = G.head_message(self.repo)
        if f"run {run_id} iteration {n}" not in msg:
            return  # HEAD is not that iteration's commit: nothing certain to record
        meta = {
            "run_id": run_id, "iteration": n, "node_id": last.get("node"), "status": last.get("status"),
            "guard": last.get("guard"), "summary": last.get("summary"), "runner_error": last.get("error"),
            "commit": G.git(self.repo, "rev-parse", "HEAD").strip(), "commit_message": msg.splitlines()[0],
            "recovered": True,
        }
        atomic_write(it / "meta.json", canonical_json_text(meta))

    # -- context/ -------------------------------------------------------------------------------
    def _write_context(self, node: Node, path: str, last: dict[str, Any], run_id: str) -> tuple[str, str]:
        ctx = self.lay.context
        if ctx.exists():
            shutil.rmtree(ctx)
        ctx.mkdir(parents=True)
        atomic_write(ctx / "goal.md", goal_md(node, path))
        notes = self.lay.progress_notes()
        if notes:
            atomic_write(ctx / "progress.md", notes)
        history = failure = ""
        same = last.get("node") == node.id
        if same and last.get("status") == "retry" and last.get("summary"):
            history = str(last["summary"])
            atomic_write(ctx / "history.md", f"# Last attempt (retry)\n\n{history}\n")
        if same and last.get("status") == "done" and last.get("guard") == "fail":
            log = self.lay.iteration_dir(run_id, int(last.get("iteration", 0))) / "guard.log"
            with contextlib.suppress(OSError):
                failure = log.read_text(encoding="utf-8", errors="replace")
                atomic_write(ctx / "failure.md", f"# Guard failed last time\n\n```\n{failure}\n```\n")
        return history, failure

    # -- the agent ------------------------------------------------------------------------------
    async def _agent(self, tree: Node, node: Node, cfg: TreeConfig, it: Path, deadline: float,
                     history: str, failure: str, env: AgentEnv) -> AgentOutcome:
        from agentui.llm import LLMError, LLMParseError

        def left() -> float:
            return deadline - time.monotonic()

        pool = env.pool  # opened and preflighted before the iteration (open_env)
        if cfg.decompose and depth_of(tree, node.id) < cfg.max_depth:
            msgs = planner_messages(node, tree, max_children=cfg.max_children)
            try:
                d = await asyncio.wait_for(pool.for_role("tree_planner").structured(msgs, PlannerDecision),
                                           timeout=max(0.1, left()))
            except TimeoutError:
                return AgentOutcome(internal="timeout", detail="the tree planner timed out")
            except LLMParseError as e:
                return AgentOutcome(internal="parse", detail=str(e))
            except LLMError as e:
                return AgentOutcome(internal="llm", detail=str(e))
            atomic_write(it / "planner_output.json", canonical_json_text(d.model_dump(mode="json")))
            if d.decision == "decompose":
                probs = decomposition_problems(d, max_children=cfg.max_children)
                return AgentOutcome(
                    status="decomposed", summary=d.reason or f"split {node.id}",
                    children=[] if probs else [c.model_dump() for c in d.children], agent_errors=probs,
                    assumptions=d.assumptions, questions=d.questions, stats=pool.totals())
            notes = (d.assumptions, d.questions)
        else:
            notes = ([], [])
        text = task_text(node, history=history, failure=failure,
                         progress=self.lay.progress_notes() if cfg.progress_notes_bytes else "")
        if cfg.executor == "acp":
            from agentui.tree.acp_executor import run_acp

            out = await run_acp(cfg.acp_command, self.repo, text, it, timeout=left(), approve=self._approve)
            out.assumptions[:0], out.questions[:0] = notes[0], notes[1]
            out.stats = {**(pool.totals() if pool is not None else {}), "executor": "acp"}
            return out
        out = await self._pipeline(env, text, it, left())
        out.assumptions[:0], out.questions[:0] = notes[0], notes[1]
        out.stats = {**pool.totals(), **({"pipeline": out.stats} if out.stats else {})}
        return out

    async def _approve(self, title: str) -> bool:
        """An ACP agent's permission request: --yes allows; else the injected confirm handler (the
        TUI's modal) decides; unattended without --yes, it is denied."""
        if self.yes:
            return True
        if self.confirm is None:
            return False
        from agentui.contracts import ConfirmationChoice, ConfirmationRequest

        req = ConfirmationRequest(request_id=self.ids.new("confirm"), task_id="tree", subtask_id="acp",
                                  tool="acp", command=title, cwd=str(self.repo), reasons=["the ACP agent asks"])
        got = await self.confirm(req)
        choice = getattr(got, "choice", got)  # a ConfirmationChoice, or an Answer holding one
        return choice is not None and choice != ConfirmationChoice.DENY

    async def _pipeline(self, env: AgentEnv, text: str, it: Path, timeout: float) -> AgentOutcome:
        from agentui.contracts import ConfirmationChoice
        from agentui.runtime import Runtime

        if timeout <= 0:
            return AgentOutcome(internal="timeout", detail="no time left for the pipeline task")

        async def confirm(req: Any) -> Any:  # a ConfirmationChoice or answers.Answer (who answered)
            # --yes approves inside the OS sandbox only
            from agentui.tools.answers import Answer, auto

            given = auto(req, yes=self.yes, unconfined=False) if self.yes else None
            if given is not None:
                return given
            if self.confirm is not None:
                return await self.confirm(req)
            if req.caution:  # memory's Caution band: an unattended run is the go-ahead; it runs no command
                return Answer(ConfirmationChoice.APPROVE, "unattended")
            return Answer(ConfirmationChoice.DENY, "unattended")

        # the user's memory store, kept open across iterations: what one node taught helps the next
        rt = Runtime(self.agent_config, workspace=self.repo, data_dir=it / "pipeline", clock=self.clock,
                     ids=self.ids, pool=env.pool, memory=env.memory, close_memory=False, confirm=confirm)
        self.runtime = rt
        try:
            await rt.start()
            self._emit({"kind": "runtime", "runtime": rt})
            end = await rt.run_task(text, timeout=timeout)
            stats = rt.task_stats(end.task_id)
        finally:
            await rt.stop()
            self.runtime = None
        out = map_task_end(end)
        out.task_id, out.stats = end.task_id, stats
        return out


def _require_run_branch(rs: dict[str, Any], branch: str) -> None:
    """Steps run on the run's own branch (the one `start` created), never on another."""
    own = rs.get("branch")
    if isinstance(own, str) and own and own != branch:
        raise G.GitError(f"this run ({rs.get('run_id')}) works on '{own}', but HEAD is on '{branch}'; "
                         f"`git checkout {own}` and step again, or `agentui tree start` a new run here")


def _tokens(stats: dict[str, Any]) -> int:
    """Prompt + completion tokens of an iteration (the tree planner's and the pipeline's calls share
    one pool, so its totals hold both)."""
    return int(stats.get("prompt_tokens", 0) or 0) + int(stats.get("completion_tokens", 0) or 0)


def _committed_json(repo: Path, path: Path) -> Any:
    text = G.committed_text(repo, path)
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


__all__ = ["NotReady", "RunLocked", "StepResult", "TreeRunner"]
