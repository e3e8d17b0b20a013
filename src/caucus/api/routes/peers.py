"""Identities: register, leave, status, peers, ping."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request

from caucus.api.auth import PeerDep, RoomDep, access, bearer_token, hub_of
from caucus.api.schemas import (
    ErrorBody,
    LeaveResponse,
    PeerOut,
    PeersResponse,
    RegisterRequest,
    RegisterResponse,
    StatusRequest,
    StatusResponse,
)
from caucus.services.roles import Access

router = APIRouter(tags=["peers"])

_AUTH: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"}
}


@router.post(
    "/register",
    response_model=RegisterResponse,
    response_model_exclude_none=True,
    summary="Join the hub under a name, or resume an identity with its token",
    responses={
        401: {"model": ErrorBody, "description": "the given token is unknown or ended"},
        409: {"model": ErrorBody, "description": "name_in_use or name_taken"},
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
            alias="X-Caucus-Agent-Key",
            description="required when the hub was started with --agent-key",
        ),
    ] = None,
) -> dict[str, Any]:
    token = body.token or bearer_token(request)
    skills = None
    if body.skills is not None:
        skills = [s if isinstance(s, str) else s.model_dump(exclude_none=True) for s in body.skills]
    reg = await hub_of(request).registry.register(
        name=body.name,
        token=token,
        skills=skills,
        description=body.description,
        protocol_version=body.protocol_version,
        agent_key=agent_key,
    )
    return {
        "token": reg.token,
        "name": reg.peer.name,
        "outcome": reg.outcome,
        "protocol_version": reg.protocol_version,
        "protocol": reg.protocol,
        "note": reg.note,
    }


@router.post(
    "/leave",
    response_model=LeaveResponse,
    summary="Leave the hub for good: the token stops working",
    responses=_AUTH,
    openapi_extra=access(Access.AGENT),
)
async def leave(request: Request, peer: PeerDep) -> dict[str, Any]:
    await hub_of(request).registry.leave(peer)
    return {"name": peer.name, "left": True}


@router.post(
    "/status",
    response_model=StatusResponse,
    summary="Set your one-line status (a heartbeat with its own rate budget)",
    responses={**_AUTH, 429: {"model": ErrorBody, "description": "status budget spent"}},
    openapi_extra=access(Access.AGENT),
)
async def status(body: StatusRequest, request: Request, peer: PeerDep) -> dict[str, Any]:
    await hub_of(request).registry.set_status(peer, body.status)
    return {"name": peer.name, "status": peer.status}


@router.get(
    "/peers",
    response_model=PeersResponse,
    summary="Everyone here: liveness state, status, skills, last seen",
    responses=_AUTH,
    openapi_extra=access(Access.ROOM),
)
async def peers(request: Request, _: RoomDep) -> dict[str, Any]:
    views = await hub_of(request).registry.peers()
    return {"peers": [PeerOut.dump(v) for v in views]}


@router.get(
    "/ping",
    response_model=PeerOut,
    summary="Ask the hub how a peer is doing (the peer is not disturbed)",
    responses={**_AUTH, 404: {"model": ErrorBody, "description": "no such peer"}},
    openapi_extra=access(Access.ROOM),
)
async def ping(
    request: Request,
    _: RoomDep,
    peer: Annotated[str, Query(description="the name of the peer to ask about")],
) -> dict[str, Any]:
    return PeerOut.dump(await hub_of(request).registry.ping(peer))
