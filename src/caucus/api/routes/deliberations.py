"""Live deliberations over HTTP: convene a panel of peers, answer as a panelist or a chair,
follow a deliberation to its record."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from caucus.services.roles import Access
from caucus.web.access import PeerDep, ViewerDep, access
from caucus.web.context import hub_of
from caucus.web.openapi import without
from caucus.wire.deliberations import DeliberationInfo, DeliberationList, PositionInfo
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import ConveneRequest, PositionRequest

router = APIRouter(tags=["deliberations"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    403: {"model": ErrorBody, "description": "not a member of the panel's channel"},
    404: {"model": ErrorBody, "description": "no such deliberation, peer or channel"},
    409: {"model": ErrorBody, "description": "no position is asked of you now"},
    422: {
        "model": ErrorBody,
        "description": "a field out of range, or a position that breaks a rule",
    },
}


@router.post(
    "/deliberations",
    summary="Convene a panel of peers on a subject; a chair decides; the ledger records it",
    responses=without(_ERRORS, 409),
    openapi_extra=access(Access.AGENT),
)
async def convene(body: ConveneRequest, request: Request, peer: PeerDep) -> DeliberationInfo:
    convened = await hub_of(request).deliberations.convene(
        peer,
        subject=body.subject,
        panel=body.panel,
        chair=body.chair,
        evidence=body.evidence,
        rounds=body.rounds,
        deadline=body.deadline,
    )
    return DeliberationInfo.of(convened)


@router.get(
    "/deliberations",
    summary="Deliberations this hub process runs or ran, newest first",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=access(Access.AGENT),
)
async def deliberations(request: Request, _: PeerDep) -> DeliberationList:
    return DeliberationList.of(hub_of(request).deliberations.listing())


@router.get(
    "/deliberations/{deliberation_id}",
    summary="One deliberation: its panel, positions round by round, verdict and record",
    responses=without(_ERRORS, 409),
    openapi_extra=access(Access.AGENT),
)
async def deliberation(deliberation_id: str, request: Request, _: PeerDep) -> DeliberationInfo:
    return DeliberationInfo.of(hub_of(request).deliberations.get(deliberation_id))


@router.post(
    "/deliberations/{deliberation_id}/position",
    summary="Your position for the round under way (as the chair: your decision)",
    responses=_ERRORS,
    openapi_extra=access(Access.AGENT),
)
async def position(
    deliberation_id: str, body: PositionRequest, request: Request, peer: PeerDep
) -> PositionInfo:
    p = await hub_of(request).deliberations.submit(
        peer,
        deliberation_id,
        stance=body.stance,
        summary=body.summary,
        confidence=body.confidence,
        evidence=body.evidence,
    )
    return PositionInfo.of(p)


@router.get(
    "/operator/deliberations",
    summary="Every deliberation this hub process runs or ran, newest first",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=access(Access.VIEWER),
)
async def operator_deliberations(request: Request, _: ViewerDep) -> DeliberationList:
    return DeliberationList.of(hub_of(request).deliberations.listing())
