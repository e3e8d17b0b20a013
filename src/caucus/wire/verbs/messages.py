"""Rows of the verb table (`caucus.wire.verbs`): messages."""

from __future__ import annotations

from caucus.wire import queries as q
from caucus.wire import requests as rq
from caucus.wire.messages import AckResult, Batch, PeekResult, SendResult
from caucus.wire.search import SearchResults, ThreadSummaryInfo
from caucus.wire.verb import Verb
from caucus.wire.verbs.errors import AGENT, MALFORMED, SEARCH_ERRORS, WAITS

SEND = Verb(
    "send",
    "POST",
    "/send",
    SendResult,
    "Send a message to a peer, 'all', or a #channel",
    AGENT,
    "messages",
    {
        **MALFORMED,
        403: "a private channel you are not a member of",
        404: "unknown recipient or reply_to",
        413: "body or content too large",
        423: "floor_held: another peer holds that floor",
        429: "send budget spent; see Retry-After",
    },
    request=rq.SendRequest,
    hot=True,
)


RECEIVE = Verb(
    "receive",
    "GET",
    "/receive",
    Batch,
    "Long-poll for pending messages (and acknowledge the previous batch)",
    AGENT,
    "messages",
    WAITS,
    query=q.ReceiveQuery,
    hot=True,
)


ACK = Verb(
    "ack",
    "POST",
    "/ack",
    AckResult,
    "Acknowledge delivered messages by seq, or a batch through a seq",
    AGENT,
    "messages",
    MALFORMED,
    request=rq.AckRequest,
)


PEEK = Verb(
    "peek",
    "GET",
    "/peek",
    PeekResult,
    "How many messages wait, and a preview of the "
    "latest, without consuming any (optionally waiting for a newer one)",
    AGENT,
    "messages",
    WAITS,
    query=q.PeekQuery,
)


ANNOUNCE = Verb(
    "announce",
    "POST",
    "/announce",
    SendResult,
    "Hub-wide news from you to every peer (capped; newcomers catch up for 24 h)",
    AGENT,
    "messages",
    {**MALFORMED, 413: "cap_payload_size: over 4 KB", 429: "cap_interval or cap_hourly"},
    request=rq.AgentAnnounceRequest,
)


SEARCH = Verb(
    "search",
    "GET",
    "/search",
    SearchResults,
    "Full-text search over your directs, your channels, broadcasts and decisions",
    AGENT,
    "search",
    SEARCH_ERRORS,
    query=q.SearchQuery,
)


THREAD_SUMMARY = Verb(
    "thread_summary",
    "GET",
    "/threads/{thread}/summary",
    ThreadSummaryInfo,
    "A thread's summary from the messages of it you may read",
    AGENT,
    "search",
    {**SEARCH_ERRORS, 404: "no such thread, or none of it is yours to read"},
    query=q.SummaryQuery,
)
