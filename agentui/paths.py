"""Where agentui keeps things: one module, built on platformdirs (STYLE rule 7).

Directories are created lazily by the code that writes into them, never at import.
Resolution order for the data dir: `--data-dir` flag > `AGENTUI_DATA_DIR` > config `data_dir` >
platformdirs user data dir. The config file: `AGENTUI_CONFIG` (a file path) > platformdirs config
dir / config.toml.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

import platformdirs

APP_NAME = "agentui"


def default_config_file() -> Path:
    env = os.environ.get("AGENTUI_CONFIG")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "config.toml"


def mcp_credentials_file() -> Path:
    """Remote MCP servers' OAuth sign-ins: `AGENTUI_MCP_CREDENTIALS`, else `mcp-oauth/credentials.json`
    in the platformdirs config dir (not beside an `AGENTUI_CONFIG` file, which may sit in a repository)."""
    env = os.environ.get("AGENTUI_MCP_CREDENTIALS")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / "mcp-oauth" / "credentials.json"


def mcp_credentials_places() -> tuple[Path, ...]:
    """What no tool may read and the OS sandbox hides: the credentials file with its lock and temporary
    siblings, and the default file's own folder (symlinks followed)."""
    f = mcp_credentials_file()
    places = [f, f.with_name(f.name + ".lock"), f.with_name(f.name + ".tmp")]
    if not os.environ.get("AGENTUI_MCP_CREDENTIALS"):
        places.append(f.parent)
    return tuple(dict.fromkeys(Path(os.path.realpath(x)) for x in places))


def default_data_dir() -> Path:
    env = os.environ.get("AGENTUI_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


class DataDirError(Exception):
    """The data dir cannot be used; the message is one line naming the problem and the fix."""


FIX = "pass --data-dir DIR or set AGENTUI_DATA_DIR to a writable directory"


def os_problem(e: OSError, path: Path) -> str:
    """One line for an OSError on `path`, by errno (not by the words in the path)."""
    code = e.errno
    if code in (errno.ENOTDIR, errno.EEXIST):
        return f"{path} is not a directory (it or a parent is a file); {FIX}"
    if code in (errno.EACCES, errno.EPERM):
        return f"no permission to write in {path}; {FIX}"
    if code == errno.EROFS:
        return f"{path} is on a read-only file system; {FIX}"
    if code in (errno.ENOSPC, errno.EDQUOT):
        return f"the disk holding {path} is full; free some space and retry"
    return f"cannot use {path}: {e.strerror or e}; {FIX}"


class DataLayout:
    """The files under one data dir. Nothing is created until `ensure()` or a writer asks."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser()

    @property
    def memory_db(self) -> Path:
        return self.root / "memory.leveldb"

    @property
    def audit_dir(self) -> Path:
        return self.root / "audit"

    @property
    def tasks_dir(self) -> Path:
        return self.root / "tasks"

    @property
    def recordings_dir(self) -> Path:
        return self.root / "recordings"

    def task_log(self, task_id: str) -> Path:
        return self.tasks_dir / f"{task_id}.jsonl"

    def bus_recording(self, task_id: str) -> Path:
        return self.recordings_dir / f"{task_id}.bus.jsonl"

    def ensure(self, *dirs: Path) -> None:
        """Create the dirs (default: the root); raises :class:`DataDirError` with the fix."""
        for d in dirs or (self.root,):
            try:
                d.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise DataDirError(f"data dir: {os_problem(e, d)}") from e

    def check(self, *, writable: bool = True) -> None:
        """Raise :class:`DataDirError` unless the root is (or can be made) a directory we can use:
        `writable` creates it and writes a probe file; otherwise a missing root is fine (nothing
        recorded yet) but a file in its place is not."""
        root = self.root
        if root.is_symlink() and not root.exists():  # dangling, or a loop
            raise DataDirError(f"data dir: {root} is a broken symbolic link; {FIX}")
        if not writable:
            for p in (root, *root.parents):
                if p.exists():
                    if not p.is_dir():
                        raise DataDirError(f"data dir: {root} is not a directory ({p} is a file); {FIX}")
                    return
            return
        self.ensure()
        try:
            with tempfile.NamedTemporaryFile(dir=root, prefix=".probe-", delete=True) as f:
                f.write(b"ok")
                f.flush()
        except OSError as e:
            raise DataDirError(f"data dir: {os_problem(e, root)}") from e
