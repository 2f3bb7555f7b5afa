"""The live tests' shared fixture: the real small model (tests/live/harness.py has the rest)."""

from __future__ import annotations

import pytest

from tests.live.harness import model_path


@pytest.fixture(scope="module")
def gguf(request: pytest.FixtureRequest) -> str:
    """A module may name the variables that point at its GGUF (`GGUF_ENV`); else AGENTUI_LIVE_GGUF."""
    return model_path(getattr(request.module, "GGUF_ENV", ("AGENTUI_LIVE_GGUF",)))
