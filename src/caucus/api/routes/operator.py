"""The operator API: room modes, speaking, per-peer control, channels, the send budget."""

from __future__ import annotations

from fastapi import APIRouter

from caucus.domain.control import Role
from caucus.web.verbs import Call, serve
from caucus.wire.fields import parse_time
from caucus.wire.messages import SendResult
from caucus.wire.peers import PeerInfo
from caucus.wire.requests import (
    AnnounceRequest,
    OperatorSayRequest,
    PurgeRequest,
    RateRequest,
    ReasonRequest,
)
from caucus.wire.retention import PurgeResult
from caucus.wire.room import ClosedChannel, ReopenedChannel, RoomState
from caucus.wire.verbs import control as v

router = APIRouter()

Reason = Call[Role, ReasonRequest | None]


def _why(c: Reason) -> str | None:
    return c.rq.reason if c.rq else None


async def _state(c: Call[Role, None]) -> RoomState:
    return RoomState.of(c.hub.control.state())


async def _pause(c: Call[Role, None]) -> RoomState:
    return RoomState.of(await c.hub.control.pause())


async def _resume(c: Call[Role, None]) -> RoomState:
    return RoomState.of(await c.hub.control.resume())


async def _stop(c: Reason) -> RoomState:
    return RoomState.of(await c.hub.control.stop(_why(c)))


async def _reset(c: Reason) -> RoomState:
    return RoomState.of(await c.hub.control.reset(_why(c)))


async def _say(c: Call[Role, OperatorSayRequest]) -> SendResult:
    rq = c.rq
    return SendResult.of(await c.hub.control.say(rq.to, rq.content, thread=rq.thread, meta=rq.meta))


async def _announce(c: Call[Role, AnnounceRequest]) -> SendResult:
    return SendResult.of(await c.hub.control.announce(c.rq.content, subject=c.rq.subject))


async def _rate(c: Call[Role, RateRequest]) -> RoomState:
    return RoomState.of(await c.hub.control.set_rate(c.rq.capacity, c.rq.refill))


async def _kick(c: Call[Role, None]) -> PeerInfo:
    return PeerInfo.of(await c.hub.control.kick(c.path["name"]))


async def _pause_peer(c: Call[Role, None]) -> PeerInfo:
    return PeerInfo.of(await c.hub.control.pause_peer(c.path["name"], True))


async def _resume_peer(c: Call[Role, None]) -> PeerInfo:
    return PeerInfo.of(await c.hub.control.pause_peer(c.path["name"], False))


async def _interrupt(c: Reason) -> SendResult:
    return SendResult.of(await c.hub.control.interrupt(c.path["name"], _why(c)))


async def _reset_peer(c: Reason) -> SendResult:
    return SendResult.of(await c.hub.control.reset_peer(c.path["name"], _why(c)))


async def _stop_peer(c: Reason) -> SendResult:
    return SendResult.of(await c.hub.control.stop_peer(c.path["name"], _why(c)))


async def _ping(c: Call[Role, None]) -> PeerInfo:
    return PeerInfo.of(await c.hub.control.ping(c.path["name"]))


async def _close(c: Call[Role, None]) -> ClosedChannel:
    channel = c.path["channel"]
    members = await c.hub.control.close_channel(channel)
    return ClosedChannel(channel="#" + channel.lstrip("#"), members=members)


async def _reopen(c: Call[Role, None]) -> ReopenedChannel:
    channel = c.path["channel"]
    reopened = await c.hub.control.reopen_channel(channel)
    return ReopenedChannel(channel="#" + channel.lstrip("#"), reopened=reopened)


async def _purge(c: Call[Role, PurgeRequest]) -> PurgeResult:
    before = c.rq.before
    cut = parse_time(str(before), "before") if before is not None else None
    return PurgeResult.of(await c.hub.retention.purge(cut, dry_run=c.rq.dry_run))


for _verb, _glue in (
    (v.ROOM_STATE, _state),
    (v.PAUSE_ROOM, _pause),
    (v.RESUME_ROOM, _resume),
    (v.STOP_ROOM, _stop),
    (v.RESET_ROOM, _reset),
    (v.OPERATOR_SAY, _say),
    (v.OPERATOR_ANNOUNCE, _announce),
    (v.SET_RATE, _rate),
    (v.KICK, _kick),
    (v.PAUSE_PEER, _pause_peer),
    (v.RESUME_PEER, _resume_peer),
    (v.INTERRUPT, _interrupt),
    (v.RESET_PEER, _reset_peer),
    (v.STOP_PEER, _stop_peer),
    (v.OPERATOR_PING, _ping),
    (v.CLOSE_CHANNEL, _close),
    (v.REOPEN_CHANNEL, _reopen),
    (v.PURGE, _purge),
):
    serve(router, _verb, _glue)
