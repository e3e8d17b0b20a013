"""The hub's lean lane (`web/uvicorn_http.py`): a known agent's `POST /send`, `GET /receive` and
a task's round trip (`POST /tasks`, `POST /tasks/{id}/{reply|fail|input|cancel}`), answered by
the very handlers the ASGI lane calls (`hotpath.py`, `hot_tasks.py`), and a joined MCP
session's tool calls, answered by `CallLane` (`api/mcp/call_lane.py`, behind `McpDoor` once
it has loaded) as the ASGI lane's `/mcp` would, all without an ASGI cycle.

It takes a request only where the ASGI stack would have let it straight through to those
handlers, as the hub's one `Admission` decides for both (`web/admission.py`: the Host and
Origin, a known party, a declared body within the limit, a hot verb, a hub that serves); on
`/mcp`, once the body is in, one tool call `CallLane` takes. Everything else goes the ASGI way,
where it is refused, queued or served as before (ADR 0026).
"""

from __future__ import annotations

import logging

from caucus.api.hotpath import answer_hot, dumps
from caucus.api.mcp.door import McpDoor
from caucus.errors import CaucusError
from caucus.services.hub import Hub
from caucus.web.admission import Admission
from caucus.web.bearer import parse_bearer
from caucus.web.errors import error_parts, unexpected_error_body
from caucus.web.guard import SECURITY_HEADERS
from caucus.web.uvicorn_http import Exchange, Headers

log = logging.getLogger(__name__)

MCP = b"/mcp"


class HubLane:
    """What `LeanHttp` asks of the hub's app."""

    def __init__(self, hub: Hub, admission: Admission, calls: McpDoor) -> None:
        self.hub = hub
        self.calls = calls
        self.admission = admission
        self.answered = 0  # requests the lane took (a benchmark's and a test's figure)
        self.declined = 0  # requests it let go once their bodies were in (a test's)

    def reserved(self, headers: Headers) -> int:
        """The operator's and the observer's reserve of connections past the cap."""
        for name, value in headers:
            if name == b"authorization":
                try:
                    token = parse_bearer(value.decode("latin-1"))
                except CaucusError:
                    return 0
                if token is not None and self.hub.roles.role_of(token) is not None:
                    return self.hub.settings.operator_reserve
                return 0
        return 0

    def admits(self, method: bytes, path: bytes, headers: Headers) -> bool:
        mcp = method == b"POST" and path == MCP
        return self.admission.lean(method, path, headers, mcp and self.calls.may_take(headers))

    def keeps(self, exchange: Exchange) -> bool:
        if exchange.path != MCP:
            return True
        exchange.prepared = self.calls.takes(exchange.headers, exchange.body)
        if exchange.prepared is None:
            self.declined += 1
            return False
        return True

    async def answer(self, exchange: Exchange) -> tuple[int, bytes, Headers]:
        self.answered += 1
        method, path = exchange.method, exchange.path
        try:
            if path == MCP:
                found, own = await self.calls.answer_lean(exchange, SECURITY_HEADERS)
            else:
                found, own = await answer_hot(
                    self.hub,
                    method.decode("ascii"),
                    path.decode("latin-1"),
                    exchange.query,
                    exchange.headers,
                    exchange.body,
                    exchange.park,
                )
            return 200, found, [*SECURITY_HEADERS, *own]
        except CaucusError as exc:
            status, refused, own = error_parts(exc)
            return status, refused, [*SECURITY_HEADERS, *own]
        except Exception:
            log.exception("unhandled error on %s %s", method.decode(), path.decode())
            return 500, dumps(unexpected_error_body()), SECURITY_HEADERS
