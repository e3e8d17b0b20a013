"""Credentials come only from the `Authorization: Bearer` header, never from the URL."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from caucus.domain.peers import Peer
from caucus.services.hub import Hub


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
    """FastAPI dependency: the authenticated peer (revived if it was reaped)."""
    return await hub_of(request).registry.authenticate(bearer_token(request))


PeerDep = Annotated[Peer, Depends(current_peer)]
