"""A data dir on a read-only or full file system, a disk that fills during a run, and a task too
long for the roles (#15). Real file systems: a small tmpfs (needs root to mount; skipped otherwise)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.functional.pipeline import call, finish, merge, perceive, plan, sub, verdicts


def _agentui(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("AGENTUI_")}
    full.update(AGENTUI_NO_AUTODETECT="1", **(env or {}))
    return subprocess.run([sys.executable, "-m", "agentui.cli", *args], capture_output=True, text=True,
                          env=full, timeout=timeout)


@pytest.fixture
def tmpfs(tmp_path):
    """A 2 MB tmpfs at tmp_path/fs (unmounted afterwards)."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {r.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def _fill(path: Path) -> None:
    with open(path / "fill", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass


def test_read_only_store_is_not_in_use(tmpfs) -> None:
    data = tmpfs / "data"
    assert _agentui("--data-dir", str(data), "memory", "remember", "kept").returncode == 0
    subprocess.run(["mount", "-o", "remount,ro", str(tmpfs)], check=True)
    for cmd in (["memory", "stats"], ["memory", "list"]):  # reading works, from a copy of the store
        r = _agentui("--data-dir", str(data), *cmd)
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        assert "read-only file system: read from a copy" in r.stderr and "in use" not in r.stderr, r.stderr
    assert "kept" in r.stdout
    for cmd in (["memory", "remember", "more"], ["run", "--base-url", "http://127.0.0.1:9/v1", "x"]):
        r = _agentui("--data-dir", str(data), *cmd)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert "read-only file system" in r.stderr and "in use" not in r.stderr, r.stderr
    r = _agentui("--data-dir", str(data), "audit")  # reading works on a read-only dir
    assert r.returncode == 0, r.stderr


def test_full_disk_at_open_is_one_line(tmpfs) -> None:
    data = tmpfs / "data"
    _fill(tmpfs)
    for cmd in (["memory", "stats"], ["run", "--base-url", "http://127.0.0.1:9/v1", "x"], ["ui"]):
        r = _agentui("--data-dir", str(data), *cmd)
        assert r.returncode == 2 and "Traceback" not in r.stderr + r.stdout, r.stderr
        assert "is full" in r.stderr, r.stderr


def test_disk_filling_during_a_run_is_reported(fakellm, tmpfs) -> None:
    """The tool fills the disk that holds the data dir: the task log cannot be completed; the run
    says so and exits 1 — no traceback, no exit 0."""
    data, ws = tmpfs / "data", tmpfs.parent / "ws"
    ws.mkdir()
    steps = iter([call("shell", command=f"head -c 4000000 /dev/zero > {tmpfs}/fill; true")])
    fakellm.responder("perceiver", lambda _r: perceive("fill the disk"))
    fakellm.responder("planner", lambda _r: plan(["the disk is full"], sub("fill", "full", tools=["shell"])))
    fakellm.responder("executor", lambda _r: next(steps, finish("filled " + "x" * 3000)))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass"))
    fakellm.responder("meta_validator", lambda _r: merge("filled", "pass"))
    r = _agentui("run", "--json", "--yes", "--workspace", str(ws), "--data-dir", str(data), "fill the disk",
                 env={"AGENTUI_BASE_URL": fakellm.base_url})
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode in (1, 2), (r.returncode, r.stderr[-2000:])  # never 0 with a lost log
    doc = json.loads(r.stdout)
    assert "is full" in doc["task_log_error"]
    assert "task log" in r.stderr and "is full" in r.stderr


def test_long_task_is_capped_and_logged_verbatim(fakellm, tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    text = "count the files please " + "é" * 150_000
    fakellm.responder("perceiver", lambda _r: perceive("count files"))
    fakellm.responder("planner", lambda _r: plan(["counted"], sub("count", "a number")))
    fakellm.responder("executor", lambda _r: finish("3"))
    fakellm.responder("agent_validator", lambda _r: verdicts("pass"))
    fakellm.responder("meta_validator", lambda _r: merge("3", "pass"))
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "run", "--json", "--workspace", str(ws),
                        "--data-dir", str(tmp_path / "d"), "-"], input=text.encode(), capture_output=True,
                       env={**os.environ, "AGENTUI_BASE_URL": fakellm.base_url}, timeout=120)
    err = r.stderr.decode()
    assert r.returncode in (0, 1) and "Traceback" not in err, err  # the verdict is not the point here
    assert "the task text is 150,023 characters; the roles see the first 16,000" in err
    doc = json.loads(r.stdout)
    assert doc["task_truncated"] == {"chars": 150_023, "kept": 16_000}
    sizes = [len(json.dumps(c.get("messages", ""), ensure_ascii=False)) for c in fakellm.calls()]
    assert sizes and max(sizes) < 60_000  # no request carries more than the cap of the task
    log = (tmp_path / "d" / "tasks" / f"{doc['task_id']}.jsonl").read_text(encoding="utf-8")
    recs = [json.loads(line) for line in log.splitlines()]
    assert any(r.get("kind") == "task_text" and r["text"] == text for r in recs)
