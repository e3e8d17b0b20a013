"""Housekeeping in slices (issue 53): a job that walks the log (retention, the search index,
the sent counts, giving pages back) takes it a slice at a time, each its own unit of work, so
sends and receives run between slices and none waits behind the job for more than a slice.

A slice's size follows how long the last one took: grown or shrunk so that one holds the
store about `target` seconds, whatever the machine and whatever a row costs there (deleting a
message also drops it from the search index). A round of a job stops once its slices have
held the store `budget` seconds in all, and goes on at the next maintenance round. Times are
read on the hub's clock, so a test's fake clock, which does not move while a unit runs, sees
every slice at its largest.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

TARGET = 0.003  # seconds a slice should hold the store
BUDGET = 0.2  # seconds of slices per job per maintenance round (a tenth of a 2 s round)


class Slices:
    def __init__(
        self,
        monotonic: Callable[[], float],
        *,
        most: int,
        least: int,
        target: float = TARGET,
        budget: float = BUDGET,
    ) -> None:
        self._monotonic = monotonic
        self.most = most
        self.least = min(least, most)
        self.size = most
        self._target = target
        self._budget = budget
        self.spent = 0.0

    def begin_round(self) -> None:
        self.spent = 0.0

    @property
    def more(self) -> bool:
        """Whether this round may take another slice."""
        return self.spent < self._budget

    def took(self, seconds: float, done: int) -> None:
        """A slice of `done` items held the store `seconds`: size the next."""
        self.spent += seconds
        if seconds <= 0:
            wanted = self.size * 2
        elif done < self.size and seconds < self._target:
            return  # a short slice (the job ran out) says nothing about a full one
        else:
            wanted = int(self.size * min(2.0, self._target / seconds))
        self.size = max(self.least, min(self.most, wanted))

    def unit(self, work: Callable[[R, int], T], done: Callable[[T], int]) -> Callable[[R], T]:
        """A unit of work running `work(repos, size)` for this slice, timed where it holds the
        store (inside the unit); the next slice is sized from it, `done(result)` its count."""
        size = self.size

        def run(r: R) -> T:
            began = self._monotonic()
            result = work(r, size)
            self.took(self._monotonic() - began, done(result))
            return result

        return run

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
