"""The talking stick over HTTP."""

from __future__ import annotations

from fastapi import APIRouter, Request

from caucus.api.verbs import Call, serve
from caucus.domain.control import Access
from caucus.domain.peers import Peer
from caucus.web.access import OperatorDep, access
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import FloorRequest
from caucus.wire.room import FloorInfo, FloorList
from caucus.wire.verbs import VERBS
from caucus.wire.verbs.errors import FLOOR_ERRORS

router = APIRouter()


async def _floor(c: Call[Peer, FloorRequest]) -> FloorInfo:
    return FloorInfo.of(await c.hub.floors.act(c.who, c.rq.action, c.rq.scope, c.rq.reason))


async def _floors(c: Call[object, None]) -> FloorList:
    return FloorList.of(c.hub.floors.status())


serve(router, VERBS["floor"], _floor)
serve(router, VERBS["floors"], _floors)


@router.post(
    "/operator/floors/{scope}/clear",
    tags=["floor"],
    summary="The operator frees a scope's floor ('all' or a channel name without '#')",
    responses={s: {"model": ErrorBody, "description": d} for s, d in FLOOR_ERRORS.items()},
    openapi_extra=access(Access.OPERATOR),
)
async def clear_floor(scope: str, request: Request, _: OperatorDep) -> FloorInfo:
    return FloorInfo.of(await hub_of(request).floors.clear(scope))
