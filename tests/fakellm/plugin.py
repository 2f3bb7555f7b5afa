"""pytest fixtures: `fakellm` (a server per test) and `fakellm_env` (env vars pointing at it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakellm.server import FakeLLM


@pytest.fixture
def fakellm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


@pytest.fixture
def fakellm_env(fakellm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("AGENTUI_BASE_URL", fakellm.base_url)
    monkeypatch.setenv("AGENTUI_MODEL", fakellm.model)
    return fakellm
