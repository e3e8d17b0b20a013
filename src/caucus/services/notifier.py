"""Typed events out to subscribers, and wake-ups for parked long-polls.

A waiter per listening peer: a send wakes exactly the recipients' waiters, so a parked receive
costs no CPU and reacts in well under a millisecond. Beside that one slot, any number of
peekers may wait for a peer's inbox to change without claiming anything (`GET /peek?after=`).
Subscribers are called synchronously and must be quick (queue the work if it is not).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from caucus.clock import Clock, SystemClock
from caucus.domain.events import Event

log = logging.getLogger(__name__)

Subscriber = Callable[[Event], None]
WATCHER_GAP = 5.0  # seconds between a watcher's polls within which it still counts as running
PRUNE_PAST = 1024  # watchers remembered before the long-gone ones are forgotten


@dataclass(eq=False)
class Waiter:
    """One parked receive. `superseded` is set when a newer receive takes over the identity.

    A bare future and a timer handle rather than asyncio.Event plus asyncio.timeout: this is
    on the path of every message, and those cost several times more.
    """

    peer_id: int
    superseded: bool = False
    signalled: bool = False
    watcher: bool = False  # a `caucus watch` process, which gives way to any other receive
    displaced_watcher: bool = False  # this receive took the place of the peer's watcher
    _future: asyncio.Future[None] | None = field(default=None, repr=False)

    def signal(self) -> None:
        self.signalled = True
        fut = self._future
        if fut is not None and not fut.done():
            fut.set_result(None)

    async def wait(self, timeout: float) -> None:
        """Until signalled (returns at once if it already was) or `timeout` seconds pass."""
        if self.signalled:
            return
        loop = asyncio.get_running_loop()
        fut = self._future = loop.create_future()
        timer = loop.call_later(timeout, _expire, fut)
        try:
            await fut
        finally:
            timer.cancel()
            self._future = None


def _expire(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Crossing(Protocol):
    """What reaches the other hub processes sharing the database (the storage engine's)."""

    @property
    def shared(self) -> bool: ...

    def on_wake(self, callback: Callable[[Sequence[int]], None]) -> None: ...

    def on_signal(self, callback: Callable[[str], None]) -> None: ...

    async def signal(self, topic: str) -> None: ...


class _Alone:
    """One process: nothing crosses."""

    shared = False

    def on_wake(self, callback: Callable[[Sequence[int]], None]) -> None:
        return

    def on_signal(self, callback: Callable[[str], None]) -> None:
        return

    async def signal(self, topic: str) -> None:
        return


class Notifier:
    def __init__(self, clock: Clock | None = None) -> None:
        self._clock = clock or SystemClock()  # how long ago a watcher polled
        self._subscribers: list[Subscriber] = []
        self._waiters: dict[int, Waiter] = {}
        # peer id -> until when a claim is known to find nothing visible (the next in-flight
        # delivery's visibility deadline, or infinity). Lets a parked receive skip storage.
        self._idle_until: dict[int, float] = {}
        # peer id -> when its watcher last polled, and the peers whose watcher a receive
        # displaced between two of its polls.
        self._watching: dict[int, float] = {}
        self._displaced: dict[int, float] = {}
        # peer id -> the futures of peeks waiting for its inbox to change (they claim nothing)
        self._peekers: dict[int, set[asyncio.Future[None]]] = {}
        self.closing = False
        self._across: Crossing = _Alone()

    # --- across processes ------------------------------------------------------------------
    def cross(self, crossing: Crossing) -> None:
        """Wake-ups and signals to and from the other processes go through `crossing`."""
        self._across = crossing

    @property
    def shared(self) -> bool:
        """Whether other hub processes may share the room (a server database)."""
        return self._across.shared

    def on_remote_wake(self, callback: Callable[[Sequence[int]], None]) -> None:
        """Call `callback` with the peers that have new deliveries, from any process."""
        self._across.on_wake(callback)

    def on_signal(self, callback: Callable[[str], None]) -> None:
        """Call `callback` with each topic another process signalled."""
        self._across.on_signal(callback)

    async def signal(self, topic: str) -> None:
        await self._across.signal(topic)

    # --- events ----------------------------------------------------------------------------
    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        self._subscribers.append(fn)

        def unsubscribe() -> None:
            if fn in self._subscribers:
                self._subscribers.remove(fn)

        return unsubscribe

    @property
    def has_subscribers(self) -> bool:
        """Lets a hot path skip building an event nobody will read."""
        return bool(self._subscribers)

    def emit(self, event: Event) -> None:
        for fn in list(self._subscribers):
            try:
                fn(event)
            except Exception:  # a broken subscriber must not break the state change
                log.exception("event subscriber %r failed on %s", fn, type(event).__name__)

    # --- wake-ups --------------------------------------------------------------------------
    def listen(self, peer_id: int, *, watcher: bool = False) -> Waiter:
        """Register the caller as the one listener of `peer_id`, superseding any other.

        A watcher gives way instead: it never takes the slot from another kind of receive, and
        one that is displaced (a `listen` took over, parked or between the watcher's polls)
        finds out on its next call. The receive that displaced it is told so."""
        previous = self._waiters.get(peer_id)
        if watcher and (
            peer_id in self._displaced or (previous is not None and not previous.watcher)
        ):
            self._displaced.pop(peer_id, None)
            self._watching.pop(peer_id, None)
            return Waiter(peer_id, superseded=True, watcher=True)
        waiter = Waiter(peer_id, watcher=watcher)
        if previous is not None:
            previous.superseded = True
            previous.signal()
        if watcher:
            if len(self._watching) > PRUNE_PAST:
                self._prune()
            self._watching[peer_id] = self._clock.monotonic()
        elif (previous is not None and previous.watcher) or self._watcher_recent(peer_id):
            waiter.displaced_watcher = True
            if previous is None or not previous.watcher:  # between its polls: tell it next time
                self._displaced[peer_id] = self._clock.monotonic()
            self._watching.pop(peer_id, None)
        self._waiters[peer_id] = waiter
        return waiter

    def _watcher_recent(self, peer_id: int) -> bool:
        seen = self._watching.get(peer_id)
        return seen is not None and self._clock.monotonic() - seen < WATCHER_GAP

    def unlisten(self, waiter: Waiter) -> None:
        if self._waiters.get(waiter.peer_id) is waiter:
            del self._waiters[waiter.peer_id]
        if waiter.watcher and not waiter.superseded and waiter.peer_id in self._watching:
            self._watching[waiter.peer_id] = self._clock.monotonic()

    def forget_watcher(self, peer_id: int) -> None:
        """The watcher ended on its own (it printed a batch): nothing to displace."""
        self._watching.pop(peer_id, None)
        self._displaced.pop(peer_id, None)

    def _prune(self) -> None:
        """Forget watchers that stopped polling long ago (they exited)."""
        old = self._clock.monotonic() - 12 * WATCHER_GAP
        for book in (self._watching, self._displaced):
            for pid in [p for p, at in book.items() if at < old]:
                del book[pid]

    def is_listening(self, peer_id: int) -> bool:
        return peer_id in self._waiters

    def listening_ids(self) -> set[int]:
        return set(self._waiters)

    def peeking_ids(self) -> set[int]:
        """Peers with a peek parked until their inbox changes."""
        return set(self._peekers)

    def wake(self, peer_ids: Iterable[int]) -> None:
        """Something may be deliverable to these peers now."""
        idle = self._idle_until
        waiters = self._waiters
        peekers = self._peekers
        for pid in peer_ids:
            idle.pop(pid, None)
            waiter = waiters.get(pid)
            if waiter is not None:
                waiter.signal()
            if peekers:
                self._release(peekers.pop(pid, ()))

    def peeker(self, peer_id: int) -> asyncio.Future[None]:
        """A future done at the next wake-up of `peer_id` (or the hub's close): a peek that
        waits for the inbox to change. The caller drops it with `drop_peeker`."""
        fut = asyncio.get_running_loop().create_future()
        if self.closing:
            fut.set_result(None)
        self._peekers.setdefault(peer_id, set()).add(fut)
        return fut

    @contextlib.contextmanager
    def woken(self, peer_id: int) -> Iterator[asyncio.Future[None]]:
        """`peeker` for the length of a block: take it before the read it guards (so a change
        committed between the two still wakes the waiter), dropped however the block ends."""
        fut = self.peeker(peer_id)
        try:
            yield fut
        finally:
            self.drop_peeker(peer_id, fut)

    def drop_peeker(self, peer_id: int, fut: asyncio.Future[None]) -> None:
        waiting = self._peekers.get(peer_id)
        if waiting is not None:
            waiting.discard(fut)
            if not waiting:
                del self._peekers[peer_id]

    @staticmethod
    def _release(futures: Iterable[asyncio.Future[None]]) -> None:
        for fut in futures:
            if not fut.done():
                fut.set_result(None)

    def wake_everyone(self) -> None:
        """The rules of delivery changed (pause, resume): every receive must claim again."""
        self._idle_until.clear()
        for waiter in self._waiters.values():
            waiter.signal()

    def set_idle(self, peer_id: int, until: float | None) -> None:
        """A claim just found nothing more visible for `peer_id` until `until` (None: ever)."""
        self._idle_until[peer_id] = until if until is not None else float("inf")

    def idle_until(self, peer_id: int) -> float | None:
        return self._idle_until.get(peer_id)

    def wake_all(self) -> None:
        for waiter in self._waiters.values():
            waiter.signal()

    def close(self) -> None:
        """The hub is shutting down: every parked receive answers now."""
        self.closing = True
        self.wake_all()
        for waiting in self._peekers.values():
            self._release(waiting)
        self._peekers.clear()
