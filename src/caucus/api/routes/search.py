"""Search over what the caller may see, and a thread's summary (issue 34).

An agent's search reads what it may read (`domain.visibility`) and its audiences' decisions;
the operator's (and observer's) reads everything. Each is a costly read with its budget.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from caucus.domain.control import Role
from caucus.domain.peers import Peer
from caucus.domain.search import MAX_LIMIT, MAX_QUERY
from caucus.services.hub import Hub
from caucus.web.verbs import Call, serve
from caucus.wire.errors import ErrorBody
from caucus.wire.fields import parse_time
from caucus.wire.queries import SearchQuery, SummaryQuery
from caucus.wire.search import SearchResults, ThreadSummaryInfo
from caucus.wire.verbs import VERBS, oversight

router = APIRouter()

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    422: {"model": ErrorBody, "description": "no words to search for, or a bad filter"},
    429: {"model": ErrorBody, "description": "this identity's search budget is spent"},
    503: {"model": ErrorBody, "description": "the search ran past its time budget"},
}
_VIEWER_ERRORS: dict[int | str, dict[str, Any]] = {
    **_ERRORS,
    403: {"model": ErrorBody, "description": "an agent token"},
}
_THREAD_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "no such thread, or none of it is yours to read"},
}

Q = Annotated[
    str,
    Query(
        min_length=1,
        max_length=MAX_QUERY,
        description='words and "quoted phrases", every one of which a hit holds',
    ),
]
Sender = Annotated[str | None, Query(max_length=64, description="sent by this name")]
Channel = Annotated[
    str | None, Query(max_length=64, description="sent to this #channel (or all: broadcasts)")
]
Since = Annotated[str | None, Query(description="at or after: epoch seconds or ISO 8601")]
Until = Annotated[str | None, Query(description="before: epoch seconds or ISO 8601")]
Kind = Annotated[str | None, Query(description="message, announcement, task or decision")]
Thread = Annotated[str | None, Query(max_length=128, description="in this thread")]
Order = Annotated[str, Query(description="relevance (best first) or recent (newest first)")]
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description=f"1-{MAX_LIMIT}")]
ThreadId = Annotated[str, Path(min_length=1, max_length=128)]
Model = Annotated[
    bool, Query(description="also ask the hub's chair model, when it has one (default true)")
]


async def _search(
    hub: Hub,
    peer: Peer | None,
    q: str,
    sender: str | None,
    channel: str | None,
    since: str | None,
    until: str | None,
    kind: str | None,
    thread: str | None,
    order: str,
    limit: int,
) -> SearchResults:
    found = await hub.search.search(
        peer,
        q,
        sender=sender,
        channel=channel,
        since=parse_time(since, "since"),
        until=parse_time(until, "until"),
        kind=kind,
        thread=thread,
        order=order,
        limit=limit,
    )
    return SearchResults.of(found)


async def _agent_search(c: Call[Peer, SearchQuery]) -> SearchResults:
    rq = c.rq
    return await _search(
        c.hub,
        c.who,
        rq.q,
        rq.sender,
        rq.channel,
        rq.since,
        rq.until,
        rq.kind,
        rq.thread,
        rq.order,
        rq.limit,
    )


serve(router, VERBS["search"], _agent_search)


async def _summary(c: Call[Peer, SummaryQuery]) -> ThreadSummaryInfo:
    found = await c.hub.search.thread_summary(c.who, c.path["thread"], model=c.rq.model)
    return ThreadSummaryInfo.of(found)


serve(router, VERBS["thread_summary"], _summary)


async def _operator_search(c: Call[Role, SearchQuery]) -> SearchResults:
    rq = c.rq
    return await _search(
        c.hub,
        None,
        rq.q,
        rq.sender,
        rq.channel,
        rq.since,
        rq.until,
        rq.kind,
        rq.thread,
        rq.order,
        rq.limit,
    )


async def _operator_summary(c: Call[Role, SummaryQuery]) -> ThreadSummaryInfo:
    found = await c.hub.search.thread_summary(None, c.path["thread"], model=c.rq.model)
    return ThreadSummaryInfo.of(found)


serve(router, oversight.OPERATOR_SEARCH, _operator_search)
serve(router, oversight.OPERATOR_THREAD_SUMMARY, _operator_summary)
