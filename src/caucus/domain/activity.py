"""One MCP tool call as the operator's activity view shows it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Via(StrEnum):
    MCP = "mcp"  # the hub's own /mcp endpoint
    BRIDGE = "bridge"  # a stdio bridge or a native agent, which report their calls


class Witness(StrEnum):
    """Who vouches for a call: the hub ran it (its /mcp), or the caller says it did."""

    OBSERVED = "observed"
    SELF_REPORTED = "self-reported"


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

    @property
    def witness(self) -> Witness:
        # Only a call the hub ran itself is observed; POST /activity is the caller's word.
        return Witness.OBSERVED if self.via is Via.MCP else Witness.SELF_REPORTED
