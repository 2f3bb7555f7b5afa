"""GGS Quantization Matrix (v0.8 §6c): macro-state → (f, σ, k)."""

from __future__ import annotations

from agentui.contracts import MacroState

#: state → (f, sigma, k). k=0.05 ≈ 14-day half-life, 0.2 ≈ 3.5 days, 0.5 ≈ 1.4 days.
MATRIX: dict[MacroState, tuple[float, float, float]] = {
    MacroState.ABANDON: (0.95, -1.0, 0.05),  # PTSD trauma; hard constraint
    MacroState.ACCEPT: (0.90, 1.0, 0.05),  # flawless golden path (D = 0)
    MacroState.CHANGE_APPROACH: (0.85, -1.0, 0.05),  # anti-pattern; blacklist tool class
    MacroState.SUCCESS: (0.80, 1.0, 0.05),  # best practice SOP (D ≤ δ)
    MacroState.BREAK_SYMMETRY: (0.75, 1.0, 0.05),  # breakthrough; favour retry
    MacroState.CHANGE_PATH: (0.30, 0.0, 0.2),  # dead end; tool unharmed
    MacroState.REFINE: (0.10, 0.5, 0.5),  # muscle memory; fast GC
}

#: k of an M/K entry that lost its C-level time immunity (Trust Bankruptcy, §6e).
DEMOTED_K = 0.05


def megram_params(state: MacroState | str) -> tuple[float, float, float]:
    """(f, sigma, k) for a GGS macro-state. `init` (and anything unknown) is a ValueError."""
    try:
        return MATRIX[MacroState(state)]
    except (KeyError, ValueError):
        raise ValueError(f"no quantization for macro-state {state!r}") from None
