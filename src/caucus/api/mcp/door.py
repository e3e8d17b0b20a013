"""`/mcp`, loaded once the hub serves: the MCP endpoint (`api/mcp/http.py`) behind a door.

The MCP SDK and the tool catalog take about half a second to import, a third of a hub's start
(issue 50: `caucus hub` serving within 1.5 s). So the hub starts without them: its lifespan
imports the endpoint in a worker thread while the event loop already serves, then runs the
endpoint's session manager for the rest of the lifespan. A request for `/mcp` that comes first
waits for the load (it is not refused); the lean lane leaves `/mcp` to the ASGI path until the
endpoint is there; no session exists before it, so none is `joined`.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from starlette.types import Receive, Scope, Send

from caucus.web.errors import error_response, unexpected_error_body
from caucus.web.uvicorn_http import Exchange, Headers

if TYPE_CHECKING:
    from caucus.api.mcp.call_lane import CallLane
    from caucus.api.mcp.http import McpEndpoint
    from caucus.services.hub import Hub

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"


class McpDoor:
    """The endpoint once loaded; until then, what answers for it without the SDK."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.endpoint: McpEndpoint | None = None
        self._ready = asyncio.Event()
        self._failed = False

    async def loaded(self) -> McpEndpoint:
        """The endpoint, once the lifespan has loaded it."""
        await self._ready.wait()
        if self.endpoint is None:
            raise RuntimeError("the MCP endpoint failed to load; the hub's log says why")
        return self.endpoint

    @property
    def calls(self) -> CallLane:
        """The endpoint's call lane (the lean lane's partner), once loaded."""
        if self.endpoint is None:
            raise RuntimeError("the MCP endpoint is not loaded yet: await loaded()")
        return self.endpoint.calls

    @property
    def open_sessions(self) -> int:
        """Handshake-era sessions open now, joined or not (none before the load)."""
        return 0 if self.endpoint is None else self.endpoint.open_sessions

    def session_state(self, session_id: str) -> str | None:
        """ "joined", "unjoined" or None, without any I/O (no session before the load)."""
        return None if self.endpoint is None else self.endpoint.session_state(session_id)

    # --- the lean lane's side: nothing until the endpoint is there ----------------------------
    def may_take(self, headers: Headers) -> bool:
        return self.endpoint is not None and self.endpoint.calls.may_take(headers)

    def takes(self, headers: Headers, body: bytes) -> Any:
        return self.calls.takes(headers, body)

    async def answer_lean(
        self, exchange: Exchange, security: list[tuple[bytes, bytes]]
    ) -> tuple[bytes, Headers]:
        return await self.calls.answer_lean(exchange, security)

    # --- the lifespan and the ASGI side -------------------------------------------------------
    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        stop = asyncio.Event()
        task = asyncio.ensure_future(self._run(stop))
        try:
            yield
        finally:
            stop.set()
            await task

    async def _run(self, stop: asyncio.Event) -> None:
        try:
            module = await asyncio.to_thread(importlib.import_module, "caucus.api.mcp.http")
            endpoint: McpEndpoint = module.McpEndpoint(self.hub)
        except Exception:
            log.exception("the MCP endpoint failed to load; /mcp answers 500")
            self._failed = True
            self._ready.set()
            return
        async with endpoint.running():
            self.endpoint = endpoint
            self._ready.set()
            await stop.wait()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._ready.wait()
        if self.endpoint is None:
            await error_response(500, unexpected_error_body())(scope, receive, send)
            return
        await self.endpoint(scope, receive, send)
