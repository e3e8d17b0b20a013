"""File reservations: advisory leases on paths and globs of the repository agents edit."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus.services.roles import Access
from caucus.web.access import PeerDep, RoomDep, access
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import BlockedRequest, ReleaseRequest, RenewRequest, ReserveRequest
from caucus.wire.reservations import BlockedList, ReservationList

router = APIRouter(prefix="/reservations", tags=["reservations"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    409: {
        "model": ErrorBody,
        "description": "reservation_conflict: the room enforces reservations and another "
        "agent holds an overlapping one (`conflicts` lists them)",
    },
    422: {"model": ErrorBody, "description": "malformed input, or a path that is not relative"},
    429: {"model": ErrorBody, "description": "cap_reservations: you hold as many as you may"},
}
_AGENT = access(Access.AGENT)
_ROOM = access(Access.ROOM)


@router.post(
    "",
    summary="Reserve paths or globs (granted with conflicts reported; refused where enforced)",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def reserve(body: ReserveRequest, request: Request, peer: PeerDep) -> ReservationList:
    service = hub_of(request).reservations
    done = await service.reserve(
        peer, body.paths, exclusive=body.exclusive, ttl=body.ttl, reason=body.reason
    )
    return ReservationList.of(done.granted, service.policy, done.conflicts)


@router.get(
    "",
    summary="The reservations that stand, oldest first",
    responses=_ERRORS,
    openapi_extra=_ROOM,
)
async def standing(
    request: Request,
    _: RoomDep,
    holder: Annotated[str | None, Query(description="only this agent's")] = None,
) -> ReservationList:
    service = hub_of(request).reservations
    return ReservationList.of(await service.listing(holder), service.policy)


@router.post(
    "/release",
    summary="Release your reservations, by id or pattern, or all of them",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def release(body: ReleaseRequest, request: Request, peer: PeerDep) -> ReservationList:
    service = hub_of(request).reservations
    released = await service.release(peer, ids=body.ids, paths=body.paths, everything=body.all)
    return ReservationList.of(released, service.policy)


@router.post(
    "/renew",
    summary="Extend your reservations (those named, or all) from now",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def renew(body: RenewRequest, request: Request, peer: PeerDep) -> ReservationList:
    service = hub_of(request).reservations
    renewed = await service.renew(peer, ids=body.ids, ttl=body.ttl)
    return ReservationList.of(renewed, service.policy)


@router.post(
    "/blocked",
    summary="Which of these files another agent's exclusive reservation covers (the "
    "pre-commit guard's question)",
    responses=_ERRORS,
    openapi_extra=_ROOM,
)
async def blocked(body: BlockedRequest, request: Request, _: RoomDep) -> BlockedList:
    found = await hub_of(request).reservations.blocking(body.paths, body.holder)
    return BlockedList.of(found)
