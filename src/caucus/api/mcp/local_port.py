"""`LocalPort`: the hub's services in-process, the port `/mcp` serves the tool catalog over
(the stdio bridge uses `RemotePort`, over HTTP)."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from caucus.api import routes
from caucus.domain.activity import Via
from caucus.domain.control import Access
from caucus.domain.peers import Peer
from caucus.errors import Forbidden, InvalidRequest, Unauthorized
from caucus.mcp.ports import Joined
from caucus.services.hub import Hub
from caucus.services.principals import Principal, PrincipalKind
from caucus.web.verbs import Call, glue_of, model_of
from caucus.wire.messages import Batch, InboundMessage, SendResult
from caucus.wire.peers import Departure
from caucus.wire.room import FloorInfo, Limits
from caucus.wire.verb import Verb
from caucus.wire.verbs import meta
from caucus.wire.watch import WatchKey

R = TypeVar("R", bound=BaseModel)
assert routes.ROUTERS  # every verb's glue is bound once its routes are


class LocalPort:
    """The hub's services in-process, for one MCP session (or one state handle).

    It acts with a token (what `join` registered, or what the client sent as Bearer) or with a
    state handle (a 2026-07-28 client that keeps no session), and remembers the last batch
    `listen` handed out, to acknowledge it on the next listen."""

    def __init__(self, hub: Hub, *, token: str | None = None, handle: str | None = None) -> None:
        self.hub = hub
        self._token = token
        self._handle = handle
        self._name: str | None = None
        self._cursor: int | None = None
        self._agent_key: str | None = None
        self.source: str | None = None  # the client's address, for the registration budget
        self.session_id: str | None = None  # the MCP session it serves, if it serves one
        self._watch_key: WatchKey | None = None
        self.hub_url: str | None = None  # the hub as the client reaches it
        self.socket_url: str | None = None  # the hub as an agent it starts reaches it
        self.watch_file: Path | None = None  # the session file its watcher reads, if any

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def handle(self) -> str | None:
        return self._handle

    @property
    def token(self) -> str | None:
        return self._token

    @property
    def agent_key(self) -> str | None:
        return self._agent_key

    def offer_agent_key(self, key: str | None) -> None:
        """The agent key this connection presented (a header): for registering, and for
        reading who is here before joining a hub that requires one."""
        self._agent_key = key

    async def identify(self) -> None:
        if (self._token is not None or self._handle is not None) and self._name is None:
            peer = await self.hub.principals.holder(token=self._token, handle=self._handle)
            self._name = peer.name

    async def _me(self) -> Peer:
        principals = self.hub.principals
        if self._token is not None:
            peer = await principals.agent(self._token)
        elif self._handle is not None:
            peer = await principals.agent_by_handle(self._handle)
        else:
            raise Unauthorized("not joined yet")
        self._name = peer.name
        return peer

    async def peer(self) -> Peer | None:
        """The identity this port acts as, or None before it has one."""
        if self._token is None and self._handle is None:
            return None
        return await self._me()

    async def _room(self) -> Principal:
        """Who is here may be read before joining, as over HTTP (`Access.ROOM`)."""
        if self._token is not None or self._handle is not None:
            return Principal(PrincipalKind.AGENT, await self._me())
        return await self.hub.principals.room(None, self._agent_key)

    async def _caller(self, access: Access) -> object:
        """Who calls a verb of that access, as its glue takes it (`web.verbs.Call.who`)."""
        if access is Access.AGENT:
            return await self._me()
        if access is Access.ROOM:
            return await self._room()
        if access is Access.PUBLIC:
            return None
        raise Forbidden("the operator's verbs are not the MCP catalog's")

    async def verb(self, verb: Verb[R], /, **fields: Any) -> R:
        """One verb of the table, answered by the glue its HTTP route calls (`web.verbs`)."""
        path, rq = model_of(verb, fields)
        who = await self._caller(verb.access)
        agent_url = self.socket_url or f"http://127.0.0.1:{self.hub.settings.port}"
        hub_url = self.hub_url or "http://127.0.0.1"
        call = Call(self.hub, who, rq, path, hub_url=hub_url, agent_url=agent_url)
        return cast(R, await glue_of(verb)(call))

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
        registry = self.hub.registry
        if handle is None and name is None:
            raise InvalidRequest("give a name: join(name='...')", field="name")
        if handle is not None and self._token is None:
            peer = await self.hub.principals.holder(handle=handle)
            reg = await registry.resume(None, peer, name, skills, description)
            reg = registry.with_protocol(reg, protocol_version)
            self._handle = handle
        else:
            if name is None:  # its token, and a handle: come back under the held name
                name = (await self._me()).name
            reg = await self.hub.principals.register(
                name=name,
                token=self._token,
                skills=skills,
                description=description,
                protocol_version=protocol_version,
                agent_key=agent_key,
                source=self.source,
            )
            self._token = reg.token
            if self._handle is None:
                self._handle = await registry.mint_handle(reg.peer)
        self._name, self._cursor = reg.peer.name, None
        return Joined.of(reg, self._handle)

    async def leave(self) -> Departure:
        peer = await self._me()
        await self.hub.registry.leave(peer)
        self._token = self._handle = self._name = None
        return Departure(name=peer.name, left=True)

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
        # Recorded as soon as the call's answer is on its way, not before it: the activity view
        # is the room's record of calls, not a step the caller should wait for.
        record = functools.partial(
            self.hub.activity.record,
            self._name,
            tool,
            ok=ok,
            error=error,
            detail=detail,
            ms=ms,
            via=Via.MCP,
            arguments=arguments,
        )
        asyncio.get_running_loop().call_soon(record)

    async def offline(self) -> None:
        if self._token is None and self._handle is None:
            return
        try:
            peer = await self._me()
        except Unauthorized:
            return  # it left or was removed meanwhile: nothing to tell
        await self.hub.registry.offline(peer)

    async def say(
        self, to: str, content: str, thread: str | None, reply_to: str | None
    ) -> SendResult:
        receipt = await self.hub.delivery.send(
            await self._me(), to=to, content=content, thread=thread, reply_to=reply_to
        )
        return SendResult.of(receipt)

    async def listen(self, timeout: float) -> Batch:
        result = await self.hub.delivery.receive(
            await self._me(), wait=timeout, ack_through=self._cursor
        )
        self._cursor = result.deliveries[-1].message.seq if result.deliveries else None
        return Batch.model_construct(
            messages=[InboundMessage.of(d) for d in result.deliveries],
            acked=result.acked,
            superseded=result.superseded,
            displaced_watcher=result.displaced_watcher,
        )

    async def mint_watch_key(self) -> WatchKey:
        """One key per port, reused: a watcher started from an older file keeps working."""
        peer = await self._me()
        if self._watch_key is None or self._watch_key.name != peer.name:
            self._watch_key = WatchKey(name=peer.name, key=await self.hub.watchers.mint_key(peer))
        return self._watch_key

    async def catch_up(self) -> list[InboundMessage]:
        me = await self._me()
        result = await self.hub.delivery.receive(me, wait=0)
        if result.deliveries:
            await self.hub.delivery.ack(me, seqs=[d.message.seq for d in result.deliveries])
        return [InboundMessage.of(d) for d in result.deliveries]

    async def limits(self) -> Limits:
        return await self.verb(meta.LIMITS)

    async def floor_now(self, scope: str) -> FloorInfo:
        await self._room()
        return FloorInfo.of(await self.hub.floors.look(scope))
