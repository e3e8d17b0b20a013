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
from typing import Any, NamedTuple, cast

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from mcp_types import SERVER_INFO_META_KEY as _SERVER_INFO
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from caucus.api.mcp.sdk import (
    Connection,
    InboundLadderRejection,
    InFlight,
    StreamableHTTPServerTransport,
    TransportSecurityMiddleware,
    check_accept_headers,
    classify_inbound_request,
    find_duplicated_routing_header,
    security_of,
)
from caucus.api.mcp.sessions import SESSION_HEADER, Sessions, replaying, whole_body
from caucus.mcp.server import ToolServer
from caucus.web.uvicorn_http import Exchange

log = logging.getLogger(__name__)

STREAM_AFTER = 1.0  # seconds a call may run before its answer becomes an SSE stream
PING_EVERY = 15.0  # seconds between keep-alive comments on such a stream (the SDK's interval)
_VERSION_HEADER = b"mcp-protocol-version"
_PARAM_HEADER = b"mcp-param-"  # checked against a tool's schema by the SDK: its to judge
_PARAMS = frozenset({"name", "arguments", "_meta"})
_INTERNAL_ERROR = -32603
_PING = b": ping\r\n\r\n"
# The headers the SDK's transport judges a POST by: accept, content type, Host, Origin.
_CHECKED = frozenset({b"accept", b"content-type", b"host", b"origin"})
_ADMITS_KEPT = 256  # combinations of their values remembered as admitted


class _Client:
    """What a tool call reads of its session: the client's initialize (or, without a session,
    what its request's envelope says of it)."""

    __slots__ = ("client_params",)

    def __init__(self, client_params: types.InitializeRequestParams | None) -> None:
        self.client_params = client_params


class CallLane:
    def __init__(
        self, sessions: Sessions, tools: ToolServer, *, max_body: int, enabled: bool = True
    ) -> None:
        self.enabled = enabled  # off: every request is the SDK's (a benchmark's baseline)
        self._sessions = sessions
        self._tools = tools
        self._max_body = max_body
        self._security = TransportSecurityMiddleware(sessions.security_settings)
        self._admits: set[tuple[Any, ...]] = set()
        self._stamp: bytes | None = None
        self.answered = 0  # calls answered here, ever (a test's evidence that the lane ran)

    async def serve(self, scope: Scope, receive: Receive, send: Send) -> Receive | None:
        """Answer the request if it is a tool call this lane takes (None); otherwise the
        `receive` to hand the SDK (the body replayed if it was read)."""
        if scope["method"] != "POST" or not self.enabled:
            return receive
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        session_id, version = _routing(headers)
        if version is None:
            return receive
        ready = None
        if session_id is not None and version in HANDSHAKE_PROTOCOL_VERSIONS:
            ready = self._sessions.ready(session_id)
            if ready is None:
                return receive
            security = security_of(ready[0])
        elif session_id is None and version in MODERN_PROTOCOL_VERSIONS:
            security = self._security
        else:
            return receive
        request = Request(scope)
        if not await self._admitted(request, headers, security):
            return receive
        body = await whole_body(headers, receive, self._max_body)
        if body is None:
            return receive
        call = _tool_call(body)
        if call is None or call[1].name not in self._tools.catalog.tools:
            return replaying(body, receive)  # an unknown tool is a protocol error: the SDK's
        if ready is not None:
            client: types.InitializeRequestParams | None = ready[1]
        else:
            client = _envelope(call[2], request)
            if client is None:
                return replaying(body, receive)
        context = _context(client, version, call, request)
        self.answered += 1
        with InFlight(ready[0] if ready is not None else None):
            await self._answer(context, call[1], call[0], session_id, receive, send)
        return None

    # --- without an ASGI cycle (`api/lean_lane.py`) -------------------------------------------
    def may_take(self, headers: list[tuple[bytes, bytes]]) -> bool:
        """From a request's head alone, whether `takes` may take it: a live, built session's
        call whose headers the SDK's transport has already admitted once (the first call with
        them goes the ASGI way, which judges them and remembers the verdict)."""
        session_id, version = _routing(headers)
        if session_id is None or version not in HANDSHAKE_PROTOCOL_VERSIONS or not self.enabled:
            return False
        ready = self._sessions.ready(session_id)
        if ready is None:
            return False
        known = _admit_key(headers, security_of(ready[0]))
        return known is not None and known in self._admits

    def takes(self, headers: list[tuple[bytes, bytes]], body: bytes) -> _Prepared | None:
        """With the body in: the call to answer, if it is one tool call on a session that is
        still live; None hands the request to the ASGI way, unread."""
        session_id, version = _routing(headers)
        if session_id is None or version is None:
            return None
        ready = self._sessions.ready(session_id)
        call = _tool_call(body) if ready is not None else None
        if ready is None or call is None or call[1].name not in self._tools.catalog.tools:
            return None
        return _Prepared(ready, call, session_id, version)

    async def answer_lean(
        self, exchange: Exchange, own: list[tuple[bytes, bytes]]
    ) -> tuple[bytes, list[tuple[bytes, bytes]]]:
        """The call `takes` prepared: its JSON body and headers, or, past `STREAM_AFTER`, the
        last event of the SSE stream it opened (`own`: the headers every answer carries)."""
        prepared: _Prepared = exchange.prepared
        request_id, params, _ = prepared.call
        session = [(SESSION_HEADER, prepared.session_id.encode("latin-1"))]
        context = _context(
            prepared.ready[1], prepared.version, prepared.call, Request(exchange.scope())
        )
        self.answered += 1
        exchange.park()  # a client that hangs up cancels the call
        stream = _LeanStream(exchange, [*own, *_SSE, *session])
        later = asyncio.get_running_loop().call_later(STREAM_AFTER, stream.open)
        with InFlight(prepared.ready[0]):
            try:
                body = await self._body(context, params, request_id)
            finally:
                later.cancel()
                stream.close()
        if stream.opened:
            return b"event: message\r\ndata: %b\r\n\r\n" % body, []
        return body, session

    async def _admitted(
        self,
        request: Request,
        headers: list[tuple[bytes, bytes]],
        security: TransportSecurityMiddleware,
    ) -> bool:
        """Whether the SDK's transport would take this request's headers (its accept, content
        type, Host and Origin checks), asked once per combination of their values: a client
        sends the same ones with every call."""
        known = _admit_key(headers, security)
        if known is None:
            return False
        if known in self._admits:
            return True
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse):
            return False
        if await security.validate_request(request, is_post=True) is not None:
            return False
        if len(self._admits) >= _ADMITS_KEPT:
            self._admits.clear()
        self._admits.add(known)
        return True

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
            body = await self._body(context, params, request_id)
        except asyncio.CancelledError:
            await stream.close()
            if stream.hung_up() and caller is not None:
                caller.uncancel()  # the client went: nothing to answer
                return
            raise
        finally:
            later.cancel()
        if not await stream.close():
            headers = [(b"content-type", b"application/json"), *session]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif not stream.hung_up():
            event = b"event: message\r\ndata: %b\r\n\r\n" % body
            await send({"type": "http.response.body", "body": event})

    async def _body(
        self,
        context: ServerRequestContext[Any, Any],
        params: types.CallToolRequestParams,
        request_id: str | int,
    ) -> bytes:
        """The JSON-RPC response, as the SDK would have written it."""
        version = context.protocol_version
        try:
            outcome = await self._tools.run_tool(context, params)
            if isinstance(outcome, tuple):
                result, line = outcome
                return self._succeeded(request_id, version, result, line)
            dumped = outcome.model_dump(by_alias=True, mode="json", exclude_none=True)
            dumped = methods.serialize_server_result("tools/call", version, dumped)
            if version in MODERN_PROTOCOL_VERSIONS:  # as the SDK's runner completes one
                dumped.setdefault("resultType", "complete")
                meta = dumped.get("_meta")
                if meta is None or (isinstance(meta, dict) and meta.get(_SERVER_INFO) is None):
                    stamp = self._tools.server.server_info_stamp
                    dumped["_meta"] = {**(meta or {}), _SERVER_INFO: stamp}
            return _response(request_id, {"result": dumped})
        except Exception:  # as the SDK: never a handler's internals on the wire
            log.exception("tool call %s failed", params.name)
            return _response(
                request_id, {"error": {"code": _INTERNAL_ERROR, "message": "Internal error"}}
            )

    def _succeeded(
        self, request_id: str | int, version: str, result: dict[str, Any], line: str
    ) -> bytes:
        """A call that succeeded, written straight from its result: what the SDK's sieve gives
        a `CallToolResult` of a text line and structured content (held equal on every era)."""
        head = b'{"jsonrpc":"2.0","id":%b,"result":{"content":[{"type":"text","text":%b}]' % (
            _json(request_id),
            _json(line),
        )
        if version in MODERN_PROTOCOL_VERSIONS:
            if self._stamp is None:
                self._stamp = _json({_SERVER_INFO: self._tools.server.server_info_stamp})
            head += b',"resultType":"complete","_meta":' + self._stamp
        structured = _json(result)
        return head + b',"isError":false,"structuredContent":' + structured + b"}}"


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
        if self._tasks:  # most calls end before the stream opens: nothing to stop
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


class _LeanStream:
    """A long call's SSE stream on the lean lane: opened once the call has run
    `STREAM_AFTER`, kept alive with comments (a hang-up is the protocol's to see: it cancels
    the call)."""

    __slots__ = ("_exchange", "_headers", "_pings", "opened")

    def __init__(self, exchange: Exchange, headers: list[tuple[bytes, bytes]]) -> None:
        self._exchange, self._headers = exchange, headers
        self._pings: asyncio.Task[None] | None = None
        self.opened = False

    def open(self) -> None:
        if self._exchange.open_stream(self._headers):
            self.opened = True
            self._pings = asyncio.ensure_future(self._keep_alive())

    def close(self) -> None:
        if self._pings is not None:
            self._pings.cancel()

    async def _keep_alive(self) -> None:
        while True:
            self._exchange.send_chunk(_PING)
            await asyncio.sleep(PING_EVERY)


class _Prepared(NamedTuple):
    """A tool call the lean lane takes: its session, the call, the routing it came with."""

    ready: tuple[StreamableHTTPServerTransport, types.InitializeRequestParams]
    call: tuple[str | int, types.CallToolRequestParams, dict[str, Any]]
    session_id: str
    version: str


def _routing(headers: list[tuple[bytes, bytes]]) -> tuple[str | None, str | None]:
    """(session id, protocol version) a request's headers name."""
    session_id = version = None
    for key, value in headers:
        if key == SESSION_HEADER:
            session_id = value.decode("latin-1")
        elif key == _VERSION_HEADER:
            version = value.decode("latin-1")
    return session_id, version


def _admit_key(
    headers: list[tuple[bytes, bytes]], security: TransportSecurityMiddleware
) -> tuple[Any, ...] | None:
    """What the SDK's verdict on a request's headers rests on; None for one it must judge
    itself (an `Mcp-Param-*` header)."""
    key: list[Any] = [id(security.settings)]
    for name, value in headers:
        if name in _CHECKED:
            key.append((name, value))
        elif name.startswith(_PARAM_HEADER):
            return None
    return tuple(key)


def _context(
    client: types.InitializeRequestParams | None,
    version: str,
    call: tuple[str | int, types.CallToolRequestParams, dict[str, Any]],
    request: Request,
) -> ServerRequestContext[Any, Any]:
    request_id, params, message = call
    return ServerRequestContext(
        session=cast(ServerSession, _Client(client)),
        lifespan_context=None,
        protocol_version=version,
        method="tools/call",
        params=message["params"],
        request_id=request_id,
        meta=params.meta,
        request=request,
    )


def _tool_call(
    body: bytes,
) -> tuple[str | int, types.CallToolRequestParams, dict[str, Any]] | None:
    """(id, params, the message) of a body that is one well-formed `tools/call` request."""
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    # Four members, two of them right and the other two of the right types: exactly
    # `jsonrpc`, `method`, `id` and `params`.
    if type(message) is not dict or len(message) != 4:
        return None
    if message.get("method") != "tools/call" or message.get("jsonrpc") != "2.0":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int)):
        return None
    if type(params) is not dict:
        return None
    if not _PARAMS.issuperset(params):
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
    return _json({"jsonrpc": "2.0", "id": request_id, **outcome})


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _json(value: object) -> bytes:
    return _ENCODER.encode(value).encode()


async def _disconnected(receive: Receive) -> None:
    message: Message = await receive()
    while message["type"] != "http.disconnect":
        message = await receive()
