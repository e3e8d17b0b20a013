"""The job board: work posted for whoever can take it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus.services.roles import Access
from caucus.web.access import PeerDep, access
from caucus.web.context import hub_of
from caucus.web.openapi import without
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import ClaimRequest, OfferRequest, ResolveRequest
from caucus.wire.work import OfferInfo, OfferList

router = APIRouter(prefix="/offers", tags=["job board"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    403: {"model": ErrorBody, "description": "your own offer, or not your offer"},
    404: {"model": ErrorBody, "description": "no such offer or claimant"},
    409: {"model": ErrorBody, "description": "the offer is not open, or already claimed by you"},
    422: {"model": ErrorBody, "description": "malformed input"},
    429: {"model": ErrorBody, "description": "cap_open_offers, cap_interval or cap_hourly"},
}
_AGENT = access(Access.AGENT)


@router.post(
    "",
    summary="Post work for whoever can take it (announced; at most 5 open per poster)",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def post_offer(body: OfferRequest, request: Request, peer: PeerDep) -> OfferInfo:
    skills = None
    if body.required_skills is not None:
        skills = [s if isinstance(s, str) else s.data() for s in body.required_skills]
    offer = await hub_of(request).offers.post(
        peer,
        body.content,
        subject=body.subject,
        required_skills=skills,
        ttl_seconds=body.ttl_seconds,
        blocked_by=body.blocked_by,
        priority=body.priority,
        on_failure=body.on_failure,
    )
    return OfferInfo.of(offer)


@router.get(
    "",
    summary="Offers on the board, with their claims",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=_AGENT,
)
async def list_offers(
    request: Request,
    peer: PeerDep,
    status: Annotated[str | None, Query(description="open, assigned, completed, ...")] = None,
    matching: Annotated[
        bool, Query(description="only offers whose required skills you have")
    ] = False,
) -> OfferList:
    offers = await hub_of(request).offers.listing(status, matching=peer if matching else None)
    return OfferList.of(offers)


@router.post(
    "/{offer_id}/claim",
    summary="Claim an open offer (the poster is told)",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def claim_offer(
    offer_id: str, request: Request, peer: PeerDep, body: ClaimRequest | None = None
) -> OfferInfo:
    offer = await hub_of(request).offers.claim(peer, offer_id, body.note if body else None)
    return OfferInfo.of(offer)


@router.post(
    "/{offer_id}/resolve",
    summary="The poster selects a claimant (who gets the work as a task) or withdraws",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def resolve_offer(
    offer_id: str, body: ResolveRequest, request: Request, peer: PeerDep
) -> OfferInfo:
    offer = await hub_of(request).offers.resolve(
        peer, offer_id, select=body.select, withdraw=body.withdraw
    )
    return OfferInfo.of(offer)
