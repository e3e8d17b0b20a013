"""Every connection's deadline on one timer of the loop's (issue 53).

A connection has one deadline at a time: its request head's, its body's, or how long it may
sit idle between requests (`web/uvicorn_http.py`). Kept as a `call_later` each, that was two
or three timers a request, armed and cancelled almost at once: ~2.5 us each, and a cancelled
timer stays in the loop's heap, with the context it copied, until the heap is next cleaned,
so at 1,000 agents thousands of them were always alive for the collector to walk. Here a
deadline is a number on its connection, and one sweep a tick closes the connections past
theirs: arming one costs a set insertion, letting it go costs nothing.

A deadline is met late by at most a tick: a tenth of the shortest deadline armed so far,
between 10 ms and half a second (at the defaults, 0.5 s on a 5 s idle limit). The sweep
runs only while some connection has a deadline, so an idle hub with no connection does not
wake for it.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Protocol

FINEST = 0.01  # seconds: the shortest tick
COARSEST = 0.5  # seconds: the longest tick
SHARE = 0.1  # of the shortest deadline armed: how late one may be met


class Timed(Protocol):
    """A connection with a deadline: `due` (loop time, None when it has none) and what to
    do when it passes."""

    due: float | None

    def expire(self) -> None: ...


class Deadlines:
    """The deadlines of every connection on one loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        # Not the loop itself: the keeper is the loop's entry's value in `_ON`, and a value
        # that held its key would keep every loop a process ever ran (a test's each) alive.
        self._loop_ref = weakref.ref(loop)
        self._armed: set[Timed] = set()
        self.tick = COARSEST  # seconds between sweeps: how late a deadline may be met
        self._sweep_at: asyncio.TimerHandle | None = None
        self._sweep_when = 0.0

    @property
    def _loop(self) -> asyncio.AbstractEventLoop:
        loop = self._loop_ref()
        if loop is None:  # only a connection of a loop that is gone could ask
            raise RuntimeError("the event loop these deadlines ran on is gone")
        return loop

    def arm(self, who: Timed, seconds: float) -> None:
        """`who` expires `seconds` from now (its earlier deadline, if any, replaced)."""
        now = self._loop.time()
        who.due = now + seconds
        self._armed.add(who)
        tick = max(FINEST, seconds * SHARE)
        if tick < self.tick:  # a shorter deadline than any before: a finer tick from now on
            self.tick = tick
            if self._sweep_at is not None and self._sweep_when > now + tick:
                self._sweep_at.cancel()
                self._sweep_at = None
        if self._sweep_at is None:
            self._schedule(now)

    def forget(self, who: Timed) -> None:
        """`who` is gone (its connection closed): never swept again."""
        who.due = None
        self._armed.discard(who)

    def __len__(self) -> int:
        return len(self._armed)

    def _sweep(self) -> None:
        now = self._loop.time()
        gone: list[Timed] = []
        late: list[Timed] = []
        for who in self._armed:
            due = who.due
            if due is None:
                gone.append(who)  # disarmed since: dropped here, not at each disarming
            elif due <= now:
                late.append(who)
        self._armed.difference_update(gone)
        self._armed.difference_update(late)
        for who in late:
            who.due = None
            who.expire()
        self._sweep_at = None
        if self._armed:
            self._schedule(now)

    def _schedule(self, now: float) -> None:
        self._sweep_when = now + self.tick
        self._sweep_at = self._loop.call_later(self.tick, self._sweep)


_ON: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Deadlines] = weakref.WeakKeyDictionary()


def deadlines(loop: asyncio.AbstractEventLoop) -> Deadlines:
    """The one keeper of deadlines on `loop`."""
    keeper = _ON.get(loop)
    if keeper is None:
        keeper = _ON[loop] = Deadlines(loop)
    return keeper
