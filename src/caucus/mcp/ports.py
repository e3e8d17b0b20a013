"""The small interface the MCP tool catalog is written against, and its two implementations.

`RemotePort` talks to a hub over HTTP with `HubClient` (the stdio bridge); `LocalPort` calls the
hub's services in-process (the `/mcp` endpoint). Both return the client's result types, so the
catalog formats the same answer whichever path a call took, and both go through the same
services, so the same policies apply.
"""

from __future__ import annotations

from typing import Any, Protocol

from caucus.client import (
    ChannelInfo,
    FormInfo,
    HubClient,
    InboundMessage,
    LastPreview,
    OfferInfo,
    PeekResult,
    PeerInfo,
    Registered,
    SendResult,
    TaskInfo,
    pick_fields,
)
from caucus.domain.messages import preview
from caucus.domain.peers import Peer
from caucus.domain.tasks import Task
from caucus.errors import Unauthorized
from caucus.protocol import core_text, section
from caucus.services.hub import Hub
from caucus.services.registry import PeerView


class HubPort(Protocol):
    """One MCP session's view of the hub: who it is, and what it may do."""

    @property
    def name(self) -> str | None: ...

    @property
    def token(self) -> str | None: ...

    @property
    def persistent(self) -> bool:
        """Whether what `join` sets up outlives this call (False for a stateless request)."""
        ...

    async def identify(self) -> None:
        """Make `name` current when the port holds a token it has not used yet."""
        ...

    async def join(
        self, name: str, skills: list[str] | None, description: str | None
    ) -> Registered: ...

    async def leave(self) -> None: ...

    async def peers(self) -> list[PeerInfo]: ...

    async def ping(self, peer: str) -> PeerInfo: ...

    async def set_status(self, status: str) -> None: ...

    async def say(self, to: str, content: str, thread: str | None) -> SendResult: ...

    async def listen(self, timeout: float) -> list[InboundMessage]: ...

    async def peek(self) -> PeekResult: ...

    async def join_channel(self, channel: str) -> ChannelInfo: ...

    async def leave_channel(self, channel: str) -> None: ...

    async def channels(self) -> list[ChannelInfo]: ...

    async def set_topic(self, channel: str, topic: str) -> ChannelInfo: ...

    async def protocol(self, name: str | None) -> str: ...

    async def send_task(
        self, to: str, payload: str, subject: str | None, thread: str | None
    ) -> TaskInfo: ...

    async def task_status(self, task_id: str) -> TaskInfo: ...

    async def list_tasks(self, role: str, status: str | None) -> list[TaskInfo]: ...

    async def reply_task(self, task_id: str, result: str) -> TaskInfo: ...

    async def fail_task(self, task_id: str, error: str) -> TaskInfo: ...

    async def request_input(self, task_id: str, question: str) -> TaskInfo: ...

    async def cancel_task(self, task_id: str) -> TaskInfo: ...

    async def announce(self, payload: str, subject: str | None) -> SendResult: ...

    async def floor(self, action: str, scope: str, reason: str | None) -> dict[str, Any]: ...

    async def post_offer(
        self, payload: str, subject: str | None, skills: list[str] | None, ttl: float | None
    ) -> OfferInfo: ...

    async def ask_operator(self, title: str, fields: list[dict[str, Any]], to: str) -> FormInfo: ...

    async def forms(self) -> list[FormInfo]: ...

    async def decisions(self, limit: int) -> list[dict[str, Any]]: ...

    async def claim_offer(self, offer_id: str, note: str | None) -> OfferInfo: ...

    async def resolve_offer(
        self, offer_id: str, select: str | None, withdraw: bool
    ) -> OfferInfo: ...

    async def list_offers(self, status: str | None, matching: bool) -> list[OfferInfo]: ...


class RemotePort:
    """A hub over HTTP, through `HubClient` (which acknowledges each batch on the next listen)."""

    def __init__(self, client: HubClient) -> None:
        self.client = client

    @property
    def name(self) -> str | None:
        return self.client.name if self.client.token else None

    @property
    def token(self) -> str | None:
        return self.client.token

    @property
    def persistent(self) -> bool:
        return True

    async def identify(self) -> None:
        return None

    async def join(
        self, name: str, skills: list[str] | None, description: str | None
    ) -> Registered:
        return await self.client.register(
            name, skills=list(skills) if skills is not None else None, description=description
        )

    async def leave(self) -> None:
        await self.client.leave()
        self.client.name = None

    async def peers(self) -> list[PeerInfo]:
        return await self.client.peers()

    async def ping(self, peer: str) -> PeerInfo:
        return await self.client.ping(peer)

    async def set_status(self, status: str) -> None:
        await self.client.set_status(status)

    async def say(self, to: str, content: str, thread: str | None) -> SendResult:
        return await self.client.send(to, content, thread=thread)

    async def listen(self, timeout: float) -> list[InboundMessage]:
        return (await self.client.receive(timeout=timeout)).messages

    async def peek(self) -> PeekResult:
        return await self.client.peek()

    async def join_channel(self, channel: str) -> ChannelInfo:
        return await self.client.join_channel(channel)

    async def leave_channel(self, channel: str) -> None:
        await self.client.leave_channel(channel)

    async def channels(self) -> list[ChannelInfo]:
        return await self.client.channels()

    async def set_topic(self, channel: str, topic: str) -> ChannelInfo:
        return await self.client.set_topic(channel, topic)

    async def protocol(self, name: str | None) -> str:
        return (await self.client.protocol(name)).text

    async def send_task(
        self, to: str, payload: str, subject: str | None, thread: str | None
    ) -> TaskInfo:
        return await self.client.send_task(to, payload, subject=subject, thread=thread)

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

    async def announce(self, payload: str, subject: str | None) -> SendResult:
        return await self.client.announce(payload, subject=subject)

    async def floor(self, action: str, scope: str, reason: str | None) -> dict[str, Any]:
        return await self.client.floor(action, scope, reason)

    async def post_offer(
        self, payload: str, subject: str | None, skills: list[str] | None, ttl: float | None
    ) -> OfferInfo:
        wanted: list[str | dict[str, Any]] | None = list(skills) if skills is not None else None
        return await self.client.post_offer(
            payload, subject=subject, required_skills=wanted, ttl_seconds=ttl
        )

    async def claim_offer(self, offer_id: str, note: str | None) -> OfferInfo:
        return await self.client.claim_offer(offer_id, note)

    async def ask_operator(self, title: str, fields: list[dict[str, Any]], to: str) -> FormInfo:
        return await self.client.ask_operator(title, fields, to=to)

    async def forms(self) -> list[FormInfo]:
        return await self.client.forms()

    async def decisions(self, limit: int) -> list[dict[str, Any]]:
        return await self.client.decisions(limit)

    async def resolve_offer(self, offer_id: str, select: str | None, withdraw: bool) -> OfferInfo:
        return await self.client.resolve_offer(offer_id, select=select, withdraw=withdraw)

    async def list_offers(self, status: str | None, matching: bool) -> list[OfferInfo]:
        return await self.client.list_offers(status, matching=matching)


def _peer_info(view: PeerView) -> PeerInfo:
    return PeerInfo(
        name=view.name,
        state=view.state.value,
        status=view.status,
        status_age=view.status_age,
        skills=view.skills,
        description=view.description,
        last_seen_age=view.last_seen_age,
        listening=view.listening,
        paused=view.paused,
        uptime=view.uptime,
    )


def _channel_info(channel: Any, joined: bool | None = None) -> ChannelInfo:
    return ChannelInfo(
        name=channel.name,
        topic=channel.topic,
        topic_by=channel.topic_by,
        members=list(channel.members),
        created_at=channel.created_at,
        joined=joined,
    )


class LocalPort:
    """The hub's services in-process, for one MCP session. Holds that session's token."""

    def __init__(self, hub: Hub, *, persistent: bool = True) -> None:
        self.hub = hub
        self._persistent = persistent
        self._token: str | None = None
        self._name: str | None = None
        self._cursor: int | None = None  # the last batch listen handed out, acknowledged next

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def token(self) -> str | None:
        return self._token

    @property
    def persistent(self) -> bool:
        return self._persistent

    def adopt(self, token: str) -> None:
        """Act as the agent `token` belongs to (a client that sends its own Bearer token)."""
        self._token = token

    async def identify(self) -> None:
        if self._token is not None and self._name is None:
            await self._me()

    async def _me(self) -> Peer:
        if self._token is None:
            raise Unauthorized("not joined: call join first")
        peer = await self.hub.registry.authenticate(self._token)
        self._name = peer.name
        return peer

    async def _room(self) -> None:
        """Who is here may be read before joining, as over HTTP (`Access.ROOM`)."""
        if self._token is not None:
            await self._me()
        elif self.hub.settings.agent_key:
            raise Unauthorized("this hub requires an agent key: join first")

    async def join(
        self, name: str, skills: list[str] | None, description: str | None
    ) -> Registered:
        reg = await self.hub.registry.register(
            name=name, token=self._token, skills=skills, description=description
        )
        self._token, self._name, self._cursor = reg.token, reg.peer.name, None
        return Registered(
            reg.token, reg.peer.name, reg.outcome, reg.protocol_version, reg.protocol, reg.note
        )

    async def leave(self) -> None:
        await self.hub.registry.leave(await self._me())
        self._token = self._name = None

    async def peers(self) -> list[PeerInfo]:
        await self._room()
        return [_peer_info(v) for v in await self.hub.registry.peers()]

    async def ping(self, peer: str) -> PeerInfo:
        await self._room()
        return _peer_info(await self.hub.registry.ping(peer))

    async def set_status(self, status: str) -> None:
        await self.hub.registry.set_status(await self._me(), status)

    async def say(self, to: str, content: str, thread: str | None) -> SendResult:
        receipt = await self.hub.delivery.send(
            await self._me(), to=to, content=content, thread=thread
        )
        return SendResult(
            receipt.message_id, receipt.seq, receipt.delivered_to, receipt.missed, receipt.duplicate
        )

    async def listen(self, timeout: float) -> list[InboundMessage]:
        result = await self.hub.delivery.receive(
            await self._me(), wait=timeout, ack_through=self._cursor
        )
        self._cursor = result.deliveries[-1].message.seq if result.deliveries else None
        return [
            InboundMessage(
                **pick_fields(InboundMessage, d.message.record()),
                redelivered=d.redelivered,
                delivery_count=d.delivery_count,
            )
            for d in result.deliveries
        ]

    async def peek(self) -> PeekResult:
        peeked = await self.hub.delivery.peek(await self._me())
        last = None
        if peeked.last is not None:
            text, cut = preview(peeked.last.content)
            m = peeked.last
            last = LastPreview(m.seq, m.sender, m.to, text, cut, len(m.content))
        return PeekResult(peeked.pending, last)

    async def join_channel(self, channel: str) -> ChannelInfo:
        found, joined = await self.hub.channels.join(await self._me(), channel)
        return _channel_info(found, joined)

    async def leave_channel(self, channel: str) -> None:
        await self.hub.channels.leave(await self._me(), channel)

    async def channels(self) -> list[ChannelInfo]:
        await self._room()
        return [_channel_info(c) for c in await self.hub.channels.all()]

    async def set_topic(self, channel: str, topic: str) -> ChannelInfo:
        return _channel_info(await self.hub.channels.set_topic(await self._me(), channel, topic))

    async def protocol(self, name: str | None) -> str:
        return section(name) if name else core_text()

    async def send_task(
        self, to: str, payload: str, subject: str | None, thread: str | None
    ) -> TaskInfo:
        task = await self.hub.tasks.send(
            await self._me(), to=to, payload=payload, subject=subject, thread=thread
        )
        return _task_info(task)

    async def task_status(self, task_id: str) -> TaskInfo:
        return _task_info(await self.hub.tasks.status(await self._me(), task_id))

    async def list_tasks(self, role: str, status: str | None) -> list[TaskInfo]:
        return [_task_info(t) for t in await self.hub.tasks.listing(await self._me(), role, status)]

    async def reply_task(self, task_id: str, result: str) -> TaskInfo:
        return _task_info(await self.hub.tasks.reply(await self._me(), task_id, result))

    async def fail_task(self, task_id: str, error: str) -> TaskInfo:
        return _task_info(await self.hub.tasks.fail(await self._me(), task_id, error))

    async def request_input(self, task_id: str, question: str) -> TaskInfo:
        return _task_info(await self.hub.tasks.request_input(await self._me(), task_id, question))

    async def cancel_task(self, task_id: str) -> TaskInfo:
        return _task_info(await self.hub.tasks.cancel(await self._me(), task_id))

    async def announce(self, payload: str, subject: str | None) -> SendResult:
        receipt = await self.hub.announcements.announce(await self._me(), payload, subject=subject)
        return SendResult(receipt.message_id, receipt.seq, receipt.delivered_to, receipt.missed)

    async def floor(self, action: str, scope: str, reason: str | None) -> dict[str, Any]:
        return await self.hub.floors.act(await self._me(), action, scope, reason)

    async def post_offer(
        self, payload: str, subject: str | None, skills: list[str] | None, ttl: float | None
    ) -> OfferInfo:
        offer = await self.hub.offers.post(
            await self._me(), payload, subject=subject, required_skills=skills, ttl_seconds=ttl
        )
        return OfferInfo(**pick_fields(OfferInfo, offer.record()))

    async def claim_offer(self, offer_id: str, note: str | None) -> OfferInfo:
        offer = await self.hub.offers.claim(await self._me(), offer_id, note)
        return OfferInfo(**pick_fields(OfferInfo, offer.record()))

    async def ask_operator(self, title: str, fields: list[dict[str, Any]], to: str) -> FormInfo:
        form = await self.hub.forms.ask(await self._me(), title, fields, to)
        return FormInfo(**pick_fields(FormInfo, form.record()))

    async def forms(self) -> list[FormInfo]:
        forms = await self.hub.forms.visible(await self._me())
        return [FormInfo(**pick_fields(FormInfo, f.record())) for f in forms]

    async def decisions(self, limit: int) -> list[dict[str, Any]]:
        return await self.hub.decisions.visible(await self._me(), limit)

    async def resolve_offer(self, offer_id: str, select: str | None, withdraw: bool) -> OfferInfo:
        offer = await self.hub.offers.resolve(
            await self._me(), offer_id, select=select, withdraw=withdraw
        )
        return OfferInfo(**pick_fields(OfferInfo, offer.record()))

    async def list_offers(self, status: str | None, matching: bool) -> list[OfferInfo]:
        me = await self._me()
        return [
            OfferInfo(**pick_fields(OfferInfo, o.record()))
            for o in await self.hub.offers.listing(status, matching=me if matching else None)
        ]


def _task_info(task: Task) -> TaskInfo:
    return TaskInfo(**pick_fields(TaskInfo, task.record()))
