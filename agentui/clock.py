"""Injectable clocks. Wall time for timestamps, monotonic time for durations and deadlines.

Tests inject :class:`FakeClock` so envelopes, Megrams and reports carry fixed times.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """Timezone-aware UTC wall time."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin; never goes backwards."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class FakeClock:
    """Starts at `start`; each `now()` advances by `step` (0 = frozen). `advance()` moves it by hand."""

    def __init__(self, start: datetime | None = None, step: float = 0.0) -> None:
        self._t = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 0.0
        self._step = step
        self._lock = threading.Lock()

    def now(self) -> datetime:
        with self._lock:
            t = self._t
            if self._step:
                self._t += timedelta(seconds=self._step)
                self._mono += self._step
            return t

    def monotonic(self) -> float:
        with self._lock:
            return self._mono

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._t += timedelta(seconds=seconds)
            self._mono += seconds


def iso(dt: datetime) -> str:
    """RFC 3339 / ISO 8601 with milliseconds and a Z suffix, always UTC."""
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00")).astimezone(UTC)
