"""Credentials come only from the `Authorization: Bearer` header, never from the URL.

Every route declares what it needs with `access(...)` (recorded in /openapi.json as
`x-caucus-access`); the authorization matrix test holds every route to its declaration.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from caucus.domain.control import Role
from caucus.domain.peers import Peer
from caucus.errors import Unauthorized
from caucus.services.hub import Hub
from caucus.services.roles import Access

ACCESS_KEY = "x-caucus-access"


def access(level: Access, **openapi: Any) -> dict[str, Any]:
    """`openapi_extra` for a route: its access level, plus any other OpenAPI fields."""
    return {ACCESS_KEY: level.value, **openapi}


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        return None
    return token


def hub_of(request: Request) -> Hub:
    hub: Hub = request.app.state.hub
    return hub


async def current_peer(request: Request) -> Peer:
    """The authenticated agent (revived if it was reaped)."""
    return await hub_of(request).registry.authenticate(bearer_token(request))


async def room_view(request: Request) -> None:
    """Reading who is here: open to anyone who could register, refused to a bad token."""
    hub = hub_of(request)
    header = request.headers.get("authorization")
    token = bearer_token(request)
    if header is not None and token is None:
        raise Unauthorized("malformed Authorization header: send 'Bearer <token>'")
    if token is not None:
        if hub.roles.role_of(token) is None:
            await hub.registry.authenticate(token)  # an agent: refreshes its liveness too
        return
    if hub.settings.agent_key:
        raise Unauthorized("this hub requires an agent key: register first, then send your token")


async def operator_role(request: Request) -> Role:
    return await hub_of(request).roles.require(bearer_token(request), Access.OPERATOR)


async def viewer_role(request: Request) -> Role:
    return await hub_of(request).roles.require(bearer_token(request), Access.VIEWER)


PeerDep = Annotated[Peer, Depends(current_peer)]
RoomDep = Annotated[None, Depends(room_view)]
OperatorDep = Annotated[Role, Depends(operator_role)]
ViewerDep = Annotated[Role, Depends(viewer_role)]
