"""Time as a dependency, so liveness and expiry can be tested without sleeping."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Wall-clock seconds since the epoch (stored in the database)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (rate limits, timers)."""
        ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()
