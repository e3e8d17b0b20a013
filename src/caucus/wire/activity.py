"""The activity view on the wire: MCP tool calls, as the operator reads them."""

from __future__ import annotations

from pydantic import Field

from caucus.domain.activity import ToolCallRecord, Via, Witness
from caucus.wire.fields import Wire, closed


class ToolCallInfo(Wire):
    ts: float
    caller: str | None = Field(description="who called it (null: a client not joined yet)")
    tool: str
    ok: bool
    error: str | None = Field(description="the error's stable code, when it failed")
    detail: str | None = Field(description="what the error said")
    ms: float = Field(description="how long the call took, in milliseconds")
    via: str = closed(Via, "mcp: the hub's /mcp; bridge: a stdio bridge or native agent")
    arguments: str | None = Field(
        None, description="what it was called with: JSON, secret-looking keys redacted, cut short"
    )
    witness: str = closed(
        Witness,
        "observed: the hub ran it (its /mcp); self-reported: the caller says it ran it "
        "(POST /activity), and the hub cannot check that",
    )

    @classmethod
    def of(cls, call: ToolCallRecord) -> ToolCallInfo:
        return cls.model_construct(
            ts=call.ts,
            caller=call.caller,
            tool=call.tool,
            ok=call.ok,
            error=call.error,
            detail=call.detail,
            ms=call.ms,
            via=call.via.value,
            arguments=call.arguments,
            witness=call.witness.value,
        )


class ActivityList(Wire):
    calls: list[ToolCallInfo] = Field(description="newest first")


class Reported(Wire):
    recorded: bool
