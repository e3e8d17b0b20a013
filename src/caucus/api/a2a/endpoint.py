"""The served half of the door: the SDK's JSON-RPC dispatcher (A2A 1.0, and 0.3's
`message/send`, `message/stream`, `tasks/get`, `tasks/cancel` on the same URL) over `Door`,
and the cards as JSON. Built once per app, on the first A2A request."""

from __future__ import annotations

from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes.common import DefaultServerCallContextBuilder
from a2a.server.routes.jsonrpc_dispatcher import JsonRpcDispatcher
from a2a.types import a2a_pb2 as pb
from a2a.utils.constants import PROTOCOL_VERSION_1_0, VERSION_HEADER
from google.protobuf.json_format import MessageToDict
from starlette.requests import Request
from starlette.responses import Response

from caucus.api.a2a import quiet
from caucus.api.a2a.cards import agent_card, room_card
from caucus.api.a2a.door import Door
from caucus.api.a2a.screen import LEGACY_METHODS
from caucus.domain.peers import Peer
from caucus.services.holds import Hold
from caucus.services.hub import Hub

SCOPE_KEY = "caucus.api.a2a"  # (caller, agent named by the path, its hold) for the context builder


class _Context(DefaultServerCallContextBuilder):
    """The SDK's context (headers, for its version check) plus who calls whom: the caller the
    route authenticated, the agent its path names. A 1.0 method sent without `A2A-Version`
    is served as 1.0: the spec reads a missing header as 0.3, which has no such method, and
    no name is in both versions (ADR 0038)."""

    def build(self, request: Request) -> ServerCallContext:
        context = super().build(request)
        peer, to, hold, method = request.scope[SCOPE_KEY]
        headers = context.state.get("headers")
        if (
            isinstance(headers, dict)
            and not (headers.get(VERSION_HEADER) or headers.get(VERSION_HEADER.lower()))
            and method not in LEGACY_METHODS
        ):
            context.state["headers"] = {**headers, VERSION_HEADER.lower(): PROTOCOL_VERSION_1_0}
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
        self,
        request: Request,
        caller: Peer,
        to: str | None,
        method: str | None,
        hold: Hold | None = None,
    ) -> Response:
        """Answer the JSON-RPC request (`method`, as `api/a2a/screen.py` read it); `hold` is what
        it holds open, if it waits or streams (given back by the caller once the answer is
        sent)."""
        request.scope[SCOPE_KEY] = (caller, to, hold, method)
        with self._gate.serving(caller.id, caller.name):
            return await self._rpc.handle_requests(request)

    async def room_card(self, base: str, version: str | None) -> dict[str, Any]:
        card = room_card(await self._hub.registry.peers(), base, self._hub.settings.a2a_front)
        return _card_dict(card, version)

    async def agent_card(self, name: str, base: str, version: str | None) -> dict[str, Any]:
        view = self._hub.registry.view(await self._hub.registry.find(name))
        return _card_dict(agent_card(view, base), version)


def _card_dict(card: pb.AgentCard, version: str | None) -> dict[str, Any]:
    """The card in 1.0's shape for a client that says it speaks 1.0 (`A2A-Version`), else
    with 0.3's fields beside it (the SDK's shape: a client that sends no version is taken for
    a 0.3 one, which reads only those; ADR 0038)."""
    if version is not None and not version.startswith("0."):
        found: dict[str, Any] = MessageToDict(card)
        return found
    return agent_card_to_dict(card)
