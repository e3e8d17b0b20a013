"""Rows of the verb table (`caucus.wire.verbs`): identity."""

from __future__ import annotations

from caucus.wire import queries as q
from caucus.wire import requests as rq
from caucus.wire.activity import Reported
from caucus.wire.messages import AckResult, Batch
from caucus.wire.peers import Departure, PeerInfo, PeerList, Registered, StatusInfo
from caucus.wire.verb import Verb
from caucus.wire.verbs.errors import AGENT, PUBLIC, ROOM, TOKEN, WATCH_KEY, WATCHER
from caucus.wire.watch import WatchKey, WatchTicket

REGISTER = Verb(
    "register",
    "POST",
    "/register",
    Registered,
    "Join the hub under a name, or resume an identity with its token",
    PUBLIC,
    "peers",
    {
        401: "the token is unknown or ended, or no agent key",
        409: "name_in_use: another peer holds the name",
        422: "invalid or reserved name",
    },
    request=rq.RegisterRequest,
    exclude_none=True,
)


OFFLINE = Verb(
    "offline",
    "POST",
    "/offline",
    Departure,
    "Say goodbye for now: shown offline at once, resumable with the token",
    AGENT,
    "peers",
    TOKEN,
)


LEAVE = Verb(
    "leave",
    "POST",
    "/leave",
    Departure,
    "Leave the hub for good: the token stops working and the name is freed",
    AGENT,
    "peers",
    TOKEN,
)


SET_STATUS = Verb(
    "set_status",
    "POST",
    "/status",
    StatusInfo,
    "Set your one-line status (a heartbeat with its own rate budget)",
    AGENT,
    "peers",
    {**TOKEN, 429: "status budget spent"},
    request=rq.StatusRequest,
)


PEERS = Verb(
    "peers",
    "GET",
    "/peers",
    PeerList,
    "Everyone here: liveness state, status, skills, last seen",
    ROOM,
    "peers",
    TOKEN,
)


PING = Verb(
    "ping",
    "GET",
    "/ping",
    PeerInfo,
    "Ask the hub how a peer is doing (the peer is not disturbed)",
    ROOM,
    "peers",
    {**TOKEN, 404: "no such peer"},
    query=q.PingQuery,
)


REPORT_TOOL_CALL = Verb(
    "report_tool_call",
    "POST",
    "/activity",
    Reported,
    "Report an MCP tool call your bridge ran (it shows in the operator's activity view)",
    AGENT,
    "activity",
    {401: "missing or unknown token", 403: "a token of the wrong kind"},
    request=rq.ToolCallReport,
)


MINT_WATCH_KEY = Verb(
    "mint_watch_key",
    "POST",
    "/watch/keys",
    WatchKey,
    "A watch key for your own messages (for a watcher on your machine)",
    AGENT,
    "watch",
    TOKEN,
)


MINT_WATCH_TICKET = Verb(
    "mint_watch_ticket",
    "POST",
    "/watch/tickets",
    WatchTicket,
    "A single-use ticket a watcher redeems for a watch key (voids your last ticket)",
    AGENT,
    "watch",
    TOKEN,
)


REDEEM_WATCH_TICKET = Verb(
    "redeem_watch_ticket",
    "POST",
    "/watch/redeem",
    WatchKey,
    "Trade a ticket for a watch key, once",
    PUBLIC,
    "watch",
    {401: "ticket_rejected: unknown, used or expired", 422: "malformed input"},
    request=rq.RedeemRequest,
)


WATCH = Verb(
    "watch",
    "GET",
    "/watch",
    Batch,
    "Wait for the watched peer's next messages (gives way to the peer's own receive)",
    WATCHER,
    "watch",
    {**WATCH_KEY, 429: "the peer holds as many waits as allowed"},
    query=q.WatchQuery,
)


WATCH_ACK = Verb(
    "watch_ack",
    "POST",
    "/watch/ack",
    AckResult,
    "Acknowledge what the watcher printed; the watcher is done",
    WATCHER,
    "watch",
    WATCH_KEY,
    request=rq.AckRequest,
)
