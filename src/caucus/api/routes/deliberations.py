"""Live deliberations over HTTP: convene a panel of peers, answer as a panelist or a chair,
follow a deliberation to its record."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from caucus.domain.control import Role
from caucus.domain.peers import Peer
from caucus.web.verbs import Call, serve
from caucus.wire.deliberations import DeliberationInfo, DeliberationList, PositionInfo
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import ConveneRequest, PositionRequest
from caucus.wire.verbs import VERBS, oversight

router = APIRouter()

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


async def _convene(c: Call[Peer, ConveneRequest]) -> DeliberationInfo:
    rq = c.rq
    convened = await c.hub.deliberations.convene(
        c.who,
        subject=rq.subject,
        panel=rq.panel,
        chair=rq.chair,
        evidence=rq.evidence,
        rounds=rq.rounds,
        deadline=rq.deadline,
    )
    return DeliberationInfo.of(convened)


async def _listing(c: Call[Peer, None]) -> DeliberationList:
    return DeliberationList.of(c.hub.deliberations.listing())


async def _one(c: Call[Peer, None]) -> DeliberationInfo:
    return DeliberationInfo.of(c.hub.deliberations.get(c.path["deliberation_id"]))


async def _position(c: Call[Peer, PositionRequest]) -> PositionInfo:
    rq = c.rq
    p = await c.hub.deliberations.submit(
        c.who,
        c.path["deliberation_id"],
        stance=rq.stance,
        summary=rq.summary,
        confidence=rq.confidence,
        evidence=rq.evidence,
    )
    return PositionInfo.of(p)


serve(router, VERBS["convene"], _convene)
serve(router, VERBS["deliberations"], _listing)
serve(router, VERBS["deliberation"], _one)
serve(router, VERBS["submit_position"], _position)


async def _all(c: Call[Role, None]) -> DeliberationList:
    return DeliberationList.of(c.hub.deliberations.listing())


serve(router, oversight.OPERATOR_DELIBERATIONS, _all)
