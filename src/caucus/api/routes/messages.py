"""Messages: send, receive, ack, peek.

Send and receive are documented here but implemented in `api/hotpath.py`, which `FastLane` also
serves without FastAPI in front (ADR 0002).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from caucus.api.hotpath import REPLAYED_HEADER, receive_messages, send_message
from caucus.services.roles import Access
from caucus.web.access import PeerDep, access, bearer_token
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
from caucus.wire.messages import AckResult, Batch, PeekResult, SendResult
from caucus.wire.requests import AckRequest, AgentAnnounceRequest, SendRequest, body_schema

router = APIRouter(tags=["messages"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    422: {"model": ErrorBody, "description": "malformed input"},
}
# A wait (a parked receive or peek) is one of what the caller holds open (`cap_streams`).
_WAITS: dict[int | str, dict[str, Any]] = {
    **_ERRORS,
    429: {"model": ErrorBody, "description": "you (or the room) hold as many waits as allowed"},
}


@router.post(
    "/send",
    response_model=SendResult,
    summary="Send a message to a peer, 'all', or a #channel",
    responses={
        **_ERRORS,
        403: {"model": ErrorBody, "description": "a private channel you are not a member of"},
        404: {"model": ErrorBody, "description": "unknown recipient or reply_to"},
        413: {"model": ErrorBody, "description": "body or content too large"},
        423: {"model": ErrorBody, "description": "floor_held: another peer holds that floor"},
        429: {"model": ErrorBody, "description": "send budget spent; see Retry-After"},
    },
    openapi_extra=access(Access.AGENT, **body_schema(SendRequest)),
)
async def send(request: Request) -> Response:
    body, replayed = await send_message(
        hub_of(request), bearer_token(request), await request.body()
    )
    headers = {REPLAYED_HEADER: "true"} if replayed else None
    return Response(body, media_type="application/json", headers=headers)


@router.get(
    "/receive",
    response_model=Batch,
    summary="Long-poll for pending messages (and acknowledge the previous batch)",
    responses=_WAITS,
    openapi_extra=access(
        Access.AGENT,
        parameters=[
            {
                "name": "timeout",
                "in": "query",
                "schema": {"type": "number", "default": 25, "minimum": 0, "maximum": 25},
                "description": "seconds to wait for a message (server ceiling 25)",
            },
            {
                "name": "ack",
                "in": "query",
                "schema": {"type": "integer"},
                "description": "acknowledge the batch that held this seq, up to and including it",
            },
            {
                "name": "limit",
                "in": "query",
                "schema": {"type": "integer", "minimum": 1, "maximum": 100},
                "description": "at most this many messages (default 100)",
            },
        ],
    ),
)
async def receive(request: Request) -> Response:
    body = await receive_messages(
        hub_of(request), bearer_token(request), dict(request.query_params)
    )
    return Response(body, media_type="application/json")


@router.post(
    "/ack",
    summary="Acknowledge delivered messages by seq, or a batch through a seq",
    responses=_ERRORS,
    openapi_extra=access(Access.AGENT),
)
async def ack(body: AckRequest, request: Request, peer: PeerDep) -> AckResult:
    acked = await hub_of(request).delivery.ack(peer, seqs=body.seqs, through=body.through)
    return AckResult(acked=acked)


@router.get(
    "/peek",
    summary="How many messages wait, and a preview of the latest, without consuming any "
    "(optionally waiting for a newer one)",
    responses=_WAITS,
    openapi_extra=access(Access.AGENT),
)
async def peek(
    request: Request,
    peer: PeerDep,
    after: Annotated[
        int | None,
        Query(ge=0, description="with wait: return once a pending message is newer than this seq"),
    ] = None,
    wait: Annotated[
        float,
        Query(ge=0, le=3600, description="seconds to wait for that (capped as a receive's wait)"),
    ] = 0.0,
) -> PeekResult:
    return PeekResult.of(await hub_of(request).delivery.peek(peer, after=after, wait=wait))


@router.post(
    "/announce",
    summary="Hub-wide news from you to every peer (capped; newcomers catch up for 24 h)",
    responses={
        **_ERRORS,
        413: {"model": ErrorBody, "description": "cap_payload_size: over 4 KB"},
        429: {"model": ErrorBody, "description": "cap_interval or cap_hourly"},
    },
    openapi_extra=access(Access.AGENT),
)
async def announce(body: AgentAnnounceRequest, request: Request, peer: PeerDep) -> SendResult:
    receipt = await hub_of(request).announcements.announce(peer, body.content, subject=body.subject)
    return SendResult.of(receipt)
