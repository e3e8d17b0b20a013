"""`RemotePort`: the hub over HTTP, through `HubClient`, for the stdio bridge (the in-process
side and the interface both implement are in `mcp/ports.py`)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

from caucus.client import HubClient
from caucus.domain.activity import redacted
from caucus.errors import CaucusError, InvalidRequest, Unauthorized
from caucus.mcp.ports import Answer, Convening, Joined
from caucus.wire.deliberations import DeliberationInfo, PositionInfo
from caucus.wire.forms import DecisionRecord, FormInfo
from caucus.wire.messages import Batch, InboundMessage, PeekResult, SendResult
from caucus.wire.peers import Departure, PeerInfo, StatusInfo
from caucus.wire.reservations import ReservationList
from caucus.wire.room import ChannelInfo, ChannelJoin, FloorInfo, Limits, ProtocolText
from caucus.wire.search import SearchResults, ThreadSummaryInfo
from caucus.wire.spawns import TeammateInfo, Teammates
from caucus.wire.watch import WatchKey, WatchTicket
from caucus.wire.work import OfferInfo, TaskInfo

log = logging.getLogger(__name__)


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

    async def peers(self) -> list[PeerInfo]:
        return await self.client.peers()

    async def ping(self, peer: str) -> PeerInfo:
        return await self.client.ping(peer)

    async def set_status(self, status: str) -> StatusInfo:
        return await self.client.set_status(status)

    async def say(
        self, to: str, content: str, thread: str | None, reply_to: str | None
    ) -> SendResult:
        return await self.client.send(to, content, thread=thread, reply_to=reply_to)

    async def listen(self, timeout: float) -> Batch:
        return await self.client.receive(timeout=timeout)

    async def mint_watch_key(self) -> WatchKey:
        return await self.client.mint_watch_key()

    async def mint_watch_ticket(self) -> WatchTicket:
        return await self.client.mint_watch_ticket()

    async def peek(self) -> PeekResult:
        return await self.client.peek()

    async def catch_up(self) -> list[InboundMessage]:
        batch = await self.client.receive(timeout=0, auto_ack=False)
        if batch.messages:
            await self.client.ack(seqs=[m.seq for m in batch.messages])
        return batch.messages

    async def join_channel(self, channel: str, private: bool = False) -> ChannelJoin:
        return await self.client.join_channel(channel, private=private)

    async def leave_channel(self, channel: str) -> None:
        await self.client.leave_channel(channel)

    async def channels(self) -> list[ChannelInfo]:
        return await self.client.channels()

    async def set_topic(self, channel: str, topic: str) -> ChannelInfo:
        return await self.client.set_topic(channel, topic)

    async def protocol(self, name: str | None) -> ProtocolText:
        return await self.client.protocol(name)

    async def send_task(
        self,
        to: str,
        content: str,
        subject: str | None,
        thread: str | None,
        terms: dict[str, Any] | None = None,
    ) -> TaskInfo:
        return await self.client.send_task(
            to, content, subject=subject, thread=thread, **terms or {}
        )

    async def ready_tasks(self) -> list[TaskInfo]:
        return await self.client.ready_tasks()

    async def depend(self, task_id: str, blocked_by: list[str]) -> TaskInfo:
        return await self.client.depend(task_id, blocked_by)

    async def task_status(self, task_id: str) -> TaskInfo:
        return await self.client.task_status(task_id)

    async def list_tasks(self, role: str, status: str | None) -> list[TaskInfo]:
        return await self.client.list_tasks(role, status)

    async def reply_task(self, task_id: str, result: str) -> TaskInfo:
        return await self.client.reply_task(task_id, result)

    async def fail_task(self, task_id: str, error: str) -> TaskInfo:
        return await self.client.fail_task(task_id, error)

    async def request_input(self, task_id: str, question: str) -> TaskInfo:
        return await self.client.request_input(task_id, question)

    async def cancel_task(self, task_id: str) -> TaskInfo:
        return await self.client.cancel_task(task_id)

    async def announce(self, content: str, subject: str | None) -> SendResult:
        return await self.client.announce(content, subject=subject)

    async def floor(self, action: str, scope: str, reason: str | None) -> FloorInfo:
        return await self.client.floor(action, scope, reason)

    async def floor_now(self, scope: str) -> FloorInfo:
        wanted = scope if scope == "all" else "#" + scope.lstrip("#")
        for floor in await self.client.floors():  # the held ones; any other is free
            if floor.scope == wanted:
                return floor
        return FloorInfo(scope=wanted, holder=None, since=None, reason=None, hands=[])

    async def post_offer(
        self,
        content: str,
        subject: str | None,
        skills: list[str] | None,
        ttl: float | None,
        terms: dict[str, Any] | None = None,
    ) -> OfferInfo:
        wanted: list[str | dict[str, Any]] | None = list(skills) if skills is not None else None
        return await self.client.post_offer(
            content, subject=subject, required_skills=wanted, ttl_seconds=ttl, **terms or {}
        )

    async def claim_offer(self, offer_id: str, note: str | None) -> OfferInfo:
        return await self.client.claim_offer(offer_id, note)

    async def resolve_offer(self, offer_id: str, select: str | None, withdraw: bool) -> OfferInfo:
        return await self.client.resolve_offer(offer_id, select=select, withdraw=withdraw)

    async def list_offers(self, status: str | None, matching: bool) -> list[OfferInfo]:
        return await self.client.list_offers(status, matching=matching)

    async def reserve(
        self, paths: list[str], exclusive: bool, ttl: float | None, reason: str | None
    ) -> ReservationList:
        return await self.client.reserve(paths, exclusive=exclusive, ttl=ttl, reason=reason)

    async def release(self, ids: list[str], paths: list[str], everything: bool) -> ReservationList:
        return await self.client.release(ids=ids, paths=paths, all=everything)

    async def renew(self, ids: list[str], ttl: float | None) -> ReservationList:
        return await self.client.renew(ids=ids, ttl=ttl)

    async def reservations(self, holder: str | None) -> ReservationList:
        return await self.client.reservations(holder)

    async def teammates(self) -> Teammates:
        return await self.client.teammates()

    async def spawn(
        self, prompt: str, profile: str, tools: list[str], name: str | None
    ) -> TeammateInfo:
        return await self.client.spawn(prompt, profile, tools=tools, name=name)

    async def stop_teammate(self, spawn_id: str) -> TeammateInfo:
        return await self.client.stop_teammate(spawn_id)

    async def ask_operator(self, title: str, fields: list[dict[str, Any]], to: str) -> FormInfo:
        return await self.client.ask_operator(title, fields, to=to)

    async def forms(self) -> list[FormInfo]:
        return await self.client.forms()

    async def search(self, q: str, filters: dict[str, Any]) -> SearchResults:
        return await self.client.search(q, **filters)

    async def thread_summary(self, thread: str) -> ThreadSummaryInfo:
        return await self.client.thread_summary(thread)

    async def decisions(self, limit: int) -> list[DecisionRecord]:
        return await self.client.decisions(limit)

    async def convene(self, convening: Convening) -> DeliberationInfo:
        c = convening
        return await self.client.convene(
            c.subject,
            c.panel,
            chair=c.chair,
            evidence=c.evidence,
            rounds=c.rounds,
            deadline=c.deadline,
        )

    async def submit_position(self, deliberation_id: str, answer: Answer) -> PositionInfo:
        a = answer
        return await self.client.submit_position(
            deliberation_id, a.stance, a.summary, a.confidence, a.evidence
        )


class Credentials(Protocol):
    """Where a port keeps the token of each name it joined as (the bridge's identity file)."""

    def token_for(self, name: str) -> str | None: ...

    def keep(self, name: str, token: str) -> None: ...

    def forget(self, name: str) -> None: ...
