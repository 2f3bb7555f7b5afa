from __future__ import annotations

import math
import random

import numpy as np
import pytest

from agentui.contracts import MemoryAction
from agentui.memory import action_for, potentials, reference_potentials


def test_decay_at_known_dt() -> None:
    att, dec = potentials([0.95], [-1.0], [0.05], [0.0], 14.0)
    assert att == pytest.approx(0.95 * math.exp(-0.7), abs=1e-12)
    assert dec == pytest.approx(-0.95 * math.exp(-0.7), abs=1e-12)
    # ~14-day half-life for k=0.05
    assert potentials([1.0], [1.0], [0.05], [0.0], 14.0)[0] == pytest.approx(0.4966, abs=1e-4)
    # refine: f=0.1, k=0.5 after 1 day
    assert potentials([0.1], [0.5], [0.5], [0.0], 1.0)[1] == pytest.approx(0.05 * math.exp(-0.5))


def test_future_reference_is_clamped() -> None:
    att, _ = potentials([0.8], [1.0], [0.05], [10.0], 5.0)
    assert att == pytest.approx(0.8)


def test_empty() -> None:
    assert potentials([], [], [], [], 3.0) == (0.0, 0.0)


def test_property_matches_reference() -> None:
    rng = random.Random(1234)
    for _ in range(300):
        n = rng.randint(0, 60)
        f = [rng.uniform(0, 1) for _ in range(n)]
        s = [rng.choice([-1.0, 0.0, 0.5, 1.0, rng.uniform(-1, 1)]) for _ in range(n)]
        k = [rng.choice([0.0, 0.05, 0.2, 0.5, rng.uniform(0, 2)]) for _ in range(n)]
        t = [rng.uniform(-50, 400) for _ in range(n)]
        now = rng.uniform(0, 365)
        a1, d1 = potentials(np.array(f), np.array(s), np.array(k), np.array(t), now)
        a2, d2 = reference_potentials(f, s, k, t, now)
        assert abs(a1 - a2) <= 1e-9 and abs(d1 - d2) <= 1e-9


@pytest.mark.parametrize(
    ("att", "dec", "action"),
    [
        (0.49, 5.0, MemoryAction.IGNORE),
        (0.5, 0.21, MemoryAction.EXPLOIT),
        (0.5, -0.21, MemoryAction.AVOID),
        (0.5, 0.2, MemoryAction.CAUTION),
        (3.0, -0.2, MemoryAction.CAUTION),
        (3.0, 0.0, MemoryAction.CAUTION),
    ],
)
def test_action_table(att: float, dec: float, action: MemoryAction) -> None:
    assert action_for(att, dec) == action
