"""`LocalPort`: the hub's services in-process, the port `/mcp` serves the tool catalog over
(the stdio bridge uses `RemotePort`, over HTTP)."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

from caucus.domain.activity import Via
from caucus.domain.peers import Peer
from caucus.errors import InvalidRequest, Unauthorized
from caucus.mcp.ports import Answer, Convening, Joined
from caucus.protocol import PROTOCOL_VERSION, core_text, section, section_names
from caucus.services.hub import Hub
from caucus.services.spawns import SpawnAsk
from caucus.wire.deliberations import DeliberationInfo, PositionInfo
from caucus.wire.fields import parse_time
from caucus.wire.forms import DecisionRecord, FormInfo
from caucus.wire.messages import Batch, InboundMessage, PeekResult, SendResult
from caucus.wire.peers import Departure, PeerInfo, StatusInfo
from caucus.wire.reservations import ReservationList
from caucus.wire.room import ChannelInfo, ChannelJoin, FloorInfo, Limits, ProtocolText
from caucus.wire.search import SearchResults, ThreadSummaryInfo
from caucus.wire.spawns import TeammateInfo, Teammates
from caucus.wire.watch import WatchKey, WatchTicket, ticket_command
from caucus.wire.work import OfferInfo, TaskInfo


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

    async def _room(self) -> None:
        """Who is here may be read before joining, as over HTTP (`Access.ROOM`)."""
        if self._token is not None or self._handle is not None:
            await self._me()
        else:
            await self.hub.principals.room(None, self._agent_key)

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

    async def limits(self) -> Limits:
        return Limits.of(self.hub.settings, self.hub.control.state())

    async def peers(self) -> list[PeerInfo]:
        await self._room()
        return [PeerInfo.of(v) for v in await self.hub.registry.peers()]

    async def ping(self, peer: str) -> PeerInfo:
        await self._room()
        return PeerInfo.of(await self.hub.registry.ping(peer))

    async def set_status(self, status: str) -> StatusInfo:
        peer = await self._me()
        await self.hub.registry.set_status(peer, status)
        return StatusInfo(name=peer.name, status=peer.status)

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

    async def mint_watch_ticket(self) -> WatchTicket:
        peer = await self._me()
        ticket = await self.hub.watchers.mint_ticket(peer)
        command = ticket_command(self.hub_url or "http://127.0.0.1", ticket.ticket)
        return WatchTicket(
            name=peer.name, ticket=ticket.ticket, expires_at=ticket.expires_at, command=command
        )

    async def peek(self) -> PeekResult:
        return PeekResult.of(await self.hub.delivery.peek(await self._me()))

    async def catch_up(self) -> list[InboundMessage]:
        me = await self._me()
        result = await self.hub.delivery.receive(me, wait=0)
        if result.deliveries:
            await self.hub.delivery.ack(me, seqs=[d.message.seq for d in result.deliveries])
        return [InboundMessage.of(d) for d in result.deliveries]

    async def join_channel(self, channel: str, private: bool = False) -> ChannelJoin:
        found, joined = await self.hub.channels.join(await self._me(), channel, private=private)
        return ChannelJoin.joining(found, joined)

    async def leave_channel(self, channel: str) -> None:
        await self.hub.channels.leave(await self._me(), channel)

    async def channels(self) -> list[ChannelInfo]:
        me = await self._me_if_joined()
        return [ChannelInfo.of(c) for c in await self.hub.channels.visible(me)]

    async def set_topic(self, channel: str, topic: str) -> ChannelInfo:
        return ChannelInfo.of(await self.hub.channels.set_topic(await self._me(), channel, topic))

    async def protocol(self, name: str | None) -> ProtocolText:
        text = section(name) if name else core_text()
        return ProtocolText(
            version=PROTOCOL_VERSION, text=text, sections=list(section_names()), section=name
        )

    async def send_task(
        self,
        to: str,
        content: str,
        subject: str | None,
        thread: str | None,
        terms: dict[str, Any] | None = None,
    ) -> TaskInfo:
        task = await self.hub.tasks.send(
            await self._me(), to=to, payload=content, subject=subject, thread=thread, **terms or {}
        )
        return TaskInfo.of(task)

    async def ready_tasks(self) -> list[TaskInfo]:
        return [TaskInfo.of(t) for t in await self.hub.tasks.ready(await self._me())]

    async def depend(self, task_id: str, blocked_by: list[str]) -> TaskInfo:
        return TaskInfo.of(await self.hub.tasks.depend(await self._me(), task_id, blocked_by))

    async def task_status(self, task_id: str) -> TaskInfo:
        return TaskInfo.of(await self.hub.tasks.status(await self._me(), task_id))

    async def list_tasks(self, role: str, status: str | None) -> list[TaskInfo]:
        found = await self.hub.tasks.listing(await self._me(), role, status)
        return [TaskInfo.of(t) for t in found]

    async def reply_task(self, task_id: str, result: str) -> TaskInfo:
        return TaskInfo.of(await self.hub.tasks.reply(await self._me(), task_id, result))

    async def fail_task(self, task_id: str, error: str) -> TaskInfo:
        return TaskInfo.of(await self.hub.tasks.fail(await self._me(), task_id, error))

    async def request_input(self, task_id: str, question: str) -> TaskInfo:
        task = await self.hub.tasks.request_input(await self._me(), task_id, question)
        return TaskInfo.of(task)

    async def cancel_task(self, task_id: str) -> TaskInfo:
        return TaskInfo.of(await self.hub.tasks.cancel(await self._me(), task_id))

    async def announce(self, content: str, subject: str | None) -> SendResult:
        receipt = await self.hub.announcements.announce(await self._me(), content, subject=subject)
        return SendResult.of(receipt)

    async def floor(self, action: str, scope: str, reason: str | None) -> FloorInfo:
        return FloorInfo.of(await self.hub.floors.act(await self._me(), action, scope, reason))

    async def floor_now(self, scope: str) -> FloorInfo:
        await self._room()
        return FloorInfo.of(await self.hub.floors.look(scope))

    async def _me_if_joined(self) -> Peer | None:
        """The reads that work before join: as this peer once joined, else as the room."""
        if self._token is not None or self._handle is not None:
            return await self._me()
        await self._room()
        return None

    async def post_offer(
        self,
        content: str,
        subject: str | None,
        skills: list[str] | None,
        ttl: float | None,
        terms: dict[str, Any] | None = None,
    ) -> OfferInfo:
        offer = await self.hub.offers.post(
            await self._me(),
            content,
            subject=subject,
            required_skills=skills,
            ttl_seconds=ttl,
            **terms or {},
        )
        return OfferInfo.of(offer)

    async def claim_offer(self, offer_id: str, note: str | None) -> OfferInfo:
        return OfferInfo.of(await self.hub.offers.claim(await self._me(), offer_id, note))

    async def resolve_offer(self, offer_id: str, select: str | None, withdraw: bool) -> OfferInfo:
        offer = await self.hub.offers.resolve(
            await self._me(), offer_id, select=select, withdraw=withdraw
        )
        return OfferInfo.of(offer)

    async def list_offers(self, status: str | None, matching: bool) -> list[OfferInfo]:
        me = await self._me()
        found = await self.hub.offers.listing(status, matching=me if matching else None)
        return [OfferInfo.of(o) for o in found]

    async def reserve(
        self, paths: list[str], exclusive: bool, ttl: float | None, reason: str | None
    ) -> ReservationList:
        service = self.hub.reservations
        done = await service.reserve(
            await self._me(), paths, exclusive=exclusive, ttl=ttl, reason=reason
        )
        return ReservationList.of(done.granted, done.policy, done.conflicts)

    async def release(self, ids: list[str], paths: list[str], everything: bool) -> ReservationList:
        service = self.hub.reservations
        released = await service.release(
            await self._me(), ids=ids, paths=paths, everything=everything
        )
        return ReservationList.of(released, await service.policy())

    async def renew(self, ids: list[str], ttl: float | None) -> ReservationList:
        service = self.hub.reservations
        return ReservationList.of(
            await service.renew(await self._me(), ids=ids, ttl=ttl), await service.policy()
        )

    async def reservations(self, holder: str | None) -> ReservationList:
        await self._room()
        service = self.hub.reservations
        return ReservationList.of(await service.listing(holder), await service.policy())

    async def teammates(self) -> Teammates:
        return Teammates.of(await self.hub.spawns.standing(await self._me()))

    async def spawn(
        self, prompt: str, profile: str, tools: list[str], name: str | None
    ) -> TeammateInfo:
        ask = SpawnAsk(prompt=prompt, profile=profile, tools=tools, name=name)
        url = self.socket_url or f"http://127.0.0.1:{self.hub.settings.port}"
        return TeammateInfo.of(await self.hub.spawns.spawn(await self._me(), ask, url))

    async def stop_teammate(self, spawn_id: str) -> TeammateInfo:
        return TeammateInfo.of(await self.hub.spawns.stop_teammate(spawn_id, await self._me()))

    async def ask_operator(self, title: str, fields: list[dict[str, Any]], to: str) -> FormInfo:
        return FormInfo.of(await self.hub.forms.ask(await self._me(), title, fields, to))

    async def forms(self) -> list[FormInfo]:
        return [FormInfo.of(f) for f in await self.hub.forms.visible(await self._me_if_joined())]

    async def search(self, q: str, filters: dict[str, Any]) -> SearchResults:
        since, until = filters.pop("since", None), filters.pop("until", None)
        found = await self.hub.search.search(
            await self._me(),
            q,
            since=parse_time(since, "since"),
            until=parse_time(until, "until"),
            **filters,
        )
        return SearchResults.of(found)

    async def thread_summary(self, thread: str) -> ThreadSummaryInfo:
        return ThreadSummaryInfo.of(await self.hub.search.thread_summary(await self._me(), thread))

    async def decisions(self, limit: int) -> list[DecisionRecord]:
        found = await self.hub.decisions.visible(await self._me_if_joined(), limit)
        return [DecisionRecord.of(d) for d in found]

    async def convene(self, convening: Convening) -> DeliberationInfo:
        convened = await self.hub.deliberations.convene(
            await self._me(),
            subject=convening.subject,
            panel=convening.panel,
            chair=convening.chair,
            evidence=convening.evidence,
            rounds=convening.rounds,
            deadline=convening.deadline,
        )
        return DeliberationInfo.of(convened)

    async def submit_position(self, deliberation_id: str, answer: Answer) -> PositionInfo:
        p = await self.hub.deliberations.submit(
            await self._me(),
            deliberation_id,
            stance=answer.stance,
            summary=answer.summary,
            confidence=answer.confidence,
            evidence=answer.evidence,
        )
        return PositionInfo.of(p)
