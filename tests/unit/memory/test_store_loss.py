"""Loss is never reported as "0": a store whose tables fail their checksums is damaged, not empty;
`memory repair` ends with every record a read could still get; bad input and a full disk end in one
line. Every case runs the CLI on real LevelDB files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _cli(*args: str, data: Path, stdin=None, input_text: str | None = None, env=None) -> subprocess.CompletedProcess:  # noqa: ANN001
    return subprocess.run([sys.executable, "-m", "agentui.cli", "--data-dir", str(data), *args],
                          capture_output=True, text=True, timeout=120, stdin=stdin, input=input_text,
                          env=env)


def _tables(store: Path) -> list[Path]:
    return sorted(p for p in store.iterdir() if p.suffix in (".ldb", ".sst"))


def _files(store: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in store.iterdir()
            if p.is_file() and p.name not in ("LOCK", "LOG", "LOG.old", "agentui.pid")}


@pytest.fixture(scope="module")
def two_rules(tmp_path_factory) -> Path:
    """A store with two rules, each in its own table (the second CLI run moves the first one's log
    into a table; the third moves the second's)."""
    data = tmp_path_factory.mktemp("two_rules")
    for text in ("rule one", "rule two"):
        r = _cli("memory", "remember", text, data=data)
        assert r.returncode == 0, r.stderr
    r = _cli("memory", "stats", data=data)
    assert r.stdout.startswith("2 Megrams"), r.stdout
    store = data / "memory.leveldb"
    assert len(_tables(store)) == 2, sorted(os.listdir(store))
    return data


def _copy(src: Path, tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data"
    shutil.copytree(src, data)
    return data, data / "memory.leveldb"


def _flip_in_every_table(store: Path, find: bytes | None = None, at: int = 3) -> None:
    """One byte flipped in each table: in the first literal copy of `find` (a record's text, kept
    as is by snappy) or at offset `at` (the data block's first key)."""
    for t in _tables(store):
        b = bytearray(t.read_bytes())
        i = b.find(find) if find else at
        assert i >= 0, (t, find)
        b[i] ^= 0x01
        t.write_bytes(bytes(b))


def test_a_flipped_byte_in_every_table_is_damage_and_repair_gets_the_records_back(two_rules, tmp_path) -> None:
    data, store = _copy(two_rules, tmp_path)
    _flip_in_every_table(store, b"rule ")  # "rule" → "sule": the records parse, the checksums fail
    tables = {t.name: t.read_bytes() for t in _tables(store)}

    r = _cli("memory", "stats", data=data)
    assert "0 Megrams" not in r.stdout and "Traceback" not in r.stderr
    assert r.returncode == 2 and "is damaged (Corruption: block checksum mismatch)" in r.stderr, (
        r.returncode,
        r.stdout,
        r.stderr,
    )
    assert len(r.stderr.strip().splitlines()) == 1 and "agentui memory repair" in r.stderr

    r = _cli("doctor", data=data)
    line = next(ln for ln in r.stdout.splitlines() if "leveldb" in ln)
    assert "✓" not in line and "✗" in line and "damaged" in line, r.stdout
    assert r.returncode == 2
    r = _cli("memory", "list", data=data)
    assert r.returncode == 2 and "no Megrams match" not in r.stdout

    assert {t.name: t.read_bytes() for t in _tables(store)} == tables  # reads changed no table
    damaged = _files(store)
    r = _cli("memory", "repair", data=data)
    assert "Traceback" not in r.stderr
    assert r.returncode == 1, (r.stdout, r.stderr)  # the records are back, but unverified
    assert "before: could not be read (lenient open: 2 Megrams)" in r.stdout, r.stdout
    assert "after:  2 Megrams" in r.stdout, r.stdout
    assert "2 Megrams came back from blocks that failed their checksum" in r.stderr, r.stderr
    backups = sorted(data.glob("memory.leveldb.backup-*"))
    assert len(backups) == 1 and _files(backups[0]) == damaged  # the damaged original, untouched

    r = _cli("memory", "list", "--json", data=data)
    assert r.returncode == 0, r.stderr
    assert sorted(m["content"] for m in json.loads(r.stdout)) == ["sule one", "sule two"]
    r = _cli("doctor", "--json", data=data)
    assert [c for c in json.loads(r.stdout)["checks"] if c["name"] == "leveldb"][0]["ok"]


def test_repair_of_tables_nothing_can_read_says_records_may_be_lost(two_rules, tmp_path) -> None:
    data, store = _copy(two_rules, tmp_path)
    _flip_in_every_table(store, at=3)  # inside the first key: no read gets a record out of the block
    r = _cli("memory", "repair", "--json", data=data)
    rep = json.loads(r.stdout)
    assert r.returncode == 1, rep
    assert rep["before"] is None and rep["after"] >= (rep["lenient_before"] or 0)
    assert sorted(rep["damaged"]) == [f"table {t.name} failed its checks" for t in _tables(Path(rep["backup"]))]
    r = _cli("memory", "repair", data=tmp_path / "again")
    assert r.returncode == 2 and "no memory store" in r.stderr  # nothing there: one line, no traceback
    data2, store2 = _copy(two_rules, tmp_path / "second")
    _flip_in_every_table(store2, at=3)
    r = _cli("memory", "repair", data=data2)
    assert r.returncode == 1 and "some Megrams may be lost" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


GATED = """
import os, sys, time
gate = sys.argv[1]
while not os.path.exists(gate):
    time.sleep(0.001)
from agentui.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _together(n: int, gate: Path, *argv: str) -> list[subprocess.CompletedProcess]:
    """`n` CLI processes, imported and waiting, released at the same moment."""
    procs = [subprocess.Popen([sys.executable, "-c", GATED, str(gate), *argv], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(n)]
    import time

    time.sleep(1.5)  # every child has started its interpreter and waits on the gate
    gate.touch()
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


@pytest.mark.parametrize("trial", range(3))
def test_processes_started_together_on_a_fresh_data_dir_all_open_it(tmp_path, trial) -> None:
    """Creating a store is no damage: LevelDB writes it file by file, and a process looking in
    between used to report it "damaged … run `agentui memory repair`" (or "in use" for a moment)."""
    data = tmp_path / "fresh"
    runs = _together(8, tmp_path / "gate", "--data-dir", str(data), "memory", "remember", f"trial {trial}")
    for r in runs:
        assert r.returncode == 0 and "Traceback" not in r.stderr, (r.returncode, r.stderr)
        assert r.stdout.startswith("remembered ")
    r = _cli("memory", "stats", "--json", data=data)
    assert json.loads(r.stdout)["total"] == 8


def test_a_store_held_open_is_reported_in_use_with_the_pid_after_a_bounded_wait(two_rules, tmp_path) -> None:
    import time

    data, store = _copy(two_rules, tmp_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom agentui.memory.leveldb import open_db\nfrom pathlib import Path\n"
            f"db = open_db(Path({str(store)!r}))\nprint('open', flush=True)\ntime.sleep(120)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        t = time.monotonic()
        r = _cli("memory", "stats", data=data)
        waited = time.monotonic() - t
        assert r.returncode == 2 and f"in use by PID {holder.pid}" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1 and waited < 30
        r = _cli("doctor", data=data)  # doctor notes the holder instead of failing the check
        line = next(ln for ln in r.stdout.splitlines() if "leveldb" in ln)
        assert "✓" in line and f"in use by PID {holder.pid}" in line, r.stdout
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("how", ["emptied", "deleted"])
def test_a_lost_log_never_takes_an_acknowledged_record_silently(two_rules, tmp_path, how) -> None:
    """`memory remember` said "remembered": after a clean close the record is in a table, so an
    emptied log loses nothing; a missing log is reported, and repair gets every record back."""
    data, store = _copy(two_rules, tmp_path)
    r = _cli("memory", "remember", "rule three", data=data)
    assert r.returncode == 0
    for log in store.glob("*.log"):
        log.write_bytes(b"") if how == "emptied" else log.unlink()
    r = _cli("memory", "stats", "--json", data=data)
    if how == "emptied":
        assert r.returncode == 0 and json.loads(r.stdout)["total"] == 3, (r.stdout, r.stderr)
        return
    assert r.returncode == 2 and "log" in r.stderr and "is missing" in r.stderr, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1
    r = _cli("memory", "repair", "--json", data=data)
    rep = json.loads(r.stdout)
    assert rep["after"] == 3, (r.stdout, r.stderr)
    # nothing here tells a log emptied by a clean close from one that held writes: "may be lost", 1
    assert r.returncode == 1 and any("is missing" in d for d in rep["damaged"]), rep
    r = _cli("memory", "list", "--json", data=data)
    assert sorted(m["content"] for m in json.loads(r.stdout)) == ["rule one", "rule three", "rule two"]


def test_a_missing_log_after_a_writer_died_is_reported_not_silent(two_rules, tmp_path) -> None:
    """A writer killed after an acknowledged (fsync'd) write leaves it only in the log: deleting
    the log must not make the store open one record short without a word."""
    import signal

    data, store = _copy(two_rules, tmp_path)
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom agentui.clock import SystemClock\nfrom agentui.ids import UuidIds\n"
            "from agentui.memory import LevelDBMemory\n"
            f"m = LevelDBMemory({str(store)!r}, SystemClock(), UuidIds())\n"
            "print(m.remember('acknowledged', space='user').id, flush=True)\ntime.sleep(120)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        mid = child.stdout.readline().strip()
        assert mid
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    for log in store.glob("*.log"):
        log.unlink()
    r = _cli("memory", "stats", data=data)
    assert r.returncode == 2 and "is missing" in r.stderr and "memory repair" in r.stderr, (r.stdout, r.stderr)
    assert "Megrams in" not in r.stdout


def _closed_stdin(*argv: str) -> subprocess.CompletedProcess:
    """The CLI started the way `agentui … <&-` starts it: file descriptor 0 closed."""
    return subprocess.run(["bash", "-c", 'exec "$@" <&-', "_", sys.executable, "-m", "agentui.cli", *argv],
                          capture_output=True, text=True, timeout=120)


def test_a_task_with_a_nul_byte_is_one_line_of_bad_input(fakellm_env, tmp_path) -> None:
    r = _cli("run", "-", data=tmp_path / "data", input_text="list\0the files")
    assert "Traceback" not in r.stderr + r.stdout
    assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr)
    assert r.stderr.strip() == "agentui run: the task contains a NUL byte (at offset 4); remove it, e.g. tr -d '\\000'"


def test_run_with_stdin_closed_is_one_line_of_bad_input(fakellm_env, tmp_path) -> None:
    r = _closed_stdin("--data-dir", str(tmp_path / "data"), "run", "-")
    assert "Traceback" not in r.stderr and "AttributeError" not in r.stderr
    assert r.returncode == 2 and "stdin is closed" in r.stderr, (r.returncode, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1
    # a task given as an argument does not need stdin: the run goes on (and asks nothing)
    r = _closed_stdin("--data-dir", str(tmp_path / "data"), "run", "say hello")
    assert "AttributeError" not in r.stderr and "unexpected error" not in r.stderr, r.stderr
    assert "/tasks/" in r.stdout, (r.stdout[-800:], r.stderr)  # the task ran: its log is named
    r = _closed_stdin("--data-dir", str(tmp_path / "data"), "memory", "forget", "nosuch")
    assert r.returncode == 2 and "no megram 'nosuch'" in r.stderr and "Traceback" not in r.stderr


@pytest.fixture
def full_disk(tmp_path) -> Path:
    """A 1 MiB tmpfs, filled up once the test has written its store (root only)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({r.stderr.strip()})")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_read_only_commands_work_on_a_full_disk(full_disk, tmp_path) -> None:
    data = full_disk / "data"
    for text in ("rule one", "rule two"):
        assert _cli("memory", "remember", text, data=data).returncode == 0
    fd = os.open(full_disk / "filler", os.O_WRONLY | os.O_CREAT)  # fill the disk to the last block
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    assert os.statvfs(full_disk).f_bavail == 0
    before = sorted(os.listdir(data / "memory.leveldb"))

    r = _cli("memory", "stats", "--json", data=data)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["total"] == 2
    assert "is full" in r.stderr and "read from a copy" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = _cli("memory", "list", "--json", data=data)
    assert r.returncode == 0 and sorted(m["content"] for m in json.loads(r.stdout)) == ["rule one", "rule two"]
    r = _cli("memory", "remember", "rule three", data=data)  # a write: one line, exit 2
    assert r.returncode == 2 and "is full" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert {n for n in os.listdir(data / "memory.leveldb")} >= set(before)
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("agentui-memory-read-*/memory.leveldb/CURRENT"))
    (full_disk / "filler").unlink()
    r = _cli("memory", "stats", "--json", data=data)
    assert r.returncode == 0 and json.loads(r.stdout)["total"] == 2 and not r.stderr, r.stderr


def test_the_checked_scan_reads_what_plyvels_iterator_reads_on_a_sound_store(tmp_path) -> None:
    """Reads moved from plyvel's iterator (which ignores the iterator's status) to the raw iterator:
    on a sound store both return the same keys and values, forwards and backwards, for any prefix."""
    from agentui.memory.leveldb import binding, scan

    db = binding().DB(str(tmp_path / "db"), create_if_missing=True)
    keys = [b"a", b"a:1", b"a:2", b"ab", b"b\xff", b"b\xff\x00", b"b\xff\xff", b"c", b"\xff", b"\xff\xff"]
    for k in keys:
        db.put(k, k[::-1])
    try:
        for prefix in (b"", b"a", b"a:", b"b\xff", b"\xff", b"zz"):
            for reverse in (False, True):
                want = list(db.iterator(prefix=prefix, reverse=reverse))
                assert list(scan(db, prefix, reverse=reverse)) == want, (prefix, reverse)
                assert list(scan(db, prefix, reverse=reverse, values=False)) == [k for k, _ in want]
                assert list(scan(db, prefix, reverse=reverse, keys=False)) == [v for _, v in want]
        with db.snapshot() as snap:
            assert list(scan(snap, b"a")) == list(db.iterator(prefix=b"a"))
    finally:
        db.close()


def test_a_session_holding_the_store_is_reported_without_the_wait(two_rules, tmp_path) -> None:
    """A holder that has had the store open for a while (the TUI, a long run) will not let go in
    seconds: the open says "in use" at once instead of waiting for it."""
    import time

    data, store = _copy(two_rules, tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import time\nfrom agentui.clock import SystemClock\nfrom agentui.ids import UuidIds\n"
         "from agentui.memory import LevelDBMemory\n"
         f"m = LevelDBMemory({str(store)!r}, SystemClock(), UuidIds())\nprint('open', flush=True)\ntime.sleep(120)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        pid_file = store / "agentui.pid"
        old = time.time() - 60
        os.utime(pid_file, (old, old))  # opened a minute ago
        from agentui.memory import MemoryInUse
        from agentui.memory.leveldb import LOCK_WAIT_S, open_db

        t = time.monotonic()
        with pytest.raises(MemoryInUse, match=f"in use by PID {holder.pid}"):
            open_db(store)
        assert time.monotonic() - t < LOCK_WAIT_S / 2
    finally:
        holder.kill()
        holder.wait()
