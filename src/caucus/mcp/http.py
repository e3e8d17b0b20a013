"""`/mcp`: the tool catalog over Streamable HTTP, in the hub process, with the official SDK.

Identity is the hub token a session obtains with `join`, never the MCP session id: each stateful
MCP session (handshake-era protocols) gets its own `LocalPort`, which holds the token `join`
returned. A request that carries `Authorization: Bearer <agent token>` acts as that agent
instead, whatever the protocol (that is how a client of the stateless 2026-07-28 protocol, which
has no session, keeps an identity across calls).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from caucus.mcp.ports import LocalPort
from caucus.mcp.tools import Catalog
from caucus.services.hub import Hub

MCP_PATH = "/mcp"
MAX_PORTS = 10_000  # sessions remembered; the least recently used is forgotten first


class McpEndpoint:
    """The ASGI app behind `/mcp` and the per-session ports it serves."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._ports: OrderedDict[str, LocalPort] = OrderedDict()
        self.server = Catalog(self.port_for).build()
        settings = hub.settings
        hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"]
        hosts += [h if ":" in h else f"{h}:*" for h in settings.allowed_hosts]
        origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
        origins += list(settings.allowed_origins)
        # The SDK's own app for mounting in another application (stateful sessions).
        self._app = self.server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            transport_security=TransportSecuritySettings(
                enable_dns_rebinding_protection=True,
                allowed_hosts=hosts,
                allowed_origins=origins,
            ),
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    def port_for(self, ctx: Context) -> LocalPort:
        request = ctx.request_context.request
        headers = request.headers if request is not None else {}
        auth = headers.get("authorization", "")
        scheme, _, token = auth.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            key = "token:" + token.strip()
        else:
            session_id = headers.get("mcp-session-id")
            key = "session:" + session_id if session_id else ""
        if not key:
            return LocalPort(self.hub, persistent=False)  # no session, no token
        port = self._ports.get(key)
        if port is None:
            port = LocalPort(self.hub)
            if key.startswith("token:"):
                port.adopt(key.removeprefix("token:"))
            self._ports[key] = port
            if len(self._ports) > MAX_PORTS:
                self._ports.popitem(last=False)
        else:
            self._ports.move_to_end(key)
        return port
