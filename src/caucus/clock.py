"""Time as a dependency, so liveness and expiry can be tested without sleeping.

Every rule that depends on time reads the clock its owner was given: `now` for what is
stored, `monotonic` for budgets and deadlines, and `alarm` for a deadline to wait on, so that
a test's `FakeClock` can ring it by moving time instead of the test waiting for it."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Wall-clock seconds since the epoch (stored in the database)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back (rate limits, timers)."""
        ...

    def alarm(self, at: float) -> asyncio.Future[None]:
        """A future done once `monotonic()` reaches `at`; cancel it when no longer wanted."""
        ...


def ring(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class SystemClock:
    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def alarm(self, at: float) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        handle = loop.call_later(max(0.0, at - time.monotonic()), ring, fut)
        fut.add_done_callback(lambda _: handle.cancel())
        return fut
