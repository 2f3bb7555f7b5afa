"""The built wheel carries the themes (a pip/pipx install has `--theme light`) (#15) and the roles'
prompts (#41)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _pypi_reachable() -> bool:
    import socket

    try:
        with socket.create_connection(("pypi.org", 443), timeout=3):
            return True
    except OSError:
        return False


@pytest.mark.skipif(
    not _pypi_reachable(), reason="PyPI is not reachable (offline): the build backend cannot be fetched"
)
def test_wheel_ships_the_themes(tmp_path) -> None:
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (wheel,) = tmp_path.glob("agentui-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"agentui/themes/dark.toml", "agentui/themes/light.toml", "agentui/themes/__init__.py"} <= names
    assert "agentui/ui/app.tcss" in names
    assert {"agentui/roles/prompts/planner.md", "agentui/roles/prompts/tree_planner.md"} <= names


def test_theme_flag_outside_the_repo(tmp_path) -> None:
    r = subprocess.run([sys.executable, "-c", "import sys; from agentui.themes import check_theme; "
                        "print(check_theme(sys.argv[1]))", "light"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "agentui-light", r.stderr
