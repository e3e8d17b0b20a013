"""Messages: send, receive, ack, peek, announce.

Send and receive are documented here but implemented in `api/hotpath.py`, which `FastLane` also
serves without FastAPI in front (ADR 0002).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from caucus.api.hotpath import REPLAYED_HEADER, receive_messages, send_message
from caucus.domain.peers import Peer
from caucus.web.access import bearer_token
from caucus.web.context import hub_of
from caucus.web.verbs import Call, route_args, serve
from caucus.wire.messages import AckResult, PeekResult, SendResult
from caucus.wire.queries import PeekQuery
from caucus.wire.requests import AckRequest, AgentAnnounceRequest
from caucus.wire.verbs import VERBS

router = APIRouter()


@router.api_route(**route_args(VERBS["send"]))
async def send(request: Request) -> Response:
    body, replayed = await send_message(
        hub_of(request), bearer_token(request), await request.body()
    )
    headers = {REPLAYED_HEADER: "true"} if replayed else None
    return Response(body, media_type="application/json", headers=headers)


@router.api_route(**route_args(VERBS["receive"]))
async def receive(request: Request) -> Response:
    body = await receive_messages(
        hub_of(request), bearer_token(request), dict(request.query_params)
    )
    return Response(body, media_type="application/json")


async def _ack(c: Call[Peer, AckRequest]) -> AckResult:
    return AckResult(acked=await c.hub.delivery.ack(c.who, seqs=c.rq.seqs, through=c.rq.through))


async def _peek(c: Call[Peer, PeekQuery]) -> PeekResult:
    return PeekResult.of(await c.hub.delivery.peek(c.who, after=c.rq.after, wait=c.rq.wait))


async def _announce(c: Call[Peer, AgentAnnounceRequest]) -> SendResult:
    announce = c.hub.announcements.announce
    return SendResult.of(await announce(c.who, c.rq.content, subject=c.rq.subject))


serve(router, VERBS["ack"], _ack)
serve(router, VERBS["peek"], _peek)
serve(router, VERBS["announce"], _announce)
