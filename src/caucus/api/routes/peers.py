"""Identities: register, offline, leave, status, peers, ping."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request

from caucus.services.roles import Access
from caucus.web.access import PeerDep, RoomDep, access, bearer_token
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
from caucus.wire.headers import AGENT_KEY_HEADER
from caucus.wire.peers import Departure, PeerInfo, PeerList, Registered, StatusInfo
from caucus.wire.requests import RegisterRequest, StatusRequest

router = APIRouter(tags=["peers"])

_AUTH: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"}
}


@router.post(
    "/register",
    response_model_exclude_none=True,
    summary="Join the hub under a name, or resume an identity with its token",
    responses={
        401: {"model": ErrorBody, "description": "the token is unknown or ended, or no agent key"},
        409: {"model": ErrorBody, "description": "name_in_use: another peer holds the name"},
        422: {"model": ErrorBody, "description": "invalid or reserved name"},
    },
    openapi_extra=access(Access.PUBLIC),
)
async def register(
    body: RegisterRequest,
    request: Request,
    agent_key: Annotated[
        str | None,
        Header(
            alias=AGENT_KEY_HEADER,
            description="required when the hub was started with --agent-key",
        ),
    ] = None,
) -> Registered:
    token = body.token or bearer_token(request)
    skills = None
    if body.skills is not None:
        skills = [s if isinstance(s, str) else s.data() for s in body.skills]
    reg = await hub_of(request).principals.register(
        name=body.name,
        token=token,
        skills=skills,
        description=body.description,
        protocol_version=body.protocol_version,
        agent_key=agent_key,
        source=request.client.host if request.client else None,
    )
    return Registered.of(reg)


@router.post(
    "/offline",
    summary="Say goodbye for now: shown offline at once, resumable with the token",
    responses=_AUTH,
    openapi_extra=access(Access.AGENT),
)
async def offline(request: Request, peer: PeerDep) -> Departure:
    await hub_of(request).registry.offline(peer)
    return Departure(name=peer.name, left=False)


@router.post(
    "/leave",
    summary="Leave the hub for good: the token stops working and the name is freed",
    responses=_AUTH,
    openapi_extra=access(Access.AGENT),
)
async def leave(request: Request, peer: PeerDep) -> Departure:
    await hub_of(request).registry.leave(peer)
    return Departure(name=peer.name, left=True)


@router.post(
    "/status",
    summary="Set your one-line status (a heartbeat with its own rate budget)",
    responses={**_AUTH, 429: {"model": ErrorBody, "description": "status budget spent"}},
    openapi_extra=access(Access.AGENT),
)
async def status(body: StatusRequest, request: Request, peer: PeerDep) -> StatusInfo:
    await hub_of(request).registry.set_status(peer, body.status)
    return StatusInfo(name=peer.name, status=peer.status)


@router.get(
    "/peers",
    summary="Everyone here: liveness state, status, skills, last seen",
    responses=_AUTH,
    openapi_extra=access(Access.ROOM),
)
async def peers(request: Request, _: RoomDep) -> PeerList:
    return PeerList.of(await hub_of(request).registry.peers())


@router.get(
    "/ping",
    summary="Ask the hub how a peer is doing (the peer is not disturbed)",
    responses={**_AUTH, 404: {"model": ErrorBody, "description": "no such peer"}},
    openapi_extra=access(Access.ROOM),
)
async def ping(
    request: Request,
    _: RoomDep,
    peer: Annotated[str, Query(description="the name of the peer to ask about")],
) -> PeerInfo:
    return PeerInfo.of(await hub_of(request).registry.ping(peer))
