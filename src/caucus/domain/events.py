"""Typed events that state changes emit to the notifier.

Subscribers (long-poll wake-ups, the console feed, transcripts, the ledger) react to these;
services never push to a UI themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from caucus.domain.messages import Message


@dataclass(frozen=True, slots=True)
class Event:
    ts: float


@dataclass(frozen=True, slots=True)
class MessageRouted(Event):
    message: Message
    delivered_to: tuple[str, ...]
    recipient_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PeerJoined(Event):
    name: str
    how: str  # created | reaffirmed | replaced | revived


@dataclass(frozen=True, slots=True)
class PeerLeft(Event):
    name: str
    reason: str  # left | kicked | forgotten


@dataclass(frozen=True, slots=True)
class PeerReaped(Event):
    name: str


@dataclass(frozen=True, slots=True)
class StatusChanged(Event):
    name: str
    status: str


@dataclass(frozen=True, slots=True)
class ChannelJoined(Event):
    channel: str
    name: str


@dataclass(frozen=True, slots=True)
class ChannelLeft(Event):
    channel: str
    name: str


@dataclass(frozen=True, slots=True)
class TopicChanged(Event):
    channel: str
    topic: str
    by: str


@dataclass(frozen=True, slots=True)
class ModeChanged(Event):
    mode: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class PeerPaused(Event):
    name: str
    paused: bool


@dataclass(frozen=True, slots=True)
class ChannelClosed(Event):
    channel: str


@dataclass(frozen=True, slots=True)
class RateChanged(Event):
    capacity: float
    refill: float
