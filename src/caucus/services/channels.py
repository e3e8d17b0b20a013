"""Channels: durable membership and topics."""

from __future__ import annotations

from caucus.clock import Clock
from caucus.domain.channels import Channel, check_topic
from caucus.domain.events import ChannelJoined, ChannelLeft, TopicChanged
from caucus.domain.names import check_channel_name
from caucus.domain.peers import Peer
from caucus.errors import Forbidden, Hint, NotFound
from caucus.services.notifier import Notifier
from caucus.storage.base import Store


class Channels:
    def __init__(
        self, store: Store, notifier: Notifier, clock: Clock, *, max_per_peer: int | None = None
    ) -> None:
        self._max_per_peer = max_per_peer
        self._store = store
        self._notifier = notifier
        self._clock = clock

    async def join(self, peer: Peer, channel: str) -> tuple[Channel, bool]:
        name = check_channel_name(channel)
        now = self._clock.now()
        joined = await self._store.join_channel(peer.id, name, now, self._max_per_peer)
        if joined:
            self._notifier.emit(ChannelJoined(now, name, peer.name))
        found = await self._store.get_channel(name)
        assert found is not None
        return found, joined

    async def leave(self, peer: Peer, channel: str) -> None:
        name = check_channel_name(channel)
        if not await self._store.leave_channel(peer.id, name):
            raise NotFound(f"you are not a member of {name}", hint=Hint.LIST_CHANNELS, channel=name)
        self._notifier.emit(ChannelLeft(self._clock.now(), name, peer.name))

    async def set_topic(self, peer: Peer, channel: str, topic: str) -> Channel:
        name = check_channel_name(channel)
        check_topic(topic)
        found = await self._store.get_channel(name)
        if found is None:
            raise NotFound(
                f"there is no channel {name}; joining it creates it",
                hint=Hint.JOIN_CHANNEL,
                channel=name,
            )
        if name not in await self._store.peer_channels(peer.id):
            raise Forbidden(f"only members of {name} may set its topic", hint=Hint.JOIN_CHANNEL)
        now = self._clock.now()
        await self._store.set_topic(name, topic, peer.name, now)
        self._notifier.emit(TopicChanged(now, name, topic, peer.name))
        found.topic, found.topic_by, found.topic_at = topic, peer.name, now
        return found

    async def all(self) -> list[Channel]:
        return await self._store.list_channels()

    async def memberships(self, peer: Peer) -> list[str]:
        return await self._store.peer_channels(peer.id)
