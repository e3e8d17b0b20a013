"""The session logger: one writer task takes the agent's events in order and hands each to
every harness (the NDJSON transcript, Claude Code's session file). Logging never blocks a
turn: events are queued, and `close()` writes what is left before it returns. It is also the
tool observer, so each tool call's start and end (with how long it took) are in the log."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any, Protocol

from caucus.models.chat import ToolCall
from caucus.models.tools import ToolResult

log = logging.getLogger(__name__)


class Harness(Protocol):
    """Writes the events it understands to a file of its own (`path`), allocated on open
    under a fresh UUID and never one that exists already."""

    path: str

    def write(self, event: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class SessionLogger:
    def __init__(self, harnesses: list[Harness]) -> None:
        self.harnesses = harnesses
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._started: dict[str, float] = {}

    def start(self) -> None:
        self._writer = asyncio.ensure_future(self._write_all())

    def __call__(self, event: dict[str, Any]) -> None:
        self._queue.put_nowait({**event, "ts": round(time.time(), 3)})

    # --- the tool observer -------------------------------------------------------------------
    def called(self, call: ToolCall) -> None:
        self._started[call.id] = time.monotonic()
        self({"event": "ToolCalled", "call_id": call.id, "name": call.name})

    def answered(self, call: ToolCall, result: ToolResult) -> None:
        began = self._started.pop(call.id, time.monotonic())
        self(
            {
                "event": "ToolAnswered",
                "call_id": call.id,
                "name": call.name,
                "is_error": result.is_error,
                "seconds": round(time.monotonic() - began, 3),
            }
        )

    # --- the writer ----------------------------------------------------------------------------
    async def _write_all(self) -> None:
        while (event := await self._queue.get()) is not None:
            for harness in self.harnesses:
                try:
                    harness.write(event)
                except OSError as exc:  # a full disk must not end the agent
                    log.error("the session log %s could not be written: %s", harness.path, exc)

    async def close(self) -> None:
        self._queue.put_nowait(None)
        if self._writer is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
        for harness in self.harnesses:
            with contextlib.suppress(OSError):
                harness.close()
