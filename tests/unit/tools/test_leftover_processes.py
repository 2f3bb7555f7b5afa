"""Nothing an approved command starts outlives the tool call (`setsid -f`, `nohup … &`, `disown`
leave its process group) or agentui itself (SIGTERM): a PID namespace under bubblewrap, a child
subreaper (reaper.py) where bubblewrap is not used."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentui.contracts import ConfirmationChoice
from agentui.tools import Approvals, ToolContext, default_registry
from agentui.tools.sandbox import SandboxInfo, _landlock_works, detect

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="subreapers and PID namespaces are Linux's")

BWRAP = detect("linux") if shutil.which("bwrap") else SandboxInfo("none", None, "bwrap not installed")
NONE = SandboxInfo("none", None, "test")
_LL_PROBLEM = _landlock_works(sys.executable) if sys.platform.startswith("linux") else "not Linux"
LANDLOCK = (SandboxInfo("landlock", sys.executable, "test") if not _LL_PROBLEM
            else SandboxInfo("none", None, _LL_PROBLEM))


def host_pids(marker: str) -> list[int]:
    """Live processes (not zombies) whose argv is `sleep <marker>`, as pids out here."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if argv[:2] == [b"sleep", marker.encode()] and state != "Z":
            found.append(int(entry.name))
    return found


def _kill(pids: list[int]) -> None:
    for pid in pids:  # only the test's own marked processes, by id
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


async def _gone(marker: str, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while host_pids(marker) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    left = host_pids(marker)
    _kill(left)
    return not left


async def approve(_req):  # noqa: ANN001, ANN201 - a person who says yes once
    return ConfirmationChoice.APPROVE


def _sandbox(kind: str) -> SandboxInfo:
    if kind == "bwrap" and not BWRAP.active:
        pytest.skip(f"no working bubblewrap here: {BWRAP.detail}")
    if kind == "landlock" and not LANDLOCK.active:
        pytest.skip(f"no usable Landlock here: {_LL_PROBLEM}")
    return {"bwrap": BWRAP, "landlock": LANDLOCK}.get(kind, NONE)


@pytest.mark.parametrize("kind", ["none", "bwrap", "landlock"])
@pytest.mark.parametrize(("n", "form"), [
    (1, "setsid -f sleep {m} >/dev/null 2>&1; echo started"),
    (2, "nohup sleep {m} >/dev/null 2>&1 & echo started"),
    (3, "sleep {m} >/dev/null 2>&1 & disown; echo started"),
    (4, "(setsid sleep {m} >/dev/null 2>&1 &); echo started"),
    (5, "setsid bash -c 'trap \"\" TERM HUP; sleep {m}' >/dev/null 2>&1 & echo started"),
])
async def test_an_approved_background_process_dies_with_the_call(tmp_path: Path, kind: str, n: int, form: str) -> None:
    marker = f"31.{n}{'nbl'.index(kind[0])}{os.getpid() % 1000:03d}"
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = ToolContext(workspace=ws, task_id="t", confirm=approve, approvals=Approvals(), timeout_s=20,
                      sandbox=_sandbox(kind))
    rec = await default_registry("linux").call("shell", {"command": form.format(m=marker)}, ctx)
    assert rec.ok and "started" in rec.evidence, rec
    assert await _gone(marker), f"{form} outlived the tool call"


_AGENT = """
import asyncio, sys
from pathlib import Path
from agentui.contracts import ConfirmationChoice
from agentui.tools import Approvals, ToolContext, default_registry
from agentui.tools.sandbox import SandboxInfo, detect

async def approve(_req):
    return ConfirmationChoice.APPROVE

async def main():
    box = {"bwrap": detect("linux"), "landlock": SandboxInfo("landlock", sys.executable, "test")}.get(
        sys.argv[2], SandboxInfo("none", None, "test"))
    ctx = ToolContext(workspace=Path(sys.argv[1]), task_id="t", confirm=approve, approvals=Approvals(),
                      timeout_s=60, sandbox=box)
    await default_registry("linux").call("shell", {"command": sys.argv[3]}, ctx)

asyncio.run(main())
"""


@pytest.mark.parametrize("kind", ["none", "bwrap", "landlock"])
async def test_nothing_survives_sigterm_of_agentui(tmp_path: Path, kind: str) -> None:
    _sandbox(kind)
    marker = f"32.{'nbl'.index(kind[0])}{os.getpid() % 1000:03d}"
    ws = tmp_path / "ws"
    ws.mkdir()
    command = f"setsid sleep {marker} >/dev/null 2>&1 & sleep {marker}"
    agent = subprocess.Popen([sys.executable, "-c", _AGENT, str(ws), kind, command], stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while len(host_pids(marker)) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert len(host_pids(marker)) == 2, "the tool call never started"
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=10)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    assert await _gone(marker), "a process outlived agentui"
