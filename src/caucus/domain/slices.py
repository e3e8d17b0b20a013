"""Housekeeping in slices (issue 53): a job that walks the log (retention, the search index,
the sent counts, giving pages back) takes it a slice at a time, each its own unit of work, so
sends and receives run between slices and none waits behind the job for more than a slice.

A slice's size follows how long the last one took: grown or shrunk so that one holds the
store about `target` seconds, whatever the machine and whatever a row costs there (deleting a
message also drops it from the search index). A job starts small and at most doubles from one
slice to the next, never past what the dearest item of late would fit in the target; a slice
that ran out of work sizes the next from what it did (at most twice that, never larger than
itself), and a round begins at a quarter of the last size: a job's first slice after a quiet
spell never takes a whole backlog at a size learnt long ago. A round of a job stops once its
slices have held the store `budget` seconds in all, or after one slice that held it past
`STALL`, and goes on at the next maintenance round. Slices are housekeeping, redone after a
power cut: they do not wait for the disk.
Times are read on the hub's clock, so a test's fake clock, which does not move while a unit
runs, sees every slice twice the last, up to `most`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

TARGET = 0.002  # seconds a slice should hold the store (the loop's stalls stay under 5 ms)
BUDGET = 0.2  # seconds of slices per job per maintenance round (a tenth of a 2 s round)
PRICED = 16  # items a slice holds at least for its time to price one (else overhead rules)
STALL = 0.005  # a slice that held the store longer than this ends its job's round


class Slices:
    def __init__(
        self,
        monotonic: Callable[[], float],
        *,
        most: int,
        least: int,
        target: float = TARGET,
        budget: float = BUDGET,
        stall: float | None = STALL,
    ) -> None:
        """`stall`: None for a job that holds nothing a send waits on (the search index's, in
        a file and on a thread of its own), so none of its slices ends a round early."""
        self._monotonic = monotonic
        self.most = most
        self.least = min(least, most)
        self.size = self.least
        self._target = target
        self._budget = budget
        self._stall = stall
        self._round_budget = budget
        self.spent = 0.0
        self._worst = 0.0  # the dearest item of late (seconds): no slice is sized past it

    def begin_round(self, budget: float | None = None) -> None:
        """A new round: its first slice is a quarter of the last size (and grows from there,
        doubling): what a row costs after a pause (a cold cache, a purge in between) is not
        what it cost while the last round ran (5x between them at a million messages).
        `budget`: this round's, when it is not the job's usual one."""
        self._round_budget = self._budget if budget is None else budget
        self.spent = 0.0
        self.size = max(self.least, self.size // 4)
        self._worst /= 2  # forgotten by halves, a round at a time

    @property
    def more(self) -> bool:
        """Whether this round may take another slice."""
        return self.spent < self._round_budget

    def took(self, seconds: float, done: int) -> None:
        """A slice of `done` items held the store `seconds`: size the next. One that held it
        past `STALL` ends the round: a job whose least slice costs that much (merging the
        search index's largest terms: 16-26 ms at a million messages, whatever the pages
        asked) would otherwise run such slices back to back for the whole budget, every
        send queued behind them (p99 150-190 ms while purging)."""
        self.spent += seconds
        if self._stall is not None and seconds > self._stall:
            self.spent = max(self.spent, self._round_budget)
        if seconds <= 0:
            wanted = self.size * 2
        elif done < self.size:
            # The job ran out: what it did, in the time it took, is what a slice is known to
            # hold; never more than this one, at most twice what it did.
            wanted = min(self.size, int(done * min(2.0, self._target / seconds)))
        else:
            wanted = int(self.size * min(2.0, self._target / seconds))
        if seconds > 0 and done >= max(self.least, PRICED):  # a few items: mostly overhead
            self._worst = max(self._worst, seconds / done)
        if self._worst > 0:
            # Items cost what they like (giving pages back: nothing, or moving each one):
            # sized for the dearest of late, a cheap run cannot double it into a long stall.
            wanted = min(wanted, int(self._target / self._worst))
        self.size = max(self.least, min(self.most, wanted))

    def unit(self, work: Callable[[R, int], T], done: Callable[[T], int]) -> Callable[[R], T]:
        """A unit of work running `work(repos, size)` for this slice, timed where it holds the
        store (inside the unit); the next slice is sized from it, `done(result)` its count."""
        return _Slice(self, work, done, self.size)

    async def drain(
        self,
        write: Callable[[Callable[[R], T]], Awaitable[T]],
        work: Callable[[R, int], T],
        done: Callable[[T], int],
    ) -> int:
        """A round of `work`: slices run through `write` (the store's), until one comes back
        short (the job ran out) or the round's budget is spent; how much was done."""
        self.begin_round()
        total = 0
        while self.more:
            size = self.size
            count = done(await write(self.unit(work, done)))
            total += count
            if count < size:
                break
        return total


class _Slice(Generic[R, T]):
    """One slice as a unit of work. Housekeeping is redone after a power cut (what it had
    dropped, indexed or counted shows again, and the next round does it again), so its
    commits do not wait for the disk while every send waits for them (ADR 0041)."""

    __slots__ = ("_done", "_size", "_slices", "_work")
    durable = False

    def __init__(
        self, slices: Slices, work: Callable[[R, int], T], done: Callable[[T], int], size: int
    ) -> None:
        self._slices, self._work, self._done, self._size = slices, work, done, size

    def __call__(self, r: R) -> T:
        slices = self._slices
        began = slices._monotonic()
        result = self._work(r, self._size)
        slices.took(slices._monotonic() - began, self._done(result))
        return result
