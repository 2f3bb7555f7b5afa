"""Files under `.agentui/` in the repository being worked on, the tree's config.toml and the
run state (decision log 2026-01-17 "Directory structure split").

    .agentui/.gitignore             ignores context/ and iterations/
    .agentui/state/tree.json        canonical tree (source of truth)
    .agentui/state/schema.json      its JSON Schema
    .agentui/state/config.toml      guard, timeouts, caps, max_iterations
    .agentui/state/run_state.json   run id, next iteration, last status/summary/guard, run totals
    .agentui/state/assumptions.md   appended, never blocking
    .agentui/state/questions.md     appended, never blocking
    .agentui/context/               rewritten every iteration
    .agentui/iterations/<run>/<n>/  append-only iteration logs
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentui.tree.model import (
    MAX_TREE_DEPTH,
    Node,
    TreeInvalid,
    atomic_write,
    canonical_json_text,
    write_tree,
)
from agentui.tree.schema import ID_PATTERN, MAX_CHILDREN, SCHEMA

DIR = ".agentui"
GITIGNORE = "# agentui tree runner: local-only logs and per-iteration context\ncontext/\niterations/\n"


class TreeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    guard: str = Field("", description="shell command run after an agent `done`; exit 0 = pass")
    iteration_timeout_s: float = Field(1800.0, gt=0, description="agent + guard wall clock per iteration")
    guard_output_cap_bytes: int = Field(100_000, ge=1, description="cap for stdout and for stderr")
    max_iterations: int = Field(50, ge=1, description="`run` stops after this many iterations")
    run_max_iterations: int = Field(0, ge=0, description="iterations for the whole run, over every step (0: no limit)")
    run_max_tokens: int = Field(0, ge=0, description="LLM tokens (prompt + completion) for the whole run (0: no limit)")
    run_max_wall_s: float = Field(0.0, ge=0, description="iteration wall-clock seconds for the whole run (0: no limit)")
    max_attempts: int = Field(3, ge=1, description="max_attempts for nodes the runner creates")
    executor: Literal["agentui", "acp"] = Field("agentui", description="who works a leaf: agentui's role pipeline, "
                                                "or the ACP agent in acp_command")
    acp_command: list[str] = Field(default_factory=list, description="the ACP agent to spawn, e.g. "
                                   '["claude-code-acp"] or ["gemini", "--experimental-acp"]')
    memory: Literal["read-write", "read-only", "off"] = Field(
        "read-write",
        description="the user's memory store in tree iterations: recall and learn, recall only, or neither",
    )
    progress_notes_bytes: int = Field(4000, ge=0, description="cap of state/progress.md, the notes shared with "
                                      "later nodes (0: no notes)")
    decompose: bool = Field(True, description="let the planner split a leaf into children")
    max_depth: int = Field(3, ge=0, le=MAX_TREE_DEPTH - 1, description="leaves at this depth are never decomposed")
    max_children: int = Field(6, ge=1, le=MAX_CHILDREN,
                              description="at most this many children per decomposition (the reply schema's bound)")


CONFIG_TEMPLATE = """\
# agentui tree runner settings (`agentui tree`). Unknown keys are an error.
# guard: shell command run in the repository after the agent says `done`; exit 0 = pass.
# A node's own "guard" field wins over this one.
guard = {guard}
# wall-clock budget per iteration (agent + guard), seconds; a timeout stops the run
iteration_timeout_s = {timeout}
# guard stdout and stderr are each capped at this many bytes in guard.log
guard_output_cap_bytes = {cap}
# `agentui tree run` stops after this many iterations
max_iterations = {max_iterations}
# limits for the whole run, summed over every `step` and `run` since `start` (0 = no limit);
# checked before each iteration: a run at its limit stops (exit 4)
run_max_iterations = {run_max_iterations}
run_max_tokens = {run_max_tokens}
run_max_wall_s = {run_max_wall_s}
# max_attempts for nodes the runner creates (decomposition)
max_attempts = {max_attempts}
# who works a leaf: "agentui" (its own role pipeline) or "acp" (the ACP agent acp_command spawns in
# the repository, e.g. ["claude-code-acp"], ["gemini", "--experimental-acp"]); guards, git and limits
# are the same either way
executor = {executor}
acp_command = {acp_command}
# the user's memory store in iterations: "read-write" (recall and learn), "read-only", "off"
memory = {memory}
# state/progress.md: each iteration's summary, shared with later nodes, oldest dropped past this
# many bytes (0 = no notes)
progress_notes_bytes = {progress_notes_bytes}
# may the planner split a leaf that is too large into children? how deep? how many?
decompose = {decompose}
max_depth = {max_depth}
max_children = {max_children}
"""


def render_config(cfg: TreeConfig) -> str:
    return CONFIG_TEMPLATE.format(
        guard=json.dumps(cfg.guard, ensure_ascii=False), timeout=_num(cfg.iteration_timeout_s),
        cap=cfg.guard_output_cap_bytes, max_iterations=cfg.max_iterations, max_attempts=cfg.max_attempts,
        run_max_iterations=cfg.run_max_iterations, run_max_tokens=cfg.run_max_tokens,
        run_max_wall_s=_num(cfg.run_max_wall_s), executor=json.dumps(cfg.executor),
        acp_command=json.dumps(cfg.acp_command, ensure_ascii=False), memory=json.dumps(cfg.memory),
        progress_notes_bytes=cfg.progress_notes_bytes,
        decompose="true" if cfg.decompose else "false", max_depth=cfg.max_depth, max_children=cfg.max_children)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


class StateError(Exception):
    """A state file that is missing or invalid; the message names the file and the fix."""


class TreeLayout:
    def __init__(self, repo: Path) -> None:
        self.repo = Path(repo).resolve()
        self.root = self.repo / DIR
        self.state = self.root / "state"
        self.context = self.root / "context"
        self.iterations = self.root / "iterations"

    tree = property(lambda self: self.state / "tree.json")
    schema = property(lambda self: self.state / "schema.json")
    config = property(lambda self: self.state / "config.toml")
    run_state = property(lambda self: self.state / "run_state.json")
    assumptions = property(lambda self: self.state / "assumptions.md")
    progress = property(lambda self: self.state / "progress.md")
    questions = property(lambda self: self.state / "questions.md")
    gitignore = property(lambda self: self.root / ".gitignore")

    def iteration_dir(self, run_id: str, n: int) -> Path:
        return self.iterations / run_id / str(n)

    def exists(self) -> bool:
        return self.tree.is_file()

    # -- config ---------------------------------------------------------------------------------
    def load_config(self) -> TreeConfig:
        if not self.config.is_file():
            return TreeConfig()
        try:
            doc = tomllib.loads(self.config.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise StateError(f"{self.config}: not valid TOML: {e}; fix or delete the file") from None
        try:
            return TreeConfig.model_validate(doc)
        except ValidationError as e:
            probs = sorted(f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}" for err in e.errors())
            raise StateError(f"{self.config}: " + "; ".join(probs)) from None

    # -- schema.json ----------------------------------------------------------------------------
    def schema_problems(self) -> list[str]:
        """schema.json must be the schema the tree is checked against (the built-in one): a deleted,
        broken or edited copy would document rules that are not the ones applied."""
        fix = "restore it with `agentui tree validate --write-schema`"
        try:
            doc = json.loads(self.schema.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return [f"schema.json: missing; {fix}"]
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
            return [f"schema.json: not readable JSON ({str(e).splitlines()[0][:120]}); {fix}"]
        if doc != SCHEMA:
            return [f"schema.json: differs from this agentui's tree schema ({SCHEMA['$id']}), which is the one "
                    f"applied; {fix}"]
        return []

    def write_schema(self) -> None:
        atomic_write(self.schema, canonical_json_text(SCHEMA))

    # -- run state ------------------------------------------------------------------------------
    def load_run_state(self) -> dict[str, Any] | None:
        if not self.run_state.is_file():
            return None
        try:
            doc = json.loads(self.run_state.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError) as e:  # ValueError: JSON, or an int too long
            raise StateError(
                f"{self.run_state}: not valid JSON ({str(e).splitlines()[0][:120] or type(e).__name__}); "
                "run `agentui tree start` again"
            ) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("run_id"), str) \
                or not isinstance(doc.get("next_iteration"), int):
            raise StateError(f"{self.run_state}: needs run_id and next_iteration; run `agentui tree start` again")
        return doc

    def run_seconds(self, run_id: str) -> float:
        """Iteration wall-clock seconds the run has used (local, beside its iteration logs)."""
        try:
            return float(json.loads((self.iterations / f".seconds-{run_id}.json").read_text())["seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            return 0.0

    def add_run_seconds(self, run_id: str, seconds: float) -> None:
        total = round(self.run_seconds(run_id) + seconds, 3)
        atomic_write(self.iterations / f".seconds-{run_id}.json", canonical_json_text({"seconds": total}))

    def write_run_state(self, doc: dict[str, Any]) -> None:
        atomic_write(self.run_state, canonical_json_text(doc))

    def add_progress(self, line: str, cap: int) -> None:
        """Append one note to progress.md, dropping the oldest notes past `cap` bytes."""
        if cap <= 0 or not line.strip():
            return
        head = "# Progress notes (what earlier iterations found; oldest dropped first)\n\n"
        notes = [ln for ln in self.progress_notes().splitlines() if ln.startswith("- ")]
        notes.append("- " + " ".join(line.split())[:400])
        while notes and len((head + "".join(n + "\n" for n in notes)).encode("utf-8")) > cap:
            notes.pop(0)
        atomic_write(self.progress, head + "".join(n + "\n" for n in notes))

    def progress_notes(self) -> str:
        try:
            return self.progress.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def append_note(self, which: str, lines: list[str], header: str) -> None:
        """Append to assumptions.md / questions.md (always proceed: never blocks the loop)."""
        lines = [ln.strip() for ln in lines if ln and ln.strip()]
        if not lines:
            return
        path = self.assumptions if which == "assumptions" else self.questions
        with path.open("a", encoding="utf-8", newline="\n") as fh:
            fh.write(f"\n## {header}\n\n" + "".join(f"- {ln}\n" for ln in lines))


def run_totals(rs: dict[str, Any], seconds: float = 0.0) -> dict[str, Any]:
    """What the run has used so far: iterations and LLM tokens from the run state, iteration
    seconds as given (`TreeLayout.run_seconds`: wall time is kept out of the committed state,
    which must be the same bytes for the same run)."""
    t = rs.get("totals") if isinstance(rs.get("totals"), dict) else {}
    return {"iterations": int(t.get("iterations", 0) or 0), "tokens": int(t.get("tokens", 0) or 0),
            "seconds": float(seconds)}


def limit_reached(cfg: TreeConfig, totals: dict[str, Any]) -> str:
    """Which run-wide limit `totals` (`run_totals`) has reached ('' when none)."""
    t = totals
    if cfg.run_max_iterations and t["iterations"] >= cfg.run_max_iterations:
        return f"{t['iterations']}/{cfg.run_max_iterations} iterations (run_max_iterations)"
    if cfg.run_max_tokens and t["tokens"] >= cfg.run_max_tokens:
        return f"{t['tokens']}/{cfg.run_max_tokens} tokens (run_max_tokens)"
    if cfg.run_max_wall_s and t["seconds"] >= cfg.run_max_wall_s:
        return f"{t['seconds']:.0f}/{_num(cfg.run_max_wall_s)} s of iterations (run_max_wall_s)"
    return ""


def slug(text: str, fallback: str = "goal") -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40].strip("-")
    s = s or fallback
    return s if re.match(ID_PATTERN, s) else fallback


def init_layout(repo: Path, goal: str, *, title: str | None = None, node_id: str | None = None,
                acceptance: list[str] | None = None, guard: str = "", max_attempts: int = 3,
                force: bool = False) -> TreeLayout:
    """Write the layout, schema, config and a one-node tree. Refuses to overwrite a tree."""
    lay = TreeLayout(repo)
    if lay.tree.exists() and not force:
        raise StateError(f"{lay.tree} already exists; use --force to replace it")
    nid = node_id or slug(title or goal)
    if not re.match(ID_PATTERN, nid):
        raise StateError(f"node id {nid!r} must match {ID_PATTERN}")
    root = Node(id=nid, title=(title or goal.splitlines()[0])[:200] or nid, goal=goal,
                acceptance=list(acceptance or []), max_attempts=max_attempts)
    lay.state.mkdir(parents=True, exist_ok=True)
    atomic_write(lay.gitignore, GITIGNORE)
    atomic_write(lay.schema, canonical_json_text(SCHEMA))
    if not lay.config.exists() or force:
        atomic_write(lay.config, render_config(TreeConfig(guard=guard, max_attempts=max_attempts)))
    for path, head in ((lay.assumptions, "# Assumptions\n"), (lay.questions, "# Open questions\n")):
        if not path.exists():
            atomic_write(path, head)
    if force and lay.run_state.exists():
        lay.run_state.unlink()
    write_tree(lay.tree, root)
    return lay


__all__ = ["DIR", "StateError", "TreeConfig", "TreeInvalid", "TreeLayout", "init_layout", "render_config", "slug"]
