"""Start the test MCP server (`python -m tests.mcpserver`) as a real process serving HTTP, for tests."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def http_server(tmp: Path, *args: str, timeout_s: float = 30) -> Iterator[str]:
    """`python -m tests.mcpserver --http PORT_FILE *args` until the block ends; yields its base URL,
    `http://127.0.0.1:PORT` (the MCP endpoint is /mcp, or /sse with --sse)."""
    stamp = time.monotonic_ns()
    port_file, errors = tmp / f"port-{stamp}", tmp / f"server-stderr-{stamp}"
    with errors.open("wb") as err:  # a file, not a pipe: nothing reads it while the server runs
        proc = subprocess.Popen([sys.executable, "-m", "tests.mcpserver", "--http", str(port_file), *args],
                                cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + timeout_s
        while not port_file.exists():
            if proc.poll() is not None:
                raise AssertionError(f"the HTTP MCP server exited {proc.returncode}: {errors.read_text()}")
            if time.monotonic() > deadline:
                raise AssertionError("the HTTP MCP server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text()}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
