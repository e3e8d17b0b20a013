"""Typed events out to subscribers, and wake-ups for parked long-polls.

A waiter per listening peer: a send wakes exactly the recipients' waiters, so a parked receive
costs no CPU and reacts in well under a millisecond. Subscribers are called synchronously and must
be quick (queue the work if it is not).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from caucus.domain.events import Event

log = logging.getLogger(__name__)

Subscriber = Callable[[Event], None]


@dataclass(eq=False)
class Waiter:
    """One parked receive. `superseded` is set when a newer receive takes over the identity.

    A bare future and a timer handle rather than asyncio.Event plus asyncio.timeout: this is
    on the path of every message, and those cost several times more.
    """

    peer_id: int
    superseded: bool = False
    signalled: bool = False
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


class Notifier:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._waiters: dict[int, Waiter] = {}
        # peer id -> until when a claim is known to find nothing visible (the next in-flight
        # delivery's visibility deadline, or infinity). Lets a parked receive skip storage.
        self._idle_until: dict[int, float] = {}
        self.closing = False

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
    def listen(self, peer_id: int) -> Waiter:
        """Register the caller as the one listener of `peer_id`, superseding any other."""
        previous = self._waiters.get(peer_id)
        if previous is not None:
            previous.superseded = True
            previous.signal()
        waiter = Waiter(peer_id)
        self._waiters[peer_id] = waiter
        return waiter

    def unlisten(self, waiter: Waiter) -> None:
        if self._waiters.get(waiter.peer_id) is waiter:
            del self._waiters[waiter.peer_id]

    def is_listening(self, peer_id: int) -> bool:
        return peer_id in self._waiters

    def listening_ids(self) -> set[int]:
        return set(self._waiters)

    def wake(self, peer_ids: Iterable[int]) -> None:
        """Something may be deliverable to these peers now."""
        idle = self._idle_until
        waiters = self._waiters
        for pid in peer_ids:
            idle.pop(pid, None)
            waiter = waiters.get(pid)
            if waiter is not None:
                waiter.signal()

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
