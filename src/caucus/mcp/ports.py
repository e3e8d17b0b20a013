"""The small interface the MCP tool catalog is written against.

`LocalPort` (`api/mcp/local_port.py`) calls the hub's services in-process (`/mcp`); `RemotePort`
(`mcp/remote.py`) is a hub over HTTP, through `HubClient` (the stdio bridge). Both answer with
the same wire models (`caucus.wire`), built by the same constructors, and both go through the
same services, so the same policies apply and the catalog formats the same answer whichever
path a call took. This module loads no service: the bridge imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel

from caucus.wire.messages import Batch, InboundMessage, SendResult
from caucus.wire.peers import Departure, Registered
from caucus.wire.room import FloorInfo, Limits
from caucus.wire.verb import Verb
from caucus.wire.watch import WatchKey

if TYPE_CHECKING:
    from caucus.domain.peers import Registration


@dataclass(frozen=True, slots=True)
class Joined:
    """What a port's join did. The token stays in the port: a model never sees it."""

    name: str
    outcome: str
    protocol_version: int
    protocol: str | None
    note: str | None
    handle: str | None  # a state handle that brings this identity back (on /mcp)

    @classmethod
    def of(cls, reg: Registered | Registration, handle: str | None) -> Joined:
        name = reg.name if isinstance(reg, Registered) else reg.peer.name
        return cls(name, reg.outcome, reg.protocol_version, reg.protocol, reg.note, handle)


R = TypeVar("R", bound=BaseModel)


class HubPort(Protocol):
    """One MCP session's view of the hub: who it is, and what it may do."""

    @property
    def name(self) -> str | None: ...

    @property
    def handle(self) -> str | None:
        """A state handle for this identity, where the transport mints them (/mcp)."""
        ...

    async def identify(self) -> None:
        """Make `name` current when the port holds a credential it has not used yet."""
        ...

    async def join(
        self,
        name: str | None,
        skills: list[str] | None,
        description: str | None,
        *,
        protocol_version: int | None,
        handle: str | None,
        agent_key: str | None,
    ) -> Joined: ...

    async def leave(self) -> Departure: ...

    async def offline(self) -> None:
        """The session ended: tell the hub, keeping the identity resumable."""
        ...

    def report_call(
        self,
        tool: str,
        *,
        ok: bool,
        error: str | None,
        detail: str | None,
        ms: float,
        arguments: dict[str, Any] | None = None,
    ) -> None:
        """A tool call ended: put it on the hub's activity view (never delays the answer),
        with what it was called with (redacted before it leaves, `domain.activity`)."""
        ...

    async def limits(self) -> Limits: ...

    async def verb(self, verb: Verb[R], /, **fields: Any) -> R:
        """One verb of the hub's table (`caucus.wire.verbs`) with its fields by name: what
        the catalog's tools do is these, through whichever door this port is."""
        ...

    async def say(
        self, to: str, content: str, thread: str | None, reply_to: str | None
    ) -> SendResult: ...

    async def listen(self, timeout: float) -> Batch: ...

    async def mint_watch_key(self) -> WatchKey:
        """A key that only waits for this identity's messages (for a watcher on this machine)."""
        ...

    async def catch_up(self) -> list[InboundMessage]:
        """What waits for a brand-new identity (announcements from before it came), taken
        and acknowledged at once: read as catch-up, so it never wakes anyone."""
        ...

    async def floor_now(self, scope: str) -> FloorInfo:
        """One scope's floor, read before joining too."""
        ...
