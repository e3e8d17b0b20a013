"""File reservations: advisory leases on paths and globs of the repository agents edit."""

from __future__ import annotations

from fastapi import APIRouter, Request

from caucus.api.verbs import Call, serve
from caucus.domain.control import Access
from caucus.domain.peers import Peer
from caucus.web.access import OperatorDep, access
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
from caucus.wire.queries import ReservationsQuery
from caucus.wire.requests import (
    BlockedRequest,
    ReleaseRequest,
    RenewRequest,
    ReservationPolicyRequest,
    ReserveRequest,
)
from caucus.wire.reservations import BlockedList, ReservationList, ReservationPolicyInfo
from caucus.wire.verbs import VERBS

router = APIRouter()


async def _reserve(c: Call[Peer, ReserveRequest]) -> ReservationList:
    rq = c.rq
    done = await c.hub.reservations.reserve(
        c.who, rq.paths, exclusive=rq.exclusive, ttl=rq.ttl, reason=rq.reason
    )
    return ReservationList.of(done.granted, done.policy, done.conflicts)


async def _standing(c: Call[object, ReservationsQuery]) -> ReservationList:
    service = c.hub.reservations
    return ReservationList.of(await service.listing(c.rq.holder), await service.policy())


async def _release(c: Call[Peer, ReleaseRequest]) -> ReservationList:
    service, rq = c.hub.reservations, c.rq
    released = await service.release(c.who, ids=rq.ids, paths=rq.paths, everything=rq.all)
    return ReservationList.of(released, await service.policy())


async def _renew(c: Call[Peer, RenewRequest]) -> ReservationList:
    service = c.hub.reservations
    renewed = await service.renew(c.who, ids=c.rq.ids, ttl=c.rq.ttl)
    return ReservationList.of(renewed, await service.policy())


async def _blocked(c: Call[object, BlockedRequest]) -> BlockedList:
    return BlockedList.of(await c.hub.reservations.blocking(c.rq.paths, c.rq.holder))


serve(router, VERBS["reserve"], _reserve)
serve(router, VERBS["reservations"], _standing)
serve(router, VERBS["release"], _release)
serve(router, VERBS["renew"], _renew)
serve(router, VERBS["blocked"], _blocked)


operator_router = APIRouter(prefix="/operator/reservations", tags=["operator"])


@operator_router.post(
    "/policy",
    summary="Whether a conflicting reservation is granted and reported (advisory) or refused "
    "(enforce), for every hub process, from the next request on",
    responses={
        401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
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
