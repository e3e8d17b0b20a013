"""How long the hub waits for a slow client, and how many it serves at once.

uvicorn times out idle keep-alive connections but not a client that connects and then sends
its request head, or its body, a byte at a time: a thousand such clients pin a thousand
descriptors for as long as they like. `patient_http()` is uvicorn's own httptools protocol with
two deadlines: the request head must be complete within `head_timeout` seconds of the
connection (or of the next request's first byte), and a request's body within `body_timeout`
of its head. A client that misses one gets 408 and the connection is closed. Long-polls and
the event stream are unaffected: a deadline ends once the request is read, whatever the
response then takes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from caucus.config import Settings

log = logging.getLogger(__name__)

# Descriptors kept back from the connection cap: the database, the ledger, logs, the loop.
RESERVED_FDS = 64


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
        self._deadline: asyncio.TimerHandle | None = None
        self._reading_body = False

    def _arm(self, seconds: float, what: str) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._late, what)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _late(self, what: str) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_started is False:
            self.transport.write(_timeout_response(what))
        self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self.head_timeout, "head")

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:
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


def patient_http(head_timeout: float, body_timeout: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol with these deadlines (see the module docstring), and the
    lean lane for an app that has one (`web/lean_http.py`)."""
    from caucus.web.lean_http import LeanHttp

    return type(
        "PatientHttp", (LeanHttp,), {"head_timeout": head_timeout, "body_timeout": body_timeout}
    )


def connection_cap(wanted: int, reserve: int = 0) -> int:
    """At most `wanted` connections, and never more than the descriptors this process may
    open (raised to its hard limit first) leave room for, with `reserve` more kept for the
    operator past the cap: past it a client gets 503 instead of the hub failing to accept
    anything at all."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    room = max(16, soft - RESERVED_FDS - reserve)
    if wanted > room:
        log.warning(
            "serving at most %d connections (not %d): this process may open %d descriptors",
            room,
            wanted,
            soft,
        )
    return min(wanted, room)


def uvicorn_config(app: Any, settings: Settings, **options: Any) -> uvicorn.Config:
    """How the hub is served, by `caucus hub` and by `caucus.testing.serve` alike: the
    deadlines and the connection cap of `settings`, and no logging setup of uvicorn's own
    (`caucus.logs` serves every logger)."""
    return uvicorn.Config(
        app,
        http=patient_http(settings.head_timeout, settings.body_timeout),
        limit_concurrency=connection_cap(settings.max_connections, settings.operator_reserve),
        log_config=None,
        lifespan="on",
        proxy_headers=False,  # trusting X-Forwarded-* is a deployment decision
        **options,
    )
