"""The handshake-era sessions behind `/mcp`: the SDK's session manager, saying when a session
ends however it ends, and keeping sessions that have not joined cheap, few and short-lived.

Anyone may open a session without a credential, so:
- at most `unjoined_max` unjoined sessions are kept; a new one ends the oldest, so a flood of
  them never locks a real client out, and each ends after `unjoined_idle` seconds until it
  joins (`promote`);
- a session is opened *on paper*. The first `initialize` of each kind (protocol version and
  the headers the SDK looks at) is served by the SDK, and its answer kept as a template; later
  ones of that kind get the template's answer under a fresh session id, and nothing else is
  built. The SDK's session (its server task, streams and transport: some 200 objects and a
  few milliseconds) is built on the session's second request, by replaying the stored
  `initialize` into it first. A flood of initializes then costs a JSON parse each and leaves
  no garbage for the collector to stop the event loop over.
"""

from __future__ import annotations

import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from uuid import uuid4

import anyio
import mcp_types as types
from starlette.types import Message, Receive, Scope, Send

from caucus.api.mcp.sdk import (
    StreamableHTTPServerTransport,
    StreamableHTTPSessionManager,
    busy,
    set_idle_timeout,
)

log = logging.getLogger(__name__)

OFFLINE_TIMEOUT = 5.0  # seconds to tell the hub a session ended, even while shutting down
END_GRACE = 5.0  # seconds an ended session waits for its requests in flight to be answered
SESSION_HEADER = b"mcp-session-id"
# What the SDK's answer to an initialize depends on, besides the request's id.
KIND_HEADERS = (b"accept", b"content-type", b"host", b"origin")


@dataclass(frozen=True, slots=True)
class _OnPaper:
    """A session answered from a template and not built yet."""

    headers: list[tuple[bytes, bytes]]
    body: bytes
    opened: float  # monotonic


@dataclass(frozen=True, slots=True)
class _Template:
    """The SDK's answer to one kind of initialize: the SSE or JSON body around its result."""

    status: int
    headers: list[tuple[bytes, bytes]]
    before: bytes  # the body up to the JSON-RPC response
    response: dict[str, Any]
    after: bytes

    def answer(self, request_id: str | int, session_id: str) -> tuple[list[Any], bytes]:
        message = json.dumps(
            {**self.response, "id": request_id}, separators=(",", ":"), ensure_ascii=False
        )
        body = self.before + message.encode() + self.after
        headers = [
            *self.headers,
            (SESSION_HEADER, session_id.encode()),
            (b"content-length", str(len(body)).encode()),
        ]
        return headers, body


class Sessions(StreamableHTTPSessionManager):
    def __init__(
        self,
        *args: Any,
        on_end: Callable[[str], Any],
        unjoined_max: int,
        unjoined_idle: float,
        monotonic: Callable[[], float] = time.monotonic,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._on_end = on_end
        self._monotonic = monotonic  # the hub's clock: a test moves it instead of waiting
        # Unjoined sessions, oldest first: on paper, or built (None).
        self._unjoined: OrderedDict[str, _OnPaper | None] = OrderedDict()
        self._unjoined_max = unjoined_max
        self._unjoined_idle = unjoined_idle
        self._templates: dict[tuple[Any, ...], _Template] = {}
        self._building: str | None = None  # the id `_admit_session` gives the next transport
        # What each built session's client said of itself in its initialize, where it was seen:
        # what a tool call answered outside the SDK (`call_lane.py`) needs of the session.
        self._clients: dict[str, types.InitializeRequestParams] = {}
        self.opened_on_paper = 0  # sessions answered from a template, ever

    def state(self, session_id: str) -> str | None:
        """ "joined", "unjoined" or None (no such session open), without any I/O."""
        if session_id in self._unjoined:
            return "unjoined"
        return "joined" if session_id in self._server_instances else None

    def ready(
        self, session_id: str
    ) -> tuple[StreamableHTTPServerTransport, types.InitializeRequestParams] | None:
        """A built, live session's transport and its client's initialize, if a request on it
        may be answered outside the SDK: it is not ending, no credential owns it, and its
        initialize was seen."""
        transport = self._server_instances.get(session_id)
        client = self._clients.get(session_id)
        if transport is None or client is None or transport.is_terminated:
            return None
        if session_id in self._session_owners:
            return None
        idle = transport.idle_scope
        if idle is not None and idle.cancel_called:
            return None
        return transport, client

    @property
    def built_sessions(self) -> int:
        """Sessions the SDK holds (with their tasks and streams), joined or not."""
        return len(self._server_instances)

    @property
    def open_sessions(self) -> int:
        """Sessions open to their clients: those built and those on paper."""
        return len(self._server_instances) + sum(
            1 for v in self._unjoined.values() if v is not None
        )

    def promote(self, session_id: str) -> None:
        """The session joined: it no longer counts against the unjoined cap, and it idles as
        long as any session may."""
        if session_id in self._unjoined:
            del self._unjoined[session_id]
            transport = self._server_instances.get(session_id)
            if transport is not None:
                set_idle_timeout(transport, self.session_idle_timeout)

    async def end(self, session_id: str) -> None:
        """End a session (its agent was kicked or left): its streams close as they do when the
        client deletes it. A request of its own still in flight (the leave that ended it) is
        answered first: the session then ends as it would idle out, the moment its last
        request ends, and at the latest `END_GRACE` seconds from now."""
        transport = self._server_instances.get(session_id)
        if transport is None or transport.is_terminated:
            return
        if busy(transport):
            set_idle_timeout(transport, 0.0)
            await anyio.sleep(END_GRACE)
        if not transport.is_terminated:
            await transport.terminate()

    # --- requests -----------------------------------------------------------------------------
    async def _handle_stateful_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        session_id = next((v.decode("latin-1") for k, v in headers if k == SESSION_HEADER), None)
        if session_id is None and scope["method"] == "POST":
            body = await whole_body(headers, receive, self.max_request_body_size)
            if body is not None:
                receive = replaying(body, receive)
                opening = _initialize(body)
                if opening is not None:
                    kind = (opening[1], *(_header(headers, h) for h in KIND_HEADERS))
                    template = self._templates.get(kind)
                    if template is not None:
                        await self._open_on_paper(template, opening[0], headers, body, send)
                        return
                    send = self._learning(kind, opening[0], body, send)
        elif session_id is not None and session_id in self._unjoined:
            await self._build(session_id)
        if scope["method"] != "DELETE":
            await super()._handle_stateful_request(scope, receive, send)
            return
        # The client hears its session ended only once it has (its peer shows offline): the
        # SDK answers first and ends the session after, and a client that joins again at once
        # would otherwise find its peer still online, and the session's end undo the join.
        held: list[Message] = []

        async def holding(message: Message) -> None:
            held.append(message)

        try:
            await super()._handle_stateful_request(scope, receive, holding)
        finally:
            for message in held:
                await send(message)

    async def _open_on_paper(
        self,
        template: _Template,
        request_id: str | int,
        headers: list[tuple[bytes, bytes]],
        body: bytes,
        send: Send,
    ) -> None:
        session_id = uuid4().hex
        self._make_room()
        kept = [(k, v) for k, v in headers if k != b"authorization"]
        self._unjoined[session_id] = _OnPaper(kept, body, self._monotonic())
        self.opened_on_paper += 1
        out_headers, out_body = template.answer(request_id, session_id)
        await send(
            {"type": "http.response.start", "status": template.status, "headers": out_headers}
        )
        await send({"type": "http.response.body", "body": out_body})

    def _learning(
        self, kind: tuple[Any, ...], request_id: str | int, body: bytes, send: Send
    ) -> Send:
        """`send`, keeping what the SDK answers as the template for `kind` if it is a plain
        success that opened a session, and the client's initialize under the session's id."""
        start: Message | None = None
        chunks: list[bytes] = []

        async def learning(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                session_id = _header(list(message.get("headers", [])), SESSION_HEADER)
                client = _client(body)
                if session_id is not None and client is not None:
                    self._clients[session_id.decode("latin-1")] = client
            elif message["type"] == "http.response.body" and start is not None:
                chunks.append(message.get("body", b""))
                if not message.get("more_body", False):
                    template = _template(start, b"".join(chunks), request_id)
                    if template is not None:
                        self._templates.setdefault(kind, template)
            await send(message)

        return learning

    async def _build(self, session_id: str) -> None:
        """Build the SDK's session for one opened on paper: the stored initialize, replayed."""
        paper = self._unjoined.get(session_id)
        if paper is None:
            return  # already built
        if self._monotonic() - paper.opened > self._unjoined_idle:
            del self._unjoined[session_id]  # it idled out: the SDK answers 404
            return
        async with self._session_creation_lock:
            self._building = session_id
            try:
                transport = self._admit_session(None)
            finally:
                self._building = None
        if transport is None:
            return  # at the session limit: the SDK refuses the request that follows
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "raw_path": b"/mcp",
            "query_string": b"",
            "headers": paper.headers,
            "scheme": "http",
            "server": None,
            "client": None,
            "http_version": "1.1",
        }

        async def discard(_: Message) -> None:
            return None

        async def nothing_more() -> Message:
            await anyio.sleep_forever()
            raise AssertionError  # pragma: no cover

        client = _client(paper.body)
        if client is not None:
            self._clients[session_id] = client
        await self._serve_opening_request(
            transport, scope, replaying(paper.body, nothing_more), discard
        )

    # --- the SDK's hooks ----------------------------------------------------------------------
    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        building, self._building = self._building, None
        if building is None:
            self._make_room()
        transport = super()._admit_session(requestor)
        if transport is None or transport.mcp_session_id is None:
            return transport
        if building is not None:  # the session keeps the id its paper answer gave it
            self._server_instances[building] = self._server_instances.pop(transport.mcp_session_id)
            transport.mcp_session_id = building
        # The SDK reads this after every request; a joined session gets the long one.
        set_idle_timeout(transport, self._unjoined_idle)
        self._unjoined[transport.mcp_session_id] = None  # built; in its paper's place if any
        return transport

    def _make_room(self) -> None:
        while len(self._unjoined) >= self._unjoined_max:
            oldest, paper = self._unjoined.popitem(last=False)
            if paper is not None:
                continue  # nothing was built
            transport = self._server_instances.pop(oldest, None)
            self._clients.pop(oldest, None)
            if transport is not None and self._task_group is not None:
                log.info("ended the oldest MCP session that had not joined")
                self._task_group.start_soon(transport.terminate)
                self._task_group.start_soon(self._on_end, oldest)

    async def _discard_session(
        self, session_id: str, transport: StreamableHTTPServerTransport
    ) -> None:
        known = session_id in self._server_instances
        self._clients.pop(session_id, None)
        if self._unjoined.get(session_id, False) is None:
            del self._unjoined[session_id]
        await super()._discard_session(session_id, transport)
        if known:
            with anyio.CancelScope(shield=True), anyio.move_on_after(OFFLINE_TIMEOUT):
                await self._on_end(session_id)


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    return next((v for k, v in headers if k == name), None)


async def whole_body(
    headers: list[tuple[bytes, bytes]], receive: Receive, limit: int | None
) -> bytes | None:
    """The body of a request that declares a length within `limit`; None (nothing read) for
    any other, which the SDK then reads and judges itself."""
    length = _header(headers, b"content-length")
    if length is None or not length.isdigit() or (limit is not None and int(length) > limit):
        return None
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands over `body` once, then whatever the client sends next."""
    pending = [body]

    async def replay() -> Message:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        return await receive()

    return replay


def _initialize(body: bytes) -> tuple[str | int, str] | None:
    """(request id, protocol version) of a well-formed initialize request, else None."""
    try:
        message = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(message, dict) or message.get("method") != "initialize":
        return None
    params, request_id = message.get("params"), message.get("id")
    if message.get("jsonrpc") != "2.0" or not isinstance(params, dict):
        return None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    version, info = params.get("protocolVersion"), params.get("clientInfo")
    if not isinstance(version, str) or not isinstance(params.get("capabilities"), dict):
        return None
    if not isinstance(info, dict) or not all(
        isinstance(info.get(k), str) for k in ("name", "version")
    ):
        return None
    return request_id, version


def _client(body: bytes) -> types.InitializeRequestParams | None:
    """The params of the initialize request `body`, if it is one the SDK would accept."""
    try:
        message = json.loads(body)
        return types.InitializeRequestParams.model_validate(message["params"], by_name=False)
    except (ValueError, TypeError, KeyError, UnicodeDecodeError):
        return None  # pydantic's ValidationError is a ValueError


def _template(start: Message, body: bytes, request_id: str | int) -> _Template | None:
    """What the SDK answered, with the JSON-RPC response found in it, if it opened a
    session and succeeded."""
    headers = [(k.lower(), v) for k, v in start.get("headers", [])]
    if start.get("status") != 200 or _header(headers, SESSION_HEADER) is None:
        return None
    kept = [(k, v) for k, v in headers if k not in (SESSION_HEADER, b"content-length")]
    if _header(headers, b"content-type") == b"application/json":
        found: tuple[bytes, bytes, bytes] | None = (b"", body, b"")
    else:  # an SSE stream: the response is one `data:` line
        found = None
        at = 0
        for raw in body.splitlines(keepends=True):
            if raw.startswith(b"data: "):
                line = raw.rstrip(b"\r\n")
                found = (body[: at + 6], line[6:], body[at + len(line) :])
                break
            at += len(raw)
    if found is None:
        return None
    try:
        response = json.loads(found[1])
    except ValueError:
        return None
    if (
        not isinstance(response, dict)
        or response.get("id") != request_id
        or "result" not in response
    ):
        return None
    return _Template(200, kept, found[0], response, found[2])
