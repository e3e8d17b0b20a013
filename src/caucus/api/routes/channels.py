"""Channels: join, leave, topic, list; the operator's private channels and invitations."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from caucus.domain.names import check_channel_name
from caucus.services.principals import PrincipalKind
from caucus.services.roles import Access
from caucus.web.access import OperatorDep, PeerDep, RoomDep, access
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import (
    ChannelJoinRequest,
    ChannelPeerRequest,
    ChannelPrivacyRequest,
    ChannelRequest,
    TopicRequest,
)
from caucus.wire.room import ChannelAccess, ChannelInfo, ChannelJoin, ChannelLeave, ChannelList

router = APIRouter(prefix="/channels", tags=["channels"])

_AUTH: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    422: {"model": ErrorBody, "description": "invalid channel name"},
}


@router.post(
    "/join",
    summary="Join (and create) a channel; a private one takes the operator's invitation",
    responses={
        **_AUTH,
        403: {"model": ErrorBody, "description": "private: not invited (`channel_private`)"},
        409: {"model": ErrorBody, "description": "private asked of a public one, or closed"},
    },
    openapi_extra=access(Access.AGENT),
)
async def join(body: ChannelJoinRequest, request: Request, peer: PeerDep) -> ChannelJoin:
    channel, joined = await hub_of(request).channels.join(
        peer, body.channel, private=bool(body.private)
    )
    return ChannelJoin.joining(channel, joined)


@router.post(
    "/leave",
    summary="Leave a channel",
    responses={**_AUTH, 404: {"model": ErrorBody, "description": "not a member"}},
    openapi_extra=access(Access.AGENT),
)
async def leave(body: ChannelRequest, request: Request, peer: PeerDep) -> ChannelLeave:
    await hub_of(request).channels.leave(peer, body.channel)
    return ChannelLeave(channel=check_channel_name(body.channel), left=True)


@router.post(
    "/topic",
    summary="Set a channel's topic (members only)",
    responses={
        **_AUTH,
        403: {"model": ErrorBody, "description": "not a member"},
        404: {"model": ErrorBody, "description": "no such channel"},
    },
    openapi_extra=access(Access.AGENT),
)
async def topic(body: TopicRequest, request: Request, peer: PeerDep) -> ChannelInfo:
    return ChannelInfo.of(await hub_of(request).channels.set_topic(peer, body.channel, body.topic))


@router.get(
    "",
    summary="Every channel you may see (private ones you are in), its members and topic",
    responses=_AUTH,
    openapi_extra=access(Access.ROOM),
)
async def channels(request: Request, who: RoomDep) -> ChannelList:
    service = hub_of(request).channels
    if who.kind in (PrincipalKind.OPERATOR, PrincipalKind.OBSERVER):
        return ChannelList.of(await service.all())
    return ChannelList.of(await service.visible(who.peer))


operator_router = APIRouter(prefix="/operator/channels", tags=["operator"])
_OPERATOR_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or unknown token"},
    403: {"model": ErrorBody, "description": "not the operator's token"},
    404: {"model": ErrorBody, "description": "no such channel or peer"},
    422: {"model": ErrorBody, "description": "invalid channel or peer name"},
}


@operator_router.post(
    "/{channel}/private",
    summary="Make a channel private (joined on invitation, seen by its members) or public",
    responses=_OPERATOR_ERRORS,
    openapi_extra=access(Access.OPERATOR),
)
async def set_private(
    channel: str, body: ChannelPrivacyRequest, request: Request, _: OperatorDep
) -> ChannelInfo:
    return ChannelInfo.of(await hub_of(request).channels.set_private(channel, body.private))


@operator_router.post(
    "/{channel}/invite",
    summary="Invite an agent into a private channel (it is told, and joins itself)",
    responses=_OPERATOR_ERRORS,
    openapi_extra=access(Access.OPERATOR),
)
async def invite(
    channel: str, body: ChannelPeerRequest, request: Request, _: OperatorDep
) -> ChannelAccess:
    done = await hub_of(request).channels.invite(channel, body.peer)
    return ChannelAccess(channel=check_channel_name(channel), peer=body.peer, changed=done)


@operator_router.post(
    "/{channel}/remove",
    summary="Take an agent out of a channel and withdraw its invitation",
    responses=_OPERATOR_ERRORS,
    openapi_extra=access(Access.OPERATOR),
)
async def remove(
    channel: str, body: ChannelPeerRequest, request: Request, _: OperatorDep
) -> ChannelAccess:
    done = await hub_of(request).channels.remove(channel, body.peer)
    return ChannelAccess(channel=check_channel_name(channel), peer=body.peer, changed=done)
