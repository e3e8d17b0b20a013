"""`RemotePort`: the hub over HTTP, through `HubClient`, for the stdio bridge (the in-process
side and the interface both implement are in `mcp/ports.py`)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from caucus.client import HubClient
from caucus.domain.activity import redacted
from caucus.errors import CaucusError, InvalidRequest, Unauthorized
from caucus.mcp.ports import Joined
from caucus.wire.messages import Batch, InboundMessage, SendResult
from caucus.wire.peers import Departure
from caucus.wire.room import FloorInfo, Limits
from caucus.wire.verb import Verb
from caucus.wire.watch import WatchKey

log = logging.getLogger(__name__)

R = TypeVar("R", bound=BaseModel)


class RemotePort:
    """A hub over HTTP, through `HubClient` (which acknowledges each batch on the next listen).

    `credentials` is where the bridge keeps its token per (hub, name), so a restarted host
    resumes its identity instead of losing it."""

    def __init__(self, client: HubClient, credentials: Credentials | None = None) -> None:
        self.client = client
        self.credentials = credentials
        self._limits: Limits | None = None
        self._reports: set[asyncio.Task[None]] = set()

    @property
    def name(self) -> str | None:
        return self.client.name if self.client.token else None

    @property
    def handle(self) -> str | None:
        return None

    async def identify(self) -> None:
        return None

    async def join(
        self,
        name: str | None,
        skills: list[str] | None,
        description: str | None,
        *,
        protocol_version: int | None,
        handle: str | None,
        agent_key: str | None,
    ) -> Joined:
        client = self.client
        if name is None:  # a state handle is for /mcp; over the bridge a name is needed
            raise InvalidRequest("give a name: join(name='...')", field="name")
        if client.token is None and self.credentials is not None:
            client.token = self.credentials.token_for(name)
        wanted: list[str | dict[str, Any]] | None = list(skills) if skills is not None else None
        try:
            reg = await client.register(
                name, skills=wanted, description=description, protocol_version=protocol_version
            )
        except Unauthorized:
            if client.token is None:
                raise
            # The kept token ended (left, kicked, forgotten): the name is free again.
            client.token = None
            reg = await client.register(
                name, skills=wanted, description=description, protocol_version=protocol_version
            )
        if self.credentials is not None:
            self.credentials.keep(reg.name, reg.token)
        return Joined.of(reg, None)

    async def leave(self) -> Departure:
        name = self.client.name
        left = await self.client.leave()
        self.client.name = None
        if self.credentials is not None and name is not None:
            self.credentials.forget(name)
        return left

    async def offline(self) -> None:
        if self.client.token is not None:
            await self.client.offline()

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
        if self.client.token is None:
            return  # not joined: the hub has no identity to put it under
        shown = redacted(arguments) if arguments else None  # no secret leaves this process
        task = asyncio.ensure_future(self._report(tool, ok, error, detail, ms, shown))
        self._reports.add(task)
        task.add_done_callback(self._reports.discard)

    async def _report(
        self,
        tool: str,
        ok: bool,
        error: str | None,
        detail: str | None,
        ms: float,
        arguments: dict[str, Any] | None,
    ) -> None:
        try:
            await self.client.report_tool_call(
                tool, ok=ok, error=error, detail=detail, ms=ms, arguments=arguments
            )
        except CaucusError as exc:  # the view misses one call; the call itself stands
            log.debug("the %s call was not reported: %s", tool, exc)

    async def limits(self) -> Limits:
        if self._limits is None:
            self._limits = await self.client.limits()
        return self._limits

    async def verb(self, verb: Verb[R], /, **fields: Any) -> R:
        return await self.client.verb(verb, **fields)

    async def say(
        self, to: str, content: str, thread: str | None, reply_to: str | None
    ) -> SendResult:
        return await self.client.send(to, content, thread=thread, reply_to=reply_to)

    async def listen(self, timeout: float) -> Batch:
        return await self.client.receive(timeout=timeout)

    async def mint_watch_key(self) -> WatchKey:
        return await self.client.mint_watch_key()

    async def catch_up(self) -> list[InboundMessage]:
        batch = await self.client.receive(timeout=0, auto_ack=False)
        if batch.messages:
            await self.client.ack(seqs=[m.seq for m in batch.messages])
        return batch.messages

    async def floor_now(self, scope: str) -> FloorInfo:
        wanted = scope if scope == "all" else "#" + scope.lstrip("#")
        for floor in await self.client.floors():  # the held ones; any other is free
            if floor.scope == wanted:
                return floor
        return FloorInfo(scope=wanted, holder=None, since=None, reason=None, hands=[])


class Credentials(Protocol):
    """Where a port keeps the token of each name it joined as (the bridge's identity file)."""

    def token_for(self, name: str) -> str | None: ...

    def keep(self, name: str, token: str) -> None: ...

    def forget(self, name: str) -> None: ...
