"""What a request carries from the composition root (`caucus.server`): the hub and the feed.

They travel in the ASGI scope, put there by the root after the Host/Origin guard, so the API
works only as the root assembles it: an app built from these routers any other way finds no
hub and refuses every request.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import HTTPConnection
from starlette.types import Scope

from caucus.services.hub import Hub

SCOPE_KEY = "caucus"


@dataclass(frozen=True, slots=True)
class Served:
    """`feed` is the console's, typed by the dashboard that reads it (`dashboard.feed.feed_of`):
    plumbing carries it without knowing what it is, so no transport reaches up for its type."""

    hub: Hub
    feed: object


class NotComposed(RuntimeError):
    """The API was reached without passing the composition root."""


def served(scope: Scope) -> Served:
    found = scope.get(SCOPE_KEY)
    if not isinstance(found, Served):
        raise NotComposed("the Caucus API is served only by caucus.server.build_app()")
    return found


def hub_of(request: HTTPConnection) -> Hub:
    return served(request.scope).hub


def socket_url(scope: Scope, fallback: str) -> str:
    """Where an agent this hub starts reaches it: the very socket the request came in on (a
    launching hub binds loopback), else `fallback` (the URL the client used)."""
    server = scope.get("server")
    if server and server[1] is not None:
        host = str(server[0])
        return f"http://[{host}]:{server[1]}" if ":" in host else f"http://{host}:{server[1]}"
    return fallback.rstrip("/")
