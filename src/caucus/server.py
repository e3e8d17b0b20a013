"""The one composition root: a hub with its parts, and the whole ASGI app that serves it.

From the outside in, every request meets:
1. `Guard`: the Host and Origin checks and the security headers, before anything else;
   then `Shield`: requests from parties the hub does not know are served a few at a time,
   and an address that has earned too many refusals is answered 429 at the door;
2. `_Served`: puts the hub and the console feed into the request's scope, which is the only
   way the routes find them (an app assembled from the routers any other way refuses every
   request);
3. `FastLane`: `POST /send` and `GET /receive` without FastAPI (ADR 0002); and before all
   of these, served by uvicorn's protocol itself, the same two for a known agent, without
   an ASGI cycle at all (`lean_lane`: `api/lean_lane.py`, `web/uvicorn_http.py`, ADR 0026);
4. `McpFront`: `/mcp` to the MCP endpoint (`api/mcp/http.py`), behind `McpDoor`
   (`api/mcp/door.py`), which loads it once the hub serves;
5. FastAPI, behind `JsonBodies` (the body limit and the one JSON reader): the API, the
   operator's routes and the console.

`build_app(hub)` is the only public way to get something servable; `caucus hub` and
`caucus.testing.serve` both use it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from caucus import __version__
from caucus.api.hotpath import FastLane
from caucus.api.lean_lane import HubLane
from caucus.api.mcp.door import McpDoor
from caucus.api.routes import ROUTERS
from caucus.clock import Clock
from caucus.config import Settings
from caucus.dashboard import console, oversight
from caucus.dashboard import routes as dashboard_routes
from caucus.dashboard.feed import Feed
from caucus.dashboard.relay import FeedRelay
from caucus.dashboard.transcript import TranscriptWriter
from caucus.domain.buckets import TokenBuckets
from caucus.errors import StorageError, Unauthorized
from caucus.ids import hash_token
from caucus.services.hub import Hub
from caucus.web.access import ACCESS_KEY
from caucus.web.admission import Admission, Party
from caucus.web.bearer import parse_bearer
from caucus.web.body import JsonBodies
from caucus.web.context import SCOPE_KEY, Served
from caucus.web.errors import caucus_error_response, install_error_handlers
from caucus.web.guard import SECURITY_HEADERS, Guard
from caucus.web.openapi import truthful
from caucus.web.shield import Shield

DESCRIPTION = """\
Caucus hub HTTP API. Authenticate with `Authorization: Bearer <token>` from `POST /register`.
Every error is JSON `{"error": <code>, "detail": <sentence>}`, with `next` (what to do next, as
a stable code) and `hint` (the same, as a route) where there is a next step.
"""


def open_hub(
    settings: Settings, *, clock: Clock | None = None, run_maintenance: bool = True
) -> Hub:
    """A hub with every part its settings ask for (the transcript file), not yet started."""
    hub = Hub(settings, clock=clock, run_maintenance=run_maintenance)
    if settings.transcript:
        hub.attach(
            TranscriptWriter(
                hub.history,
                hub.notifier,
                hub.clock,
                Path(settings.transcript).expanduser(),
                max_bytes=settings.transcript_max_bytes,
                keep=settings.transcript_keep,
            )
        )
    return hub


class McpFront:
    """`/mcp` to the MCP endpoint, everything else on."""

    def __init__(self, app: ASGIApp, mcp: ASGIApp) -> None:
        self.app = app
        self.mcp = mcp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and Admission.mcp(scope["path"]):
            await self.mcp(scope, receive, send)
            return
        await self.app(scope, receive, send)


class _Served:
    """Hands every request what it is served with, once the app has started."""

    def __init__(self, app: ASGIApp, root: CaucusApp) -> None:
        self.app = app
        self.root = root

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            served = self.root.served
            if served is None:
                refusal = StorageError("the hub is starting; retry in a moment")
                await caucus_error_response(refusal, SECURITY_HEADERS)(scope, receive, send)
                return
            scope[SCOPE_KEY] = served
        await self.app(scope, receive, send)


class CaucusApp:
    """The hub as one ASGI app (see the module docstring for its layers).

    The caller owns the hub's lifecycle (start it before serving, stop it after); the app's
    own lifespan runs the console feed and the MCP session manager."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.served: Served | None = None
        self.mcp = McpDoor(hub)
        self._api = self._fastapi()
        settings = hub.settings
        # Who may come in and which way: one decision for the ASGI stack and the lean lane.
        self.admission = Admission(
            allowed_hosts=settings.allowed_hosts,
            allowed_origins=settings.allowed_origins,
            max_body_bytes=settings.max_body_bytes,
            party=self._party,
            serving=lambda: self.served is not None,
        )
        self._app = self._stack()
        # What uvicorn's protocol serves without an ASGI cycle (web/uvicorn_http.py, ADR 0026).
        self.lean_lane = HubLane(hub, self.admission, self.mcp) if settings.lean_lane else None

    def _stack(self) -> ASGIApp:
        """The ASGI stack around FastAPI, built from its layers, outside in (the module
        docstring says what each is for)."""
        settings = self.hub.settings
        refusals = TokenBuckets(
            self.hub.clock,
            capacity=settings.shield_capacity,
            refill=settings.shield_refill,
            what="refusals from this address",
        )
        layers: list[Callable[[ASGIApp], ASGIApp]] = [
            lambda app: Guard(app, self.admission, adds_own_headers=FastLane.serves),
            lambda app: Shield(
                app,
                budget=refusals,
                party=lambda scope: self.admission.party(scope["headers"]),
                strangers=settings.stranger_concurrency,
                stranger_rate=settings.stranger_rate,
                stranger_burst=settings.stranger_burst,
                max_body_bytes=self.admission.max_body,
            ),
            lambda app: _Served(app, self),
            lambda app: FastLane(
                app, max_body_bytes=self.admission.max_body, headers=list(SECURITY_HEADERS)
            ),
            lambda app: McpFront(app, self.mcp),
        ]
        app: ASGIApp = self._api
        for layer in reversed(layers):
            app = layer(app)
        return app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    def _party(self, headers: list[tuple[bytes, bytes]]) -> Party:
        """Who a request is, told from its headers without any I/O (for `Shield`)."""
        party = Party.STRANGER
        for name, value in headers:
            if name == b"authorization":
                try:
                    token = parse_bearer(value.decode("latin-1"))
                except Unauthorized:  # malformed: the routes say so, with their 401
                    return Party.STRANGER
                if token is not None and (
                    self.hub.registry.knows(hash_token(token))
                    or self.hub.watchers.knows(hash_token(token))
                    or self.hub.roles.role_of(token) is not None
                ):
                    return Party.KNOWN
            elif name == b"mcp-session-id":
                session = self.mcp.session_state(value.decode("latin-1"))
                if session == "joined":
                    return Party.KNOWN
                if session == "unjoined":
                    party = Party.SESSION
        return party

    def openapi(self) -> dict[str, Any]:
        """The API's OpenAPI document (what `/openapi.json` serves)."""
        return self._api.openapi()

    @property
    def api_routes(self) -> list[Any]:
        """The FastAPI routes, for tools that walk them (the route-coverage tests)."""
        return list(self._api.routes)

    @asynccontextmanager
    async def _lifespan(self, _: FastAPI) -> AsyncIterator[None]:
        feed = Feed(self.hub)
        # With a database other hub processes share, their events reach this feed too.
        relay = FeedRelay(self.hub, feed) if self.hub.notifier.shared else None
        try:
            async with self.mcp.running():
                self.served = Served(self.hub, feed)
                yield
        finally:
            self.served = None
            await self.hub.launcher.close()  # while the hub still answers their goodbyes
            if relay is not None:
                relay.close()
            feed.close()

    def _fastapi(self) -> FastAPI:
        app = FastAPI(
            title="Caucus hub",
            version=__version__,
            description=DESCRIPTION,
            lifespan=self._lifespan,
            # The interactive explorers load scripts from a CDN, which the CSP (and an offline
            # machine) forbids; /openapi.json is the reference.
            docs_url=None,
            redoc_url=None,
        )
        install_error_handlers(app)
        for router in ROUTERS:
            app.include_router(router)
        app.include_router(dashboard_routes.router)
        app.include_router(oversight.router)
        app.include_router(console.router)
        app.add_middleware(JsonBodies, max_bytes=self.hub.settings.max_body_bytes)
        generate = app.openapi
        done: list[dict[str, Any]] = []

        def documented() -> dict[str, Any]:
            if not done:
                done.append(truthful(generate(), ACCESS_KEY))
            return done[0]

        app.openapi = documented  # type: ignore[method-assign]
        return app


def build_app(hub: Hub) -> CaucusApp:
    """The servable app for `hub`: everything behind the Host/Origin guard."""
    return CaucusApp(hub)
