"""Closing the terminal the TUI runs in (a tmux pane killed, a terminal window closed) sends SIGHUP
and takes the tty away. The app stops like Ctrl+C and the process ends: it must not linger,
blocked on restoring a terminal that is gone, holding the memory store's lock."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path


def _read_until(fd: int, needle: bytes, timeout_s: float) -> bytes:
    seen = b""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and needle not in seen:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


def test_the_tui_ends_when_its_terminal_is_closed(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTUI_", "OPENAI_"))}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"), XDG_DATA_HOME=str(tmp_path / "data"),
               TERM="xterm-256color", COLUMNS="100", LINES="30")
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "agentui.cli", "--workspace", str(tmp_path / "ws"),
                             "--data-dir", str(tmp_path / "d")],
                            stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    try:
        drawn = _read_until(master, b"Settings", 60)
        assert b"Settings" in drawn, drawn[-2000:]
        time.sleep(1.0)  # the app is idle, its input and output threads running
        os.close(master)  # the terminal goes away, then the hangup arrives, as when a window closes
        proc.send_signal(signal.SIGHUP)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # 129 when the hangup is handled first; 1 when Textual first finds its tty gone (EIO)
    assert proc.returncode in (1, 129, -signal.SIGHUP), proc.returncode
    # the memory store was closed: another process can open the same data dir at once
    r = subprocess.run([sys.executable, "-m", "agentui.cli", "--data-dir", str(tmp_path / "d"), "memory", "stats"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
