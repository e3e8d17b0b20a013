"""The activity view: every MCP tool call the hub hears of, the last ones kept in memory.

Calls to the hub's own /mcp are recorded as they end; a stdio bridge or a native agent serves
the catalog in its own process and reports each call it ran (`POST /activity`), under the
identity whose token it holds, so it can only ever speak for itself. The ring is bounded and
belongs to this hub process; the live feed carries every call to the console as it happens.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from typing import Any

from caucus.clock import Clock
from caucus.domain.activity import ToolCallRecord, Via, shown_arguments
from caucus.domain.events import ToolCalled
from caucus.services.notifier import Notifier

KEPT = 2000  # calls kept for the activity view
DETAIL_CHARS = 500


class Activity:
    def __init__(self, notifier: Notifier, clock: Clock, kept: int = KEPT) -> None:
        self._notifier = notifier
        self._clock = clock
        self._calls: deque[ToolCallRecord] = deque(maxlen=kept)

    def record(
        self,
        caller: str | None,
        tool: str,
        *,
        ok: bool,
        error: str | None,
        detail: str | None,
        ms: float,
        via: Via,
        arguments: Mapping[str, Any] | None = None,
    ) -> ToolCallRecord:
        if detail is not None and len(detail) > DETAIL_CHARS:
            detail = detail[:DETAIL_CHARS] + "…"
        call = ToolCallRecord(
            ts=self._clock.now(),
            caller=caller,
            tool=tool,
            ok=ok,
            error=error,
            detail=detail,
            ms=round(max(ms, 0.0), 3),
            via=via,
            arguments=shown_arguments(arguments),
        )
        self._calls.append(call)
        self._notifier.emit(ToolCalled(call.ts, call))
        return call

    def listing(
        self,
        *,
        limit: int = 200,
        caller: str | None = None,
        tool: str | None = None,
        errors: bool = False,
    ) -> list[ToolCallRecord]:
        """The newest calls first, those matching every filter given."""
        out: list[ToolCallRecord] = []
        for call in reversed(self._calls):
            if caller is not None and call.caller != caller:
                continue
            if tool is not None and call.tool != tool:
                continue
            if errors and call.ok:
                continue
            out.append(call)
            if len(out) >= limit:
                break
        return out
