"""Everything the hub does inside uvicorn's HTTP protocol, in one place (ADR 0039).

uvicorn's `HttpToolsProtocol` is not its public API; the hub subclasses it here and nowhere
else, and `tests/unit/test_uvicorn_contract.py` fails on an uvicorn whose protocol no longer
has what these classes read and override.

**Deadlines** (`Patient`). uvicorn times out idle keep-alive connections but not a client that
connects and then sends its request head, or its body, a byte at a time: a thousand such
clients pin a thousand descriptors for as long as they like. The protocol has two deadlines
more: the request head must be complete within `head_timeout` seconds of the connection (or
of the next request's first byte), and a request's body within `body_timeout` of its head. A
client that misses one gets 408 and the connection is closed. Long-polls and the event stream
are unaffected: a deadline ends once the request is read, whatever the response then takes.
All three (uvicorn's idle limit too) are kept on the loop's one clock (`web/deadlines.py`),
not a timer each.

**The lean lane** (`LeanHttp`, `Exchange`). uvicorn serves every request as an ASGI cycle: a
scope, a cycle object with its event, a task running the app, the app's middleware each
wrapping `send`, and response headers checked one by one against two regular expressions.
For the two requests that make up nearly all of a hub's traffic (an agent's `POST /send` and
`GET /receive`) that cycle cost more CPU than the durable relay behind it (ADR 0026). So an
app may offer a `LeanLane`: when a request's head is in, the protocol asks the lane whether
it takes the request (the hub's `Admission` decides: everything the ASGI stack would have let
straight through), and if it does the body is gathered here, the lane's handler runs in a
task of its own, and the answer is written to the transport as it is (or, for a long answer,
as a chunked stream the lane opens). A lane that can only tell from the body (a tool call on
`/mcp`) may let the request go once it is read: it then becomes the ASGI cycle it would have
been, its body handed over. Anything else, and anything unusual (HTTP/1.0, `Expect`, a
chunked body, an upgrade, a request pipelined behind another), takes the ASGI path
unchanged, so every refusal is still made once, in one place.

To uvicorn's protocol a lean request is its current cycle (`Exchange` has what the protocol
reads of one), so keep-alive, pipelining, the deadlines above, the connection cap and a
graceful shutdown all work as for any request. A parked receive whose client hangs up is
cancelled, as the ASGI lane's disconnect watcher does.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Protocol

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from caucus.web.deadlines import deadlines
from caucus.web.one_write import OneWrite

log = logging.getLogger(__name__)


def _timeout_response(what: str) -> bytes:
    body = json.dumps(
        {
            "error": "request_timeout",
            "detail": f"the request {what} did not arrive in time; send it whole, promptly",
        }
    ).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode()
    return head + body


class Patient(HttpToolsProtocol):
    head_timeout: float = 10.0
    body_timeout: float = 30.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # One deadline at a time, kept on the loop's one clock (`web/deadlines.py`): the
        # head's, the body's, or how long the connection may sit idle between requests.
        self._deadlines = deadlines(self.loop)
        self.due: float | None = None
        self._what = ""

    def _arm(self, seconds: float, what: str) -> None:
        self._what = what
        self._deadlines.arm(self, seconds)

    def _disarm(self) -> None:
        self.due = None

    def expire(self) -> None:
        if self.transport.is_closing():
            return
        if self._what == "idle":
            self.timeout_keep_alive_handler()
            return
        cycle = self.cycle  # the request late, or the one before it, answered
        if cycle is None or not cycle.response_started or cycle.response_complete:
            self.transport.write(_timeout_response(self._what))
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self.head_timeout, "head")

    def connection_lost(self, exc: Exception | None) -> None:
        self._deadlines.forget(self)
        super().connection_lost(exc)

    def _unset_keepalive_if_required(self) -> None:
        if self._what == "idle":
            self._disarm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self.due is None:
            self._arm(self.head_timeout, "head")

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._body_deadline()

    def _body_deadline(self) -> None:
        """The head is in: its deadline ends, and the body's begins if one is coming."""
        self._disarm()
        if any(
            (name == b"content-length" and value.strip() not in (b"", b"0"))
            or name == b"transfer-encoding"
            for name, value in self.headers
        ):
            self._arm(self.body_timeout, "body")

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()

    def on_response_complete(self) -> None:
        # uvicorn's, but its keep-alive limit is a deadline like the others rather than a
        # timer of its own (`web/deadlines.py`).
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._unset_keepalive_if_required()
        self.flow.resume_reading()
        if self.pipeline:
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:
            self._arm(self.timeout_keep_alive, "idle")


Headers = list[tuple[bytes, bytes]]
_JSON = b"content-type: application/json\r\ncontent-length: "


class LeanLane(Protocol):
    """What an app offers the protocol (`CaucusApp.lean_lane`)."""

    def admits(self, method: bytes, path: bytes, headers: Headers) -> bool:
        """Whether the lane may answer this request, from its head alone."""
        ...

    def keeps(self, exchange: Exchange) -> bool:
        """Whether the lane answers it after all, its body in: if not, it goes the ASGI way
        as if the lane had never seen it (the body handed over as read)."""
        ...

    async def answer(self, exchange: Exchange) -> tuple[int, bytes, Headers]:
        """(status, JSON body, headers) for the request; or, on a stream the lane opened
        (`Exchange.open_stream`), the stream's last chunk."""
        ...

    def reserved(self, headers: Headers) -> int:
        """How many connections past the cap this request may still be served on: the
        operator's and the observer's reserve, 0 for anyone else (asked only at the cap)."""
        ...


class _NothingWaits:
    def set(self) -> None:
        return


_NOTHING_WAITS = _NothingWaits()


class Exchange:
    """A lean request, as the lane sees it and as the protocol around it sees a cycle."""

    __slots__ = (
        "_protocol",
        "body",
        "disconnected",
        "headers",
        "keep_alive",
        "message_event",
        "method",
        "more_body",
        "parked",
        "path",
        "prepared",
        "query",
        "response_complete",
        "response_started",
        "task",
    )

    def __init__(
        self, method: bytes, path: bytes, query: bytes, headers: Headers, protocol: LeanHttp
    ) -> None:
        self.method, self.path, self.query, self.headers = method, path, query, headers
        self.body = b""
        self.more_body = True
        self.response_started = self.response_complete = False
        self.keep_alive = True
        self.disconnected = False
        self.parked = False
        self.prepared: Any = None  # what the lane made of the request in `keeps`
        self.task: asyncio.Task[None] | None = None
        # The protocol sets it on a hang-up; nothing waits on it. Not `self`: a request that
        # referred to itself would live until the collector's next pass instead of its end,
        # and the collector's passes grow with what they find (ADR 0026: tail latency). The
        # protocol is no such loop: it lets go of its cycle when the next request comes.
        self.message_event = _NOTHING_WAITS
        self._protocol = protocol

    def park(self) -> None:
        """The request waits from here on: a client that is gone ends it."""
        self.parked = True
        if self.disconnected and self.task is not None:
            self.task.cancel()

    def scope(self) -> dict[str, Any]:
        """The ASGI scope uvicorn would have made for the request (for code that reads one)."""
        protocol = self._protocol
        return {
            "type": "http",
            "asgi": {"version": protocol.asgi_version, "spec_version": "2.3"},
            "http_version": "1.1",
            "server": protocol.server,
            "client": protocol.client,
            "scheme": protocol.scheme,
            "root_path": protocol.root_path,
            "headers": self.headers,
            "state": protocol.app_state.copy(),
            "method": self.method.decode("ascii"),
            "path": protocol.root_path + self.path.decode("ascii"),
            "raw_path": protocol.root_path.encode("ascii") + self.path,
            "query_string": self.query,
        }

    def open_stream(self, headers: Headers) -> bool:
        """Send a 200 head whose body follows in chunks (`send_chunk`; the answer is the
        last); False if the client is gone."""
        protocol = self._protocol
        if self.disconnected or protocol.transport.is_closing():
            return False
        if protocol.access_log:
            protocol._log_access(self, 200)
        self.response_started = True
        head = _head(protocol, 200, headers, self.keep_alive)
        protocol.transport.write(b"".join((*head, b"transfer-encoding: chunked\r\n\r\n")))
        return True

    def send_chunk(self, data: bytes) -> None:
        protocol = self._protocol
        if data and not protocol.transport.is_closing():
            protocol.transport.write(_chunk(data))


def _head(protocol: LeanHttp, status: int, headers: Headers, keep_alive: bool) -> list[bytes]:
    """A response's status line and headers, up to the blank line (not included)."""
    head = [STATUS_LINE[status]]
    for name, value in (*protocol.server_state.default_headers, *headers):
        head += (name, b": ", value, b"\r\n")
    if not keep_alive:
        head.append(b"connection: close\r\n")
    return head


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


class LeanHttp(Patient):
    """`Patient` (uvicorn's httptools protocol with deadlines) with the app's lean lane."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lane: LeanLane | None = getattr(self.app, "lean_lane", None)

    def on_message_begin(self) -> None:
        # uvicorn's, but the ASGI scope waits until a request turns out to need one: a lean
        # request never does, and a parked one would hold it as long as it waits (ADR 0026).
        self.url = b""
        self.expect_100_continue = False
        self.headers = []
        if self.due is None:
            self._arm(self.head_timeout, "head")

    def on_headers_complete(self) -> None:
        lean = self._lean_request()
        if lean is None:
            self._asgi_cycle()
            self._body_deadline()
            return
        self.scope = None  # type: ignore[assignment]  # an earlier request's: not needed
        self.cycle = lean  # type: ignore[assignment]
        self._body_deadline()

    def _asgi_cycle(self) -> None:
        """uvicorn's cycle for the request whose head is in (none for an upgrade). At the
        connection cap uvicorn answers 503; the operator and the observer are served on
        their reserve past it (issue 47: nobody can hold the room from them)."""
        self._scope_after_all()
        before = self.cycle
        limit = self.limit_concurrency
        if limit is not None and self._lane is not None and self._at(limit):
            reserve = self._lane.reserved(self.headers)
            if reserve and not self._at(limit + reserve):
                self.limit_concurrency = None
        try:
            HttpToolsProtocol.on_headers_complete(self)
        finally:
            self.limit_concurrency = limit
        if self.cycle is not before:
            self.cycle.transport = OneWrite(self.transport, self.loop)  # type: ignore[assignment]

    def _scope_after_all(self) -> None:
        """The scope uvicorn's `on_message_begin` makes, for the request already read."""
        url, headers, expect = self.url, self.headers, self.expect_100_continue
        HttpToolsProtocol.on_message_begin(self)
        self.url, self.headers, self.expect_100_continue = url, headers, expect
        self.scope["headers"] = headers

    def _lean_request(self) -> Exchange | None:
        lane, parser = self._lane, self.parser
        if lane is None or self.pipeline or self.expect_100_continue:
            return None
        if self.cycle is not None and not self.cycle.response_complete:
            return None  # pipelined behind a request still answering: uvicorn queues it
        if parser.get_http_version() != "1.1" or not parser.should_keep_alive():
            return None
        if parser.should_upgrade():
            return None
        limit = self.limit_concurrency
        if limit is not None and self._at(limit):
            return None  # the ASGI path answers 503 (or serves the operator on its reserve)
        method = parser.get_method()
        url = httptools.parse_url(self.url)
        if not lane.admits(method, url.path, self.headers):
            return None
        return Exchange(method, url.path, url.query or b"", self.headers, self)

    def _at(self, limit: int) -> bool:
        return len(self.connections) >= limit or len(self.tasks) >= limit

    def on_body(self, body: bytes) -> None:
        cycle = self.cycle
        if isinstance(cycle, Exchange):
            cycle.body += body  # at most the declared length, which the lane checked
            return
        super().on_body(body)

    def on_message_complete(self) -> None:
        cycle = self.cycle
        if not isinstance(cycle, Exchange):
            super().on_message_complete()
            return
        self._disarm()
        cycle.more_body = False
        assert self._lane is not None
        if not self._lane.keeps(cycle):
            self._declined(cycle)
            return
        task = self.loop.create_task(self._serve(cycle))
        cycle.task = task
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _declined(self, cycle: Exchange) -> None:
        """The lane let the request go once its body was in: it becomes the ASGI cycle it
        would have been, its body as read. Still inside the parser's callback for this
        request, so a request pipelined behind it is queued behind it as ever."""
        self.cycle = None  # type: ignore[assignment]  # the one before was answered
        self._asgi_cycle()
        if cycle.body:
            HttpToolsProtocol.on_body(self, cycle.body)
        HttpToolsProtocol.on_message_complete(self)

    def connection_lost(self, exc: Exception | None) -> None:
        cycle = self.cycle
        super().connection_lost(exc)
        if not isinstance(cycle, Exchange) or cycle.response_complete:
            return
        if cycle.parked and cycle.task is not None:
            cycle.task.cancel()

    async def _serve(self, cycle: Exchange) -> None:
        lane = self._lane
        assert lane is not None
        this = cycle.task
        try:
            status, body, headers = await lane.answer(cycle)
        except asyncio.CancelledError:
            if cycle.disconnected and this is not None:
                this.uncancel()  # the client hung up on its long-poll: nothing to answer
                return
            raise
        finally:
            # The connection holds its last cycle until its next request, seconds away for an
            # agent that sends now and then: not the task (its coroutine, its context) or what
            # the lane made of the request. Held, they are what the collector's young passes
            # walk, and a pass stops the loop for as long as it walks (ADR 0026).
            cycle.task = cycle.prepared = None
        if self.flow.write_paused and not cycle.disconnected:
            await self.flow.drain()
        if cycle.disconnected or self.transport.is_closing():
            return
        if cycle.response_started:  # a stream: its last chunk, then its end
            self.transport.write(_chunk(body) + b"0\r\n\r\n" if body else b"0\r\n\r\n")
        else:
            if self.access_log:
                self._log_access(cycle, status)
            cycle.response_started = True
            head = _head(self, status, headers, cycle.keep_alive)
            head += (_JSON, str(len(body)).encode(), b"\r\n\r\n", body)
            self.transport.write(b"".join(head))
        cycle.response_complete = True
        if not cycle.keep_alive:
            self.transport.close()
        self.on_response_complete()

    def _log_access(self, cycle: Exchange, status: int) -> None:
        """The line uvicorn's access log would have written for the request."""
        client = "%s:%d" % self.client if self.client else "-"  # noqa: UP031 - uvicorn's form
        target = cycle.path + (b"?" + cycle.query if cycle.query else b"")
        method, path = cycle.method.decode("ascii"), target.decode("latin-1")
        self.access_logger.info('%s - "%s %s HTTP/1.1" %d', client, method, path, status)


def patient_http(head_timeout: float, body_timeout: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol with these deadlines (see the module docstring), and the
    lean lane for an app that has one (`LeanHttp`)."""
    return type(
        "PatientHttp", (LeanHttp,), {"head_timeout": head_timeout, "body_timeout": body_timeout}
    )
