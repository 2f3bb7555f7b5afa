"""The one line format every benchmark prints (developers' brief)."""

from __future__ import annotations

import operator

_OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}


def report(figure: str, value: float, unit: str, op: str, limit: float) -> bool:
    ok = _OPS[op](value, limit)
    shown = f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"
    print(f"bench {figure}: {shown} {unit} (budget {op} {limit:g}: {'ok' if ok else 'OVER'})", flush=True)
    return ok
