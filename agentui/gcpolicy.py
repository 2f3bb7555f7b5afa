"""The garbage collector's policy for an agentui process (#15).

CPython's full collection walks every object the collector tracks. After start-up most of them
belong to the imported modules (classes, functions, pydantic schemas, Textual's CSS): they live
as long as the process and are never garbage, yet every full collection walked them again, and a
burst of bus messages (or the burst the Auditor defers) triggers full collections — measured with
gc.callbacks, they were most of the Auditor's overhead in `make bench`. `settle()`, called once
the heavy imports are done:

- moves what exists to the permanent generation (gc.freeze): later collections skip it; objects
  made afterwards are collected as before, and a frozen object is still freed by reference
  counting when it is released;
- runs a full collection after 100 middle-generation ones instead of 10: with the import heap
  frozen the long-lived set is small, so the "25 % new" rule alone would fire a full pass every
  few thousand messages. Cyclic garbage that reached the old generation waits longer (measured:
  the bench's CPU per message halves; see README, Benchmarks).
"""

from __future__ import annotations

import gc

FULL_EVERY = 100  # middle-generation collections per full one (CPython's default: 10)


def settle() -> int:
    """Freeze every object tracked now (call after the heavy imports) and space out the full
    collections; returns the number of objects frozen."""
    gc.freeze()
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, max(full, FULL_EVERY))
    return gc.get_freeze_count()
