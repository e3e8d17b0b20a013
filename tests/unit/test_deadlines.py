"""Every connection's deadline on one timer of the loop's (`caucus.web.deadlines`): a deadline
passes once, no earlier than it was set for and at most a tick late; a disarmed or forgotten
one never does; the sweep stops when nothing has a deadline. Time is the test's: a loop that
only tells the time it is told and runs the one timer when asked."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from caucus.web.deadlines import COARSEST, FINEST, Deadlines, deadlines


class _Loop:
    """What `Deadlines` uses of a loop: its time and one `call_later` at a time."""

    def __init__(self) -> None:
        self.now = 100.0
        self.timer: tuple[float, Callable[[], None]] | None = None

    def time(self) -> float:
        return self.now

    def call_later(self, delay: float, callback: Callable[[], None]) -> _Handle:
        assert self.timer is None, "one timer at a time"
        self.timer = (self.now + delay, callback)
        return _Handle(self)

    def run_until(self, when: float) -> None:
        """Time moves to `when`, running the timer each time it comes due on the way."""
        while self.timer is not None and self.timer[0] <= when:
            at, callback = self.timer
            self.timer = None
            self.now = at
            callback()
        self.now = when


class _Handle:
    def __init__(self, loop: _Loop) -> None:
        self._loop = loop

    def cancel(self) -> None:
        self._loop.timer = None


class _Connection:
    def __init__(self, log: list[tuple[str, float]], name: str, loop: _Loop) -> None:
        self.due: float | None = None
        self._log, self._name, self._loop = log, name, loop

    def expire(self) -> None:
        self._log.append((self._name, self._loop.now))


def _keeper() -> tuple[_Loop, Deadlines]:
    loop = _Loop()
    return loop, Deadlines(cast(asyncio.AbstractEventLoop, cast(Any, loop)))


def test_a_deadline_passes_once_within_a_tick_and_the_sweep_then_stops() -> None:
    loop, keeper = _keeper()
    log: list[tuple[str, float]] = []
    a = _Connection(log, "a", loop)
    keeper.arm(a, 5.0)  # the tick: a tenth of it, 0.5 s
    loop.run_until(104.9)
    assert log == []
    loop.run_until(200.0)
    assert [name for name, _ in log] == ["a"]
    assert 105.0 <= log[0][1] <= 105.5
    assert len(keeper) == 0  # nothing armed: no sweep scheduled
    assert loop.timer is None


def test_a_disarmed_or_forgotten_deadline_never_passes_and_a_rearmed_one_moves() -> None:
    loop, keeper = _keeper()
    log: list[tuple[str, float]] = []
    a, b, c = (_Connection(log, n, loop) for n in "abc")
    for who in (a, b, c):
        keeper.arm(who, 2.0)
    a.due = None  # disarmed as a connection does: nothing told to the keeper
    keeper.forget(b)
    loop.run_until(101.0)
    keeper.arm(c, 3.0)  # the body's deadline replacing the head's
    loop.run_until(103.5)
    assert log == []
    loop.run_until(200.0)
    assert [name for name, _ in log] == ["c"]
    assert 104.0 <= log[0][1] <= 104.0 + 0.2 + 1e-9


@given(
    st.lists(
        st.tuples(st.floats(0.0, 50.0), st.floats(0.001, 40.0) | st.none(), st.booleans()),
        min_size=1,
        max_size=30,
    )
)
def test_every_deadline_passes_no_earlier_than_set_and_at_most_a_tick_late(
    plan: list[tuple[float, float | None, bool]],
) -> None:
    """Connections armed at random moments for random spans (None: disarmed again at once),
    some forgotten: each armed one that is kept passes once, in [due, due + tick]."""
    loop, keeper = _keeper()
    log: list[tuple[str, float]] = []
    expected: dict[str, tuple[float, float]] = {}  # name: (due, the tick when armed)
    for n, (at, seconds, kept) in enumerate(sorted(plan, key=lambda p: p[0])):
        loop.run_until(loop.now + at / 10)
        who = _Connection(log, str(n), loop)
        keeper.arm(who, seconds or 1.0)
        assert keeper.tick == min(COARSEST, max(FINEST, keeper.tick))
        if seconds is None:
            who.due = None
        elif not kept:
            keeper.forget(who)
        else:
            expected[str(n)] = (loop.now + seconds, keeper.tick)
    loop.run_until(loop.now + 1_000.0)
    assert sorted(name for name, _ in log) == sorted(expected)
    for name, when in log:
        due, tick = expected[name]
        assert due <= when <= due + tick + 1e-6
    assert len(keeper) == 0
    assert loop.timer is None


@pytest.mark.parametrize(("seconds", "tick"), [(0.02, FINEST), (2.0, 0.2), (60.0, COARSEST)])
def test_the_tick_is_a_tenth_of_the_shortest_deadline_within_bounds(
    seconds: float, tick: float
) -> None:
    loop, keeper = _keeper()
    keeper.arm(_Connection([], "a", loop), seconds)
    assert loop.timer is not None
    assert loop.timer[0] - loop.now == pytest.approx(tick)


def test_a_shorter_deadline_brings_a_scheduled_sweep_forward() -> None:
    loop, keeper = _keeper()
    log: list[tuple[str, float]] = []
    keeper.arm(_Connection(log, "slow", loop), 30.0)  # a sweep in 0.5 s
    keeper.arm(_Connection(log, "quick", loop), 0.05)  # due in 0.05 s: the tick 0.01
    loop.run_until(100.2)
    assert [name for name, _ in log] == ["quick"]
    assert log[0][1] <= 100.05 + FINEST + 1e-9


def test_a_loop_s_keeper_goes_with_its_loop() -> None:
    """One keeper a loop, and none kept once the loop is gone (a test's loop each)."""
    loop = asyncio.new_event_loop()
    try:
        assert deadlines(loop) is deadlines(loop)
        kept = weakref.ref(deadlines(loop))
    finally:
        loop.close()
    del loop
    gc.collect()
    assert kept() is None
