"""`create_app(settings)`: everything the HTTP transport needs, built fresh, no globals."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from caucus import __version__
from caucus.api.errors import install_error_handlers
from caucus.api.hotpath import FastLane
from caucus.api.middleware import SECURITY_HEADERS, BodyLimit, Guard
from caucus.api.routes import (
    channels,
    floors,
    forms,
    messages,
    meta,
    offers,
    operator,
    peers,
    tasks,
)
from caucus.clock import Clock
from caucus.config import Settings
from caucus.dashboard import console, oversight
from caucus.dashboard import routes as dashboard_routes
from caucus.dashboard.feed import Feed
from caucus.mcp.http import MCP_PATH, McpEndpoint
from caucus.services.hub import Hub

DESCRIPTION = """\
Caucus hub HTTP API. Authenticate with `Authorization: Bearer <token>` from `POST /register`.
Every error is JSON `{"error": <code>, "detail": <sentence>}`.
"""


class McpFront:
    """`/mcp` to the MCP endpoint, everything else on."""

    def __init__(self, app: ASGIApp, mcp: ASGIApp) -> None:
        self.app = app
        self.mcp = mcp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].rstrip("/") == MCP_PATH:
            await self.mcp(scope, receive, send)
            return
        await self.app(scope, receive, send)


def asgi(app: FastAPI) -> ASGIApp:
    """What a server runs: the app behind the hot-path lane (`api/hotpath.py`) and `/mcp`
    (`mcp/http.py`), all of it behind the Host/Origin guard and security headers."""
    hub: Hub = app.state.hub
    lane = FastLane(
        McpFront(app, app.state.mcp),
        hub,
        max_body_bytes=hub.settings.max_body_bytes,
        headers=list(SECURITY_HEADERS),
    )
    return Guard(
        lane,
        allowed_hosts=hub.settings.allowed_hosts,
        allowed_origins=hub.settings.allowed_origins,
        adds_own_headers=FastLane.ROUTES,
    )


def create_app(
    settings: Settings | None = None,
    *,
    hub: Hub | None = None,
    clock: Clock | None = None,
) -> FastAPI:
    """Build the app. If no hub is given, the app owns one and starts/stops it with its lifespan;
    a hub passed in is started and stopped by the caller."""
    settings = settings or (hub.settings if hub else Settings())
    owned = hub is None
    the_hub = hub or Hub(settings, clock=clock)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if owned:
            await the_hub.start()
        app.state.feed = Feed(the_hub)
        try:
            async with app.state.mcp.running():
                yield
        finally:
            app.state.feed.close()
            if owned:
                await the_hub.stop()

    app = FastAPI(
        title="Caucus hub",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        # The interactive explorers load scripts from a CDN, which the CSP (and an offline
        # machine) forbids; /openapi.json is the reference.
        docs_url=None,
        redoc_url=None,
    )
    app.state.hub = the_hub
    app.state.mcp = McpEndpoint(the_hub)
    install_error_handlers(app)
    for module in (peers, messages, channels, floors, forms, tasks, offers, operator, meta):
        app.include_router(module.router)
    app.include_router(dashboard_routes.router)
    app.include_router(oversight.router)
    app.include_router(console.router)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    return app
