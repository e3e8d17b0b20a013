"""Protocol errors: what MCP answers with a JSON-RPC error rather than a result.

A tool that runs and fails is a result (`isError`, `mcp/server.py`'s `error_result`): the
model reads it. A request for something that is not there (a tool, a prompt, a resource) is a
protocol error with the code the specification gives it and, in `data`, what the client needs
to recover (the names there are, the URI it asked for). Any other `CaucusError` a prompt or
resource handler meets (the hub is down, the caller is not who it says) is an
implementation-defined `-32000` carrying the hub's own error body, as the bridge's handshake
refusal does. None of these is logged with a traceback: a client asked for something, nothing
in the hub broke.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable
from typing import ParamSpec, TypeVar

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from caucus.errors import CaucusError

# "Resource not found" on the handshake era (2025-06-18, 2025-11-25). 2026-07-28 retired the
# code for -32602 (SEP-2164), as the SDK's own MCPServer answers.
RESOURCE_NOT_FOUND = -32002
HUB_ERROR = -32000  # implementation-defined: the hub's error body is in `data`

P = ParamSpec("P")
R = TypeVar("R")


def unknown_tool(name: str, tools: Iterable[str]) -> MCPError:
    listed = list(tools)
    return MCPError(
        INVALID_PARAMS,
        f"Unknown tool: {name!r}; the tools are: {', '.join(listed)}",
        data={"tool": name, "tools": listed},
    )


def unknown_prompt(name: str, prompts: Iterable[str]) -> MCPError:
    listed = list(prompts)
    return MCPError(
        INVALID_PARAMS,
        f"Unknown prompt: {name!r}; the prompts are: {', '.join(listed)}",
        data={"prompt": name, "prompts": listed},
    )


def unknown_resource(uri: str, protocol_version: str | None) -> MCPError:
    """No such resource (or one the caller may not read: the two are not told apart)."""
    modern = protocol_version in MODERN_PROTOCOL_VERSIONS
    return MCPError(
        INVALID_PARAMS if modern else RESOURCE_NOT_FOUND,
        "Resource not found: join, then read the inbox URI its result names",
        data={"uri": uri},
    )


def hub_error(exc: CaucusError) -> MCPError:
    return MCPError(HUB_ERROR, exc.detail, data=exc.to_dict())


def answering_hub_errors(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """A prompt or resource handler whose `CaucusError`s reach the client as `hub_error`s
    (the SDK would answer them with code 0 and log their traceback)."""

    @functools.wraps(handler)
    async def answering(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await handler(*args, **kwargs)
        except CaucusError as exc:
            raise hub_error(exc) from None

    return answering
