"""Linux Landlock confinement: the OS sandbox where bubblewrap cannot run.

Run as a script (`python -I -S landlock.py POLICY_JSON -- argv…`, no agentui import, so it starts
fast): it restricts itself with Landlock and execs argv, which then — with every child — can write
only the writable roots (the workspace, temp dirs, /dev/null and the terminal), cannot open a file
under a hidden path (the secret stores) and, with Landlock ABI ≥ 4, cannot connect or bind TCP.

Honest limits (kernel Landlock, not ours): UDP is not covered; chmod/chown/utime of a file outside
are not restricted; file names under a hidden directory can still be listed, their content not.
Landlock is allow-only, so a hidden path is carved out by granting every sibling on the way to it.
"""

from __future__ import annotations

import ctypes
import json
import os
import stat
import sys

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same on every Linux architecture
_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
MIN_ABI = 4  # TCP control: below it the network would be open, so we do not call it a sandbox

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FILE_ONLY = {1: 0b111, 3: 0b111 | 1 << 14, 5: 0b111 | 1 << 14 | 1 << 15}  # execute/write/read(+truncate, ioctl)
_NET_BIND, _NET_CONNECT = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_DEV_WRITABLE = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI (0 when Landlock is missing or disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    found = libc.syscall(ctypes.c_long(_CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION))
    return int(found) if found > 0 else 0


def _fs_all(abi: int) -> int:
    bits = (1 << 13) - 1  # EXECUTE … MAKE_SYM (ABI 1)
    if abi >= 2:
        bits |= 1 << 13  # REFER
    if abi >= 3:
        bits |= 1 << 14  # TRUNCATE
    if abi >= 5:
        bits |= 1 << 15  # IOCTL_DEV
    return bits


def _file_bits(abi: int) -> int:
    return _FILE_ONLY[5 if abi >= 5 else 3 if abi >= 3 else 1]


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class _Rules:
    def __init__(self, libc: ctypes.CDLL, ruleset: int, abi: int) -> None:
        self.libc, self.ruleset, self.abi = libc, ruleset, abi

    def add(self, path: str, access: int) -> None:
        """Allow `access` beneath `path` (only its file bits when it is not a directory)."""
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            return
        try:
            mode = os.fstat(fd).st_mode
            if stat.S_ISLNK(mode):
                return  # a symlink's target is judged by its own place
            if not stat.S_ISDIR(mode):
                access &= _file_bits(self.abi)
            attr = _PathBeneath(access, fd)
            if self.libc.syscall(ctypes.c_long(_ADD_RULE), ctypes.c_int(self.ruleset),
                                 ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(attr), ctypes.c_uint32(0)) != 0:
                err = ctypes.get_errno()
                raise OSError(err, f"landlock_add_rule {path}: {os.strerror(err)}")
        finally:
            os.close(fd)

    def grant(self, root: str, access: int, hidden: list[str]) -> None:
        """`access` beneath `root`, except beneath every hidden path (granted sibling by sibling)."""
        if any(_inside(root, h) for h in hidden):
            return
        inner = [h for h in hidden if _inside(h, root) and h != root]
        if not inner:
            self.add(root, access)
            return
        try:
            names = os.listdir(root)
        except OSError:
            return
        for name in names:
            self.grant(os.path.join(root, name), access, inner)


def restrict(writable: list[str], hidden: list[str], network: bool) -> None:
    """Confine this process and its future children (raises OSError when Landlock cannot)."""
    abi = abi_version()
    if abi < MIN_ABI:
        raise OSError(f"Landlock ABI {abi} < {MIN_ABI} (no TCP control)")
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    fs_all = _fs_all(abi)
    attr = _RulesetAttr(fs_all, 0 if network else _NET_BIND | _NET_CONNECT,
                        (_SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL) if abi >= 6 and not network
                        else _SCOPE_SIGNAL if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 16
    ruleset = libc.syscall(ctypes.c_long(_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    try:
        hidden = [os.path.realpath(h) for h in hidden]
        rules = _Rules(libc, int(ruleset), abi)
        rules.add("/", _READ_DIR)  # every directory listable (names only under a hidden one)
        rules.grant("/", _EXECUTE | _READ_FILE | _READ_DIR, hidden)
        for root in [*writable, *_DEV_WRITABLE]:
            rules.grant(os.path.realpath(root), fs_all, hidden)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if libc.syscall(ctypes.c_long(_RESTRICT_SELF), ctypes.c_int(int(ruleset)), ctypes.c_uint32(0)) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(int(ruleset))


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("landlock: usage: landlock.py POLICY_JSON -- PROGRAM [ARG…]", file=sys.stderr)
        return 2
    try:
        policy = json.loads(argv[0])
        restrict(list(policy["writable"]), list(policy["hidden"]), bool(policy["network"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:  # never run unconfined when confinement was asked for
        print(f"landlock: cannot confine: {exc!r}", file=sys.stderr)
        return 126
    try:
        os.execvp(argv[2], argv[2:])
    except OSError as exc:
        print(f"landlock: {argv[2]}: {exc.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
