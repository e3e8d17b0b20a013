"""What every tool of the catalog is called with (`Call`) and answers (`Reply`), and the checks
the tools share: is the caller joined, and is an action's argument given."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from caucus.errors import Hint, InvalidRequest, NotJoined
from caucus.mcp.ports import HubPort
from caucus.wire.fields import Wire

Reply = tuple[Wire, str]  # what a tool's body returns: the hub's noun, and the line of text
Answered = tuple[dict[str, Any], str]  # what the caller gets: the noun's view, and the text


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call: the caller's port and what its transport knows about the caller."""

    port: HubPort
    default_name: str | None = None
    agent_key: str | None = None
    hub_url: str | None = None  # the hub as this caller reaches it
    local: bool = True  # the caller is on the hub's machine (a loopback address)
    # The host turns each line a background command prints into a turn (Claude Code's Monitor
    # tool): the watcher it is given keeps running and prints one line per message.
    follows: bool = False


async def joined(call: Call) -> HubPort:
    """The caller's port, once it has an identity."""
    port = call.port
    await port.identify()
    if port.name is None:
        raise NotJoined("join first (a name is optional)", hint=Hint.REGISTER)
    return port


async def present(call: Call) -> HubPort:
    """For the reads that work before join."""
    await call.port.identify()
    return call.port


def needs(value: str | None, name: str, action: object) -> str:
    if value is None or value == "":
        raise InvalidRequest(f"{name} is required for {action}", field=name)
    return value


def fields(**given: Any) -> dict[str, Any]:
    """Keyword arguments without the ones left out (None)."""
    return {k: v for k, v in given.items() if v is not None}
