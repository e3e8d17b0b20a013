"""Channels: durable membership and topics."""

from __future__ import annotations

from caucus.clock import Clock
from caucus.domain.caps import check_channels
from caucus.domain.channels import Channel, check_topic
from caucus.domain.events import ChannelJoined, ChannelLeft, TopicChanged
from caucus.domain.names import check_channel_name
from caucus.domain.peers import Peer
from caucus.errors import Forbidden, Hint, NotFound
from caucus.services.notifier import Notifier
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos


class Channels:
    def __init__(
        self, db: Engine, notifier: Notifier, clock: Clock, *, max_per_peer: int | None = None
    ) -> None:
        self._max_per_peer = max_per_peer
        self._db = db
        self._notifier = notifier
        self._clock = clock

    async def join(self, peer: Peer, channel: str) -> tuple[Channel, bool]:
        name = check_channel_name(channel)
        now = self._clock.now()
        cap = self._max_per_peer
        found, joined = await self._db.write(lambda r: join_channel(r, peer.id, name, now, cap))
        if joined:
            self._notifier.emit(ChannelJoined(now, name, peer.name))
        return found, joined

    async def leave(self, peer: Peer, channel: str) -> None:
        name = check_channel_name(channel)
        if not await self._db.write(lambda r: r.channels.remove_member(name, peer.id)):
            raise NotFound(f"you are not a member of {name}", hint=Hint.LIST_CHANNELS, channel=name)
        self._notifier.emit(ChannelLeft(self._clock.now(), name, peer.name))

    async def set_topic(self, peer: Peer, channel: str, topic: str) -> Channel:
        name = check_channel_name(channel)
        check_topic(topic)
        now = self._clock.now()

        def set_topic(r: Repos) -> Channel:
            found = r.channels.get(name)
            if found is None:
                raise NotFound(
                    f"there is no channel {name}; joining it creates it",
                    hint=Hint.JOIN_CHANNEL,
                    channel=name,
                )
            if not r.channels.is_member(name, peer.id):
                raise Forbidden(f"only members of {name} may set its topic", hint=Hint.JOIN_CHANNEL)
            r.channels.set_topic(name, topic, peer.name, now)
            found.topic, found.topic_by, found.topic_at = topic, peer.name, now
            return found

        found = await self._db.write(set_topic)
        self._notifier.emit(TopicChanged(now, name, topic, peer.name))
        return found

    async def all(self) -> list[Channel]:
        return await self._db.read(lambda r: r.channels.all())

    async def memberships(self, peer: Peer) -> list[str]:
        return await self._db.read(lambda r: r.channels.of_peer(peer.id))


def join_channel(
    r: Repos, peer_id: int, name: str, now: float, cap: int | None
) -> tuple[Channel, bool]:
    """Create the channel if needed and add the peer (False: it already was a member). A peer
    already in `cap` channels is refused (`CapChannels`), nothing created; a closed channel
    refuses everyone (`ChannelClosed`)."""
    if cap is not None:
        member = r.channels.is_member(name, peer_id)
        check_channels(member, r.channels.membership_count(peer_id), cap, name)
    r.channels.ensure(name, now)
    r.channels.check_open(name)
    joined = r.channels.add_member(name, peer_id, now)
    found = r.channels.get(name)
    assert found is not None
    return found, joined
