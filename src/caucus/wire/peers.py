"""Peers on the wire: who is here, and what registering returns."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from caucus.domain.peers import Liveness, PeerView
from caucus.wire.fields import Wire, closed

if TYPE_CHECKING:
    from caucus.domain.peers import Registration


class Outcome(StrEnum):
    CREATED = "created"  # a new identity
    REAFFIRMED = "reaffirmed"  # the same live identity again
    RESUMED = "resumed"  # an identity that was away (offline or reaped) is back


class Skill(Wire):
    id: str
    name: str
    description: str | None = None
    tags: list[str] | None = None

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}


class PeerInfo(Wire):
    name: str
    state: str = closed(Liveness)
    status: str
    status_age: float | None = Field(description="seconds since the status was set")
    skills: list[Skill]
    description: str
    last_seen_age: float = Field(description="seconds since it was last heard from")
    listening: bool
    paused: bool = Field(description="the operator holds its chatter")
    uptime: float = Field(description="seconds since it first registered")

    @classmethod
    def of(cls, view: PeerView) -> PeerInfo:
        return cls.model_construct(
            name=view.name,
            state=view.state.value,
            status=view.status,
            status_age=round(view.status_age, 3) if view.status_age is not None else None,
            skills=[Skill.model_construct(**s) for s in view.skills],
            description=view.description,
            last_seen_age=round(view.last_seen_age, 3),
            listening=view.listening,
            paused=view.paused,
            uptime=round(view.uptime, 3),
        )


class PeerList(Wire):
    peers: list[PeerInfo]

    @classmethod
    def of(cls, views: list[PeerView]) -> PeerList:
        return cls.model_construct(peers=[PeerInfo.of(v) for v in views])


class Registered(Wire):
    token: str = Field(description="send it as 'Authorization: Bearer <token>'; keep it secret")
    name: str
    outcome: str = closed(Outcome)
    protocol_version: int
    protocol: str | None = Field(None, description="the protocol text, when yours is behind")
    note: str | None = None

    @classmethod
    def of(cls, reg: Registration) -> Registered:
        if reg.token is None:
            raise ValueError("an HTTP registration always carries its token")
        return cls.model_construct(
            token=reg.token,
            name=reg.peer.name,
            outcome=reg.outcome,
            protocol_version=reg.protocol_version,
            protocol=reg.protocol,
            note=reg.note,
        )


class StatusInfo(Wire):
    name: str
    status: str


class Departure(Wire):
    """What leaving or going offline answers."""

    name: str
    left: bool = Field(description="true: the identity ended; false: it is offline, resumable")
