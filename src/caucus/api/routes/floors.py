"""The talking stick over HTTP."""

from __future__ import annotations

from fastapi import APIRouter

from caucus.domain.control import Role
from caucus.domain.peers import Peer
from caucus.web.verbs import Call, serve
from caucus.wire.requests import FloorRequest
from caucus.wire.room import FloorInfo, FloorList
from caucus.wire.verbs import VERBS, control

router = APIRouter()


async def _floor(c: Call[Peer, FloorRequest]) -> FloorInfo:
    return FloorInfo.of(await c.hub.floors.act(c.who, c.rq.action, c.rq.scope, c.rq.reason))


async def _floors(c: Call[object, None]) -> FloorList:
    return FloorList.of(c.hub.floors.status())


serve(router, VERBS["floor"], _floor)
serve(router, VERBS["floors"], _floors)


async def _clear(c: Call[Role, None]) -> FloorInfo:
    return FloorInfo.of(await c.hub.floors.clear(c.path["scope"]))


serve(router, control.CLEAR_FLOOR, _clear)
