"""Who is calling, for the FastAPI routes: every dependency asks `Principals`.

Credentials come only from headers. Every route declares what it needs with `access(...)`
(recorded in /openapi.json as `x-caucus-access`); the authorization matrix test holds every
route to its declaration.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from caucus.domain.control import Access, Role
from caucus.domain.peers import Peer
from caucus.services.principals import Principal
from caucus.web.bearer import parse_bearer
from caucus.web.context import hub_of
from caucus.wire.headers import AGENT_KEY_HEADER

ACCESS_KEY = "x-caucus-access"


def access(level: Access, **openapi: Any) -> dict[str, Any]:
    """`openapi_extra` for a route: its access level, plus any other OpenAPI fields."""
    return {ACCESS_KEY: level.value, **openapi}


def bearer_token(request: Request) -> str | None:
    return parse_bearer(request.headers.get("authorization"))


async def current_peer(request: Request) -> Peer:
    """The authenticated agent (revived if it was away)."""
    return await hub_of(request).principals.agent(bearer_token(request))


async def room_view(request: Request) -> Principal:
    """Reading who is here: anyone who could register, and every valid token."""
    return await hub_of(request).principals.room(
        bearer_token(request), request.headers.get(AGENT_KEY_HEADER)
    )


async def current_watcher(request: Request) -> Peer:
    """The agent a watch key watches for (`caucus watch`)."""
    return await hub_of(request).principals.watcher(bearer_token(request))


async def operator_role(request: Request) -> Role:
    return await hub_of(request).principals.role(bearer_token(request), Access.OPERATOR)


async def viewer_role(request: Request) -> Role:
    return await hub_of(request).principals.role(bearer_token(request), Access.VIEWER)


PeerDep = Annotated[Peer, Depends(current_peer)]
RoomDep = Annotated[Principal, Depends(room_view)]
WatcherDep = Annotated[Peer, Depends(current_watcher)]
OperatorDep = Annotated[Role, Depends(operator_role)]
ViewerDep = Annotated[Role, Depends(viewer_role)]
