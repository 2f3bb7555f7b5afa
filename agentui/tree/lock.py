"""One runner per working tree: an advisory lock (flock) on a file in the git directory.

The file lives in the repository's git directory (`git rev-parse --git-path`), so it never dirties
the working tree and one linked worktree's run does not block another's. The kernel drops the lock
when its holder dies, SIGKILL included, so a crashed run never leaves the tree locked; the file
keeps the holder's pid for the message the next caller sees.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from agentui.tree import git as G

NAME = "agentui-tree.lock"


class RunLocked(Exception):
    """Another process holds this tree's run lock."""

    def __init__(self, pid: int | None) -> None:
        self.pid = pid
        super().__init__(f"another run holds this tree (pid {pid if pid is not None else 'unknown'})")


def lock_path(repo: Path) -> Path:
    out = G.git(repo, "rev-parse", "--git-path", NAME).strip()
    return (repo / out).resolve()


class RunLock:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.fd: int | None = None

    def acquire(self) -> None:
        path = lock_path(self.repo)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by the agent's or guard's processes
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            raise RunLocked(pid) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd

    def release(self) -> None:
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)  # closing drops the flock


def _read_pid(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).decode().strip())
    except (OSError, ValueError):
        return None
