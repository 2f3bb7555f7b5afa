"""A damaged store is never opened silently (#15): no create-if-missing over an existing store
(which made LevelDB start empty and delete the old tables), paranoid checks on, one-line errors
through the CLI, and `agentui memory repair` copies the directory aside, repairs, reports counts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentui.contracts import MacroState
from agentui.ids import SeededIds
from agentui.memory import LevelDBMemory, MemoryDamaged, MemoryInUse, MemoryUnavailable

from .helpers import mg

FIRST, SECOND = 3000, 500  # the second batch stays in the write-ahead log


def _build(path: Path, clock) -> None:
    store = LevelDBMemory(path, clock, SeededIds(41))
    store.write_many([mg(store, MacroState.REFINE, "tool:t", f"path:{i % 9}") for i in range(FIRST)], sync=True)
    store.close_sync()
    store = LevelDBMemory(path, clock, SeededIds(42))  # reopen: the first batch moves to a table
    store.write_many([mg(store, MacroState.ABANDON, "tool:t", "path:log") for _ in range(SECOND)], sync=True)
    # close without moving the log into a table, as a process that dies leaves it: a clean close
    # would put the second batch in a table too, and the log cases need it in the log
    from agentui.memory import leveldb

    flush, leveldb.flush_log = leveldb.flush_log, lambda db: None
    try:
        store.close_sync()
    finally:
        leveldb.flush_log = flush


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    from datetime import UTC, datetime

    from agentui.clock import FakeClock

    path = tmp_path_factory.mktemp("pristine") / "memory.leveldb"
    _build(path, FakeClock(datetime(2026, 1, 1, tzinfo=UTC)))
    return path


def _one(path: Path, pattern: str) -> Path:
    found = sorted(path.glob(pattern))
    assert found, f"no {pattern} in {sorted(os.listdir(path))}"
    return found[0]


def _flip(f: Path) -> None:
    b = bytearray(f.read_bytes())
    for i in range(len(b) // 3, len(b) // 3 + 64):
        b[i] ^= 0xFF
    f.write_bytes(bytes(b))


def _flip_table(f: Path) -> None:
    """16 bytes overwritten inside the first data block (a bad sector, a stray write): paranoid
    checks at open do not read data blocks, so only a read that verifies checksums sees it."""
    with f.open("r+b") as fh:
        fh.seek(20)
        fh.write(b"X" * 16)


def _garbage_tail(f: Path) -> None:
    with f.open("ab") as fh:
        fh.write(b"\x00\xff\x13garbagegarbage")  # a record header whose length runs past the end


def _cut_mid_batch(f: Path) -> None:
    os.truncate(f, int(f.stat().st_size * 0.6))  # the second batch's record cut short (power loss)


def _truncate(f: Path, keep: float) -> None:
    os.truncate(f, int(f.stat().st_size * keep))


DAMAGE = {
    "missing CURRENT": lambda p: _one(p, "CURRENT").unlink(),
    "bad CURRENT": lambda p: _one(p, "CURRENT").write_text("garbage"),
    "corrupted log": lambda p: _flip(_one(p, "*.log")),
    "truncated ldb": lambda p: _truncate(_one(p, "*.ldb"), 0.5),
    "empty ldb": lambda p: _truncate(_one(p, "*.ldb"), 0),
    "missing ldb": lambda p: _one(p, "*.ldb").unlink(),
    "missing MANIFEST": lambda p: _one(p, "MANIFEST-*").unlink(),
    "truncated MANIFEST": lambda p: _truncate(_one(p, "MANIFEST-*"), 0.5),
    "flipped table bytes": lambda p: _flip_table(_one(p, "*.ldb")),
    "garbage after the log": lambda p: _garbage_tail(_one(p, "*.log")),
    "log cut mid-batch": lambda p: _cut_mid_batch(_one(p, "*.log")),
}

# what LevelDB's repair gets back: everything when only metadata is damaged
RECOVERED = {
    "missing CURRENT": FIRST + SECOND, "bad CURRENT": FIRST + SECOND, "missing MANIFEST": FIRST + SECOND,
    "truncated MANIFEST": FIRST + SECOND, "garbage after the log": FIRST + SECOND,
}
# this one opens (its metadata and sizes are sound) and fails at the first read of the damaged block;
# a truncated or empty table used to open too, after LevelDB had turned the log into a new table and
# rewritten the MANIFEST (found by an outside tester): now the table sizes the MANIFEST records are
# checked before LevelDB sees the store
READ_DAMAGE = ("flipped table bytes",)


def _cli(*args: str, data: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentui.cli", "--data-dir", str(data), *args],
                          capture_output=True, text=True, timeout=120)


def _files(p: Path, tables_only: bool = False) -> dict[str, int]:
    skip = ("LOCK", "LOG", "LOG.old", "agentui.pid")
    return {n: (p / n).stat().st_size for n in os.listdir(p)
            if n not in skip and (not tables_only or n.endswith(".ldb"))}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_damaged_store_stops_with_one_line_and_repair_reports_counts(pristine, tmp_path, case) -> None:
    data = tmp_path / "data"
    store = data / "memory.leveldb"
    shutil.copytree(pristine, store)
    DAMAGE[case](store)
    files = _files(store)

    r = _cli("memory", "stats", data=data)
    assert "Traceback" not in r.stderr + r.stdout
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert f"the memory store {store} is damaged (" in r.stderr, r.stderr
    assert "agentui memory repair" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    if case not in READ_DAMAGE:  # those open (the log is replayed) and fail at the first read
        assert _files(store) == files, "a failed open changed the store's files"
    files = _files(store)
    r = _cli("doctor", "--json", data=data)
    assert "Traceback" not in r.stderr
    check = [c for c in json.loads(r.stdout)["checks"] if c["name"] == "leveldb"][0]
    assert not check["ok"] and "repair" in check["detail"]
    # a store that opens rotates its log and MANIFEST; its tables must stay as they are
    read = case in READ_DAMAGE
    assert _files(store, read) == {k: v for k, v in files.items() if not read or k.endswith(".ldb")}, (
        "doctor changed the store's files"
    )
    files = _files(store)

    r = _cli("memory", "repair", "--json", data=data)
    rep = json.loads(r.stdout)
    # exit 0 only when nothing may be missing (metadata damage); lost, dropped or unverified records,
    # or a log tail that may be a cut write: 1
    whole = case in RECOVERED and case != "garbage after the log"
    assert r.returncode == (0 if whole else 1), (case, r.returncode, rep)
    if not whole:
        assert rep["damaged"] or rep["lost"] or rep["salvaged"], rep
    backup = Path(rep["backup"])
    assert backup.parent == data and _files(backup) == files  # the damaged original, aside
    assert rep["before"] is None or rep["before"] < FIRST + SECOND  # a normal open failed or lost some
    assert 0 < rep["after"] <= FIRST + SECOND
    if case in RECOVERED:
        assert rep["after"] == RECOVERED[case]
    r = _cli("memory", "stats", "--json", data=data)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["total"] == rep["after"]


def test_corrupted_log_is_reported_not_dropped(pristine, tmp_path, clock) -> None:
    """Without paranoid checks LevelDB drops the corrupted batch and opens; we refuse, and the
    repair report shows what a lenient open would have kept."""
    path = tmp_path / "m"
    shutil.copytree(pristine, path)
    DAMAGE["corrupted log"](path)
    with pytest.raises(MemoryDamaged, match="checksum mismatch"):
        LevelDBMemory(path, clock, SeededIds(1))
    from agentui.memory.leveldb import repair

    rep = repair(path)
    assert rep["before"] is None and rep["lenient_before"] is not None
    assert rep["lenient_before"] < FIRST + SECOND  # the silent loss we no longer allow
    assert rep["after"] >= rep["lenient_before"]


def test_empty_dir_is_a_new_store_not_damage(tmp_path, clock) -> None:
    (tmp_path / "fresh").mkdir()
    store = LevelDBMemory(tmp_path / "fresh", clock, SeededIds(2))
    assert store.stats()["total"] == 0
    store.close_sync()


def test_repair_refuses_a_store_in_use(tmp_path, clock) -> None:
    path = tmp_path / "busy"
    store = LevelDBMemory(path, clock, SeededIds(3))
    code = f"from agentui.memory.leveldb import repair\nfrom pathlib import Path\nrepair(Path({str(path)!r}))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "MemoryInUse" in r.stderr and "in use by PID" in r.stderr
    store.close_sync()
    with pytest.raises(MemoryInUse):  # and in this process: no second LevelDB handle
        a = LevelDBMemory(path, clock, SeededIds(4))
        try:
            LevelDBMemory(path, clock, SeededIds(5))
        finally:
            a.close_sync()


def test_repair_reports_the_log_tail_it_drops(pristine, tmp_path) -> None:
    path = tmp_path / "m"
    shutil.copytree(pristine, path)
    _cut_mid_batch(_one(path, "*.log"))
    from agentui.memory.leveldb import repair

    rep = repair(path)
    assert rep["before"] is None  # our open refuses it
    assert rep["lenient_before"] == FIRST  # LevelDB alone drops the cut batch without a word
    assert list(rep["log_tail_dropped_bytes"].values())[0] > 0
    assert rep["after"] == FIRST


def test_a_foreign_directory_never_becomes_a_store(tmp_path, clock) -> None:
    path = tmp_path / "memory.leveldb"
    path.mkdir()
    (path / "notes.txt").write_text("mine\n")
    with pytest.raises(MemoryUnavailable, match="not a LevelDB store .*notes.txt"):
        LevelDBMemory(path, clock, SeededIds(6))
    assert sorted(os.listdir(path)) == ["notes.txt"]


def test_lock_held_by_a_process_without_our_pid_file_names_its_pid(pristine, tmp_path) -> None:
    """Another program (or an agentui that died before writing its pid file) holds LevelDB's
    lock: the PID comes from the OS (F_GETLK), never "PID ?"."""
    path = tmp_path / "m"
    shutil.copytree(pristine, path)
    from agentui.memory.leveldb import binding

    holder = subprocess.Popen(
        [sys.executable, "-c", f"import sys, time\nimport {binding().__name__} as p\n"
         f"db = p.DB({str(path)!r})\nprint('open', flush=True)\ntime.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        assert not (path / "agentui.pid").exists()
        r = _cli("memory", "stats", data=tmp_path / "nodata")  # a fresh dir: sanity of the CLI
        assert r.returncode == 0, r.stderr
        data = tmp_path / "data"
        data.mkdir()
        (data / "memory.leveldb").symlink_to(path)
        r = _cli("memory", "stats", data=data)
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert f"memory is in use by PID {holder.pid} (" in r.stderr and "PID ?" not in r.stderr, r.stderr
        r = _cli("doctor", "--json", data=data)
        check = [c for c in json.loads(r.stdout)["checks"] if c["name"] == "leveldb"][0]
        assert check["ok"] and f"PID {holder.pid}" in check["detail"], check  # a note, not a failure
    finally:
        holder.kill()
        holder.wait()
