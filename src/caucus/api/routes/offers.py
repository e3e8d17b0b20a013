"""The job board: work posted for whoever can take it."""

from __future__ import annotations

from fastapi import APIRouter

from caucus.domain.peers import Peer
from caucus.web.verbs import Call, serve
from caucus.wire.queries import OffersQuery
from caucus.wire.requests import ClaimRequest, OfferRequest, ResolveRequest
from caucus.wire.verbs import VERBS
from caucus.wire.work import OfferInfo, OfferList

router = APIRouter()


async def _post(c: Call[Peer, OfferRequest]) -> OfferInfo:
    rq = c.rq
    skills = None
    if rq.required_skills is not None:
        skills = [s if isinstance(s, str) else s.data() for s in rq.required_skills]
    offer = await c.hub.offers.post(
        c.who,
        rq.content,
        subject=rq.subject,
        required_skills=skills,
        ttl_seconds=rq.ttl_seconds,
        blocked_by=rq.blocked_by,
        priority=rq.priority,
        on_failure=rq.on_failure,
    )
    return OfferInfo.of(offer)


async def _listing(c: Call[Peer, OffersQuery]) -> OfferList:
    matching = c.who if c.rq.matching else None
    return OfferList.of(await c.hub.offers.listing(c.rq.status, matching=matching))


async def _claim(c: Call[Peer, ClaimRequest | None]) -> OfferInfo:
    note = c.rq.note if c.rq else None
    return OfferInfo.of(await c.hub.offers.claim(c.who, c.path["offer_id"], note))


async def _resolve(c: Call[Peer, ResolveRequest]) -> OfferInfo:
    offer_id, rq = c.path["offer_id"], c.rq
    offer = await c.hub.offers.resolve(c.who, offer_id, select=rq.select, withdraw=rq.withdraw)
    return OfferInfo.of(offer)


serve(router, VERBS["post_offer"], _post)
serve(router, VERBS["list_offers"], _listing)
serve(router, VERBS["claim_offer"], _claim)
serve(router, VERBS["resolve_offer"], _resolve)
