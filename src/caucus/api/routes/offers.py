"""The job board: work posted for whoever can take it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus.api.auth import PeerDep, access, hub_of
from caucus.api.schemas import (
    ClaimRequest,
    ErrorBody,
    OfferOut,
    OfferRequest,
    OffersResponse,
    ResolveRequest,
)
from caucus.services.roles import Access

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
    response_model=OfferOut,
    summary="Post work for whoever can take it (announced; at most 5 open per poster)",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def post_offer(body: OfferRequest, request: Request, peer: PeerDep) -> dict[str, Any]:
    skills = None
    if body.required_skills is not None:
        skills = [
            s if isinstance(s, str) else s.model_dump(exclude_none=True)
            for s in body.required_skills
        ]
    offer = await hub_of(request).offers.post(
        peer,
        body.payload,
        subject=body.subject,
        required_skills=skills,
        ttl_seconds=body.ttl_seconds,
    )
    return offer.record()


@router.get(
    "",
    response_model=OffersResponse,
    summary="Offers on the board, with their claims",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def list_offers(
    request: Request,
    peer: PeerDep,
    status: Annotated[str | None, Query(description="open, assigned, completed, ...")] = None,
    matching: Annotated[
        bool, Query(description="only offers whose required skills you have")
    ] = False,
) -> dict[str, Any]:
    offers = await hub_of(request).offers.listing(status, matching=peer if matching else None)
    return {"offers": [o.record() for o in offers]}


@router.post(
    "/{offer_id}/claim",
    response_model=OfferOut,
    summary="Claim an open offer (the poster is told)",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def claim_offer(
    offer_id: str, request: Request, peer: PeerDep, body: ClaimRequest | None = None
) -> dict[str, Any]:
    offer = await hub_of(request).offers.claim(peer, offer_id, body.note if body else None)
    return offer.record()


@router.post(
    "/{offer_id}/resolve",
    response_model=OfferOut,
    summary="The poster selects a claimant (who gets the work as a task) or withdraws",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def resolve_offer(
    offer_id: str, body: ResolveRequest, request: Request, peer: PeerDep
) -> dict[str, Any]:
    offer = await hub_of(request).offers.resolve(
        peer, offer_id, select=body.select, withdraw=body.withdraw
    )
    return offer.record()
