"""One MCP tool call as the operator's activity view shows it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Via(StrEnum):
    MCP = "mcp"  # the hub's own /mcp endpoint
    BRIDGE = "bridge"  # a stdio bridge or a native agent, which report their calls


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    ts: float
    caller: str | None  # None: a client that had not joined yet
    tool: str
    ok: bool
    error: str | None  # the error's stable code
    detail: str | None  # what the error said
    ms: float
    via: Via
