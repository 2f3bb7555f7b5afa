"""LevelDB, opened safely: the one place that imports the bindings (plyvel-next on Python >= 3.12,
plyvel / plyvel-ci on 3.11 — same API), and the rules that keep the user's long-term memory from
being lost silently:

- an existing store directory is never opened with create-if-missing: with a damaged or missing
  ``CURRENT`` LevelDB would create an empty store there and then delete the old table files;
- paranoid checks are on, so a corrupted log or table stops the open instead of being dropped;
  a log whose last record is cut short (LevelDB drops it without a word) stops it too, and every
  read verifies block checksums, so a flipped byte in a table is an error, not data;
- a directory that is not a store (not empty, no LevelDB files) is never turned into one;
- every failure becomes one :class:`MemoryError_` subclass with a one-line message and the fix
  (``agentui memory repair`` for damage), classified by the OS error, not by words in a path.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import struct
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import MemoryDamaged, MemoryError_, MemoryInUse, MemoryUnavailable
from .files import PID_FILE

try:  # Python >= 3.12: plyvel-next (cp312-cp314 wheels)
    import plyvel_next as plyvel
except ImportError:  # pragma: no cover - depends on the interpreter
    import plyvel

_STORE_FILES = re.compile(r"^(CURRENT|MANIFEST-\d+|\d+\.(ldb|sst|log))$")
_DAMAGE_FILE = re.compile(r"(\d+\.(ldb|sst|log)|MANIFEST-\d+|CURRENT)\b")
_REPAIR_HINT = "run `agentui memory repair` (it copies the directory aside first)"


def binding() -> Any:
    """The imported LevelDB module (plyvel or plyvel_next)."""
    return plyvel


def binding_name() -> str:
    return f"{plyvel.__name__} {getattr(plyvel, '__version__', '?')}"


def is_store(path: Path) -> bool:
    """True if `path` holds LevelDB files (a store, possibly damaged)."""
    try:
        return any(_STORE_FILES.match(n) for n in os.listdir(path))
    except OSError:
        return False


def _strerror_errno(msg: str) -> int | None:
    """The errno whose strerror ends a LevelDB IO error message (``…: Permission denied``)."""
    for code in (errno.EAGAIN, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.ENOTDIR,
                 errno.ENOENT, errno.EDQUOT, errno.EIO, errno.EMFILE):
        if msg.rstrip().endswith(os.strerror(code)):
            return code
    return None


def describe_os_error(code: int | None, path: Path, detail: str) -> str:
    """One line: what is wrong with `path` and what to do about it."""
    if code in (errno.EACCES, errno.EPERM):
        return f"no permission to write {path}; fix its permissions or use --data-dir / AGENTUI_DATA_DIR"
    if code == errno.EROFS:
        return f"{path} is on a read-only file system; use a writable --data-dir / AGENTUI_DATA_DIR"
    if code in (errno.ENOSPC, errno.EDQUOT):
        return f"the disk holding {path} is full; free some space and retry"
    if code == errno.ENOTDIR:
        return f"{path} (or a parent) is a file, not a directory; use another --data-dir"
    return f"{path}: {detail}"


def _lock_state(path: Path) -> int | None:
    """Probe LevelDB's LOCK file the way LevelDB locks it (fcntl): None if we could take it, else
    the errno — EAGAIN/EACCES from the lock call means another process holds it, an errno from
    opening the file means a permission / file-system problem."""
    lock = path / "LOCK"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        return -(e.errno or errno.EIO)  # negative: the open failed, not the lock
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return None
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


_OPEN: set[str] = set()  # stores this process has open

# struct flock as the kernel lays it out (F_GETLK): macOS puts start/len/pid first
_FLOCK = "@qqihh" if sys.platform == "darwin" else "@hhqqi"


def lock_holder(path: Path) -> int | None:
    """The PID holding LevelDB's fcntl lock on ``path/LOCK`` (F_GETLK: the OS's answer, not our
    pid file, which the holder may never have written), or None if unknown / not held."""
    if os.path.realpath(path) in _OPEN:  # ours: closing a probe fd would drop our own fcntl lock
        return os.getpid()
    try:
        fd = os.open(path / "LOCK", os.O_RDWR)
    except OSError:
        return None
    try:
        if sys.platform == "darwin":
            arg = struct.pack(_FLOCK, 0, 0, 0, fcntl.F_WRLCK, os.SEEK_SET)
        else:
            arg = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        out = fcntl.fcntl(fd, fcntl.F_GETLK, arg + bytes(16))[: struct.calcsize(_FLOCK)]
        fields = struct.unpack(_FLOCK, out)
        ltype, pid = (fields[3], fields[2]) if sys.platform == "darwin" else (fields[0], fields[4])
        return pid if ltype != fcntl.F_UNLCK and pid > 0 else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _in_use(path: Path, cause: BaseException) -> MemoryInUse:
    pid = lock_holder(path)
    if pid is None:  # held in this process, or the OS would not say: our pid file, if any
        try:
            text = (path / PID_FILE).read_text().strip()
            pid = int(text) if text.isdigit() else None
        except OSError:
            pid = None
    who = f"PID {pid}" if pid is not None else "another process"
    err = MemoryInUse(f"memory is in use by {who} ({path})")
    err.__cause__ = cause
    return err


def classify(path: Path | None, e: BaseException) -> MemoryError_:
    """Turn a LevelDB error into one of our errors (by OS error, then by LevelDB status); `path`
    None: an error from a read after the open, whose message names the file."""
    raw = e.args[0] if e.args else str(e)
    msg = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    store = f"the memory store {path}" if path is not None else "the memory store"
    if isinstance(e, plyvel.CorruptionError) or msg.startswith("Corruption"):
        return MemoryDamaged(f"{store} is damaged ({msg}); {_REPAIR_HINT}")
    # LevelDB's in-process lock table: this process has it open
    if "already held by process" in msg and path is not None:
        return _in_use(path, e)
    code = _strerror_errno(msg)
    if code in (errno.EAGAIN, errno.EACCES) and msg.startswith("IO error: lock ") and path is not None:
        # LevelDB words a failed fcntl lock "lock <file>" (a failed open of the file has no such
        # word): held elsewhere, and perhaps let go since (processes started together) — unless our
        # probe cannot even open the file, a permission / file-system problem
        probe = _lock_state(path)
        if probe is None or probe > 0:
            return _in_use(path, e)
        code = -probe
    if code not in (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EAGAIN) and (
        _DAMAGE_FILE.search(msg)
    ):  # a store file is missing or unreadable (truncated table: EINVAL on read): damage
        return MemoryDamaged(f"{store} is damaged ({msg}); {_REPAIR_HINT}")
    if path is None:
        return MemoryUnavailable(f"{store} failed: {msg}")
    if code is not None:
        return MemoryUnavailable(describe_os_error(code, path, msg), code)
    return MemoryUnavailable(f"cannot open the memory store {path}: {msg}")


# what LevelDB (and we) leave in a store directory besides its data files
_OURS = frozenset({"LOCK", "LOG", "LOG.old", PID_FILE})
_LOG_BLOCK = 32768  # the log format: 32 KiB blocks of records with a 7-byte header
_LOG_HEADER = 7


def _log_frames(data: bytes) -> tuple[list[tuple[int, bytes]], int]:
    """The physical records of a LevelDB log-format file (a log or a MANIFEST) as (type, payload),
    and the offset where the whole records end. Only the framing is walked (lengths, not
    checksums: a whole record with a bad checksum is one LevelDB itself reports)."""
    frames: list[tuple[int, bytes]] = []
    pos, end = 0, len(data)
    while pos < end:
        left = _LOG_BLOCK - pos % _LOG_BLOCK
        if left < _LOG_HEADER:  # a block's zero-filled trailer
            if pos + left > end:
                break
            pos += left
            continue
        if pos + _LOG_HEADER > end:
            break
        length = data[pos + 4] | data[pos + 5] << 8
        if pos + _LOG_HEADER + length > end:
            break
        frames.append((data[pos + 6], data[pos + _LOG_HEADER: pos + _LOG_HEADER + length]))
        pos += _LOG_HEADER + length
    return frames, pos


def _log_tail_cut(log: Path) -> int:
    """Bytes at the end of a LevelDB log that do not make a whole record (0: none).

    LevelDB takes such a tail for a write the writer never finished and drops it without a word,
    even with paranoid checks — a cut-off batch, or garbage appended to the file, is lost
    silently."""
    try:
        data = log.read_bytes()
    except OSError:
        return 0
    _, pos = _log_frames(data)
    return len(data) - pos if data[pos:].strip(b"\0") else 0  # zero padding is no record


def _log_records(data: bytes) -> list[bytes]:
    """The whole logical records of a log-format file: FIRST/MIDDLE/LAST fragments joined, a torn
    tail left out."""
    out: list[bytes] = []
    part = b""
    for kind, body in _log_frames(data)[0]:
        if kind == 1:  # FULL
            out.append(body)
        elif kind == 2:  # FIRST
            part = body
        elif kind == 3:  # MIDDLE
            part += body
        elif kind == 4:  # LAST
            out.append(part + body)
            part = b""
    return out


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def live_tables(manifest: Path) -> dict[int, int] | None:
    """{file number: size} of the tables the MANIFEST says the store holds (VersionEdit tags:
    6 deleted file, 7 new file), or None when it cannot be read that far (LevelDB then decides)."""
    read = _read_manifest(manifest)
    return None if read is None else read[0]


def current_log(manifest: Path) -> int | None:
    """The number of the log the MANIFEST says holds the writes not yet in a table (tag 2, the
    last one recorded), or None when it cannot be read that far."""
    read = _read_manifest(manifest)
    return None if read is None else read[1]


def _read_manifest(manifest: Path) -> tuple[dict[int, int], int | None] | None:
    try:
        records = _log_records(manifest.read_bytes())
    except OSError:
        return None
    live: dict[int, int] = {}
    log: int | None = None
    try:
        for rec in records:
            i = 0
            while i < len(rec):
                tag, i = _varint(rec, i)
                if tag == 1:  # comparator name
                    n, i = _varint(rec, i)
                    i += n
                elif tag == 2:  # log number
                    log, i = _varint(rec, i)
                elif tag in (3, 4, 9):  # next file, last sequence, prev log number
                    _, i = _varint(rec, i)
                elif tag == 5:  # compact pointer: level, internal key
                    _, i = _varint(rec, i)
                    n, i = _varint(rec, i)
                    i += n
                elif tag == 6:  # deleted file: level, number
                    _, i = _varint(rec, i)
                    num, i = _varint(rec, i)
                    live.pop(num, None)
                elif tag == 7:  # new file: level, number, size, smallest, largest
                    _, i = _varint(rec, i)
                    num, i = _varint(rec, i)
                    size, i = _varint(rec, i)
                    for _k in range(2):
                        n, i = _varint(rec, i)
                        i += n
                    live[num] = size
                else:
                    return None
    except IndexError:
        return None
    return live, log


@contextlib.contextmanager
def _opening(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on the store's parent directory while the store is checked and opened.

    LevelDB creates a store file by file (LOCK, MANIFEST, then CURRENT): a second process looking
    in between sees LevelDB files without a CURRENT, which is what a damaged store looks like.
    Checks and opens that hold this lock never see a store half-created. The lock is on the
    directory itself (no file is added to the data dir) and lasts only for the open, not for the
    session; if the parent cannot be opened, the open goes on without it and reports the problem."""
    parent = path.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(parent, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:  # a file system without flock: go on unserialised
            pass
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def precheck(path: Path) -> None:
    """Cheap checks before LevelDB sees `path` (the TUI runs them before its screen opens):
    a file in its place, or an existing store whose CURRENT / MANIFEST is gone or garbled."""
    with _opening(path):
        _precheck(path)


def _precheck(path: Path) -> None:
    if path.exists() and not path.is_dir():
        raise MemoryUnavailable(describe_os_error(errno.ENOTDIR, path, "not a directory"))
    if not is_store(path):
        try:
            foreign = sorted(set(os.listdir(path)) - _OURS) if path.is_dir() else []
        except OSError:
            foreign = []
        if foreign:  # someone else's directory: never start a store among their files
            shown = ", ".join(foreign[:3]) + (", …" if len(foreign) > 3 else "")
            raise MemoryUnavailable(f"{path} is a directory that is not a LevelDB store (it holds {shown}); "
                                    "move it away or use another --data-dir")
        return
    current = path / "CURRENT"
    if not current.is_file():
        raise MemoryDamaged(f"the memory store {path} is damaged (its CURRENT file is missing: opening it "
                            f"would start an empty store and delete the old tables); {_REPAIR_HINT}")
    try:
        name = current.read_bytes()
    except OSError as e:
        raise MemoryUnavailable(describe_os_error(e.errno, current, e.strerror or str(e))) from e
    m = re.fullmatch(rb"(MANIFEST-\d+)\n", name)
    if m is None:
        raise MemoryDamaged(f"the memory store {path} is damaged (its CURRENT file is garbled); {_REPAIR_HINT}")
    if not (path / m.group(1).decode()).is_file():
        raise MemoryDamaged(f"the memory store {path} is damaged ({m.group(1).decode()} is missing); {_REPAIR_HINT}")
    if lock_holder(path) is not None:
        return  # a live writer may be mid-record; the open reports the lock
    for num, size in sorted((live_tables(path / m.group(1).decode()) or {}).items()):
        # a missing or cut table: LevelDB would first turn the log into a new table and rewrite the
        # MANIFEST, then fail — the store changed before the message. Stop before it opens.
        table = next((t for t in (path / f"{num:06d}.ldb", path / f"{num:06d}.sst") if t.exists()), None)
        if table is None:
            raise MemoryDamaged(f"the memory store {path} is damaged (its table {num:06d}.ldb is missing); "
                                f"{_REPAIR_HINT}")
        have = table.stat().st_size
        if have != size:
            raise MemoryDamaged(f"the memory store {path} is damaged (its table {table.name} holds {have} of its "
                                f"{size} bytes); {_REPAIR_HINT}")
    log_num = current_log(path / m.group(1).decode())
    if log_num is not None and not (path / f"{log_num:06d}.log").is_file():
        # LevelDB keeps the log the MANIFEST names and opens without it, silently: the writes it
        # held since the last table (a session that did not close) would be gone without a word
        raise MemoryDamaged(f"the memory store {path} is damaged (its log {log_num:06d}.log is missing, so "
                            f"writes since the store was last closed may be lost); {_REPAIR_HINT}")
    for log in sorted(path.glob("*.log")):
        cut = _log_tail_cut(log)
        if cut:
            raise MemoryDamaged(f"the memory store {path} is damaged (its log {log.name} ends with {cut} bytes "
                                f"that are not a whole record, which LevelDB would drop silently); {_REPAIR_HINT}")


LOCK_WAIT_S = 10.0  # how long an open waits for another process to let go of the store
SETTLED_S = 3.0  # a holder whose pid file is older than this is a session (the TUI, a run), not a peer


def _settled_holder(path: Path) -> bool:
    """True if the process holding the store has had it open for a while: its pid file (written
    right after its open) is older than SETTLED_S and names the lock's holder. Such a holder is a
    session that will not let go in seconds, so waiting for it only delays the message; processes
    started together are younger than that."""
    try:
        pid_file = path / PID_FILE
        age = time.time() - pid_file.stat().st_mtime
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return False
    return age > SETTLED_S and lock_holder(path) == pid


def open_db(path: Path, *, wait: float = LOCK_WAIT_S, **options: Any) -> Any:
    """Open (or create, if `path` holds no store yet) the LevelDB at `path` with paranoid checks.
    While another process holds the store's lock, retry for up to `wait` seconds (processes started
    together each hold it for a moment), then raise :class:`MemoryInUse` naming its PID — at once
    when the holder is a session that has had it open for a while.
    Close it with :func:`close_db`."""
    key = os.path.realpath(path)
    if key in _OPEN:  # a failed second open in this process would drop the first one's fcntl lock
        raise _in_use(path, OSError(errno.EAGAIN, "already open in this process"))
    deadline = time.monotonic() + wait
    while True:
        with _opening(path):
            _precheck(path)
            existing = is_store(path)
            try:
                path.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise MemoryUnavailable(describe_os_error(e.errno, path, e.strerror or str(e)), e.errno) from e
            try:
                db = plyvel.DB(str(path), create_if_missing=not existing, paranoid_checks=True, **options)
            except plyvel.Error as e:
                err = classify(path, e)
                err.__cause__ = e
                # held in this process (another thread): each failed try would close a descriptor
                # of the LOCK file and so drop the holder's fcntl lock; no retry
                mine = "already held by process" in str(e)
            else:
                _OPEN.add(key)
                return db
        if not isinstance(err, MemoryInUse) or mine or time.monotonic() >= deadline or _settled_holder(path):
            raise err
        time.sleep(0.05)


# an open that fails for want of space or write access: a store that can still be read from a copy
NO_WRITE = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


def open_copy(path: Path, cause: MemoryUnavailable) -> tuple[Any, Path]:
    """Open a scratch copy of the store at `path` in the temp dir, for reading only.

    Every LevelDB open writes (a new log and MANIFEST), so a store on a full or read-only disk
    cannot be opened in place, yet its records are all there. The copy is taken under the store's
    own lock (no writer changes it meanwhile) and removed by :func:`close_copy`. Raises `cause`
    when the store is in use, is no store, or the copy cannot be made (the temp dir is full too)."""
    import tempfile

    if not is_store(path):
        raise cause
    _precheck(path)
    scratch = Path(tempfile.mkdtemp(prefix="agentui-memory-read-")) / "memory.leveldb"
    try:
        fd = os.open(path / "LOCK", os.O_RDWR)
    except OSError:
        fd = None  # a read-only LOCK file: nobody can hold it to write either
    try:
        if fd is not None:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                raise _in_use(path, e) from e
        shutil.copytree(path, scratch, ignore=shutil.ignore_patterns("LOCK", PID_FILE))
    except OSError as e:
        shutil.rmtree(scratch.parent, ignore_errors=True)
        raise cause from e
    finally:
        if fd is not None:
            os.close(fd)
    try:
        return plyvel.DB(str(scratch), create_if_missing=False, paranoid_checks=True), scratch
    except plyvel.Error as e:
        shutil.rmtree(scratch.parent, ignore_errors=True)
        raise classify(path, e) from e


def close_copy(db: Any, scratch: Path) -> None:
    if not db.closed:
        db.close()
    shutil.rmtree(scratch.parent, ignore_errors=True)


def flush_log(db: Any) -> None:
    """Move the writes held in the log into a table (fsync'd, and named in the MANIFEST).

    LevelDB keeps the writes since its last table only in the log and replays it at the next open;
    a log deleted or emptied in between (a cleanup script, a sync tool, a crash of the file system)
    takes them with it, and nothing says so. Compacting an empty key range flushes the memtable
    and no table: the cost of one small table, which the next open would write anyway."""
    with contextlib.suppress(plyvel.Error):  # a full disk: the writes stay in the log, as before
        db.compact_range(start=b"\x00", stop=b"\x00")


def close_db(path: Path, db: Any) -> None:
    if not db.closed:
        db.close()
    _OPEN.discard(os.path.realpath(path))


def _after(prefix: bytes) -> bytes | None:
    """The first key past every key starting with `prefix` (None: no such key)."""
    head = prefix.rstrip(b"\xff")
    return head[:-1] + bytes([head[-1] + 1]) if head else None


def scan(src: Any, prefix: bytes = b"", *, reverse: bool = False, keys: bool = True, values: bool = True,
         verify: bool = True, fill_cache: bool = True) -> Any:
    """Iterate the keys of a DB or snapshot that start with `prefix`, as plyvel's ``iterator`` does,
    but over LevelDB's raw iterator: plyvel's ``iterator`` never looks at the iterator's status, so
    a block that fails its checksum (or a table that cannot be opened) ends the iteration early or
    is skipped, and a damaged store reads as a smaller or empty one. The raw iterator raises the
    status after every step, so a read of a damaged store is a ``CorruptionError``, never less data.
    ``verify=False`` reads leniently (block checksums not checked: repair's salvage)."""
    it = src.raw_iterator(verify_checksums=verify, fill_cache=fill_cache)
    stop = _after(prefix)
    try:
        if reverse:
            if stop is None:
                it.seek_to_last()
            else:
                it.seek(stop)
                if it.valid():
                    it.prev()
                else:
                    it.seek_to_last()
        else:
            it.seek(prefix)
        step = it.prev if reverse else it.next
        key, value, item, valid = it.key, it.value, it.item, it.valid
        while valid():
            k = key()
            if reverse and not k.startswith(prefix) or not reverse and stop is not None and k >= stop:
                return
            if keys and values:
                yield item()
            elif keys:
                yield k
            else:
                yield value()
            step()
    finally:
        it.close()


def count_megrams(db: Any) -> int:
    return sum(1 for _ in scan(db, b"megram:", values=False))


def _count_at(path: Path, *, paranoid: bool) -> int | None:
    """Megrams an open of `path` would see (None if it cannot open). Opens a scratch copy:
    a lenient open rewrites the log, and we never touch the original before it is backed up."""
    scratch = path.with_name(path.name + f".count-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        shutil.copytree(path, scratch, ignore=shutil.ignore_patterns("LOCK", PID_FILE))
        if paranoid:
            _precheck(scratch)  # our open refuses what LevelDB would drop silently (a cut log tail)
        db = plyvel.DB(str(scratch), create_if_missing=False, paranoid_checks=paranoid)
        try:
            if paranoid:  # every block must pass its checksum, as our reads demand
                return sum(1 for k in scan(db, values=False) if k.startswith(b"megram:"))
            # plyvel's iterator skips what cannot be read at all: the records a salvage can reach
            return sum(1 for _ in db.iterator(prefix=b"megram:", include_value=False, verify_checksums=False))
        finally:
            db.close()
    except (plyvel.Error, OSError, MemoryError_):
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def repair(path: Path, *, now: float | None = None) -> dict[str, Any]:
    """Copy `path` aside, run LevelDB's repair on it, add back what only a lenient read still sees,
    count Megrams before and after.

    ``before`` is what a normal open saw (None: it could not open or a read failed its checksum),
    ``lenient_before`` what an open without checks saw (unreadable blocks skipped), ``after`` what the
    repaired store holds; ``salvaged`` the records LevelDB's repair dropped (their block failed its
    checksum) that a lenient read of the copy still parses, written back; ``lost`` how many fewer
    Megrams the store ends with than the better of the two reads before it; ``damaged`` what was
    found damaged beyond those counts (a table missing, cut or failing its checks, log records
    dropped: some records may be gone); ``log_tail_dropped_bytes`` the bytes per log that were no
    whole record (the repair drops them)."""
    if path.exists() and not path.is_dir():
        raise MemoryUnavailable(f"{path} is a file, not a LevelDB store: nothing to repair and nothing "
                                "changed — move it aside, and agentui makes a new store there")
    if path.is_dir() and not is_store(path) and any(path.iterdir()):
        raise MemoryUnavailable(f"{path} is not a LevelDB store (no CURRENT, MANIFEST or table files): "
                                "nothing to repair and nothing changed — move it aside or use another --data-dir")
    if not path.is_dir() or not is_store(path):
        raise MemoryUnavailable(f"no memory store at {path} to repair")
    probe = _lock_state(path)
    if probe is not None and probe > 0:
        raise _in_use(path, OSError(probe, os.strerror(probe)))
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now if now is not None else time.time()))
    backup = path.with_name(f"{path.name}.backup-{stamp}")
    n = 1
    while backup.exists():
        n += 1
        backup = path.with_name(f"{path.name}.backup-{stamp}-{n}")
    try:
        shutil.copytree(path, backup, ignore=shutil.ignore_patterns("LOCK", PID_FILE))
    except OSError as e:
        shutil.rmtree(backup, ignore_errors=True)
        raise MemoryUnavailable(describe_os_error(e.errno, backup, f"backup failed: {e}")) from e
    cut = {log.name: n for log in sorted(backup.glob("*.log")) if (n := _log_tail_cut(log))}
    before = _count_at(backup, paranoid=True)
    lenient = _count_at(backup, paranoid=False)
    damaged = _missing_tables(backup)
    archived = _archived(path)
    try:
        plyvel.repair_db(str(path), paranoid_checks=True)  # checksums on: a bad block is salvaged around
        # LevelDB's repair moves a table it could not read whole into lost/, and logs each log
        # record it drops: both mean records may be gone that no count here can show
        damaged += [f"table {n} failed its checks" for n in sorted(_archived(path) - archived)
                    if n.endswith((".ldb", ".sst"))]
        damaged += _log_drops(path / "LOG")
        damaged += [f"log {name}: its last {n} bytes are no whole record (a write cut short, or garbage)"
                    for name, n in cut.items()]
        db = plyvel.DB(str(path), create_if_missing=False, paranoid_checks=True)
    except plyvel.Error as e:
        raise classify(path, e) from e
    try:
        salvaged, altered = _salvage(backup, db)
        fixed = reconcile(db)
        after = count_megrams(db)
    except plyvel.Error as e:
        raise classify(path, e) from e
    finally:
        db.close()
    best = max(before or 0, lenient or 0)
    return {"path": str(path), "backup": str(backup), "before": before, "lenient_before": lenient,
            "after": after, "salvaged": salvaged, "lost": max(0, best - after), "damaged": damaged,
            "log_tail_dropped_bytes": cut, **fixed, "unreadable_dropped": fixed["unreadable_dropped"] + altered}


def _archived(path: Path) -> set[str]:
    try:
        return set(os.listdir(path / "lost"))
    except OSError:
        return set()


def _log_drops(log: Path) -> list[str]:
    """The log records LevelDB's repair says it dropped (its info LOG: ``Log #N: dropping K bytes;
    <reason>`` for a bad record, ``Log #N: ignoring <reason>`` for a batch that does not parse)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return []
    return [f"log {int(m.group(1)):06d}.log: {m.group(2)} {m.group(3).strip()}"
            for m in re.finditer(r"Log #(\d+): (dropping|ignoring) ([^\n]*)", text)]


def _missing_tables(path: Path) -> list[str]:
    """The log and the tables the store's MANIFEST names that are gone or not their recorded size
    (LevelDB's repair does not read the MANIFEST, so it cannot tell their records are missing)."""
    m = re.fullmatch(rb"(MANIFEST-\d+)\n", (path / "CURRENT").read_bytes()) if (path / "CURRENT").is_file() else None
    live = live_tables(path / m.group(1).decode()) if m else None
    out = []
    log = current_log(path / m.group(1).decode()) if m else None
    if log is not None and not (path / f"{log:06d}.log").is_file():
        out.append(f"log {log:06d}.log is missing (writes since the store was last closed cleanly may be gone with it)")
    for num, size in sorted((live or {}).items()):
        table = next((t for t in (path / f"{num:06d}.ldb", path / f"{num:06d}.sst") if t.exists()), None)
        if table is None:
            out.append(f"table {num:06d}.ldb is missing")
        elif table.stat().st_size != size:
            out.append(f"table {table.name} holds {table.stat().st_size} of its {size} bytes")
    return out


def _salvage(backup: Path, db: Any) -> tuple[int, int]:
    """Write into the repaired `db` every Megram a lenient read of `backup` returns that `db` lacks.

    LevelDB's repair reads with checksums on and drops a whole block whose checksum fails, though
    most of its records may still parse (a flipped byte in one value). A lenient open (no paranoid
    checks, no checksum verification, plyvel's iterator skipping what cannot be read at all) of a
    scratch copy gets them back. A record is taken only when its JSON parses as a Megram, its key
    names its id, and its ``idx:`` value, if the read has one, matches the record. Returns
    (records written back, records refused as altered)."""
    from agentui.contracts import Megram

    from .keys import _record_keys

    scratch = backup.with_name(backup.name + f".salvage-{os.getpid()}")
    shutil.rmtree(scratch, ignore_errors=True)
    written = altered = 0
    try:
        shutil.copytree(backup, scratch)
        try:
            old = plyvel.DB(str(scratch), create_if_missing=False, paranoid_checks=False)
        except plyvel.Error:
            return 0, 0  # no lenient open either: LevelDB's repair got what there is
        try:
            puts: list[tuple[bytes, bytes]] = []
            for k, v in old.iterator(prefix=b"megram:", verify_checksums=False):
                if db.get(k, verify_checksums=True) is not None:
                    continue
                try:
                    m = Megram.model_validate_json(v)
                    keys = _record_keys(m)
                except ValueError:
                    altered += 1
                    continue
                idx = old.get(keys[1][0], verify_checksums=False)
                if keys[0][0] != k or (idx is not None and idx != keys[1][1]):
                    altered += 1  # the key or the numbers disagree with the record: a flipped byte
                    continue
                puts += keys
                for meta in (b"recall:", b"sup:"):
                    val = old.get(meta + k[7:], verify_checksums=False)
                    if val is not None:
                        puts.append((meta + k[7:], val))
                written += 1
                if len(puts) >= 3000:
                    _put_all(db, puts)
                    puts = []
            _put_all(db, puts)
        finally:
            old.close()
    except OSError:
        return written, altered
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return written, altered


def _put_all(db: Any, puts: list[tuple[bytes, bytes]]) -> None:
    if puts:
        with db.write_batch(sync=True) as wb:
            for k, v in puts:
                wb.put(k, v)


def reconcile(db: Any) -> dict[str, int]:
    """After LevelDB's repair a write batch may come back in part (it salvages records one by one):
    make the indexes agree with the ``megram:`` records again. Unreadable records are dropped,
    missing ``idx:``/``lvl:`` keys rebuilt, index keys of absent records deleted, ``col:`` summary
    chunks dropped (QueryMK rebuilds them). Returns the counts of each."""
    from agentui.contracts import Megram

    from .keys import _record_keys

    ids: set[bytes] = set()
    puts: list[tuple[bytes, bytes]] = []
    dels: list[bytes] = []
    unreadable = 0
    present = set(scan(db, b"idx:", values=False))
    present.update(scan(db, b"lvl:", values=False))
    for k, v in scan(db, b"megram:"):
        try:
            m = Megram.model_validate_json(v)
            keys = _record_keys(m)
        except ValueError:
            dels.append(k)
            unreadable += 1
            continue
        ids.add(k[7:])
        puts += [kv for kv in keys[1:] if kv[0] not in present]
    orphans = [k for k in present if k.rsplit(b":", 1)[1] not in ids]
    orphans += [k for p in (b"recall:", b"sup:") for k in scan(db, p, values=False)
                if k.split(b":", 1)[1] not in ids]
    chunks = list(scan(db, b"col:", values=False))
    with db.write_batch(sync=True) as wb:
        for k in dels + orphans + chunks:
            wb.delete(k)
        for k, v in puts:
            wb.put(k, v)
    return {"unreadable_dropped": unreadable, "index_rebuilt": len(puts), "orphan_index_removed": len(orphans)}
