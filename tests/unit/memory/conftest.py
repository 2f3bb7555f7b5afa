from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agentui.clock import FakeClock
from agentui.ids import SeededIds
from agentui.memory import LevelDBMemory


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 1, 1, tzinfo=UTC))


@pytest.fixture
def ids() -> SeededIds:
    return SeededIds(7, readable=True)


@pytest.fixture
def mem(tmp_path, clock, ids):
    store = LevelDBMemory(tmp_path / "mem.leveldb", clock, ids)
    yield store
    if not store.closed:
        store.close_sync()
