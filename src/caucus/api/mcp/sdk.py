"""What the hub relies on of the MCP SDK beyond its top-level API, in one place (ADR 0039).

Every import of the SDK's inner modules the `/mcp` door needs is here, and the door's other
modules take them from here: the transport and session manager whose undocumented parts the
session table (`api/mcp/sessions.py`, which overrides three of the manager's private hooks)
and the tool-call lane (`api/mcp/call_lane.py`) lean on, the transport's Host/Origin checks,
and the helpers the SDK reads an inbound request with, so the lane reads one as the SDK does.
The transport keeps a session's idle clock and its checks in attributes it does not document
(`_idle_timeout`, `_requests_in_flight`, `_security`, its `idle_scope`): each read and write
of them is a function here. `tests/unit/test_mcp_sdk_contract.py` fails, by name, on an SDK
that no longer has any of it.
"""

from __future__ import annotations

import asyncio
import math

from mcp.server.connection import Connection
from mcp.server.streamable_http import StreamableHTTPServerTransport, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared.inbound import (
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
)

__all__ = [
    "Connection",
    "InFlight",
    "InboundLadderRejection",
    "StreamableHTTPServerTransport",
    "StreamableHTTPSessionManager",
    "TransportSecurityMiddleware",
    "busy",
    "check_accept_headers",
    "classify_inbound_request",
    "find_duplicated_routing_header",
    "security_of",
    "set_idle_timeout",
]


def set_idle_timeout(transport: StreamableHTTPServerTransport, seconds: float | None) -> None:
    """How long the session may idle from when its last request ends (None: forever)."""
    transport._idle_timeout = seconds


def security_of(transport: StreamableHTTPServerTransport) -> TransportSecurityMiddleware:
    """The Host/Origin checks the session's transport applies (its own settings)."""
    return transport._security


def busy(transport: StreamableHTTPServerTransport) -> bool:
    """Whether a request of the session is in flight (it idles only once none is)."""
    return transport.idle_scope is not None and transport._requests_in_flight > 0


class InFlight:
    """The session stays open while a call runs, and idles from when its last one ends (the
    accounting the SDK's `StreamableHTTPServerTransport.handle_request` does)."""

    __slots__ = ("_transport",)

    def __init__(self, transport: StreamableHTTPServerTransport | None) -> None:
        self._transport = transport  # None: no session

    def __enter__(self) -> None:
        transport = self._transport
        if transport is None or transport.idle_scope is None or transport._idle_timeout is None:
            self._transport = None
            return
        transport._requests_in_flight += 1
        transport.idle_scope.deadline = math.inf

    def __exit__(self, *_: object) -> None:
        transport = self._transport
        if transport is None:
            return
        transport._requests_in_flight -= 1
        idle, timeout = transport.idle_scope, transport._idle_timeout
        if not transport._requests_in_flight and idle is not None and timeout is not None:
            # A join in the call may have lengthened it (`Sessions.promote`). The clock is
            # anyio's `current_time()` on asyncio (the hub's loop), read without its lookup.
            idle.deadline = asyncio.get_running_loop().time() + timeout
