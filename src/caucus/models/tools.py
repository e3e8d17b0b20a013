"""What a backend calls tools through. A `ToolExecutor` lists the tools (once at the start of
each run), calls one by name, and opens a scope around each run (`run_scope`), where an
implementation may keep per-run state. A `ToolObserver` hears of every call and its result,
for the session logs."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from caucus.models.chat import ToolCall

ROOM = "caucus"  # the source of the room's own tools (the hub's catalog)
RUNTIME = "runtime"  # the source of the runtime's own tools (resources, watches)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    destructive: bool = False  # the server marks it destructiveHint
    output: dict[str, Any] | None = None  # its output schema, when the server gives one
    read_only: bool = False  # the server marks it readOnlyHint
    source: str = ""  # where it comes from: ROOM, RUNTIME, or an MCP server's command
    annotations: Mapping[str, Any] = field(default_factory=dict)  # its hints, as given

    def wire(self) -> dict[str, Any]:
        """As `/v1/chat/completions` takes a tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


@dataclass(frozen=True, slots=True)
class ToolResult:
    content: str
    is_error: bool = False
    data: Any = None  # the structured result, when the tool gives one (code mode reads it)


class ToolExecutor(Protocol):
    async def list_tools(self) -> list[ToolSpec]: ...

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run a tool. A tool that fails answers a ToolResult with `is_error`; this raises
        only when the executor itself cannot go on."""
        ...

    def run_scope(self) -> contextlib.AbstractAsyncContextManager[None]: ...


class ToolObserver(Protocol):
    def called(self, call: ToolCall) -> None: ...

    def answered(self, call: ToolCall, result: ToolResult) -> None: ...


class NoTools:
    """An agent without tools."""

    async def list_tools(self) -> list[ToolSpec]:
        return []

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(f"there is no tool named {name!r}", is_error=True)

    @contextlib.asynccontextmanager
    async def run_scope(self) -> AsyncIterator[None]:
        yield
