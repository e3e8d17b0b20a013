"""Watchers: the keys and tickets `caucus watch` holds, and the long-poll it waits on.

A watcher is not the agent: its key waits for and acknowledges the agent's messages and does
nothing else, and it gives way to the agent's own `GET /receive` (`superseded: true` on its
next poll, and `displaced_watcher: true` on the receive that displaced it).
"""

from __future__ import annotations

from fastapi import APIRouter

from caucus.domain.peers import Peer
from caucus.web.verbs import Call, serve
from caucus.wire.messages import AckResult, Batch, InboundMessage
from caucus.wire.queries import WatchQuery
from caucus.wire.requests import AckRequest, RedeemRequest
from caucus.wire.verbs import VERBS
from caucus.wire.watch import WatchKey, WatchTicket, ticket_command

router = APIRouter()


async def _mint_key(c: Call[Peer, None]) -> WatchKey:
    return WatchKey(name=c.who.name, key=await c.hub.watchers.mint_key(c.who))


async def _mint_ticket(c: Call[Peer, None]) -> WatchTicket:
    ticket = await c.hub.watchers.mint_ticket(c.who)
    url = c.url()
    return WatchTicket(
        name=c.who.name,
        ticket=ticket.ticket,
        expires_at=ticket.expires_at,
        command=ticket_command(url, ticket.ticket),
    )


async def _redeem(c: Call[None, RedeemRequest]) -> WatchKey:
    peer, key = await c.hub.principals.redeem(c.rq.ticket)
    return WatchKey(name=peer.name, key=key)


async def _watch(c: Call[Peer, WatchQuery]) -> Batch:
    result = await c.hub.delivery.receive(c.who, wait=c.rq.timeout, watcher=True)
    return Batch.model_construct(
        messages=[InboundMessage.of(d) for d in result.deliveries],
        acked=0,
        superseded=result.superseded,
        displaced_watcher=False,
    )


async def _ack(c: Call[Peer, AckRequest]) -> AckResult:
    acked = await c.hub.delivery.ack(c.who, seqs=c.rq.seqs, through=c.rq.through)
    c.hub.notifier.forget_watcher(c.who.id)
    return AckResult(acked=acked)


serve(router, VERBS["mint_watch_key"], _mint_key)
serve(router, VERBS["mint_watch_ticket"], _mint_ticket)
serve(router, VERBS["redeem_watch_ticket"], _redeem)
serve(router, VERBS["watch"], _watch)
serve(router, VERBS["watch_ack"], _ack)
