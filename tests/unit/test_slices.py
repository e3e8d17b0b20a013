"""Housekeeping slices (issue 53, `domain/slices.py`): a slice that held the store too long
makes the next smaller, a quick one the next larger (at most twice), within their bounds; a
slice that ran out of work says nothing; a round stops once its budget is spent."""

from __future__ import annotations

from collections.abc import Callable

from caucus.domain.slices import Slices


class Ticks:
    """A monotonic clock that moves `step` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_a_slow_slice_shrinks_the_next_and_a_quick_one_grows_it() -> None:
    slices = Slices(Ticks(0), most=1000, least=10, target=0.003)
    slices.took(0.012, 1000)  # four times the target
    assert slices.size == 250
    slices.took(0.0015, 250)  # half the target: at most twice as large
    assert slices.size == 500
    slices.took(0.0001, 500)
    assert slices.size == 1000  # never past `most`
    slices.took(10.0, 1000)
    assert slices.size == 10  # never under `least`


def test_a_slice_that_ran_out_of_work_says_nothing_about_a_full_one() -> None:
    slices = Slices(Ticks(0), most=1000, least=10, target=0.003)
    slices.took(0.012, 1000)
    slices.took(0.0001, 3)  # three items left: quick, but not because slices could be larger
    assert slices.size == 250


def test_a_round_stops_once_its_budget_is_spent() -> None:
    slices = Slices(Ticks(0.25), most=100, least=10, budget=1.0)
    unit = 0
    while slices.more:
        slices.unit(lambda r, size: size, lambda done: done)(None)
        unit += 1
    assert unit == 4  # a quarter of a second each, a second in all
    slices.begin_round()
    assert slices.more


def test_a_clock_that_does_not_move_sees_every_slice_at_its_largest() -> None:
    slices = Slices(Ticks(0), most=100, least=10)
    sizes = [slices.unit(lambda r, size: size, lambda done: done)(None) for _ in range(3)]
    assert sizes == [100, 100, 100]


async def test_a_round_drains_the_work_until_a_slice_comes_back_short() -> None:
    left = [250]

    def work(_: None, size: int) -> int:
        taken = min(size, left[0])
        left[0] -= taken
        return taken

    async def write(unit: Callable[[None], int]) -> int:
        return unit(None)

    slices = Slices(Ticks(0), most=100, least=10)
    assert await slices.drain(write, work, lambda n: n) == 250
    assert left == [0]
    assert await slices.drain(write, work, lambda n: n) == 0  # nothing left: one short slice
