"""How late the hub's event loop runs (issue 53): every request, delivery and, on SQLite, every
write runs on it, so a piece of housekeeping that holds it shows here as a stall. A timer asks
to wake every `loop_watch_interval` seconds; how much later than asked it woke is the loop's
lag. The operator reads the worst and the recent stalls (`GET /operator/upkeep`), each with
when it ended, so a benchmark can tell which of its phases it fell in."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque

from caucus.clock import Clock
from caucus.domain.upkeep import LoopLag

STALL = 0.002  # a wake-up this much late is a stall worth keeping
KEPT = 256  # the most recent stalls kept


class LoopWatch:
    """A part of the hub (`Hub.attach`): started and stopped with it."""

    def __init__(self, clock: Clock, interval: float) -> None:
        self._clock = clock
        self._interval = interval
        self._samples = 0
        self._worst = 0.0
        self._stalls: deque[tuple[float, float]] = deque(maxlen=KEPT)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self._interval > 0:
            self._task = asyncio.create_task(self._watch(), name="caucus-loop-watch")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def lag(self) -> LoopLag:
        return LoopLag(self._interval, self._samples, self._worst, list(self._stalls))

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        interval = self._interval
        while True:
            asked = loop.time() + interval
            await asyncio.sleep(interval)
            late = loop.time() - asked
            self._samples += 1
            if late >= STALL:
                self._stalls.append((self._clock.now(), late))
                self._worst = max(self._worst, late)
