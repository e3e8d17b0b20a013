"""The A2A door's routes (issue 34): the room's agent card, each agent's, and the JSON-RPC
endpoints. The caller's room token is checked here, before anything is dispatched; the A2A
SDK (and protobuf) load on the first A2A request, not when the hub starts."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse, Response

from caucus.api.a2a.screen import VERSION_HEADER, screen, unparsable
from caucus.domain.control import Access
from caucus.domain.peers import Peer
from caucus.errors import CaucusError
from caucus.services.holds import Hold, HoldKind
from caucus.web.access import PeerDep, RoomDep, access
from caucus.web.body import parse_json
from caucus.web.context import hub_of
from caucus.web.held import Held
from caucus.wire.errors import ErrorBody

if TYPE_CHECKING:
    from caucus.api.a2a.endpoint import Endpoint

router = APIRouter(tags=["a2a"])

Name = Annotated[str, Path(min_length=1, max_length=64, description="an agent in the room")]
_CARD_HEADERS = {"Cache-Control": "no-cache"}  # agents come and go: revalidate every time
_CARD: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "an A2A 1.0 AgentCard",
        "content": {"application/json": {"schema": {"type": "object"}}},
    },
    401: {"model": ErrorBody, "description": "an unknown token (or the agent key is missing)"},
}
_RPC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "a JSON-RPC 2.0 answer (an A2A error is a JSON-RPC error here), or for "
        "SendStreamingMessage, message/stream and SubscribeToTask a stream of them",
        "content": {
            "application/json": {"schema": {"type": "object"}},
            "text/event-stream": {"schema": {"type": "string"}},
        },
    },
    400: {"model": ErrorBody, "description": "the body is not JSON"},
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    403: {"model": ErrorBody, "description": "an operator or observer token: not an agent"},
    413: {"model": ErrorBody, "description": "the body is past the hub's limit"},
    415: {"model": ErrorBody, "description": "not application/json"},
    429: {"model": ErrorBody, "description": "a wait or stream past what you may hold open"},
}
_RPC_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "type": "object",
                    "description": "a JSON-RPC 2.0 request: SendMessage, SendStreamingMessage, "
                    "GetTask, ListTasks, CancelTask, SubscribeToTask (A2A 1.0, with the header "
                    "A2A-Version: 1.0) or message/send, message/stream, tasks/get, "
                    "tasks/cancel (A2A 0.3)",
                }
            }
        },
    }
}


def _endpoint(request: Request) -> Endpoint:
    """The app's one A2A endpoint, built on first use (the SDK's import is the cost)."""
    state = request.app.state
    found: Endpoint | None = getattr(state, "caucus_a2a", None)
    if found is None:
        from caucus.api.a2a.endpoint import Endpoint

        found = state.caucus_a2a = Endpoint(hub_of(request))
    return found


def _version(request: Request) -> str | None:
    """The A2A version a client says it speaks (the header, or the query parameter the spec
    allows instead)."""
    return request.headers.get(VERSION_HEADER) or request.query_params.get("A2A-Version")


def _base(request: Request) -> str:
    """Where the cards say the hub is: its configured public URL, else the URL the request came
    in by (built from its one Host header: the Guard refuses a request with two)."""
    configured = hub_of(request).settings.public_url
    return (configured or str(request.base_url)).rstrip("/")


@router.get(
    "/.well-known/agent-card.json",
    summary="The room's A2A agent card: each agent here is a skill, with its own card",
    responses=_CARD,
    openapi_extra=access(Access.ROOM),
    response_class=JSONResponse,
)
async def room_card(request: Request, _: RoomDep) -> Response:
    card = await _endpoint(request).room_card(_base(request), _version(request))
    return JSONResponse(card, headers=_CARD_HEADERS)


@router.get(
    "/a2a/.well-known/agent-card.json",
    summary="The room's A2A agent card again, where a client looks for the card of the "
    "room's endpoint (/a2a)",
    responses=_CARD,
    openapi_extra=access(Access.ROOM),
    response_class=JSONResponse,
)
async def room_endpoint_card(request: Request, _: RoomDep) -> Response:
    return await room_card(request, _)


@router.get(
    "/a2a/{name}/.well-known/agent-card.json",
    summary="One agent's A2A agent card: its declared skills and its JSON-RPC endpoint",
    responses={**_CARD, 404: {"model": ErrorBody, "description": "no such agent here"}},
    openapi_extra=access(Access.ROOM),
    response_class=JSONResponse,
)
async def agent_card(name: Name, request: Request, _: RoomDep) -> Response:
    card = await _endpoint(request).agent_card(name, _base(request), _version(request))
    return JSONResponse(card, headers=_CARD_HEADERS)


@router.post(
    "/a2a",
    summary="A2A JSON-RPC for the room: a message names its agent in metadata.to and becomes "
    "a task from you to it",
    responses=_RPC,
    openapi_extra={**access(Access.AGENT), **_RPC_BODY},
    response_class=JSONResponse,
)
async def room_rpc(request: Request, peer: PeerDep) -> Response:
    return await _call(request, peer, None)


@router.post(
    "/a2a/{name}",
    summary="A2A JSON-RPC for one agent: a message becomes a task from you to it; GetTask, "
    "ListTasks and CancelTask read and cancel yours",
    responses={**_RPC, 404: {"model": ErrorBody, "description": "no such agent here"}},
    openapi_extra={**access(Access.AGENT), **_RPC_BODY},
    response_class=JSONResponse,
)
async def agent_rpc(name: Name, request: Request, peer: PeerDep) -> Response:
    await hub_of(request).registry.find(name)
    return await _call(request, peer, name)


# The methods that wait for a task's outcome or stream it: each holds the caller's share of
# what it may keep open (`services.holds`) until its answer is sent (429 `cap_streams` past it).
_WAITING = frozenset(
    {
        "SendMessage",
        "SendStreamingMessage",
        "SubscribeToTask",
        "message/send",
        "message/stream",
        "tasks/resubscribe",
    }
)


async def _call(request: Request, peer: Peer, to: str | None) -> Response:
    try:
        verdict = screen(parse_json(await request.body()), request.headers.get(VERSION_HEADER))
    except CaucusError as exc:  # not JSON the hub keeps: JSON-RPC's parse error
        verdict = unparsable(exc.detail)
    if verdict.silent:  # a notification: JSON-RPC answers none, and it does nothing
        return Response(status_code=204)
    if verdict.answer is not None:
        return JSONResponse(verdict.answer)
    endpoint = _endpoint(request)
    if verdict.method not in _WAITING:
        return await endpoint.call(request, peer, to, verdict.method)
    hold = hub_of(request).holds.take(peer.id, HoldKind.A2A)
    # A blocking send answers once: a caller that hangs up first ends its wait (a stream's
    # hang-up is its response's to see).
    watching = asyncio.ensure_future(_hung_up(request, hold)) if verdict.method in _ONCE else None
    try:
        return Held(await endpoint.call(request, peer, to, verdict.method, hold), hold.release)
    except BaseException:
        hold.release()
        raise
    finally:
        if watching is not None:
            watching.cancel()


_ONCE = frozenset({"SendMessage", "message/send"})


async def _hung_up(request: Request, hold: Hold) -> None:
    """End `hold` when the client disconnects (its body is read already: what comes next is
    the disconnect)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
    hold.end()
