"""openat-style file access: resolve a path component by component from a directory fd,
never following a symlink out of the workspace, so there is no check-then-open race.

`open_beneath(ws, rel, flags)` walks `rel` from an fd of the workspace with O_NOFOLLOW on every
component. A symlink met on the way is read (readlinkat) and followed only if its target, taken
lexically, stays inside the workspace; `..` never climbs above the workspace root.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_MAX_LINKS = 40
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class EscapesWorkspace(OSError):
    """The path (or a symlink on it) leads outside the workspace."""

    def __init__(self, path: str) -> None:
        super().__init__(errno.EXDEV, f"path leads outside the workspace: {path}")


def _split(rel: str) -> list[str]:
    return [p for p in rel.split("/") if p not in ("", ".")]


def open_beneath(workspace: Path, rel: str, flags: int, mode: int = 0o644, *, make_parents: bool = False) -> int:
    """An fd for `rel` (relative to `workspace`), resolved without leaving it. Caller closes it."""
    if os.path.isabs(rel):
        raise EscapesWorkspace(rel)
    pending = _split(rel)
    if not pending:
        raise IsADirectoryError(errno.EISDIR, "is the workspace directory itself", str(workspace))
    root = os.open(str(workspace), _DIR_FLAGS)
    stack = [root]  # fds from the workspace root down to the current directory
    links = 0
    try:
        while pending:
            name = pending.pop(0)
            if name == "..":
                if len(stack) == 1:
                    raise EscapesWorkspace(rel)
                os.close(stack.pop())
                continue
            last = not pending
            try:
                st = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
            except FileNotFoundError:
                st = None
            if st is not None and stat.S_ISLNK(st.st_mode):
                links += 1
                if links > _MAX_LINKS:
                    raise OSError(errno.ELOOP, "too many symlinks", rel)
                target = os.readlink(name, dir_fd=stack[-1])
                if os.path.isabs(target):
                    inner = relative_in(workspace, Path(target))
                    if inner is None:
                        raise EscapesWorkspace(rel)
                    for fd in stack[1:]:
                        os.close(fd)
                    del stack[1:]
                    target = inner
                pending = _split(target) + pending
                continue
            if last:
                fd = os.open(name, flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode, dir_fd=stack[-1])
                return fd
            if st is None:
                if not make_parents:
                    raise FileNotFoundError(errno.ENOENT, "no such directory", name)
                try:
                    os.mkdir(name, 0o755, dir_fd=stack[-1])
                except FileExistsError:
                    pass
            stack.append(os.open(name, _DIR_FLAGS, dir_fd=stack[-1]))
        raise IsADirectoryError(errno.EISDIR, "is a directory", rel)
    finally:
        for fd in stack:
            os.close(fd)


BINARY_SNIFF = 8192


def looks_binary(data: bytes) -> bool:
    """A NUL byte in the first BINARY_SNIFF bytes: not text to read, search or show."""
    return b"\x00" in data[:BINARY_SNIFF]


def relative_in(workspace: Path, path: Path) -> str | None:
    """`path` relative to the workspace, lexically (`..` folded), or None if it is outside."""
    ws = os.path.normpath(str(workspace))
    p = os.path.normpath(str(path))
    if p == ws:
        return "."
    if p.startswith(ws.rstrip("/") + "/"):
        return p[len(ws.rstrip("/")) + 1 :]
    real_ws = os.path.realpath(ws)
    if real_ws != ws and p.startswith(real_ws.rstrip("/") + "/"):
        return p[len(real_ws.rstrip("/")) + 1 :]
    return None


def holds(workspace: Path, name: str) -> bool:
    """The workspace holds `name` (relative, `~` or absolute), resolved inside it and existing."""
    try:
        ws = workspace.resolve()
        p = (ws / Path(name).expanduser()).resolve()
        return p.is_relative_to(ws) and p.exists()
    except (OSError, ValueError, RuntimeError):
        return False


def read_beneath(workspace: Path, rel: str, limit: int) -> tuple[bytes, int]:
    fd = open_beneath(workspace, rel, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens at once, unread
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        size = st.st_size
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", rel)
        if not stat.S_ISREG(st.st_mode):  # a FIFO or a device would block or never end
            raise OSError(errno.EINVAL, "not a regular file", rel)
        os.set_blocking(fh.fileno(), True)
        data = fh.read(limit)
    return data, max(size, len(data))


def write_beneath(workspace: Path, rel: str, content: str, *, append: bool) -> None:
    # O_NONBLOCK: a FIFO with no reader fails at once (ENXIO) instead of hanging the task
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | (os.O_APPEND if append else 0)
    try:
        fd = open_beneath(workspace, rel, flags, make_parents=True)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO nobody reads
            raise OSError(errno.EINVAL, "not a regular file", rel) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):  # a FIFO with a reader, a device: not a file to write text into
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", rel)
    if st.st_nlink > 1:  # a hard link: the same file may also live outside the workspace
        os.close(fd)
        raise EscapesWorkspace(rel)
    os.set_blocking(fd, True)
    if not append:
        os.ftruncate(fd, 0)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(content)
