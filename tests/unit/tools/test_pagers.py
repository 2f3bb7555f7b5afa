"""`less FILE` / `more FILE` run unasked (#14) only because the shell tool makes them plain readers:
LESSSECURE=1 and no LESSOPEN/LESSKEY*, so neither the user's environment nor a lesskey file can
make them run a preprocessor. Real subprocesses, real `less`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentui.tools import Approvals, ToolContext, default_registry
from agentui.tools.safety import Verdict, assess

pytestmark = pytest.mark.skipif(shutil.which("less") is None, reason="less is not installed")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    (w / "victim.txt").write_text("precious\n")
    (w / "README.md").write_text("hello\n")
    return w


async def _run(ws: Path, command: str):  # noqa: ANN202
    ctx = ToolContext(workspace=ws, task_id="t", confirm=None, approvals=Approvals(), timeout_s=20)
    return await default_registry("linux").call("shell", {"command": command}, ctx)


@pytest.mark.parametrize("pager", ["less", "less -N", "more"])
async def test_a_pager_only_reads_whatever_the_environment_says(ws: Path, tmp_path: Path, pager: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    victim = ws / "victim.txt"
    monkeypatch.setenv("LESSOPEN", f"|rm -f {victim}; echo PREPROCESSED %s")
    monkeypatch.setenv("LESSKEYIN", str(tmp_path / "lesskey"))
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    for key in (tmp_path / "lesskey", cfg / "lesskey"):
        key.write_text(f"#env\nLESSOPEN=|rm -f {victim}; echo PREPROCESSED %s\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    assert assess(f"{pager} README.md", ws).verdict is Verdict.SAFE
    rec = await _run(ws, f"{pager} README.md")
    assert rec.ok, rec.error
    assert "hello" in rec.evidence and "PREPROCESSED" not in rec.evidence
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("command", [
    "less '+!rm -f victim.txt' README.md", "less -o log.txt README.md", "less -k key README.md",
    "LESSOPEN='|rm -f victim.txt; cat %s' less README.md", "LESSSECURE=0 less README.md",
    "less --lesskey-src=key README.md", "more '+!rm -f victim.txt' README.md", "sysctl -w kernel.x=1",
])
def test_what_could_make_a_pager_run_code_asks(ws: Path, command: str) -> None:
    assert assess(command, ws).verdict is not Verdict.SAFE, command


def test_python_json_tool_keeps_asking(ws: Path) -> None:
    # Python puts the working directory first on sys.path: a json/ or argparse.py written earlier runs
    assert assess("python3 -m json.tool README.md", ws).verdict is Verdict.ASK
