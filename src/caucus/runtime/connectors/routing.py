"""Where an answer goes: the origin of the newest message each run holds.

A connector gives each message it turns into a notice a key (the notice's source) and an
origin (where an answer to it goes). Following the agent's events, `Routes` knows for every run
the origin of the newest message added before the run began (messages added during a run
belong to the run after it), and hands it back when the run ends.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

from caucus.runtime.events import (
    Event,
    NewThreadRunCreated,
    RunEnded,
    ThreadMessageAdded,
    ThreadRunComplete,
    ThreadRunFailed,
    ThreadRunInterrupted,
)

OriginT = TypeVar("OriginT")
KEPT = 10_000  # origins remembered; the oldest were long since answered


class Routes(Generic[OriginT]):
    def __init__(self) -> None:
        self._origins: OrderedDict[str, OriginT] = OrderedDict()
        self._latest: OriginT | None = None
        self._runs: dict[str, OriginT | None] = {}

    def remember(self, key: str, origin: OriginT) -> None:
        self._origins[key] = origin
        while len(self._origins) > KEPT:
            self._origins.popitem(last=False)

    def follow(self, event: Event) -> tuple[RunEnded, OriginT | None] | None:
        """Feed an event; at a run's end, (the end, the origin its answer goes to)."""
        if isinstance(event, ThreadMessageAdded):
            source = event.message.source
            self._latest = self._origins.get(source) if source is not None else None
        elif isinstance(event, NewThreadRunCreated):
            self._runs[event.run_id] = self._latest
        elif isinstance(event, ThreadRunComplete | ThreadRunFailed | ThreadRunInterrupted):
            return event, self._runs.pop(event.run_id, None)
        return None
