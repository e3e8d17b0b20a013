"""What the operator's console reads: the feed's snapshot and health ticks."""

from __future__ import annotations

from pydantic import Field

from caucus.domain.peers import PeerView
from caucus.wire.fields import Wire
from caucus.wire.forms import FormInfo
from caucus.wire.messages import RoutedMessage
from caucus.wire.peers import PeerInfo
from caucus.wire.room import ChannelInfo, FloorInfo, RoomState


class ConsolePeer(PeerInfo):
    """A peer as the console's roster shows it: with how many messages it sent."""

    messages: int = Field(description="messages it sent, of every kind (tasks, results, …)")

    @classmethod
    def counted(cls, view: PeerView, messages: int) -> ConsolePeer:
        return cls.model_construct(**dict(PeerInfo.of(view)), messages=messages)


class FeedHealth(Wire):
    uptime: float
    peers: int
    listening: int
    messages_per_minute: int
    queue_depth: int
    rss_bytes: int


class HealthSample(Wire):
    """One of the hub's own health samples, kept so a console opened late sees the past."""

    age: float = Field(description="seconds before the snapshot it was taken")
    messages_per_minute: int
    queue_depth: int
    rss_bytes: int


class Snapshot(RoomState):
    """What the live feed starts with."""

    peers: list[ConsolePeer]
    channels: list[ChannelInfo]
    messages: list[RoutedMessage] = Field(description="the most recent, oldest first")
    floors: list[FloorInfo]
    forms: list[FormInfo] = Field(description="pending forms")
    health: FeedHealth
    health_history: list[HealthSample] = Field(
        default_factory=list,
        description="the hub's samples of the last hour, one every 10 s at most, oldest first",
    )


class SnapshotAt(Snapshot):
    event_id: str = Field(description="resume the live feed after it with Last-Event-ID")
