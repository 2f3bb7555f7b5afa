"""The OS sandbox every tool process runs in: bubblewrap on Linux (Landlock where bwrap
cannot run, e.g. user namespaces restricted), sandbox-exec on macOS.

Inside it a process may write only the workspace and the temp dirs, cannot read the secret stores
(~/.ssh, ~/.aws, keychains, browser profiles …: hidden or denied), and has no network unless its
approval included it. With no sandbox on the machine, the safety gate is the only line and
`sandbox_status()` says so (doctor and the TUI header show it).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from agentui.tools.safety import paths as P

MACOS_SANDBOX_EXEC = "/usr/bin/sandbox-exec"
DISABLE_ENV = "AGENTUI_SANDBOX"  # "off" turns the sandbox off, "landlock" skips bwrap (the status line says so)
LANDLOCK_SCRIPT = Path(__file__).with_name("landlock.py")


@dataclass(frozen=True)
class SandboxInfo:
    kind: str  # "bwrap" | "landlock" | "sandbox-exec" | "none"
    program: str | None
    detail: str

    @property
    def active(self) -> bool:
        return self.kind != "none"

    @property
    def name(self) -> str:
        """The short label of the TUI status line (shown as is)."""
        return f"sandbox: {self.kind}" if self.active else "no OS sandbox (gate only)"


@dataclass(frozen=True)
class Policy:
    """What one sandboxed process may do."""

    workspace: Path
    network: bool = False
    writable: tuple[Path, ...] = field(default_factory=lambda: P.temp_roots())
    hidden: tuple[Path, ...] = field(default_factory=lambda: secret_locations())


def secret_locations(home: Path | None = None) -> tuple[Path, ...]:
    """The secret stores under $HOME that exist on this machine (hidden from sandboxed processes)."""
    h = home or P.home()
    found = [h / rel for rel in P._SECRET_HOME if (h / rel).exists() or (h / rel).is_symlink()]
    found += [c for c in P._credentials() if c.exists() and not any(P.inside(c, f) for f in found)]
    return tuple(found)


@functools.lru_cache(maxsize=4)
def _bwrap_works(program: str) -> str:
    """"" when bwrap runs here with every option a real tool run uses, else why not.

    The probe is `bwrap_argv` itself (workspace bind, /proc, a masked dir and file, no network): a
    machine where only a bare bwrap works (no /proc mount in a container, user namespaces off) would
    otherwise be reported "active" while every command fails.
    """
    import tempfile

    try:
        with tempfile.TemporaryDirectory(prefix="agentui-bwrap-probe-") as tmp:
            root = Path(tmp)
            ws, secret_dir, secret_file = root / "ws", root / "dir", root / "file"
            ws.mkdir()
            secret_dir.mkdir()
            secret_file.write_text("")
            policy = Policy(ws, writable=(), hidden=(secret_dir, secret_file))
            proc = subprocess.run(bwrap_argv(program, policy, ["true"], ws), capture_output=True, timeout=10,
                                  text=True, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return "" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]


@functools.lru_cache(maxsize=4)
def _landlock_works(python: str) -> str:
    """"" when the Landlock wrapper confines a trivial run here, else why not."""
    from agentui.tools import landlock

    abi = landlock.abi_version()
    if abi < landlock.MIN_ABI:
        return (f"Landlock ABI {abi} has no network control (needs {landlock.MIN_ABI}, Linux 6.7+)" if abi
                else "Landlock is not enabled in this kernel")
    try:
        proc = subprocess.run(landlock_argv(python, Policy(Path(P.temp_roots()[0]), writable=(), hidden=()),
                                            [python, "-I", "-S", "-c", ""]), capture_output=True, timeout=10, text=True,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return "" if proc.returncode == 0 else (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]


def _landlock(why_not_bwrap: str) -> SandboxInfo:
    from agentui.tools import landlock

    problem = _landlock_works(sys.executable)
    if problem:
        return SandboxInfo("none", None, f"{why_not_bwrap}; {problem}")
    return SandboxInfo("landlock", sys.executable, f"Landlock ABI {landlock.abi_version()}; {why_not_bwrap}")


@functools.lru_cache(maxsize=4)
def _sandbox_exec_works(program: str) -> str:
    """"" when sandbox-exec runs our generated profile here AND it confines, else why not.

    Like the bwrap probe: `true` must run under the real profile (a profile macOS rejects would make
    every command fail), and a write next to the workspace must be refused (a sandbox-exec that
    runs but does not confine would be reported "active" while nothing is stopped).
    """
    import tempfile

    try:
        with tempfile.TemporaryDirectory(prefix="agentui-sbx-probe-") as tmp:
            root = Path(os.path.realpath(tmp))
            ws, secret_dir = root / "ws", root / "secret"
            ws.mkdir()
            secret_dir.mkdir()
            profile = macos_profile(Policy(ws, writable=(), hidden=(secret_dir,)))
            ok = subprocess.run([program, "-p", profile, "/usr/bin/true"], capture_output=True, timeout=10,
                                text=True, stdin=subprocess.DEVNULL, cwd=ws)
            if ok.returncode != 0:
                return (ok.stderr.strip().splitlines() or [f"exit {ok.returncode}"])[-1]
            # temp dirs are writable by design, so the write that must fail goes to $HOME
            outside = P.home() / f".agentui-sandbox-probe-{os.getpid()}"
            try:
                subprocess.run([program, "-p", profile, "/bin/sh", "-c", 'echo x > "$1"', "sh", str(outside)],
                               capture_output=True, timeout=10, text=True, stdin=subprocess.DEVNULL, cwd=ws)
                if outside.exists():
                    return "its profile did not stop a write outside the workspace"
            finally:
                outside.unlink(missing_ok=True)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return ""


def detect(platform: str = sys.platform, *, sandbox_exec: str = MACOS_SANDBOX_EXEC) -> SandboxInfo:
    """The sandbox this machine offers (probed once per process)."""
    choice = os.environ.get(DISABLE_ENV, "").lower()
    if choice in ("off", "0", "no", "false"):
        return SandboxInfo("none", None, f"turned off by {DISABLE_ENV}=off")
    if platform == "darwin":
        if not os.path.exists(sandbox_exec):
            return SandboxInfo("none", None, "sandbox-exec not found")
        problem = _sandbox_exec_works(sandbox_exec)
        if problem:
            return SandboxInfo("none", None, f"sandbox-exec cannot confine here: {problem}")
        return SandboxInfo("sandbox-exec", sandbox_exec, "macOS sandbox-exec")
    if platform.startswith("linux"):
        if choice == "landlock":
            return _landlock(f"bubblewrap skipped by {DISABLE_ENV}=landlock")
        program = shutil.which("bwrap")
        if program is None:
            return _landlock("bubblewrap (bwrap) is not installed")
        problem = _bwrap_works(program)
        if problem:
            return _landlock(f"bwrap cannot run here: {problem}")
        return SandboxInfo("bwrap", program, "bubblewrap")
    return SandboxInfo("none", None, f"no sandbox for {platform}")


def sandbox_status(info: SandboxInfo | None = None) -> str:
    """One line for doctor and the TUI header (what this kind of sandbox really stops)."""
    info = info or detect()
    if info.kind == "landlock":
        return (f"OS sandbox active ({info.detail}): writes only the workspace and temp dirs, "
                "secret stores unreadable, no TCP unless approved (UDP and file times are not confined)")
    if info.active:
        return (f"OS sandbox active ({info.detail}): writes only the workspace and temp dirs, "
                "secret stores hidden, no network unless approved")
    return f"no OS sandbox ({info.detail}): the safety gate is the only line"


def landlock_argv(python: str, policy: Policy, argv: list[str]) -> list[str]:
    """Landlock: our wrapper script restricts itself, then execs argv (isolated Python: fast, no site)."""
    spec = {"writable": [str(p) for p in (*policy.writable, policy.workspace)],
            "hidden": [str(p) for p in policy.hidden], "network": policy.network}
    return [python, "-I", "-S", str(LANDLOCK_SCRIPT), json.dumps(spec), "--", *argv]


def bwrap_argv(program: str, policy: Policy, argv: list[str], cwd: Path) -> list[str]:
    """bubblewrap: the root read-only, the workspace and temp dirs writable, secrets masked.

    `--unshare-pid` with a fresh `/proc`: the command sees only its own processes, so no other
    process's /proc/<pid>/environ or cmdline (agentui's keys) is readable, and when the command's
    first process ends the kernel kills every process left in the namespace (`setsid -f`, `nohup …
    &`, `disown` die with the call); `--die-with-parent` takes it all down when agentui dies. (No
    `--new-session`: it would move the command out of the process group agentui kills on timeout.)"""
    out = [program, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--ro-bind", "/", "/",
           "--dev", "/dev", "--proc", "/proc"]
    for path in (*policy.writable, policy.workspace):
        if path.is_dir():
            out += ["--bind", str(path), str(path)]
    for path in policy.hidden:
        if path.is_dir() and not path.is_symlink():
            out += ["--tmpfs", str(path)]
        elif path.exists():
            out += ["--ro-bind", "/dev/null", str(path)]
    if not policy.network:
        out.append("--unshare-net")
    out += ["--chdir", str(cwd), "--", *argv]
    return out


def _sb_quote(path: Path | str) -> str:
    return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'


def macos_profile(policy: Policy) -> str:
    """A sandbox-exec (SBPL) profile: allow by default, then deny writes, secret reads and network."""
    writable = [policy.workspace, *policy.writable, Path("/private/tmp"), Path("/private/var/folders")]
    lines = [
        "(version 1)",
        "(allow default)",
        "(deny file-write*)",
        "(allow file-write* " + " ".join(f"(subpath {_sb_quote(os.path.realpath(p))})" for p in writable)
        + ' (literal "/dev/null") (literal "/dev/zero") (regex #"^/dev/tty") (regex #"^/dev/fd/"))',
    ]
    hidden = [*policy.hidden, P.home() / "Library/Keychains", Path("/Library/Keychains")]
    lines.append("(deny file-read* " + " ".join(f"(subpath {_sb_quote(p)})" for p in dict.fromkeys(hidden)) + ")")
    if not policy.network:
        lines.append('(deny network* (remote ip "*:*") (remote unix-socket))')
        lines.append("(allow network* (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\")))")
    return "\n".join(lines) + "\n"


def wrap(info: SandboxInfo, policy: Policy, argv: list[str], cwd: Path) -> list[str]:
    """`argv` confined by the machine's sandbox (unchanged when there is none)."""
    if info.kind == "bwrap" and info.program:
        return bwrap_argv(info.program, policy, argv, cwd)
    if info.kind == "landlock" and info.program:
        return landlock_argv(info.program, policy, argv)
    if info.kind == "sandbox-exec" and info.program:
        return [info.program, "-p", macos_profile(policy), *argv]
    return list(argv)


_BLOCKED = re.compile(
    r"Read-only file system|Operation not permitted|Permission denied|Could not resolve host|"
    r"Network is unreachable|Temporary failure in name resolution|Name or service not known|"
    r"nodename nor servname|sandbox-exec|bwrap:|landlock:",
    re.IGNORECASE,
)


def blocked_by_sandbox(output: str, returncode: int | None) -> str | None:
    """The line saying the sandbox stopped it (a write, a read, the network), or None."""
    if returncode in (0, None):
        return None
    for line in output.splitlines():
        if _BLOCKED.search(line):
            return line.strip()[:300]
    return None
