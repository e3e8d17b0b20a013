"""The operator API: room modes, speaking, per-peer control, channels, the send budget."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from caucus.domain.control import Access
from caucus.web.access import OperatorDep, ViewerDep, access
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
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

router = APIRouter(prefix="/operator", tags=["operator"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or unknown token"},
    403: {"model": ErrorBody, "description": "an agent or observer token"},
}
_OPERATOR = access(Access.OPERATOR)
_VIEWER = access(Access.VIEWER)
_PEER_ERRORS = {**_ERRORS, 404: {"model": ErrorBody, "description": "no such peer"}}


@router.get(
    "/state",
    summary="The room's mode and send budget",
    responses=_ERRORS,
    openapi_extra=_VIEWER,
)
async def state(request: Request, _: ViewerDep) -> RoomState:
    return RoomState.of(hub_of(request).control.state())


@router.post(
    "/pause",
    summary="Hold chatter in inboxes; operator and control traffic still flow",
    responses=_ERRORS,
    openapi_extra=_OPERATOR,
)
async def pause(request: Request, _: OperatorDep) -> RoomState:
    return RoomState.of(await hub_of(request).control.pause())


@router.post(
    "/resume",
    summary="Open the room again: held chatter is delivered in seq order",
    responses=_ERRORS,
    openapi_extra=_OPERATOR,
)
async def resume(request: Request, _: OperatorDep) -> RoomState:
    return RoomState.of(await hub_of(request).control.resume())


@router.post(
    "/stop",
    summary="Tell every peer to stop; refuse new sends (409 room_stopped) until resumed",
    responses=_ERRORS,
    openapi_extra=_OPERATOR,
)
async def stop(request: Request, _: OperatorDep, body: ReasonRequest | None = None) -> RoomState:
    return RoomState.of(await hub_of(request).control.stop(body.reason if body else None))


@router.post(
    "/reset",
    summary="Open the room, lift peer pauses, restore the send budget, tell every peer to reset",
    responses=_ERRORS,
    openapi_extra=_OPERATOR,
)
async def reset(request: Request, _: OperatorDep, body: ReasonRequest | None = None) -> RoomState:
    return RoomState.of(await hub_of(request).control.reset(body.reason if body else None))


@router.post(
    "/say",
    summary="Speak as 'operator' to a peer, 'all' or a #channel (pierces a pause)",
    responses={**_ERRORS, 404: {"model": ErrorBody, "description": "no such peer or channel"}},
    openapi_extra=_OPERATOR,
)
async def say(body: OperatorSayRequest, request: Request, _: OperatorDep) -> SendResult:
    receipt = await hub_of(request).control.say(
        body.to, body.content, thread=body.thread, meta=body.meta
    )
    return SendResult.of(receipt)


@router.post(
    "/announce",
    summary="Operator news to every peer",
    responses=_ERRORS,
    openapi_extra=_OPERATOR,
)
async def announce(body: AnnounceRequest, request: Request, _: OperatorDep) -> SendResult:
    receipt = await hub_of(request).control.announce(body.content, subject=body.subject)
    return SendResult.of(receipt)


@router.post(
    "/rate",
    summary="Set the room-wide send budget every agent gets",
    responses=_ERRORS,
    openapi_extra=_OPERATOR,
)
async def rate(body: RateRequest, request: Request, _: OperatorDep) -> RoomState:
    return RoomState.of(await hub_of(request).control.set_rate(body.capacity, body.refill))


@router.post(
    "/peers/{name}/kick",
    summary="Remove a peer for good: its token stops working",
    responses=_PEER_ERRORS,
    openapi_extra=_OPERATOR,
)
async def kick(name: str, request: Request, _: OperatorDep) -> PeerInfo:
    return PeerInfo.of(await hub_of(request).control.kick(name))


@router.post(
    "/peers/{name}/pause",
    summary="Hold chatter for one peer (it keeps polling, is not reaped, gets control traffic)",
    responses=_PEER_ERRORS,
    openapi_extra=_OPERATOR,
)
async def pause_peer(name: str, request: Request, _: OperatorDep) -> PeerInfo:
    return PeerInfo.of(await hub_of(request).control.pause_peer(name, True))


@router.post(
    "/peers/{name}/resume",
    summary="Release one peer's held chatter",
    responses=_PEER_ERRORS,
    openapi_extra=_OPERATOR,
)
async def resume_peer(name: str, request: Request, _: OperatorDep) -> PeerInfo:
    return PeerInfo.of(await hub_of(request).control.pause_peer(name, False))


@router.post(
    "/peers/{name}/interrupt",
    summary="Tell a peer to stop what it is doing (priority lane; not replayed on reconnect)",
    responses=_PEER_ERRORS,
    openapi_extra=_OPERATOR,
)
async def interrupt(
    name: str, request: Request, _: OperatorDep, body: ReasonRequest | None = None
) -> SendResult:
    receipt = await hub_of(request).control.interrupt(name, body.reason if body else None)
    return SendResult.of(receipt)


@router.post(
    "/peers/{name}/reset",
    summary="Tell a peer to start over (priority lane; not replayed on reconnect)",
    responses=_PEER_ERRORS,
    openapi_extra=_OPERATOR,
)
async def reset_peer(
    name: str, request: Request, _: OperatorDep, body: ReasonRequest | None = None
) -> SendResult:
    receipt = await hub_of(request).control.reset_peer(name, body.reason if body else None)
    return SendResult.of(receipt)


@router.post(
    "/peers/{name}/stop",
    summary="Tell one peer to finish and stop (a native agent exits); the room stays open",
    responses=_PEER_ERRORS,
    openapi_extra=_OPERATOR,
)
async def stop_peer(
    name: str, request: Request, _: OperatorDep, body: ReasonRequest | None = None
) -> SendResult:
    receipt = await hub_of(request).control.stop_peer(name, body.reason if body else None)
    return SendResult.of(receipt)


@router.get(
    "/peers/{name}/ping",
    summary="The hub's view of one peer (the peer is not disturbed)",
    responses=_PEER_ERRORS,
    openapi_extra=_VIEWER,
)
async def ping(name: str, request: Request, _: ViewerDep) -> PeerInfo:
    return PeerInfo.of(await hub_of(request).control.ping(name))


@router.post(
    "/channels/{channel}/close",
    summary="Close a channel: members are told and removed; joins and sends are refused",
    responses={**_ERRORS, 404: {"model": ErrorBody, "description": "no such channel"}},
    openapi_extra=_OPERATOR,
)
async def close_channel(channel: str, request: Request, _: OperatorDep) -> ClosedChannel:
    members = await hub_of(request).control.close_channel(channel)
    return ClosedChannel(channel="#" + channel.lstrip("#"), members=members)


@router.post(
    "/channels/{channel}/reopen",
    summary="Open a closed channel again: joins and sends are taken; its floor starts free",
    responses={**_ERRORS, 404: {"model": ErrorBody, "description": "no such channel"}},
    openapi_extra=_OPERATOR,
)
async def reopen_channel(channel: str, request: Request, _: OperatorDep) -> ReopenedChannel:
    reopened = await hub_of(request).control.reopen_channel(channel)
    return ReopenedChannel(channel="#" + channel.lstrip("#"), reopened=reopened)


@router.post(
    "/purge",
    summary="Drop finished items older than a date now, then compact the database",
    description="Acknowledged messages, ended tasks, settled offers, canceled forms and "
    "answered ones already on the decision ledger go; nothing unacknowledged or unended, and "
    "never the ledger. `caucus db purge` does the same from the command line.",
    responses=_ERRORS,
    openapi_extra=_OPERATOR,
)
async def purge(body: PurgeRequest, request: Request, _: OperatorDep) -> PurgeResult:
    before = body.before
    cut = parse_time(str(before), "before") if before is not None else None
    report = await hub_of(request).retention.purge(cut, dry_run=body.dry_run)
    return PurgeResult.of(report)
