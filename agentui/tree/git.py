"""Git policy of the runner (decision log 2026-01-16 "Workspace + git policy").

In-place work, never on main/master; `start` creates `runner/<run-id>`; a clean working tree
(untracked files included, ignored paths aside) at iteration start; one commit per iteration —
failures included — with a deterministic Conventional Commit message.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PROTECTED = ("main", "master")


class GitError(Exception):
    """A git command failed or the policy refuses; the message says what to do."""


def git(repo: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    try:
        p = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=60,
                           env={**os.environ, **(env or {}), "GIT_TERMINAL_PROMPT": "0"})
    except FileNotFoundError:
        raise GitError("git is not installed (the tree runner commits every iteration)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args)} took longer than 60 s") from None
    if check and p.returncode != 0:
        msg = (p.stderr or p.stdout).strip().splitlines()
        raise GitError(f"git {' '.join(args)} failed: {msg[-1] if msg else f'exit {p.returncode}'}")
    return p.stdout


def is_repo(repo: Path) -> bool:
    try:
        return git(repo, "rev-parse", "--is-inside-work-tree", check=False).strip() == "true"
    except GitError:
        return False


def current_branch(repo: Path) -> str:
    """The checked-out branch ('' when HEAD is detached)."""
    out = git(repo, "symbolic-ref", "--quiet", "--short", "HEAD", check=False).strip()
    return out


def dirty_paths(repo: Path) -> list[str]:
    """Changed and untracked paths (ignored ones excluded), sorted."""
    out = git(repo, "status", "--porcelain=v1", "--untracked-files=all", "-z")
    paths = []
    for entry in out.split("\0"):
        if len(entry) > 3:
            paths.append(entry[3:])
    return sorted(set(paths))


def require_repo(repo: Path) -> None:
    if not is_repo(repo):
        raise GitError(f"{repo} is not a git repository; run `git init` and commit first")


def require_step_branch(repo: Path) -> str:
    branch = current_branch(repo)
    if branch in PROTECTED:
        raise GitError(f"refusing to step on '{branch}'; run `agentui tree start` to work on runner/<run-id>")
    if not branch:
        raise GitError("HEAD is detached; check out the run's branch (runner/<run-id>)")
    return branch


def require_clean(repo: Path, *, allow: tuple[str, ...] = ()) -> None:
    dirty = [p for p in dirty_paths(repo) if not any(p == a or p.startswith(a.rstrip("/") + "/") for a in allow)]
    if dirty:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise GitError(f"the working tree is not clean ({shown}); commit or stash first")


def _identity_env(repo: Path) -> dict[str, str]:
    """A fallback author when git has none configured, so a commit never fails on identity."""
    if git(repo, "config", "user.email", check=False).strip():
        return {}
    return {"GIT_AUTHOR_NAME": "agentui tree", "GIT_AUTHOR_EMAIL": "agentui-tree@localhost",
            "GIT_COMMITTER_NAME": "agentui tree", "GIT_COMMITTER_EMAIL": "agentui-tree@localhost"}


def create_branch(repo: Path, name: str) -> None:
    if git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}", check=False).strip():
        raise GitError(f"branch {name} already exists; pick another --run-id")
    git(repo, "checkout", "-q", "-b", name)


def commit_all(repo: Path, message: str) -> str:
    """Stage everything (ignored paths stay out) and commit, even when nothing changed."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "--no-verify", "-m", message, env=_identity_env(repo))
    return git(repo, "rev-parse", "HEAD").strip()


def commit_paths(repo: Path, message: str, paths: list[Path]) -> str:
    """Commit these paths alone (other changes in the working tree stay as they are)."""
    rels = [Path(p).resolve().relative_to(Path(repo).resolve()).as_posix() for p in paths]
    git(repo, "add", "--", *rels)
    git(repo, "commit", "-q", "--no-verify", "-m", message, "--", *rels, env=_identity_env(repo))
    return git(repo, "rev-parse", "HEAD").strip()


def commit_message(node_id: str, status: str, guard: str, *, attempts: int, max_attempts: int,
                   run_id: str, iteration: int, error: str = "", children: int = 0) -> str:
    """One deterministic Conventional Commit message per iteration outcome."""
    if status == "done" and guard == "pass":
        head = f"feat(tree): {node_id} done"
    elif status == "done":
        head = f"fix(tree): {node_id} guard failed {attempts}/{max_attempts}"
    elif status == "retry":
        head = f"chore(tree): {node_id} retry {attempts}/{max_attempts}"
    elif status == "decomposed":
        head = f"chore(tree): {node_id} decomposed into {children}"
    else:
        head = f"chore(tree): {node_id} runner error ({error or 'internal'})"
    return f"{head}\n\nrun {run_id} iteration {iteration}\n"


def committed_text(repo: Path, path: Path) -> str | None:
    """`path`'s content at HEAD (None when HEAD lacks it)."""
    rel = Path(path).resolve().relative_to(Path(repo).resolve()).as_posix()
    try:
        p = subprocess.run(["git", "show", f"HEAD:./{rel}"], cwd=repo, capture_output=True, timeout=60,
                           env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.TimeoutExpired) as e:
        raise GitError(f"git show HEAD:./{rel} failed: {e}") from None
    if p.returncode != 0:
        return None
    return p.stdout.decode("utf-8", errors="replace")


def index_lock(repo: Path) -> Path | None:
    """The index's lock file when it exists (a git command running, or a killed one's leftover)."""
    out = git(repo, "rev-parse", "--git-path", "index.lock", check=False).strip()
    lock = (Path(repo) / out) if out else None
    return lock if lock is not None and lock.exists() else None


def head_message(repo: Path) -> str:
    return git(repo, "log", "-1", "--format=%B").strip()


def diff_of(repo: Path, rev: str) -> str:
    """The patch a commit introduced (for the TUI's iteration screen)."""
    return git(repo, "show", "--stat", "--patch", "--format=%H%n%s%n", rev, check=False)
