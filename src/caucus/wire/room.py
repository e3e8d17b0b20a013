"""The room on the wire: channels, floors, the operator's room state, the hub's own facts."""

from __future__ import annotations

from typing import Protocol

from pydantic import Field

from caucus.domain.channels import MAX_TOPIC, Channel
from caucus.domain.control import Role, Room, RoomMode
from caucus.domain.floors import Floor
from caucus.domain.peers import MAX_STATUS
from caucus.domain.tasks import MAX_SUBJECT
from caucus.wire.fields import Wire, closed


class ChannelInfo(Wire):
    name: str
    topic: str
    topic_by: str | None
    members: list[str]
    created_at: float
    closed: bool = Field(description="the operator closed it: history stays, sends are refused")
    private: bool = Field(
        False, description="joined on the operator's invitation; only its members see it"
    )

    @classmethod
    def of(cls, c: Channel) -> ChannelInfo:
        return cls.model_construct(
            name=c.name,
            topic=c.topic,
            topic_by=c.topic_by,
            members=list(c.members),
            created_at=c.created_at,
            closed=c.closed_at is not None,
            private=c.private,
        )


class ChannelJoin(ChannelInfo):
    joined: bool = Field(description="false if you were already a member")

    @classmethod
    def joining(cls, c: Channel, joined: bool) -> ChannelJoin:
        return cls.model_construct(
            name=c.name,
            topic=c.topic,
            topic_by=c.topic_by,
            members=list(c.members),
            created_at=c.created_at,
            closed=c.closed_at is not None,
            private=c.private,
            joined=joined,
        )


class ChannelLeave(Wire):
    channel: str
    left: bool


class ChannelAccess(Wire):
    channel: str
    peer: str
    changed: bool = Field(description="false: it was so already")


class ChannelList(Wire):
    channels: list[ChannelInfo]

    @classmethod
    def of(cls, channels: list[Channel]) -> ChannelList:
        return cls.model_construct(channels=[ChannelInfo.of(c) for c in channels])


class ClosedChannel(Wire):
    channel: str
    members: list[str] = Field(description="who was in it")


class ReopenedChannel(Wire):
    channel: str
    reopened: bool = Field(description="false: it was open already")


class FloorInfo(Wire):
    scope: str = Field(description="'all' or '#channel'")
    holder: str | None
    since: float | None
    reason: str | None
    hands: list[str] = Field(description="raised hands, first come first served")

    @classmethod
    def of(cls, floor: Floor) -> FloorInfo:
        return cls.model_construct(
            scope=floor.scope,
            holder=floor.holder,
            since=floor.since,
            reason=floor.reason,
            hands=list(floor.hands),
        )


class FloorList(Wire):
    floors: list[FloorInfo]

    @classmethod
    def of(cls, floors: list[Floor]) -> FloorList:
        return cls.model_construct(floors=[FloorInfo.of(f) for f in floors])


class RateInfo(Wire):
    capacity: float = Field(description="sends an agent may make at once")
    refill: float = Field(description="sends per second added back to each agent's budget")


class RoomState(Wire):
    mode: str = closed(RoomMode)
    rate: RateInfo

    @classmethod
    def of(cls, room: Room) -> RoomState:
        rate = RateInfo.model_construct(capacity=room.rate.capacity, refill=room.rate.refill)
        return cls.model_construct(mode=room.mode.value, rate=rate)


class ProtocolText(Wire):
    version: int
    text: str
    sections: list[str]
    section: str | None = None


class Health(Wire):
    ok: bool
    version: str
    uptime: float


class VersionInfo(Wire):
    """What a client needs to know it speaks to a hub it understands."""

    name: str = Field(description='always "caucus"')
    version: str = Field(description="the hub's release")
    protocol: int = Field(description="the version of the operating protocol it serves")


class SessionInfo(Wire):
    role: str = closed(Role)
    version: str


class LimitSettings(Protocol):
    """The settings `Limits` reads (the hub's `Settings`; read, never imported)."""

    max_content_chars: int
    max_body_bytes: int
    receive_timeout_max: float
    receive_batch_max: int
    announce_payload_bytes: int
    announce_subject_chars: int
    announce_interval: float
    announce_hourly: int
    open_offers_max: int
    pending_forms_max: int
    send_rate_capacity: float
    send_rate_refill: float


class Limits(Wire):
    """The limits an agent meets, as this hub is configured."""

    content_chars: int = Field(description="a message's content")
    body_bytes: int = Field(description="a request body")
    listen_seconds: float = Field(description="the longest long-poll")
    batch_messages: int = Field(description="messages per receive, at most")
    status_chars: int
    topic_chars: int
    task_subject_chars: int
    announce_bytes: int = Field(description="an announcement's or offer's payload")
    announce_subject_chars: int
    announce_interval: float = Field(description="seconds between two of one sender's")
    announce_hourly: int = Field(description="one sender's, per hour")
    open_offers: int = Field(description="one poster's open offers")
    pending_forms: int = Field(description="one asker's forms waiting for the operator")
    send_capacity: float = Field(description="sends at once, before the budget applies")
    send_refill: float = Field(description="sends per second added back")

    @classmethod
    def of(cls, settings: LimitSettings, room: Room | None = None) -> Limits:
        rate = room.rate if room is not None else None
        return cls.model_construct(
            content_chars=settings.max_content_chars,
            body_bytes=settings.max_body_bytes,
            listen_seconds=settings.receive_timeout_max,
            batch_messages=settings.receive_batch_max,
            status_chars=MAX_STATUS,
            topic_chars=MAX_TOPIC,
            task_subject_chars=MAX_SUBJECT,
            announce_bytes=settings.announce_payload_bytes,
            announce_subject_chars=settings.announce_subject_chars,
            announce_interval=settings.announce_interval,
            announce_hourly=settings.announce_hourly,
            open_offers=settings.open_offers_max,
            pending_forms=settings.pending_forms_max,
            send_capacity=rate.capacity if rate else settings.send_rate_capacity,
            send_refill=rate.refill if rate else settings.send_rate_refill,
        )
