"""The OS sandbox (issue #14): argv/profile generation everywhere, bubblewrap for real when present,
and the escalation that asks once more before running unconfined."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agentui.contracts import ToolCallRecord
from agentui.tools import Approvals, GateRequest, ToolContext, default_registry
from agentui.tools.sandbox import (
    Policy,
    SandboxInfo,
    _landlock_works,
    blocked_by_sandbox,
    bwrap_argv,
    detect,
    macos_profile,
    sandbox_status,
    secret_locations,
    wrap,
)

BWRAP = detect("linux") if shutil.which("bwrap") else SandboxInfo("none", None, "bwrap not installed")
needs_bwrap = pytest.mark.skipif(not BWRAP.active, reason=f"no working bubblewrap here: {BWRAP.detail}")
_LL_PROBLEM = _landlock_works(sys.executable) if sys.platform.startswith("linux") else "not Linux"
LANDLOCK = (
    SandboxInfo("landlock", sys.executable, "test") if not _LL_PROBLEM else SandboxInfo("none", None, _LL_PROBLEM)
)
needs_landlock = pytest.mark.skipif(not LANDLOCK.active, reason=f"no usable Landlock here: {_LL_PROBLEM}")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_rsa").write_text("FAKE PRIVATE KEY")
    (h / ".netrc").write_text("machine x password y")
    monkeypatch.setenv("HOME", str(h))
    return h


def test_bwrap_argv(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    argv = bwrap_argv("/usr/bin/bwrap", Policy(ws, writable=(tmp_path,)), ["/bin/bash", "-c", "ls"], ws)
    joined = " ".join(argv)
    assert argv[0] == "/usr/bin/bwrap" and argv[-3:] == ["/bin/bash", "-c", "ls"]
    assert "--ro-bind / /" in joined and f"--bind {ws} {ws}" in joined and f"--bind {tmp_path} {tmp_path}" in joined
    assert f"--tmpfs {home / '.ssh'}" in joined and f"--ro-bind /dev/null {home / '.netrc'}" in joined
    assert "--unshare-net" in argv and argv[argv.index("--chdir") + 1] == str(ws)
    with_net = bwrap_argv("/usr/bin/bwrap", Policy(ws, network=True, writable=()), ["true"], ws)
    assert "--unshare-net" not in with_net


def test_macos_profile(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "w\"s"
    ws.mkdir()
    profile = macos_profile(Policy(ws, writable=()))
    assert profile.startswith("(version 1)\n(allow default)\n(deny file-write*)")
    assert '(subpath "' + str(ws.resolve()).replace('"', '\\"') + '")' in profile
    assert f'(deny file-read* (subpath "{home / ".ssh"}")' in profile and "Library/Keychains" in profile
    assert "(deny network*" in profile
    assert "(deny network*" not in macos_profile(Policy(ws, network=True, writable=()))
    argv = wrap(SandboxInfo("sandbox-exec", "/usr/bin/sandbox-exec", "x"), Policy(ws, writable=()), ["ls"], ws)
    assert argv[:2] == ["/usr/bin/sandbox-exec", "-p"] and argv[-1] == "ls"


def test_status_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "the safety gate is the only line" in sandbox_status(SandboxInfo("none", None, "bwrap missing"))
    assert sandbox_status(SandboxInfo("bwrap", "/x", "bubblewrap")).startswith("OS sandbox active (bubblewrap)")
    monkeypatch.setenv("AGENTUI_SANDBOX", "off")
    assert not detect().active
    assert detect("sunos").kind == "none"
    assert wrap(SandboxInfo("none", None, ""), Policy(Path("/w")), ["ls"], Path("/w")) == ["ls"]


def test_blocked_by_sandbox() -> None:
    assert blocked_by_sandbox("bash: /etc/x: Read-only file system\n", 1) == "bash: /etc/x: Read-only file system"
    assert blocked_by_sandbox("curl: (6) Could not resolve host: x", 6)
    assert blocked_by_sandbox("fine", 0) is None and blocked_by_sandbox("other error", 1) is None


def test_secret_locations(home: Path) -> None:
    found = secret_locations(home)
    assert home / ".ssh" in found and home / ".netrc" in found and home / ".aws" not in found


@needs_bwrap
def test_bwrap_confines_for_real(tmp_path: Path, home: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    script = (f"echo in > inside.txt; echo out > {outside}/x.txt; cat {home}/.ssh/id_rsa; "
              f"cat {home}/.netrc; echo hi > {home}/.bashrc")
    argv = wrap(BWRAP, Policy(ws, writable=()), ["/bin/bash", "-c", script], ws)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert (ws / "inside.txt").read_text() == "in\n"
    assert not (outside / "x.txt").exists() and not (home / ".bashrc").exists()
    assert "FAKE PRIVATE KEY" not in proc.stdout and "password" not in proc.stdout
    assert "Read-only file system" in proc.stderr


@needs_bwrap
def test_bwrap_has_no_network_unless_approved(tmp_path: Path) -> None:
    """A listener on this machine answers outside the sandbox; inside (no approval) it cannot be reached."""
    ws = tmp_path / "ws"
    ws.mkdir()
    listener = socket.create_server(("127.0.0.1", 0))
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{listener.getsockname()[1]} && echo connected"
    try:
        out = {net: subprocess.run(wrap(BWRAP, Policy(ws, network=net, writable=()), ["/bin/bash", "-c", probe], ws),
                                   capture_output=True, text=True, timeout=30).stdout for net in (False, True)}
    finally:
        listener.close()
    assert "connected" not in out[False] and "connected" in out[True]


class Answers:
    def __init__(self, *answers: bool) -> None:
        self.answers = list(answers)
        self.requests: list[GateRequest] = []

    async def __call__(self, req: GateRequest) -> bool:
        self.requests.append(req)
        return self.answers.pop(0)


async def _shell(ws: Path, command: str, confirm: Answers, env_out: Path) -> ToolCallRecord:
    ctx = ToolContext(workspace=ws, task_id="t", confirm=confirm, approvals=Approvals(), sandbox=BWRAP)
    return await default_registry("linux").call("shell", {"command": command}, ctx)


@needs_bwrap
async def test_escalation_asks_before_running_unconfined(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    monkeypatch.setattr("agentui.tools.safety.paths.temp_roots", lambda: ())  # only the workspace is writable
    monkeypatch.setenv("OUT", str(outside))
    monkeypatch.setenv("AGENTUI_TOOL_ENV", "OUT")  # tools see only listed variables
    command = 'echo x > "$OUT/f.txt"'  # a runtime path: the gate asks; the sandbox then blocks it
    deny_escalation = Answers(True, False)
    rec = await _shell(ws, command, deny_escalation, outside)
    assert not rec.ok and "the OS sandbox blocked it" in (rec.error or "")
    assert not (outside / "f.txt").exists()
    first, second = deny_escalation.requests
    assert first.sandboxed and not first.escalation
    assert second.escalation and not second.sandboxed and second.scopes() == ("once",)
    allow_escalation = Answers(True, True)
    rec = await _shell(ws, command, allow_escalation, outside)
    assert rec.ok and (outside / "f.txt").read_text() == "x\n"


@needs_bwrap
async def test_safe_commands_run_inside_the_sandbox(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = ToolContext(workspace=ws, task_id="t", sandbox=BWRAP)
    rec = await default_registry("linux").call("shell", {"command": f"ls {home}/.ssh | wc -l"}, ctx)
    # reading ~/.ssh is refused by the gate outright; listing it inside the sandbox shows nothing
    assert not rec.ok and "secret" in (rec.error or "")
    rec = await default_registry("linux").call("shell", {"command": "ls -la && echo ok > new.txt"}, ctx)
    assert rec.ok


@needs_bwrap
def test_detect_probes_with_the_options_real_runs_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bwrap that runs bare but cannot mount /proc (a container without it) is not "active": every
    tool run would fail. The old probe (`--ro-bind / / --dev /dev --unshare-net true`) said active."""
    fake = tmp_path / "bin" / "bwrap"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/bash\nfor a in "$@"; do [ "$a" = --proc ] && '
                    f'{{ echo "bwrap: Can\'t mount proc on /newroot/proc: Operation not permitted" >&2; exit 1; }}; '
                    f'done\nexec {BWRAP.program} "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    info = detect("linux")
    assert info.kind == ("landlock" if LANDLOCK.active else "none") and "Can't mount proc" in info.detail
    if not LANDLOCK.active:
        assert "the safety gate is the only line" in sandbox_status(info)


def test_tui_header_label_follows_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The TUI header reads the registry's sandbox: what the tool processes really run in (#14, #17)."""
    from agentui.tools.registry import ToolRegistry
    from agentui.ui.status import sandbox_label

    class Rt:
        tools = ToolRegistry()

    Rt.tools.sandbox = BWRAP
    assert sandbox_label(Rt()) == (("sandbox: bwrap", True) if BWRAP.active else ("no OS sandbox (gate only)", False))
    Rt.tools.unconfined = True
    assert sandbox_label(Rt()) == ("no OS sandbox (gate only)", False)
    monkeypatch.setenv("AGENTUI_SANDBOX", "off")
    Rt.tools = ToolRegistry()
    assert sandbox_label(Rt()) == ("no OS sandbox (gate only)", False)


@needs_landlock
def test_landlock_confines_for_real(tmp_path: Path, home: Path) -> None:
    """Where bwrap cannot run, Landlock: the workspace and temp dirs writable, nothing else; secret
    stores unreadable; TCP refused (a listener on this machine proves the network is otherwise there)."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "victim.txt").write_text("ORIGINAL\n")
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    script = (f"echo in > inside.txt; echo out >> {outside}/victim.txt; echo new > {outside}/new.txt; "
              f"cat {home}/.ssh/id_rsa; cat {home}/.netrc; echo hi > {home}/.bashrc; echo t > /dev/null && "
              f"echo devnull-ok; exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
    try:
        argv = wrap(LANDLOCK, Policy(ws, writable=()), ["/bin/bash", "-c", script], ws)
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=ws)
    finally:
        listener.close()
    assert (ws / "inside.txt").read_text() == "in\n" and "devnull-ok" in proc.stdout
    assert (outside / "victim.txt").read_text() == "ORIGINAL\n" and not (outside / "new.txt").exists()
    assert not (home / ".bashrc").exists()
    assert "FAKE PRIVATE KEY" not in proc.stdout and "password" not in proc.stdout
    assert "connected" not in proc.stdout and "Permission denied" in proc.stderr
    with_net = wrap(LANDLOCK, Policy(ws, network=True, writable=()), ["/bin/bash", "-c", script.split("; exec")[0]
                                                                         + "; echo net-allowed"], ws)
    assert "net-allowed" in subprocess.run(with_net, capture_output=True, text=True, timeout=30, cwd=ws).stdout


@needs_landlock
async def test_landlock_escalation_asks_before_running_unconfined(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    monkeypatch.setattr("agentui.tools.safety.paths.temp_roots", lambda: ())  # only the workspace is writable
    monkeypatch.setenv("OUT", str(outside))
    monkeypatch.setenv("AGENTUI_TOOL_ENV", "OUT")  # tools see only listed variables
    ctx = ToolContext(workspace=ws, task_id="t", confirm=(deny := Answers(True, False)), approvals=Approvals(),
                      sandbox=LANDLOCK)
    rec = await default_registry("linux").call("shell", {"command": 'echo x > "$OUT/f.txt"'}, ctx)
    assert not rec.ok and "the OS sandbox blocked it" in (rec.error or "") and not (outside / "f.txt").exists()
    assert deny.requests[0].sandboxed and deny.requests[1].escalation


def test_landlock_argv_and_status(tmp_path: Path, home: Path) -> None:
    import json

    argv = wrap(SandboxInfo("landlock", "/py", "Landlock ABI 7"), Policy(tmp_path, writable=()), ["ls"], tmp_path)
    assert argv[:3] == ["/py", "-I", "-S"] and argv[-2:] == ["--", "ls"]
    spec = json.loads(argv[4])
    assert spec["writable"] == [str(tmp_path)] and str(home / ".ssh") in spec["hidden"] and spec["network"] is False
    line = sandbox_status(SandboxInfo("landlock", "/py", "Landlock ABI 7"))
    assert line.startswith("OS sandbox active (Landlock ABI 7)") and "UDP" in line  # says what it does not stop


def test_landlock_wrapper_refuses_to_run_unconfined(tmp_path: Path) -> None:
    """Asked to confine and unable to (a bad policy here): the command never runs."""
    from agentui.tools.sandbox import LANDLOCK_SCRIPT

    marker = tmp_path / "ran"
    proc = subprocess.run([sys.executable, "-I", "-S", str(LANDLOCK_SCRIPT), "{}", "--", "touch", str(marker)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 126 and not marker.exists()
    assert proc.stderr.startswith("landlock: cannot confine") and "Traceback" not in proc.stderr


def _fake_sandbox_exec(tmp_path: Path, body: str) -> str:
    fake = tmp_path / "fakebin" / "sandbox-exec"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text('#!/bin/bash\n[ "$1" = -p ] && [ -n "$2" ] || { echo "usage" >&2; exit 64; }\nshift 2\n' + body)
    fake.chmod(0o755)
    return str(fake)


def test_macos_detect_is_truthful_about_a_rejected_profile(tmp_path: Path, home: Path) -> None:
    """A sandbox-exec that rejects our profile would make every tool run fail: not "active" (#14)."""
    fake = _fake_sandbox_exec(tmp_path, 'echo "sandbox-exec: syntax error in profile" >&2\nexit 65\n')
    info = detect("darwin", sandbox_exec=fake)
    assert info.kind == "none" and "syntax error in profile" in info.detail
    assert "the safety gate is the only line" in sandbox_status(info)


def test_macos_detect_is_truthful_about_a_profile_that_does_not_confine(tmp_path: Path, home: Path) -> None:
    fake = _fake_sandbox_exec(tmp_path, 'exec "$@"\n')
    info = detect("darwin", sandbox_exec=fake)
    assert info.kind == "none" and "did not stop a write outside the workspace" in info.detail
    assert not [p for p in home.iterdir() if p.name.startswith(".agentui-sandbox-probe")]


def test_macos_detect_active_when_the_profile_runs_and_confines(tmp_path: Path, home: Path) -> None:
    fake = _fake_sandbox_exec(tmp_path, '[ "$1" = /usr/bin/true ] && exit 0\n'
                                        'echo "sh: Operation not permitted" >&2\nexit 1\n')
    info = detect("darwin", sandbox_exec=fake)
    assert info.kind == "sandbox-exec" and info.program == fake and info.active
    assert detect("darwin", sandbox_exec=str(tmp_path / "absent")).detail == "sandbox-exec not found"
