"""The room as the operator steers it: its mode and its send budget."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from caucus.errors import InvalidRequest


class RoomMode(StrEnum):
    OPEN = "open"
    PAUSED = "paused"  # chatter is held in inboxes; operator and control traffic still flow
    STOPPED = "stopped"  # every peer was told to stop; new sends are refused


class Access(StrEnum):
    """What a route needs. Every route declares one (the authorization matrix test checks)."""

    PUBLIC = "public"  # anyone
    ROOM = "room"  # who is here: anyone who could register (no token needed unless an agent
    # key is set), and every valid token; a bad token is refused
    AGENT = "agent"  # a registered agent's token
    WATCHER = "watcher"  # a watch key (`caucus watch`): waits for one agent's messages
    VIEWER = "viewer"  # the operator or the observer
    OPERATOR = "operator"  # the operator only


class Role(StrEnum):
    OPERATOR = "operator"
    OBSERVER = "observer"  # reads everything, changes nothing


@dataclass(slots=True)
class Rate:
    capacity: float
    refill: float

    def check(self) -> Rate:
        if not 1 <= self.capacity <= 100_000:
            raise InvalidRequest("capacity is between 1 and 100000 sends", field="capacity")
        if not 0 < self.refill <= 100_000:
            raise InvalidRequest("refill is above 0 and at most 100000 per second", field="refill")
        return self


@dataclass(slots=True)
class Room:
    mode: RoomMode
    rate: Rate
