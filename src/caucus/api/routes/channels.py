"""Channels: join, leave, topic, list; the operator's private channels and invitations."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from caucus.api.verbs import Call, serve
from caucus.domain.control import Access
from caucus.domain.names import check_channel_name
from caucus.domain.peers import Peer
from caucus.services.principals import Principal, PrincipalKind
from caucus.web.access import OperatorDep, access
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
from caucus.wire.verbs import VERBS

router = APIRouter()


async def _join(c: Call[Peer, ChannelJoinRequest]) -> ChannelJoin:
    channel, joined = await c.hub.channels.join(c.who, c.rq.channel, private=bool(c.rq.private))
    return ChannelJoin.joining(channel, joined)


async def _leave(c: Call[Peer, ChannelRequest]) -> ChannelLeave:
    await c.hub.channels.leave(c.who, c.rq.channel)
    return ChannelLeave(channel=check_channel_name(c.rq.channel), left=True)


async def _topic(c: Call[Peer, TopicRequest]) -> ChannelInfo:
    return ChannelInfo.of(await c.hub.channels.set_topic(c.who, c.rq.channel, c.rq.topic))


async def _channels(c: Call[Principal, None]) -> ChannelList:
    if c.who.kind in (PrincipalKind.OPERATOR, PrincipalKind.OBSERVER):
        return ChannelList.of(await c.hub.channels.all())
    return ChannelList.of(await c.hub.channels.visible(c.who.peer))


serve(router, VERBS["join_channel"], _join)
serve(router, VERBS["leave_channel"], _leave)
serve(router, VERBS["set_topic"], _topic)
serve(router, VERBS["channels"], _channels)

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
