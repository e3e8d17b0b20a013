"""Teammates on demand (issue 34): an agent with the operator's spawn grant starts native
agents on the operator's model profiles; the operator grants, watches and stops."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from caucus.api.verbs import Call, serve
from caucus.domain.control import Access
from caucus.domain.peers import Peer
from caucus.services.spawns import SpawnAsk
from caucus.web.access import OperatorDep, ViewerDep, access
from caucus.web.context import hub_of
from caucus.web.openapi import without
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import SpawnGrantRequest, SpawnRequest
from caucus.wire.spawns import SpawnGrantInfo, TeammateInfo, Teammates, TeammatesOverview
from caucus.wire.verbs import VERBS
from caucus.wire.verbs.errors import TEAMMATE

router = APIRouter()
_ERRORS: dict[int | str, dict[str, Any]] = {
    s: {"model": ErrorBody, "description": d} for s, d in TEAMMATE.items()
}


async def _mine(c: Call[Peer, None]) -> Teammates:
    return Teammates.of(await c.hub.spawns.standing(c.who))


async def _spawn(c: Call[Peer, SpawnRequest]) -> TeammateInfo:
    rq = c.rq
    ask = SpawnAsk(prompt=rq.prompt, profile=rq.profile, tools=rq.tools, name=rq.name)
    return TeammateInfo.of(await c.hub.spawns.spawn(c.who, ask, c.url_for_agents()))


async def _stop(c: Call[Peer, None]) -> TeammateInfo:
    return TeammateInfo.of(await c.hub.spawns.stop_teammate(c.path["spawn_id"], c.who))


serve(router, VERBS["teammates"], _mine)
serve(router, VERBS["spawn"], _spawn)
serve(router, VERBS["stop_teammate"], _stop)

operator_router = APIRouter(prefix="/operator", tags=["operator"])
_OPERATOR_ERRORS: dict[int | str, dict[str, Any]] = {
    401: _ERRORS[401],
    403: {"model": ErrorBody, "description": "not the operator (or, to read, an observer)"},
    404: {"model": ErrorBody, "description": "no such agent here, or no such teammate"},
    422: {"model": ErrorBody, "description": "teammates out of 1-16"},
}


@operator_router.get(
    "/teammates",
    summary="The room's spawn grants and spawned teammates (newest first)",
    responses=without(_OPERATOR_ERRORS, 404),
    openapi_extra=access(Access.VIEWER),
)
async def overview(request: Request, _: ViewerDep) -> TeammatesOverview:
    return TeammatesOverview.of(await hub_of(request).spawns.standing(None))


@operator_router.put(
    "/peers/{name}/spawn-grant",
    summary="Let an agent spawn teammates, this many running at once (never given by default)",
    responses=_OPERATOR_ERRORS,
    openapi_extra=access(Access.OPERATOR),
)
async def grant(
    name: str, body: SpawnGrantRequest, request: Request, _: OperatorDep
) -> SpawnGrantInfo:
    return SpawnGrantInfo.of(await hub_of(request).spawns.grant(name, body.teammates))


@operator_router.delete(
    "/peers/{name}/spawn-grant",
    summary="Take an agent's spawn grant back (its teammates running go on until stopped)",
    responses=_OPERATOR_ERRORS,
    openapi_extra=access(Access.OPERATOR),
    status_code=204,
)
async def revoke(name: str, request: Request, _: OperatorDep) -> None:
    await hub_of(request).spawns.revoke(name)


@operator_router.post(
    "/teammates/{spawn_id}/stop",
    summary="Stop a spawned teammate, whichever hub process runs it",
    responses=_OPERATOR_ERRORS,
    openapi_extra=access(Access.OPERATOR),
)
async def stop_any(spawn_id: str, request: Request, _: OperatorDep) -> TeammateInfo:
    return TeammateInfo.of(await hub_of(request).spawns.stop_teammate(spawn_id, None))
