"""Channels: join, leave, topic, list."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from caucus.domain.names import check_channel_name
from caucus.services.roles import Access
from caucus.web.access import PeerDep, RoomDep, access
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import ChannelRequest, TopicRequest
from caucus.wire.room import ChannelInfo, ChannelJoin, ChannelLeave, ChannelList

router = APIRouter(prefix="/channels", tags=["channels"])

_AUTH: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    422: {"model": ErrorBody, "description": "invalid channel name"},
}


@router.post(
    "/join",
    summary="Join (and create) a channel",
    responses=_AUTH,
    openapi_extra=access(Access.AGENT),
)
async def join(body: ChannelRequest, request: Request, peer: PeerDep) -> ChannelJoin:
    channel, joined = await hub_of(request).channels.join(peer, body.channel)
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
    summary="Every channel, its members and topic",
    responses=_AUTH,
    openapi_extra=access(Access.ROOM),
)
async def channels(request: Request, _: RoomDep) -> ChannelList:
    return ChannelList.of(await hub_of(request).channels.all())
