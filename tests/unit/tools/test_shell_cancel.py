"""A tool process cancelled mid-run (SIGTERM/SIGHUP/Ctrl+C cancel the task) leaves nothing for the
garbage collector to close after the event loop: no "Event loop is closed" traceback (#15)."""

from __future__ import annotations

import asyncio
import gc
import sys
from pathlib import Path

from agentui.tools.shell import run_process


def _cancel_mid_run(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"

    async def main() -> None:
        task = asyncio.create_task(run_process(
            # a child in a session of its own outlives the group kill and holds the pipe open: the
            # slow-EOF case made certain (under load a killed child's EOF came after the loop's end)
            ["bash", "-c", f"setsid sleep 3 & echo $$ > {pidfile}; sleep 100"], cwd=tmp_path, timeout_s=60))
        for _ in range(200):
            if pidfile.is_file() and pidfile.read_text().strip():
                break
            await asyncio.sleep(0.02)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass

    asyncio.run(main())


def test_a_cancelled_tool_process_leaves_no_transport_for_after_the_loop(tmp_path: Path) -> None:
    seen: list[str] = []
    old = sys.unraisablehook
    sys.unraisablehook = lambda u: seen.append(f"{u.exc_type.__name__}: {u.exc_value} in {u.object!r}")
    try:
        for i in range(2):
            run_dir = tmp_path / str(i)
            run_dir.mkdir()
            _cancel_mid_run(run_dir)
            gc.collect()
    finally:
        sys.unraisablehook = old
    assert not seen, seen
