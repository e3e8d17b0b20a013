"""Channels: join, leave, topic, list; the operator's private channels and invitations."""

from __future__ import annotations

from fastapi import APIRouter

from caucus.domain.control import Role
from caucus.domain.names import check_channel_name
from caucus.domain.peers import Peer
from caucus.services.principals import Principal, PrincipalKind
from caucus.web.verbs import Call, serve
from caucus.wire.requests import (
    ChannelJoinRequest,
    ChannelPeerRequest,
    ChannelPrivacyRequest,
    ChannelRequest,
    TopicRequest,
)
from caucus.wire.room import ChannelAccess, ChannelInfo, ChannelJoin, ChannelLeave, ChannelList
from caucus.wire.verbs import VERBS, control

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


async def _private(c: Call[Role, ChannelPrivacyRequest]) -> ChannelInfo:
    return ChannelInfo.of(await c.hub.channels.set_private(c.path["channel"], c.rq.private))


async def _invite(c: Call[Role, ChannelPeerRequest]) -> ChannelAccess:
    channel = c.path["channel"]
    done = await c.hub.channels.invite(channel, c.rq.peer)
    return ChannelAccess(channel=check_channel_name(channel), peer=c.rq.peer, changed=done)


async def _remove(c: Call[Role, ChannelPeerRequest]) -> ChannelAccess:
    channel = c.path["channel"]
    done = await c.hub.channels.remove(channel, c.rq.peer)
    return ChannelAccess(channel=check_channel_name(channel), peer=c.rq.peer, changed=done)


serve(router, control.SET_CHANNEL_PRIVATE, _private)
serve(router, control.INVITE, _invite)
serve(router, control.REMOVE_FROM_CHANNEL, _remove)
