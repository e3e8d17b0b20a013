"""File reservations: advisory leases on paths and globs of the repository agents edit."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus.services.roles import Access
from caucus.web.access import OperatorDep, PeerDep, RoomDep, access
from caucus.web.context import hub_of
from caucus.web.openapi import without
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import (
    BlockedRequest,
    ReleaseRequest,
    RenewRequest,
    ReservationPolicyRequest,
    ReserveRequest,
)
from caucus.wire.reservations import BlockedList, ReservationList, ReservationPolicyInfo

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
    return ReservationList.of(done.granted, done.policy, done.conflicts)


@router.get(
    "",
    summary="The reservations that stand, oldest first",
    responses=without(_ERRORS, 409),
    openapi_extra=_ROOM,
)
async def standing(
    request: Request,
    _: RoomDep,
    holder: Annotated[str | None, Query(description="only this agent's")] = None,
) -> ReservationList:
    service = hub_of(request).reservations
    return ReservationList.of(await service.listing(holder), await service.policy())


@router.post(
    "/release",
    summary="Release your reservations, by id or pattern, or all of them",
    responses=without(_ERRORS, 409),
    openapi_extra=_AGENT,
)
async def release(body: ReleaseRequest, request: Request, peer: PeerDep) -> ReservationList:
    service = hub_of(request).reservations
    released = await service.release(peer, ids=body.ids, paths=body.paths, everything=body.all)
    return ReservationList.of(released, await service.policy())


@router.post(
    "/renew",
    summary="Extend your reservations (those named, or all) from now",
    responses=without(_ERRORS, 409),
    openapi_extra=_AGENT,
)
async def renew(body: RenewRequest, request: Request, peer: PeerDep) -> ReservationList:
    service = hub_of(request).reservations
    renewed = await service.renew(peer, ids=body.ids, ttl=body.ttl)
    return ReservationList.of(renewed, await service.policy())


@router.post(
    "/blocked",
    summary="Which of these files another agent's exclusive reservation covers (the "
    "pre-commit guard's question)",
    responses=without(_ERRORS, 409),
    openapi_extra=_ROOM,
)
async def blocked(body: BlockedRequest, request: Request, _: RoomDep) -> BlockedList:
    found = await hub_of(request).reservations.blocking(body.paths, body.holder)
    return BlockedList.of(found)


operator_router = APIRouter(prefix="/operator/reservations", tags=["operator"])


@operator_router.post(
    "/policy",
    summary="Whether a conflicting reservation is granted and reported (advisory) or refused "
    "(enforce), for every hub process, from the next request on",
    responses={
        401: _ERRORS[401],
        403: {"model": ErrorBody, "description": "not the operator"},
        422: {"model": ErrorBody, "description": "not a policy"},
    },
    openapi_extra=access(Access.OPERATOR),
)
async def set_policy(
    body: ReservationPolicyRequest, request: Request, _: OperatorDep
) -> ReservationPolicyInfo:
    policy = await hub_of(request).reservations.set_policy(body.policy)
    return ReservationPolicyInfo(policy=policy.value)
