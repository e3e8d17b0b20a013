"""Tools from Python functions, for an agent embedded in a Python program (and for tests that
need a tool with no server behind it). Each function takes keyword arguments and returns text;
an exception it raises goes back to the model as the tool's error."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from caucus.models.tools import ToolResult, ToolSpec

ToolFunction = Callable[..., str | Awaitable[str]]


class FunctionTools:
    def __init__(self) -> None:
        self._tools: dict[str, tuple[ToolSpec, ToolFunction]] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []  # every call, in order
        self.runs = 0  # how many run scopes were opened

    def add(
        self,
        name: str,
        function: ToolFunction,
        *,
        description: str = "",
        parameters: dict[str, Any] | None = None,
        destructive: bool = False,
        read_only: bool = False,
    ) -> None:
        hints = {"readOnlyHint": read_only, "destructiveHint": destructive}
        spec = ToolSpec(
            name,
            description or (inspect.getdoc(function) or name),
            parameters or {"type": "object"},
            destructive,
            read_only=read_only,
            annotations=hints,
        )
        self._tools[name] = (spec, function)

    async def list_tools(self) -> list[ToolSpec]:
        return [spec for spec, _ in self._tools.values()]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.calls.append((name, arguments))
        found = self._tools.get(name)
        if found is None:
            return ToolResult(f"there is no tool named {name!r}", is_error=True)
        try:
            value = found[1](**arguments)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            return ToolResult(f"{type(exc).__name__}: {exc}", is_error=True)
        return ToolResult(str(value))

    @contextlib.asynccontextmanager
    async def run_scope(self) -> AsyncIterator[None]:
        self.runs += 1
        yield
