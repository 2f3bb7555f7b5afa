"""Linux: run one tool command so that nothing it starts outlives it.

Run as a script (`python -I -S reaper.py PARENT_PID -- argv…`, no agentui import, so it starts fast). It makes
itself a child subreaper, so every process the command starts and orphans — `setsid -f …`,
`nohup … &`, `disown`, double forks, all of which leave the command's process group — is re-parented
to it instead of to init. When the command exits, or when the reaper gets SIGTERM/SIGHUP (agentui's
group kill, or agentui dying: the reaper asks the kernel for SIGTERM when its parent dies), it
kills every descendant left and exits with the command's status.

Used where bubblewrap's PID namespace is not available (Landlock, no sandbox); under bubblewrap
the namespace does the same.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out.extend(int(x) for x in fh.read().split())
        except (OSError, ValueError):
            continue
    return out


def _descendants() -> list[int]:
    seen: list[int] = []
    todo = _children(os.getpid())
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.append(pid)
        todo.extend(_children(pid))
    return seen


def kill_all() -> None:
    """SIGKILL every descendant (repeated: a dying process may have just forked) and reap them."""
    for _ in range(20):
        pids = _descendants()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--" or not argv[0].isdigit():
        print("reaper: usage: reaper.py PARENT_PID -- PROGRAM [ARG…]", file=sys.stderr)
        return 2
    parent, argv = int(argv[0]), argv[1:]
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)

    def stop(signum: int, _frame: object) -> None:
        kill_all()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    if os.getppid() != parent:  # the parent died before the death signal was armed
        return 1
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        try:
            os.execvp(argv[1], argv[1:])
        except OSError as exc:
            print(f"reaper: {argv[1]}: {exc.strerror}", file=sys.stderr)
        os._exit(127)
    while True:
        try:
            waited, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 1
        except InterruptedError:
            continue
        if waited == pid:
            break
    kill_all()
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
