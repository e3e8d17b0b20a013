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
    """One parked receive. `superseded` is set when a newer receive takes over the identity."""

    peer_id: int
    event: asyncio.Event = field(default_factory=asyncio.Event)
    superseded: bool = False


class Notifier:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._waiters: dict[int, Waiter] = {}
        self.closing = False

    # --- events ----------------------------------------------------------------------------
    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        self._subscribers.append(fn)

        def unsubscribe() -> None:
            if fn in self._subscribers:
                self._subscribers.remove(fn)

        return unsubscribe

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
            previous.event.set()
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
        for pid in peer_ids:
            waiter = self._waiters.get(pid)
            if waiter is not None:
                waiter.event.set()

    def wake_all(self) -> None:
        for waiter in self._waiters.values():
            waiter.event.set()

    def close(self) -> None:
        """The hub is shutting down: every parked receive answers now."""
        self.closing = True
        self.wake_all()
