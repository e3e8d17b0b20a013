"""Rows of the verb table (`caucus.wire.verbs`): the operator's control of the room (its mode,
its peers and channels, the send budget, retention)."""

from __future__ import annotations

from caucus.domain.control import Access
from caucus.wire import requests as rq
from caucus.wire.messages import SendResult
from caucus.wire.peers import PeerInfo
from caucus.wire.reservations import ReservationPolicyInfo
from caucus.wire.retention import PurgeResult
from caucus.wire.room import (
    ChannelAccess,
    ChannelInfo,
    ClosedChannel,
    FloorInfo,
    ReopenedChannel,
    RoomState,
)
from caucus.wire.verb import Verb
from caucus.wire.verbs.errors import FLOOR_ERRORS

PURGE_WHAT = (
    "Acknowledged messages, ended tasks, settled offers, canceled forms and answered ones "
    "already on the decision ledger go; nothing unacknowledged or unended, and never the "
    "ledger. `caucus db purge` does the same from the command line."
)


# The errors several of these verbs document alike.
OPERATOR = {401: "missing or unknown token", 403: "an agent or observer token"}
ABOUT_PEER = {**OPERATOR, 404: "no such peer"}
ABOUT_CHANNEL = {**OPERATOR, 404: "no such channel"}
CHANNEL_ACCESS = {
    401: "missing or unknown token",
    403: "not the operator's token",
    404: "no such channel or peer",
    422: "invalid channel or peer name",
}


CLEAR_FLOOR = Verb(
    "clear_floor",
    "POST",
    "/operator/floors/{scope}/clear",
    FloorInfo,
    "The operator frees a scope's floor ('all' or a channel name without '#')",
    Access.OPERATOR,
    "floor",
    FLOOR_ERRORS,
)


ROOM_STATE = Verb(
    "room_state",
    "GET",
    "/operator/state",
    RoomState,
    "The room's mode and send budget",
    Access.VIEWER,
    "operator",
    OPERATOR,
)


PAUSE_ROOM = Verb(
    "pause_room",
    "POST",
    "/operator/pause",
    RoomState,
    "Hold chatter in inboxes; operator and control traffic still flow",
    Access.OPERATOR,
    "operator",
    OPERATOR,
)


RESUME_ROOM = Verb(
    "resume_room",
    "POST",
    "/operator/resume",
    RoomState,
    "Open the room again: held chatter is delivered in seq order",
    Access.OPERATOR,
    "operator",
    OPERATOR,
)


STOP_ROOM = Verb(
    "stop_room",
    "POST",
    "/operator/stop",
    RoomState,
    "Tell every peer to stop; refuse new sends (409 room_stopped) until resumed",
    Access.OPERATOR,
    "operator",
    OPERATOR,
    request=rq.ReasonRequest,
    optional_body=True,
)


RESET_ROOM = Verb(
    "reset_room",
    "POST",
    "/operator/reset",
    RoomState,
    "Open the room, lift peer pauses, restore the send budget, tell every peer to reset",
    Access.OPERATOR,
    "operator",
    OPERATOR,
    request=rq.ReasonRequest,
    optional_body=True,
)


OPERATOR_SAY = Verb(
    "operator_say",
    "POST",
    "/operator/say",
    SendResult,
    "Speak as 'operator' to a peer, 'all' or a #channel (pierces a pause)",
    Access.OPERATOR,
    "operator",
    {
        401: "missing or unknown token",
        403: "an agent or observer token",
        404: "no such peer or channel",
    },
    request=rq.OperatorSayRequest,
)


OPERATOR_ANNOUNCE = Verb(
    "operator_announce",
    "POST",
    "/operator/announce",
    SendResult,
    "Operator news to every peer",
    Access.OPERATOR,
    "operator",
    OPERATOR,
    request=rq.AnnounceRequest,
)


SET_RATE = Verb(
    "set_rate",
    "POST",
    "/operator/rate",
    RoomState,
    "Set the room-wide send budget every agent gets",
    Access.OPERATOR,
    "operator",
    OPERATOR,
    request=rq.RateRequest,
)


KICK = Verb(
    "kick",
    "POST",
    "/operator/peers/{name}/kick",
    PeerInfo,
    "Remove a peer for good: its token stops working",
    Access.OPERATOR,
    "operator",
    ABOUT_PEER,
)


PAUSE_PEER = Verb(
    "pause_peer",
    "POST",
    "/operator/peers/{name}/pause",
    PeerInfo,
    "Hold chatter for one peer (it keeps polling, is not reaped, gets control traffic)",
    Access.OPERATOR,
    "operator",
    ABOUT_PEER,
)


RESUME_PEER = Verb(
    "resume_peer",
    "POST",
    "/operator/peers/{name}/resume",
    PeerInfo,
    "Release one peer's held chatter",
    Access.OPERATOR,
    "operator",
    ABOUT_PEER,
)


INTERRUPT = Verb(
    "interrupt",
    "POST",
    "/operator/peers/{name}/interrupt",
    SendResult,
    "Tell a peer to stop what it is doing (priority lane; not replayed on reconnect)",
    Access.OPERATOR,
    "operator",
    ABOUT_PEER,
    request=rq.ReasonRequest,
    optional_body=True,
)


RESET_PEER = Verb(
    "reset_peer",
    "POST",
    "/operator/peers/{name}/reset",
    SendResult,
    "Tell a peer to start over (priority lane; not replayed on reconnect)",
    Access.OPERATOR,
    "operator",
    ABOUT_PEER,
    request=rq.ReasonRequest,
    optional_body=True,
)


STOP_PEER = Verb(
    "stop_peer",
    "POST",
    "/operator/peers/{name}/stop",
    SendResult,
    "Tell one peer to finish and stop (a native agent exits); the room stays open",
    Access.OPERATOR,
    "operator",
    ABOUT_PEER,
    request=rq.ReasonRequest,
    optional_body=True,
)


OPERATOR_PING = Verb(
    "operator_ping",
    "GET",
    "/operator/peers/{name}/ping",
    PeerInfo,
    "The hub's view of one peer (the peer is not disturbed)",
    Access.VIEWER,
    "operator",
    ABOUT_PEER,
)


CLOSE_CHANNEL = Verb(
    "close_channel",
    "POST",
    "/operator/channels/{channel}/close",
    ClosedChannel,
    "Close a channel: members are told and removed; joins and sends are refused",
    Access.OPERATOR,
    "operator",
    ABOUT_CHANNEL,
)


REOPEN_CHANNEL = Verb(
    "reopen_channel",
    "POST",
    "/operator/channels/{channel}/reopen",
    ReopenedChannel,
    "Open a closed channel again: joins and sends are taken; its floor starts free",
    Access.OPERATOR,
    "operator",
    ABOUT_CHANNEL,
)


PURGE = Verb(
    "purge",
    "POST",
    "/operator/purge",
    PurgeResult,
    "Drop finished items older than a date now, then compact the database",
    Access.OPERATOR,
    "operator",
    OPERATOR,
    request=rq.PurgeRequest,
    description=PURGE_WHAT,
)


SET_RESERVATION_POLICY = Verb(
    "set_reservation_policy",
    "POST",
    "/operator/reservations/policy",
    ReservationPolicyInfo,
    "Whether a conflicting reservation is granted and reported (advisory) or refused "
    "(enforce), for every hub process, from the next request on",
    Access.OPERATOR,
    "operator",
    {401: "missing, unknown or ended token", 403: "not the operator", 422: "not a policy"},
    request=rq.ReservationPolicyRequest,
)


SET_CHANNEL_PRIVATE = Verb(
    "set_channel_private",
    "POST",
    "/operator/channels/{channel}/private",
    ChannelInfo,
    "Make a channel private (joined on invitation, seen by its members) or public",
    Access.OPERATOR,
    "operator",
    CHANNEL_ACCESS,
    request=rq.ChannelPrivacyRequest,
)


INVITE = Verb(
    "invite",
    "POST",
    "/operator/channels/{channel}/invite",
    ChannelAccess,
    "Invite an agent into a private channel (it is told, and joins itself)",
    Access.OPERATOR,
    "operator",
    CHANNEL_ACCESS,
    request=rq.ChannelPeerRequest,
)


REMOVE_FROM_CHANNEL = Verb(
    "remove_from_channel",
    "POST",
    "/operator/channels/{channel}/remove",
    ChannelAccess,
    "Take an agent out of a channel and withdraw its invitation",
    Access.OPERATOR,
    "operator",
    CHANNEL_ACCESS,
    request=rq.ChannelPeerRequest,
)
