"""Identities: register, offline, leave, status, peers, ping."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Request

from caucus.domain.peers import Peer
from caucus.services.principals import Principal
from caucus.web.access import bearer_token
from caucus.web.context import hub_of
from caucus.web.verbs import Call, route_args, serve
from caucus.wire.headers import AGENT_KEY_HEADER
from caucus.wire.peers import Departure, PeerInfo, PeerList, Registered, StatusInfo
from caucus.wire.queries import PingQuery
from caucus.wire.requests import RegisterRequest, StatusRequest
from caucus.wire.verbs import VERBS

router = APIRouter()


@router.api_route(**route_args(VERBS["register"]))
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


async def _offline(c: Call[Peer, None]) -> Departure:
    await c.hub.registry.offline(c.who)
    return Departure(name=c.who.name, left=False)


async def _leave(c: Call[Peer, None]) -> Departure:
    await c.hub.registry.leave(c.who)
    return Departure(name=c.who.name, left=True)


async def _status(c: Call[Peer, StatusRequest]) -> StatusInfo:
    await c.hub.registry.set_status(c.who, c.rq.status)
    return StatusInfo(name=c.who.name, status=c.who.status)


async def _peers(c: Call[Principal, None]) -> PeerList:
    return PeerList.of(await c.hub.registry.peers())


async def _ping(c: Call[Any, PingQuery]) -> PeerInfo:
    return PeerInfo.of(await c.hub.registry.ping(c.rq.peer))


serve(router, VERBS["offline"], _offline)
serve(router, VERBS["leave"], _leave)
serve(router, VERBS["set_status"], _status)
serve(router, VERBS["peers"], _peers)
serve(router, VERBS["ping"], _ping)
