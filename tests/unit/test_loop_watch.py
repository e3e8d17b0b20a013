"""The hub's loop watch (issue 53): a callback that holds the event loop shows as a stall of
at least as long as it held it, with when it ended; nothing held, nothing kept."""

from __future__ import annotations

import asyncio
import time

from caucus.services.loop_watch import STALL, LoopWatch
from caucus.testing import FakeClock


def hold_the_loop(seconds: float) -> None:
    """What a unit of work that runs too long does to everything else on the loop: it works
    (here, on nothing) for at least `seconds` before it gives the loop back."""
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        pass


async def test_a_held_loop_is_a_stall_at_least_as_long() -> None:
    clock = FakeClock(1000.0)
    watch = LoopWatch(clock, interval=0.005)
    await watch.start()
    try:
        await asyncio.sleep(0)  # the watch is now asleep on its timer
        hold_the_loop(0.06)
        for _ in range(3):  # its timer is overdue: it wakes within two turns of the loop
            await asyncio.sleep(0)
    finally:
        await watch.stop()
    lag = watch.lag()
    assert lag.worst >= 0.06 - 0.005  # held 60 ms, of which at most one interval was asked
    assert (1000.0, lag.worst) in lag.stalls


async def test_off_when_the_interval_is_zero() -> None:
    watch = LoopWatch(FakeClock(0.0), interval=0)
    await watch.start()
    hold_the_loop(STALL * 2)
    await asyncio.sleep(0)
    await watch.stop()
    assert (watch.lag().samples, watch.lag().stalls) == (0, [])
