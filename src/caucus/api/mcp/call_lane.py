"""A tool call on `/mcp`, on either protocol era, answered without the SDK's session machinery.

Through the SDK a `tools/call` on a session goes through its transport (a Starlette request,
the accept and session checks, an SSE response with its own task group and memory streams),
the session's message loop (another stream, a task per request) and the low-level server's
dispatch, before it reaches `ToolServer.call_tool`, and back the same way: ~0.7 ms of the
hub's time per call, more than the service call it wraps (issue 33, `benchmarks/mcp_path.py`).

`CallLane` takes a `tools/call` straight to `ToolServer.call_tool` when the SDK would have
let it through to it unchanged: a POST with the content type, accept and Host/Origin headers
the SDK asks for, a body within the limit that is one well-formed `tools/call` request
(nothing task-augmented, no `Mcp-Param-*` headers), and either a handshake-era version on a
session the SDK has built and that is live (not ending, not owned by a credential, its
initialize seen) or the 2026-07-28 era with an envelope and routing headers the SDK's own
classifier accepts (no session; the client is who its envelope says). Everything else, every
refusal included, is handed to the SDK unchanged, the body replayed; so are all other methods.

The answer is the SDK's own result, shaped by the same per-version sieve (and, on 2026-07-28,
completed with `resultType` and the `serverInfo` stamp as the SDK's runner does), as one JSON body
when the call ends within `STREAM_AFTER` (the modern transport of the SDK does the same, for a
longer window); a call that runs longer (a parked `listen`) gets an SSE stream, as the SDK
would have opened at once, kept alive with comments until the result is its one event. As the
SDK's transport does, the call holds the session open while it runs, and a client that hangs
up cancels it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

import anyio
import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.streamable_http import StreamableHTTPServerTransport, check_accept_headers
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.inbound import (
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
)
from mcp_types import SERVER_INFO_META_KEY as _SERVER_INFO
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from caucus.api.mcp.sessions import SESSION_HEADER, Sessions, replaying, whole_body
from caucus.mcp.server import ToolServer

log = logging.getLogger(__name__)

STREAM_AFTER = 1.0  # seconds a call may run before its answer becomes an SSE stream
PING_EVERY = 15.0  # seconds between keep-alive comments on such a stream (the SDK's interval)
_VERSION_HEADER = b"mcp-protocol-version"
_PARAM_HEADER = b"mcp-param-"  # checked against a tool's schema by the SDK: its to judge
_PARAMS = frozenset({"name", "arguments", "_meta"})
_INTERNAL_ERROR = -32603
_PING = b": ping\r\n\r\n"


class _Client:
    """What a tool call reads of its session: the client's initialize (or, without a session,
    what its request's envelope says of it)."""

    __slots__ = ("client_params",)

    def __init__(self, client_params: types.InitializeRequestParams | None) -> None:
        self.client_params = client_params


class CallLane:
    def __init__(self, sessions: Sessions, tools: ToolServer, *, max_body: int) -> None:
        self._sessions = sessions
        self._tools = tools
        self._max_body = max_body
        self._security = TransportSecurityMiddleware(sessions.security_settings)
        self.answered = 0  # calls answered here, ever (a test's evidence that the lane ran)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """Answer the request if it is a tool call this lane takes (None); otherwise the
        `receive` to hand the SDK (the body replayed if it was read)."""
        if scope["method"] != "POST":
            return receive
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        session_id = version = None
        for key, value in headers:
            if key == SESSION_HEADER:
                session_id = value.decode("latin-1")
            elif key == _VERSION_HEADER:
                version = value.decode("latin-1")
        if version is None:
            return receive
        ready = None
        if session_id is not None and version in HANDSHAKE_PROTOCOL_VERSIONS:
            ready = self._sessions.ready(session_id)
            if ready is None:
                return receive
            security = ready[0]._security
        elif session_id is None and version in MODERN_PROTOCOL_VERSIONS:
            security = self._security
        else:
            return receive
        request = Request(scope)
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse) or any(k.startswith(_PARAM_HEADER) for k, _ in headers):
            return receive
        if await security.validate_request(request, is_post=True) is not None:
            return receive
        body = await whole_body(headers, receive, self._max_body)
        if body is None:
            return receive
        call = _tool_call(body)
        if call is None:
            return replaying(body, receive)
        request_id, params, message = call
        if ready is not None:
            client: types.InitializeRequestParams | None = ready[1]
        else:
            client = _envelope(message, request)
            if client is None:
                return replaying(body, receive)
        context: ServerRequestContext[Any, Any] = ServerRequestContext(
            session=cast(ServerSession, _Client(client)),
            lifespan_context=None,
            protocol_version=version,
            method="tools/call",
            params=message["params"],
            request_id=request_id,
            meta=params.meta,
            request=request,
        )
        self.answered += 1
        with _in_flight(ready[0] if ready is not None else None):
            await self._answer(context, params, request_id, session_id, receive, send)
        return None

    async def _answer(
        self,
        context: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams,
        request_id: str | int,
        session_id: str | None,
        receive: Receive,
        send: Send,
    ) -> None:
        """Run the call in this task (most end at once: no task is made for them); one still
        running after `STREAM_AFTER` gets its stream opened and kept alive by another."""
        session = [(SESSION_HEADER, session_id.encode("latin-1"))] if session_id else []
        caller = asyncio.current_task()
        stream = _Stream(send, receive, session, caller)
        later = asyncio.get_running_loop().call_later(STREAM_AFTER, stream.open)
        try:
            outcome = await self._result(context, params, context.protocol_version)
        except asyncio.CancelledError:
            await stream.close()
            if stream.hung_up() and caller is not None:
                caller.uncancel()  # the client went: nothing to answer
                return
            raise
        finally:
            later.cancel()
        body = _response(request_id, outcome)
        if not await stream.close():
            headers = [(b"content-type", b"application/json"), *session]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif not stream.hung_up():
            event = b"event: message\r\ndata: %b\r\n\r\n" % body
            await send({"type": "http.response.body", "body": event})

    async def _result(
        self,
        context: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams,
        version: str,
    ) -> dict[str, Any]:
        """The JSON-RPC `result` or `error` member, as the SDK would have written it."""
        try:
            result = await self._tools.call_tool(context, params)
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            dumped = methods.serialize_server_result("tools/call", version, dumped)
            if version in MODERN_PROTOCOL_VERSIONS:  # as the SDK's runner completes one
                dumped.setdefault("resultType", "complete")
                meta = dumped.get("_meta")
                if meta is None or (isinstance(meta, dict) and meta.get(_SERVER_INFO) is None):
                    stamp = self._tools.server.server_info_stamp
                    dumped["_meta"] = {**(meta or {}), _SERVER_INFO: stamp}
            return {"result": dumped}
        except Exception:  # as the SDK: never a handler's internals on the wire
            log.exception("tool call %s failed", params.name)
            return {"error": {"code": _INTERNAL_ERROR, "message": "Internal error"}}


_SSE = [
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"content-type", b"text/event-stream"),
    (b"x-accel-buffering", b"no"),
]


class _Stream:
    """A long call's SSE stream: opened once the call has run `STREAM_AFTER`, kept alive with
    comments, and watched for the client hanging up (which cancels the call's task)."""

    def __init__(
        self,
        send: Send,
        receive: Receive,
        session: list[tuple[bytes, bytes]],
        caller: asyncio.Task[Any] | None,
    ) -> None:
        self._send, self._receive, self._session, self._caller = send, receive, session, caller
        self._tasks: list[asyncio.Task[None]] = []
        self._gone = False
        self._started = False

    def open(self) -> None:
        self._tasks = [
            asyncio.ensure_future(self._keep_alive()),
            asyncio.ensure_future(self._watch()),
        ]

    def hung_up(self) -> bool:
        return self._gone

    async def close(self) -> bool:
        """Stop keeping the stream alive; whether its head went out (the timer may have fired
        just as the call ended, with nothing sent yet: the answer is then one JSON body)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        return self._started

    async def _keep_alive(self) -> None:
        start = {"type": "http.response.start", "status": 200, "headers": [*_SSE, *self._session]}
        await self._send(start)
        self._started = True
        while True:
            await self._send({"type": "http.response.body", "body": _PING, "more_body": True})
            await asyncio.sleep(PING_EVERY)

    async def _watch(self) -> None:
        await _disconnected(self._receive)
        self._gone = True
        if self._caller is not None:
            self._caller.cancel()


def _tool_call(
    body: bytes,
) -> tuple[str | int, types.CallToolRequestParams, dict[str, Any]] | None:
    """(id, params, the message) of a body that is one well-formed `tools/call` request."""
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    request_id, params = message.get("id"), message.get("params")
    if message.get("jsonrpc") != "2.0" or set(message) != {"jsonrpc", "id", "method", "params"}:
        return None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    if not isinstance(params, Mapping) or not _PARAMS.issuperset(params):
        return None
    try:
        typed = types.CallToolRequestParams.model_validate(params, by_name=False)
    except ValidationError:
        return None  # the SDK answers it, with its own error
    return request_id, typed, message


def _envelope(message: dict[str, Any], request: Request) -> types.InitializeRequestParams | None:
    """For a 2026-07-28 request whose envelope and routing headers the SDK would accept, what
    its client says of itself (as the SDK's `Connection.from_envelope` reads it); else None."""
    if find_duplicated_routing_header(request.headers.items()) is not None:
        return None
    verdict = classify_inbound_request(message, headers=dict(request.headers))
    if isinstance(verdict, InboundLadderRejection):
        return None
    connection = Connection.from_envelope(
        verdict.protocol_version, verdict.client_info, verdict.client_capabilities
    )
    return connection.client_params


def _response(request_id: str | int, outcome: dict[str, Any]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, **outcome}
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


async def _disconnected(receive: Receive) -> None:
    message: Message = await receive()
    while message["type"] != "http.disconnect":
        message = await receive()


@contextmanager
def _in_flight(transport: StreamableHTTPServerTransport | None) -> Iterator[None]:
    """The session stays open while a call runs, and idles from when its last one ends (the
    accounting the SDK's `StreamableHTTPServerTransport.handle_request` does)."""
    if transport is None:  # no session
        yield
        return
    idle, timeout = transport.idle_scope, transport._idle_timeout
    if idle is None or timeout is None:
        yield
        return
    transport._requests_in_flight += 1
    idle.deadline = math.inf
    try:
        yield
    finally:
        transport._requests_in_flight -= 1
        if not transport._requests_in_flight:
            # A join in the call may have lengthened it (`Sessions.promote`).
            idle.deadline = anyio.current_time() + (transport._idle_timeout or timeout)
