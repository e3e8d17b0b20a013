"""Watchers: the keys and tickets `caucus watch` holds, and the long-poll it waits on.

A watcher is not the agent: its key waits for and acknowledges the agent's messages and does
nothing else, and it gives way to the agent's own `GET /receive` (`superseded: true` on its
next poll, and `displaced_watcher: true` on the receive that displaced it).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from caucus.domain.peers import Peer
from caucus.services.roles import Access
from caucus.web.access import PeerDep, access, bearer_token
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
from caucus.wire.messages import AckResult, Batch, InboundMessage
from caucus.wire.requests import AckRequest, RedeemRequest
from caucus.wire.watch import WatchKey, WatchTicket, ticket_command

router = APIRouter(tags=["watch"])

_AGENT: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"}
}
_WATCHER: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or unknown watch key, or its peer ended"},
    403: {"model": ErrorBody, "description": "a token instead of a watch key"},
}


async def current_watcher(request: Request) -> Peer:
    return await hub_of(request).principals.watcher(bearer_token(request))


WatcherDep = Annotated[Peer, Depends(current_watcher)]


@router.post(
    "/watch/keys",
    summary="A watch key for your own messages (for a watcher on your machine)",
    responses=_AGENT,
    openapi_extra=access(Access.AGENT),
)
async def mint_key(request: Request, peer: PeerDep) -> WatchKey:
    key = await hub_of(request).watchers.mint_key(peer)
    return WatchKey(name=peer.name, key=key)


@router.post(
    "/watch/tickets",
    summary="A single-use ticket a watcher redeems for a watch key (voids your last ticket)",
    responses=_AGENT,
    openapi_extra=access(Access.AGENT),
)
async def mint_ticket(request: Request, peer: PeerDep) -> WatchTicket:
    ticket = await hub_of(request).watchers.mint_ticket(peer)
    url = str(request.base_url).rstrip("/")
    return WatchTicket(
        name=peer.name,
        ticket=ticket.ticket,
        expires_at=ticket.expires_at,
        command=ticket_command(url, ticket.ticket),
    )


@router.post(
    "/watch/redeem",
    summary="Trade a ticket for a watch key, once",
    responses={
        401: {"model": ErrorBody, "description": "ticket_rejected: unknown, used or expired"},
        422: {"model": ErrorBody, "description": "malformed input"},
    },
    openapi_extra=access(Access.PUBLIC),
)
async def redeem(body: RedeemRequest, request: Request) -> WatchKey:
    peer, key = await hub_of(request).principals.redeem(body.ticket)
    return WatchKey(name=peer.name, key=key)


@router.get(
    "/watch",
    summary="Wait for the watched peer's next messages (gives way to the peer's own receive)",
    responses={
        **_WATCHER,
        429: {"model": ErrorBody, "description": "the peer holds as many waits as allowed"},
    },
    openapi_extra=access(Access.WATCHER),
)
async def watch(
    request: Request,
    peer: WatcherDep,
    timeout: Annotated[float, Query(ge=0, le=3600, description="seconds to wait")] = 25.0,
) -> Batch:
    result = await hub_of(request).delivery.receive(peer, wait=timeout, watcher=True)
    return Batch.model_construct(
        messages=[InboundMessage.of(d) for d in result.deliveries],
        acked=0,
        superseded=result.superseded,
        displaced_watcher=False,
    )


@router.post(
    "/watch/ack",
    summary="Acknowledge what the watcher printed; the watcher is done",
    responses=_WATCHER,
    openapi_extra=access(Access.WATCHER),
)
async def ack(body: AckRequest, request: Request, peer: WatcherDep) -> AckResult:
    hub = hub_of(request)
    acked = await hub.delivery.ack(peer, seqs=body.seqs, through=body.through)
    hub.notifier.forget_watcher(peer.id)
    return AckResult(acked=acked)
