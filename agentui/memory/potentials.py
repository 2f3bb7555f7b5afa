"""Dual-channel convolution potentials (v0.8 §6d).

    M_attention = Σ |f_i| · exp(−k_i · Δt_i)        M_decision = Σ σ_i · f_i · exp(−k_i · Δt_i)

Δt_i is in days, measured from the later of the entry's created_at and last_recalled_at, and
clamped at 0 (a clock step backwards never amplifies a memory).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from agentui.contracts import MemoryAction

ATTENTION_FLOOR = 0.5
DECISION_BAND = 0.2
SECONDS_PER_DAY = 86400.0


def potentials(
    f: np.ndarray | Sequence[float],
    sigma: np.ndarray | Sequence[float],
    k: np.ndarray | Sequence[float],
    t_ref_days: np.ndarray | Sequence[float],
    now_days: float,
) -> tuple[float, float]:
    """(attention, decision) over parallel arrays; `t_ref_days` = later of created/recalled."""
    f_a = np.asarray(f, dtype=np.float64)
    if f_a.size == 0:
        return 0.0, 0.0
    dt = np.maximum(now_days - np.asarray(t_ref_days, dtype=np.float64), 0.0)
    e = np.exp(-np.asarray(k, dtype=np.float64) * dt)
    att = float((np.abs(f_a) * e).sum())
    dec = float((np.asarray(sigma, dtype=np.float64) * f_a * e).sum())
    return att, dec


def weights(f: np.ndarray, k: np.ndarray, t_ref_days: np.ndarray, now_days: float) -> np.ndarray:
    """Per-entry attention |f|·exp(−kΔt) — what GC compares against 0.1."""
    dt = np.maximum(now_days - t_ref_days, 0.0)
    w: np.ndarray = np.abs(f) * np.exp(-k * dt)
    return w


def reference_potentials(
    f: Sequence[float],
    sigma: Sequence[float],
    k: Sequence[float],
    t_ref_days: Sequence[float],
    now_days: float,
) -> tuple[float, float]:
    """Plain-Python reference of :func:`potentials` (for property tests)."""
    att = dec = 0.0
    for fi, si, ki, ti in zip(f, sigma, k, t_ref_days, strict=True):
        decay = math.exp(-ki * max(now_days - ti, 0.0))
        att += abs(fi) * decay
        dec += si * fi * decay
    return att, dec


def action_for(attention: float, decision: float) -> MemoryAction:
    """§6d: Ignore below 0.5 attention; else Exploit / Avoid / Caution by the decision band."""
    if attention < ATTENTION_FLOOR:
        return MemoryAction.IGNORE
    if decision > DECISION_BAND:
        return MemoryAction.EXPLOIT
    if decision < -DECISION_BAND:
        return MemoryAction.AVOID
    return MemoryAction.CAUTION
