"""What a request carries from the composition root (`caucus.server`): the hub and the feed.

They travel in the ASGI scope, put there by the root after the Host/Origin guard, so the API
works only as the root assembles it: an app built from these routers any other way finds no
hub and refuses every request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from starlette.requests import HTTPConnection
from starlette.types import Scope

from caucus.services.hub import Hub

if TYPE_CHECKING:
    from caucus.dashboard.feed import Feed

SCOPE_KEY = "caucus"


@dataclass(frozen=True, slots=True)
class Served:
    hub: Hub
    feed: Feed


class NotComposed(RuntimeError):
    """The API was reached without passing the composition root."""


def served(scope: Scope) -> Served:
    found = scope.get(SCOPE_KEY)
    if not isinstance(found, Served):
        raise NotComposed("the Caucus API is served only by caucus.server.build_app()")
    return found


def hub_of(request: HTTPConnection) -> Hub:
    return served(request.scope).hub


def feed_of(request: HTTPConnection) -> Feed:
    return served(request.scope).feed
