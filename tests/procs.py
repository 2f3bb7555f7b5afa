"""Find a tool's process from the test's side. Under bubblewrap a tool runs in its own PID
namespace, so a `$$` it prints is no pid out here: look the process up by a unique command line."""

from __future__ import annotations

import os
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Running, not a zombie (a killed sandboxed process may stay a zombie nobody reaps)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def sleeper_pid(marker: str) -> int:
    """The pid, as this process sees it, of a running `sleep <marker>`; 0 when none runs."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", marker.encode()] and alive(int(entry.name)):
            return int(entry.name)
    return 0


def wait_for_sleeper(marker: str, timeout: float = 20.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pid := sleeper_pid(marker):
            return pid
        time.sleep(0.05)
    raise AssertionError(f"no `sleep {marker}` started within {timeout:g} s")
