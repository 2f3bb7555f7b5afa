"""The guard as a real subprocess: spawn failures and the on-disk output cap (#16)."""

from __future__ import annotations

import os

from agentui.tree.guard import cap, run_guard


async def test_binary_output_is_capped_in_bytes_written(tmp_path) -> None:
    """Invalid UTF-8 becomes U+FFFD (3 bytes each): the cap holds for the bytes in guard.log."""
    (tmp_path / "blob").write_bytes(os.urandom(30_000))
    g = await run_guard("cat blob; cat blob >&2; exit 1", tmp_path, timeout_s=30, output_cap=10_000)
    assert g.outcome == "fail"
    body = g.log.encode("utf-8")
    assert len(body) < 2 * 10_000 + 500 and body.count(b"[truncated ") == 2
    out, err = g.log.split("=== stdout ===\n")[1].split("=== stderr ===\n")
    for stream in out, err:
        kept = stream.split("\n[truncated ")[0]
        assert 9_000 < len(kept.encode("utf-8")) <= 10_000


def test_cap_counts_the_bytes_left_out() -> None:
    assert cap(b"abc", 10) == "abc"
    assert cap(b"x" * 12, 10) == "x" * 10 + "\n[truncated 2 bytes]\n"
    out = cap(b"\xff" * 12, 10)  # each kept byte shows as 3 bytes: 3 kept, 9 left out
    assert out == "\ufffd" * 3 + "\n[truncated 9 bytes]\n"
    assert cap("é".encode() * 10, 9) == "é" * 4 + "\n[truncated 12 bytes]\n"


async def test_a_guard_that_cannot_be_spawned_is_an_error_not_a_crash(tmp_path) -> None:
    g = await run_guard("true\0false", tmp_path, timeout_s=30, output_cap=100)
    assert (g.outcome, g.exit_code) == ("error", None)
    assert "could not start" in g.error and "\0" not in g.log and "true\\0false" in g.log


async def test_a_cancelled_guard_is_killed_and_reaped_before_the_step_goes_on(tmp_path) -> None:
    """Ctrl+C during the guard: its group is killed and its shell reaped before the runner commits
    and exits — a zombie left to init showed as "guard still running" in a held-out case (#16)."""
    import asyncio
    from pathlib import Path

    pidfile = tmp_path / "pid"
    task = asyncio.create_task(run_guard(f"echo $$ > {pidfile}; sleep 60", tmp_path, timeout_s=60,
                                         output_cap=1000))
    for _ in range(300):
        if pidfile.is_file() and pidfile.read_text().strip():
            break
        await asyncio.sleep(0.02)
    pid = int(pidfile.read_text())
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert not Path(f"/proc/{pid}").exists(), "the guard's shell is not reaped (a zombie or still running)"


def _alive(pid: int) -> bool:
    """Running (a zombie left to an init that does not reap is dead for this purpose)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (macOS): ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


async def test_ctrl_c_while_the_guard_is_being_spawned_stops_its_whole_group(tmp_path) -> None:
    """Ctrl+C lands after the fork but before asyncio has connected the pipes (a loaded machine,
    sigint-during-guard in adversarial/16): the guard's children must die with it, not only the shell —
    before, the shell alone was killed and the step then waited for the child holding its pipes (300 s)."""
    import asyncio
    import contextlib
    import signal
    import time

    pidfile = tmp_path / "pid"
    task = asyncio.create_task(run_guard(f"sleep 300 & echo $! > {pidfile}; wait", tmp_path, timeout_s=60,
                                         output_cap=1000))
    for _ in range(3):  # one loop pass at a time until the shell is forked (its pipes not yet connected)
        await asyncio.sleep(0)
        deadline = time.monotonic() + 5
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.01)  # block the loop on purpose: the pipes must stay unconnected
        if pidfile.exists() and pidfile.read_text().strip():
            break
    pid = int(pidfile.read_text())
    task.cancel()
    try:
        done, _ = await asyncio.wait({task}, timeout=30)  # a hang guard, not a timing budget
        assert done, "the cancelled guard is still waiting for its child's pipes"
        assert task.cancelled()
        for _ in range(100):
            if not _alive(pid):
                break
            await asyncio.sleep(0.05)
        assert not _alive(pid), "the guard's child outlived the cancelled step"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_guard_printing_hundreds_of_megabytes_is_drained_in_bounded_memory(tmp_path) -> None:
    """200 MB on stdout and 100 MB on stderr: the guard's pipes are read as it writes and only
    the capped head of each is kept, so the step's peak memory hardly grows (holding the whole
    output would add several hundred MB)."""
    import subprocess
    import sys

    probe = (
        "import asyncio, resource, sys\n"
        "from pathlib import Path\n"
        "from agentui.tree.guard import run_guard\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "g = asyncio.run(run_guard('head -c 200000000 /dev/zero; head -c 100000000 /dev/zero >&2; exit 1',\n"
        "                          Path(sys.argv[1]), timeout_s=120, output_cap=100_000))\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(g.outcome, len(g.log.encode()), (after - before) // 1024)\n"
    )
    r = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr
    outcome, log_bytes, grew_mb = r.stdout.split()
    assert outcome == "fail" and int(log_bytes) < 2 * 100_000 + 500
    assert int(grew_mb) < 40, f"peak RSS grew {grew_mb} MB while the guard printed 300 MB"
