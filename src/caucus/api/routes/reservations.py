"""File reservations: advisory leases on paths and globs of the repository agents edit."""

from __future__ import annotations

from fastapi import APIRouter

from caucus.domain.control import Role
from caucus.domain.peers import Peer
from caucus.web.verbs import Call, serve
from caucus.wire.queries import ReservationsQuery
from caucus.wire.requests import (
    BlockedRequest,
    ReleaseRequest,
    RenewRequest,
    ReservationPolicyRequest,
    ReserveRequest,
)
from caucus.wire.reservations import BlockedList, ReservationList, ReservationPolicyInfo
from caucus.wire.verbs import VERBS, control

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


async def _policy(c: Call[Role, ReservationPolicyRequest]) -> ReservationPolicyInfo:
    policy = await c.hub.reservations.set_policy(c.rq.policy)
    return ReservationPolicyInfo(policy=policy.value)


serve(router, control.SET_RESERVATION_POLICY, _policy)
