"""The talking stick over HTTP."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from caucus.services.roles import Access
from caucus.web.access import OperatorDep, PeerDep, RoomDep, access
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import FloorRequest
from caucus.wire.room import FloorInfo, FloorList

router = APIRouter(tags=["floor"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    403: {"model": ErrorBody, "description": "not your floor, or not in the channel"},
    422: {"model": ErrorBody, "description": "unknown action or scope"},
}


@router.post(
    "/floor",
    summary="Take, pass, drop, raise or lower your hand for, or look at, a scope's floor",
    responses=_ERRORS,
    openapi_extra=access(Access.AGENT),
)
async def floor(body: FloorRequest, request: Request, peer: PeerDep) -> FloorInfo:
    return FloorInfo.of(
        await hub_of(request).floors.act(peer, body.action, body.scope, body.reason)
    )


@router.get(
    "/floors",
    summary="Every held floor and its raised hands",
    responses=_ERRORS,
    openapi_extra=access(Access.ROOM),
)
async def floors(request: Request, _: RoomDep) -> FloorList:
    return FloorList.of(hub_of(request).floors.status())


@router.post(
    "/operator/floors/{scope}/clear",
    summary="The operator frees a scope's floor ('all' or a channel name without '#')",
    responses=_ERRORS,
    openapi_extra=access(Access.OPERATOR),
)
async def clear_floor(scope: str, request: Request, _: OperatorDep) -> FloorInfo:
    return FloorInfo.of(await hub_of(request).floors.clear(scope))
