"""Hermetic tests: never touch the real user's config or data dirs, nor a real LLM endpoint.

The autouse fixture points HOME, XDG dirs, AGENTUI_CONFIG and AGENTUI_DATA_DIR into a temp dir
and removes every variable that would point agentui at a real model. Subprocesses inherit it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_LEAKY_PREFIXES = ("AGENTUI_", "OPENAI_", "OLLAMA_")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith(_LEAKY_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("AGENTUI_CONFIG", str(home / "agentui-config.toml"))
    monkeypatch.setenv("AGENTUI_DATA_DIR", str(home / "agentui-data"))
    # Nothing should find a model by accident (DESIGN §4 provider resolution probes Ollama).
    monkeypatch.setenv("AGENTUI_NO_AUTODETECT", "1")
    return home


# The fake OpenAI-compatible server's fixtures (tests/fakellm/plugin.py), once it exists.
if (Path(__file__).parent / "fakellm" / "plugin.py").is_file():
    pytest_plugins = ["tests.fakellm.plugin"]


def pytest_sessionstart(session: pytest.Session) -> None:
    """A venv made before a dependency was added fails here with the fix, not with import errors."""
    import importlib.util

    missing = [m for m in ("acp", "mcp") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.exit(f"missing dependencies {missing} (pyproject.toml gained them, #18): run `make install` "
                    "or `.venv/bin/pip install -e '.[dev]'`", returncode=2)
