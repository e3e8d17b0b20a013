"""What the A2A SDK logs about a request it refuses, kept to one line per agent a minute.

The SDK logs a refused request (a body it cannot parse, a method it does not know) at ERROR,
often with the whole traceback: about a kilobyte a request, which any agent could ask for a
thousand times a second (issue 47). Inside a request the door is serving, each such line
becomes one WARNING line naming the agent and what was wrong, without the traceback, and at
most one a minute for each agent; outside one, the SDK's lines go as they are.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextvars import ContextVar

# The SDK's loggers that speak of one request.
SDK_LOGGERS = (
    "a2a.server.routes.jsonrpc_dispatcher",
    "a2a.utils.error_handlers",
    "a2a.utils.version_validator",
    "a2a.utils.telemetry",
    "a2a.utils.proto_utils",
)
EVERY = 60.0  # seconds between two lines about one agent
KEPT = 4096  # agents remembered (the least recently heard go)

_serving: ContextVar[tuple[Gate, int, str] | None] = ContextVar("caucus_a2a_serving", default=None)


class Gate:
    """One door's memory of when it last logged about each agent."""

    def __init__(self, monotonic: Callable[[], float]) -> None:
        self._monotonic = monotonic
        self._last: OrderedDict[int, float] = OrderedDict()

    @contextlib.contextmanager
    def serving(self, peer_id: int, name: str) -> Iterator[None]:
        """The SDK's lines while serving this agent's request go through this gate."""
        token = _serving.set((self, peer_id, name))
        try:
            yield
        finally:
            _serving.reset(token)

    def admit(self, peer_id: int, name: str, record: logging.LogRecord) -> bool:
        now = self._monotonic()
        last = self._last.get(peer_id)
        if last is not None and now - last < EVERY:
            return False
        self._last[peer_id] = now
        self._last.move_to_end(peer_id)
        while len(self._last) > KEPT:
            self._last.popitem(last=False)
        said = record.getMessage().splitlines()[0][:200] if record.msg else "refused"
        record.msg = "A2A request from %s refused: %s (its next ones are not logged for %ds)"
        record.args = (name, said, int(EVERY))
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info = record.exc_text = record.stack_info = None
        return True


class _ThroughTheGate(logging.Filter):
    """Holds no state: the gate of the request being served (if any) decides."""

    def filter(self, record: logging.LogRecord) -> bool:
        serving = _serving.get()
        if serving is None or record.levelno < logging.WARNING:
            return True
        gate, peer_id, name = serving
        return gate.admit(peer_id, name, record)


def install() -> None:
    """Put the filter on the SDK's loggers (once: it holds no state)."""
    for name in SDK_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _ThroughTheGate) for f in logger.filters):
            logger.addFilter(_ThroughTheGate())
