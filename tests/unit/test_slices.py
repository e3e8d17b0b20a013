"""Housekeeping slices (issue 53, `domain/slices.py`): a slice that held the store too long
makes the next smaller, a quick one the next larger (at most twice), within their bounds; a
job starts small; a slice that ran out of work caps the next at twice what it did; a round
stops once its budget is spent."""

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
    slices.size = 250
    slices.took(0.0003, 250)  # a tenth of the target: at most twice as large
    assert slices.size == 500
    slices.took(0.0001, 500)
    assert slices.size == 1000  # never past `most`
    slices.took(0.012, 1000)  # four times the target
    assert slices.size == 250
    slices.took(10.0, 250)
    assert slices.size == 10  # never under `least`


def test_a_slice_that_ran_out_of_work_caps_the_next_at_twice_what_it_did() -> None:
    slices = Slices(Ticks(0), most=1000, least=10, target=0.003)
    slices.size = 1000
    slices.took(0.0001, 1000)
    assert slices.size == 1000
    # 40 items left, quickly: not because a full slice would be quick too. After a quiet
    # spell the backlog is taken from twice that, doubling, never 1,000 at once.
    slices.took(0.0001, 40)
    assert slices.size == 80
    slices.took(0.0001, 0)
    assert slices.size == 10  # never under `least`
    slices.size = 1000
    slices.took(0.003, 300)  # ran out at the target: the next takes as many, not twice
    assert slices.size == 300
    slices.took(0.012, 5)  # ran out, but slowly: shrinks as a full slice would
    assert slices.size == 10


def test_a_job_starts_small_and_at_most_doubles() -> None:
    slices = Slices(Ticks(0), most=1000, least=10, target=0.003)
    assert slices.size == 10
    slices.took(0.00001, 10)  # far under the target: still only twice
    assert slices.size == 20


def test_a_round_stops_once_its_budget_is_spent() -> None:
    slices = Slices(Ticks(0.004), most=100, least=10, budget=0.016)
    unit = 0
    while slices.more:
        slices.unit(lambda r, size: size, lambda done: done)(None)
        unit += 1
    assert unit == 4  # 4 ms each (under a stall), 16 ms in all
    slices.begin_round()
    assert slices.more


def test_a_clock_that_does_not_move_sees_every_slice_twice_the_last() -> None:
    slices = Slices(Ticks(0), most=100, least=10)
    sizes = [slices.unit(lambda r, size: size, lambda done: done)(None) for _ in range(5)]
    assert sizes == [10, 20, 40, 80, 100]


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


def test_a_round_starts_at_a_quarter_of_the_last_size() -> None:
    slices = Slices(Ticks(0), most=1000, least=10, target=0.003)
    slices.size = 1000
    slices.begin_round()
    assert slices.size == 250
    slices.size = 20
    slices.begin_round()
    assert slices.size == 10  # never under `least`


def test_slices_are_sized_for_the_dearest_item_of_late() -> None:
    slices = Slices(Ticks(0), most=2048, least=8, target=0.002)
    slices.size = 200
    slices.took(0.010, 200)  # 50 us an item: the next fits the target at that price
    assert slices.size == 40
    for _ in range(5):
        slices.took(0.0001, slices.size)  # cheap now: it grows, but not past the dear price
    assert slices.size == 40
    slices.begin_round()  # the price is forgotten by halves, a round at a time
    slices.took(0.0001, slices.size)
    assert slices.size == 20  # twice the quarter it began the round at
    slices.took(0.0001, slices.size)
    slices.took(0.0001, slices.size)
    assert slices.size == 80


def test_a_slice_of_a_few_items_does_not_price_them() -> None:
    slices = Slices(Ticks(0), most=1000, least=1, target=0.002)
    slices.took(0.002, 1)  # one item in 2 ms: the statement's own cost, mostly
    slices.took(0.0001, 1)
    assert slices.size == 2  # it grows as if nothing were dear


def test_a_slice_that_held_the_store_past_a_stall_ends_the_round() -> None:
    """A job whose least slice is dear (merging a large index term) takes one such slice a
    round, not slice after slice for the whole budget with every send queued behind them."""
    slices = Slices(Ticks(0), most=64, least=4, target=0.002, budget=0.2)
    slices.begin_round()
    slices.took(0.004, 4)  # dear, but under the stall: the round goes on
    assert slices.more
    slices.took(0.024, 4)
    assert not slices.more
    slices.begin_round()
    assert slices.more  # the next round takes one again
