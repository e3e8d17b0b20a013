"""Teammates on demand (issue 34): an agent with the operator's spawn grant starts native
agents on the operator's model profiles; the operator grants, watches and stops."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from caucus.services.roles import Access
from caucus.services.spawns import SpawnAsk
from caucus.web.access import OperatorDep, PeerDep, ViewerDep, access
from caucus.web.context import hub_of, socket_url
from caucus.web.openapi import without
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import SpawnGrantRequest, SpawnRequest
from caucus.wire.spawns import SpawnGrantInfo, TeammateInfo, Teammates, TeammatesOverview

router = APIRouter(prefix="/teammates", tags=["teammates"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    403: {
        "model": ErrorBody,
        "description": "spawn_not_granted: the operator has not given you the spawn grant; "
        "spawn_not_approved: a profile or tool not on the operator's list; "
        "launcher_disabled: the hub binds an address other machines reach",
    },
    404: {"model": ErrorBody, "description": "no such teammate of yours"},
    409: {"model": ErrorBody, "description": "name_in_use: a peer here holds that name"},
    422: {"model": ErrorBody, "description": "malformed input: an empty prompt, a bad name"},
    429: {
        "model": ErrorBody,
        "description": "cap_teammates: as many running as your grant (or the room) allows",
    },
}
_AGENT = access(Access.AGENT)


@router.get(
    "",
    summary="What you may spawn (your grant, the operator's profiles and tools) and your "
    "teammates, newest first",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=_AGENT,
)
async def mine(request: Request, peer: PeerDep) -> Teammates:
    return Teammates.of(await hub_of(request).spawns.standing(peer))


@router.post(
    "",
    summary="Spawn a teammate: a native agent on one of the operator's model profiles, "
    "recorded on the ledger",
    responses=without(_ERRORS, 404),
    openapi_extra=_AGENT,
    status_code=201,
)
async def spawn(body: SpawnRequest, request: Request, peer: PeerDep) -> TeammateInfo:
    ask = SpawnAsk(prompt=body.prompt, profile=body.profile, tools=body.tools, name=body.name)
    url = socket_url(request.scope, str(request.base_url))
    return TeammateInfo.of(await hub_of(request).spawns.spawn(peer, ask, url))


@router.post(
    "/{spawn_id}/stop",
    summary="Stop a teammate you spawned (it leaves the room gracefully)",
    responses=without(_ERRORS, 409),
    openapi_extra=_AGENT,
)
async def stop(spawn_id: str, request: Request, peer: PeerDep) -> TeammateInfo:
    return TeammateInfo.of(await hub_of(request).spawns.stop_teammate(spawn_id, peer))


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
