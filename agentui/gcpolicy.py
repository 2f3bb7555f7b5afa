"""The garbage collector's policy for an agentui process.

CPython's full collection walks every object the collector tracks. After start-up most of them
belong to the imported modules (classes, functions, pydantic schemas, Textual's CSS): they live
as long as the process and are never garbage, yet every full collection walked them again, and a
burst of bus messages (or the burst the Auditor defers) triggers full collections — measured with
gc.callbacks, they were most of the Auditor's overhead in `make bench`. `settle()`, called once
the heavy imports are done:

- moves what exists to the permanent generation (gc.freeze): later collections skip it; objects
  made afterwards are collected as before, and a frozen object is still freed by reference
  counting when it is released;
- walks the middle generation after 100 young collections instead of 10. The Auditor defers a
  burst (up to its tap's 64k envelopes) and audits it once the burst settles; every envelope it
  holds survives the young pass, and with CPython's 10 the middle pass walked the held burst again
  about 5 times per burst — measured with gc.callbacks, 5.1 of the ~10 ms of CPU the Auditor
  added to a 45k-message burst (docs/benchmarks.md). With 100, a burst is usually audited and freed before the middle
  generation is walked. A middle pass then walks up to ~70k objects (a few ms), 10× less often;
- keeps full collections as far apart as before: one per 1,000 young collections (CPython's
  default is 100). With the import heap frozen the long-lived set is small, so the "25 % new" rule
  alone would fire a full pass every few thousand messages. Cyclic garbage that reached the old
  generation waits longer (measured: the bench's CPU per message halves).
"""

from __future__ import annotations

import gc

MIDDLE_EVERY = 100  # young collections per middle-generation one (CPython's default: 10)
YOUNG_PER_FULL = 1000  # young collections per full one (CPython's default: 10 × 10 = 100)


def settle() -> int:
    """Freeze every object tracked now (call after the heavy imports), space out the middle and
    full collections; returns the number of objects frozen."""
    gc.freeze()
    young, middle, full = gc.get_threshold()
    middle = max(middle, MIDDLE_EVERY)
    gc.set_threshold(young, middle, max(full, -(-YOUNG_PER_FULL // middle)))
    return gc.get_freeze_count()
