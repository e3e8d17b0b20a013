"""One MCP tool call as the operator's activity view shows it."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


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
    arguments: str | None = None  # what it was called with, redacted and cut (`shown_arguments`)

    @property
    def witness(self) -> Witness:
        # Only a call the hub ran itself is observed; POST /activity is the caller's word.
        return Witness.OBSERVED if self.via is Via.MCP else Witness.SELF_REPORTED


# A key whose value is a credential: never shown, never kept (the MCP state handle is one).
SECRET_KEY = re.compile(
    r"token|secret|passw|api[_-]?key|authori[sz]ation|credential|private[_-]?key|cookie|"
    r"session|handle|bearer",
    re.IGNORECASE,
)
REDACTED = "[redacted]"
ARGUMENT_CHARS = 400  # of the whole, as the activity view shows it
VALUE_CHARS = 160  # of one string in it


def redacted(value: Any) -> Any:
    """`value` with every secret-looking key's value replaced and long strings cut."""
    if isinstance(value, Mapping):
        return {
            str(k): REDACTED if SECRET_KEY.search(str(k)) else redacted(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    if isinstance(value, str) and len(value) > VALUE_CHARS:
        return value[:VALUE_CHARS] + "…"
    return value


def shown_arguments(arguments: Mapping[str, Any] | None) -> str | None:
    """A tool call's arguments as the operator reads them: redacted, compact, bounded."""
    if not arguments:
        return None
    text = json.dumps(redacted(arguments), ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= ARGUMENT_CHARS else text[:ARGUMENT_CHARS] + "…"
