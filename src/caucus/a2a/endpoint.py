"""The served half of the door: the SDK's JSON-RPC dispatcher (A2A 1.0, and 0.3's
`message/send`, `message/stream`, `tasks/get`, `tasks/cancel` on the same URL) over `Door`,
and the cards as JSON. Built once per app, on the first A2A request."""

from __future__ import annotations

from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from starlette.requests import Request
from starlette.responses import Response

from caucus.a2a import quiet
from caucus.a2a.cards import agent_card, room_card
from caucus.a2a.door import Door
from caucus.domain.peers import Peer
from caucus.services.holds import Hold
from caucus.services.hub import Hub

SCOPE_KEY = "caucus.a2a"  # (caller, agent named by the path, its hold) for the context builder


class _Context(DefaultServerCallContextBuilder):
    """The SDK's context (headers, for its version check) plus who calls whom: the caller the
    route authenticated, the agent its path names."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        peer, to, hold = request.scope[SCOPE_KEY]
        context.state["caucus_peer"] = peer
        context.state["caucus_to"] = to
        context.state["caucus_hold"] = hold
        return context


class Endpoint:
    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        quiet.install()
        self._gate = quiet.Gate(hub.clock.monotonic)
        self._rpc = JsonRpcDispatcher(
            Door(hub, hub.settings.a2a_wait_max), _Context(), enable_v0_3_compat=True
        )

    async def call(
        self, request: Request, caller: Peer, to: str | None, hold: Hold | None = None
    ) -> Response:
        """Answer the JSON-RPC request; `hold` is what it holds open, if it waits or
        streams (given back by the caller once the answer is sent)."""
        request.scope[SCOPE_KEY] = (caller, to, hold)
        with self._gate.serving(caller.id, caller.name):
            return await self._rpc.handle_requests(request)

    async def room_card(self, base: str) -> dict[str, Any]:
        return agent_card_to_dict(room_card(await self._hub.registry.peers(), base))

    async def agent_card(self, name: str, base: str) -> dict[str, Any]:
        view = self._hub.registry.view(await self._hub.registry.find(name))
        return agent_card_to_dict(agent_card(view, base))
