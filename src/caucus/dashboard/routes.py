"""The operator's read side over HTTP: the live event stream, a snapshot, and transcript export."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query, Request
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.responses import Response, StreamingResponse

from caucus.dashboard.export import EXPORT_TYPES, PAGE, Pages, export_chunks
from caucus.dashboard.feed import FeedEvent, feed_of
from caucus.domain.control import Access, Role
from caucus.domain.messages import Message
from caucus.errors import InvalidRequest
from caucus.services.holds import HoldKind
from caucus.services.hub import Hub
from caucus.web.access import PeerDep, ViewerDep, access
from caucus.web.context import hub_of
from caucus.web.held import Held
from caucus.web.verbs import Call, serve
from caucus.wire.console import SnapshotAt
from caucus.wire.errors import ErrorBody
from caucus.wire.fields import parse_time
from caucus.wire.verbs import oversight

router = APIRouter()

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or unknown token"},
    403: {"model": ErrorBody, "description": "an agent token"},
}


def _sse(event: FeedEvent) -> ServerSentEvent:
    return ServerSentEvent(data=event.text, event=event.type, id=event.id)


@router.get(
    "/operator/events",
    tags=["operator"],
    summary="Live feed (Server-Sent Events): a snapshot, then typed events and health ticks",
    description=(
        "Event types: `snapshot` (mode, rate, peers, channels, recent messages, floors, "
        "pending forms, health), `message`, `peer`, `channel`, `mode`, `rate`, `form` "
        "(asked, answered, canceled), `floor` (a floor's holder or hands changed) and "
        "`decision` (a ledger record was written), each with "
        "an id, and `health` every "
        "~1.5 s (uptime, peers, listening, messages_per_minute, queue_depth, rss_bytes; no id). "
        "Reconnect with `Last-Event-ID` to receive exactly what was missed; if that is no "
        "longer possible a fresh `snapshot` comes first."
    ),
    responses={
        **_ERRORS,
        429: {"model": ErrorBody, "description": "as many feeds open as the role may hold"},
        200: {"content": {"text/event-stream": {}}},
    },
    openapi_extra=access(Access.VIEWER),
)
async def events(
    request: Request,
    role: ViewerDep,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> Response:
    hub = hub_of(request)
    feed = feed_of(request)
    interval = hub.settings.health_interval
    hold = hub.holds.take(role, HoldKind.FEED)  # 429 `cap_streams` past the role's share

    async def stream() -> AsyncIterator[ServerSentEvent]:
        # Subscribing and capturing the replay happen in one step, so nothing falls between.
        sub, missed = feed.subscribe(last_event_id)
        try:
            if missed is None:
                snapshot_id = feed.last_id
                snapshot = await feed.snapshot()
                yield ServerSentEvent(
                    data=snapshot.model_dump_json(), event="snapshot", id=snapshot_id
                )
            else:
                for item in missed:
                    yield _sse(item)
            loop = asyncio.get_running_loop()
            next_health = loop.time() + interval
            while not hub.notifier.closing and not sub.overflowed:
                try:
                    item = await asyncio.wait_for(
                        sub.queue.get(), max(0.0, next_health - loop.time())
                    )
                except TimeoutError:
                    health = await feed.health()
                    yield ServerSentEvent(data=health.model_dump_json(), event="health")
                    next_health = loop.time() + interval
                    continue
                yield _sse(item)
        finally:
            feed.unsubscribe(sub)

    response = EventSourceResponse(stream(), ping=15, headers={"Cache-Control": "no-store"})
    return Held(response, hold.release)


async def _snapshot(c: Call[Role, None]) -> SnapshotAt:
    assert c.request is not None  # the console's feed is an HTTP door's
    feed = feed_of(c.request)
    event_id = feed.last_id
    return SnapshotAt.model_construct(event_id=event_id, **dict(await feed.snapshot()))


serve(router, oversight.SNAPSHOT, _snapshot)


@router.get(
    "/export",
    tags=["operator"],
    summary="Download the transcript as JSON, Markdown or text, optionally for a time range",
    responses={
        **_ERRORS,
        422: {"model": ErrorBody, "description": "bad format or time"},
        200: {"content": {t: {} for t in EXPORT_TYPES.values()}},
    },
    openapi_extra=access(Access.VIEWER),
)
async def export(
    request: Request,
    _: ViewerDep,
    format: Annotated[Literal["json", "markdown", "text"], Query()] = "json",
    since: Annotated[str | None, Query(description="epoch seconds or ISO 8601")] = None,
    until: Annotated[str | None, Query(description="epoch seconds or ISO 8601")] = None,
) -> StreamingResponse:
    start, end = _span(since, until)
    hub = hub_of(request)

    async def pages(after: int) -> list[Message]:
        return await hub.history.after(after, PAGE, since=start, until=end)

    return await _download(hub, pages, format, start, end)


@router.get(
    "/messages/export",
    tags=["operator"],
    summary="Download what you may read, as JSON, Markdown or text, optionally for a time range",
    description="What you sent, directs to you, broadcasts and your channels' history: the "
    "same rule as search. A costly read: it spends one of your searches.",
    responses={
        401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
        422: {"model": ErrorBody, "description": "bad format or time"},
        429: {"model": ErrorBody, "description": "your search budget, or streams, are spent"},
        200: {"content": {t: {} for t in EXPORT_TYPES.values()}},
    },
    openapi_extra=access(Access.AGENT),
)
async def export_mine(
    request: Request,
    peer: PeerDep,
    format: Annotated[Literal["json", "markdown", "text"], Query()] = "json",
    since: Annotated[str | None, Query(description="epoch seconds or ISO 8601")] = None,
    until: Annotated[str | None, Query(description="epoch seconds or ISO 8601")] = None,
) -> Response:
    start, end = _span(since, until)
    hub = hub_of(request)
    hub.search.spend(peer)
    # A download is open as long as it streams: one of the agent's holds, ended by a kick.
    hold = hub.holds.take(peer.id, HoldKind.EXPORT)

    async def pages(after: int) -> list[Message]:
        if hold.over:  # the agent left or was kicked: the download ends here
            return []
        return await hub.history.readable_after(peer, after, PAGE, since=start, until=end)

    try:
        return Held(await _download(hub, pages, format, start, end), hold.release)
    except BaseException:
        hold.release()
        raise


def _span(since: str | None, until: str | None) -> tuple[float | None, float | None]:
    start, end = parse_time(since, "since"), parse_time(until, "until")
    if start is not None and end is not None and end <= start:
        raise InvalidRequest("until must be after since", field="until")
    return start, end


async def _download(
    hub: Hub, pages: Pages, format: str, start: float | None, end: float | None
) -> StreamingResponse:
    stamp = datetime.fromtimestamp(hub.clock.now(), UTC).strftime("%Y%m%dT%H%M%SZ")
    extension = {"json": "json", "markdown": "md", "text": "txt"}[format]
    return StreamingResponse(
        export_chunks(pages, format, start, end, hub.clock.now(), await hub.retention.dropped()),
        media_type=EXPORT_TYPES[format],
        headers={
            "Content-Disposition": f'attachment; filename="caucus-transcript-{stamp}.{extension}"'
        },
    )
