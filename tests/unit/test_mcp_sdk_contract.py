"""What the hub relies on of the MCP SDK beyond its public API (`caucus.api.mcp.sdk`, the
session table in `api/mcp/sessions.py`, the tool-call lane in `api/mcp/call_lane.py`).

An SDK upgrade that renames, removes or reshapes any of it fails here, by name, before a
session idles wrongly or a call lane answers differently from the SDK in production."""

from __future__ import annotations

import inspect

from mcp.server.connection import Connection
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware
from mcp.shared import inbound

from caucus.api.mcp.sdk import InFlight, busy, security_of, set_idle_timeout


def test_a_transport_keeps_its_idle_clock_where_the_hub_reads_it() -> None:
    transport = StreamableHTTPServerTransport(mcp_session_id="s", idle_timeout=30.0)
    assert transport._idle_timeout == 30.0
    assert transport._requests_in_flight == 0
    assert transport.idle_scope is None  # set once the session's task runs
    assert isinstance(security_of(transport), TransportSecurityMiddleware)
    set_idle_timeout(transport, 5.0)
    assert transport._idle_timeout == 5.0
    assert not busy(transport)
    with InFlight(transport):  # no idle scope yet: nothing to hold open
        assert transport._requests_in_flight == 0


def test_the_session_manager_has_the_hooks_the_session_table_overrides() -> None:
    hooks = {
        "_handle_stateful_request": ["self", "scope", "receive", "send"],
        "_admit_session": ["self", "requestor"],
        "_discard_session": ["self", "session_id", "transport"],
    }
    for name, wanted in hooks.items():
        found = list(inspect.signature(getattr(StreamableHTTPSessionManager, name)).parameters)
        assert found == wanted, name
    manager = StreamableHTTPSessionManager(app=None)  # type: ignore[arg-type]
    assert manager._server_instances == {}


def test_the_call_lane_reads_requests_as_the_sdk_does() -> None:
    assert callable(Connection.from_envelope)
    for name in ("classify_inbound_request", "find_duplicated_routing_header"):
        assert callable(getattr(inbound, name)), name
    assert isinstance(inbound.InboundLadderRejection, type)  # a verdict, tested by isinstance
