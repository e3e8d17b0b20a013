"""Channels: durable membership and topics; private channels, which the operator opens to
whom it invites and which only their members see (issue 47, ADR 0033)."""

from __future__ import annotations

from caucus.clock import Clock
from caucus.domain.caps import check_channels
from caucus.domain.channels import Channel, born_private, check_join, check_topic
from caucus.domain.events import ChannelChanged, ChannelJoined, ChannelLeft, TopicChanged
from caucus.domain.messages import Lane, MessageKind, SystemSender
from caucus.domain.names import Target, TargetKind, check_channel_name
from caucus.domain.peers import Peer
from caucus.domain.visibility import Reader, may_see_channel
from caucus.errors import Forbidden, Hint, NotFound
from caucus.services.delivery import DeliveryService
from caucus.services.notifier import Notifier
from caucus.services.registry import Registry
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos


def _no_channel(name: str) -> NotFound:
    return NotFound(
        f"there is no channel {name}; joining it creates it", hint=Hint.JOIN_CHANNEL, channel=name
    )


class Channels:
    def __init__(
        self,
        db: Engine,
        notifier: Notifier,
        clock: Clock,
        registry: Registry,
        delivery: DeliveryService,
        *,
        max_per_peer: int | None = None,
    ) -> None:
        self._max_per_peer = max_per_peer
        self._db = db
        self._notifier = notifier
        self._clock = clock
        self._registry = registry
        self._delivery = delivery

    async def join(
        self, peer: Peer, channel: str, *, private: bool = False
    ) -> tuple[Channel, bool]:
        """Join `channel`, creating it (private if asked, or an approvals channel) if it does
        not exist; a private one takes the operator's invitation (`channel_private`)."""
        name = check_channel_name(channel)
        now = self._clock.now()
        cap = self._max_per_peer
        found, joined = await self._db.write(
            lambda r: join_channel(r, peer.id, name, now, cap, private=private)
        )
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
            member = found is not None and r.channels.is_member(name, peer.id)
            if found is None or not may_see_channel(
                Reader(peer.id), private=found.private, member=member
            ):
                raise _no_channel(name)
            if not member:
                raise Forbidden(f"only members of {name} may set its topic", hint=Hint.JOIN_CHANNEL)
            r.channels.set_topic(name, topic, peer.name, now)
            found.topic, found.topic_by, found.topic_at = topic, peer.name, now
            return found

        found = await self._db.write(set_topic)
        self._notifier.emit(TopicChanged(now, name, topic, peer.name))
        return found

    async def all(self) -> list[Channel]:
        """Every channel, private ones too (the operator's and the observer's view)."""
        return await self._db.read(lambda r: r.channels.all())

    async def visible(self, peer: Peer | None) -> list[Channel]:
        """The channels `peer` may see: every public one and the private ones it is in (None:
        a caller with no identity yet, the public ones)."""

        def seen(r: Repos) -> list[Channel]:
            mine = set(r.channels.of_peer(peer.id)) if peer is not None else set()
            reader = Reader(peer.id if peer is not None else -1)
            return [
                c
                for c in r.channels.all()
                if may_see_channel(reader, private=c.private, member=c.name in mine)
            ]

        return await self._db.read(seen)

    async def memberships(self, peer: Peer) -> list[str]:
        return await self._db.read(lambda r: r.channels.of_peer(peer.id))

    # --- the operator ---------------------------------------------------------------------
    async def set_private(self, channel: str, private: bool) -> Channel:
        """Make a channel private (its members stay; others join on invitation) or public."""
        name = check_channel_name(channel)

        def change(r: Repos) -> Channel:
            if not r.channels.set_private(name, private):
                raise _no_channel(name)
            found = r.channels.get(name)
            assert found is not None
            return found

        found = await self._db.write(change)
        self._notifier.emit(ChannelChanged(self._clock.now(), name, private))
        return found

    async def invite(self, channel: str, peer_name: str) -> bool:
        """Let the agent now called `peer_name` join a private channel (the invitation is its
        identity's: a rename keeps it, a name taken again does not); it is told. False if it
        was invited already."""
        name = check_channel_name(channel)
        peer = await self._registry.find(peer_name)
        now = self._clock.now()

        def invite(r: Repos) -> bool:
            if r.channels.private(name) is None:
                raise _no_channel(name)
            return r.channels.invite(name, peer.id, now)

        if not await self._db.write(invite):
            return False
        delivery = self._delivery
        told = delivery.compose(
            SystemSender.OPERATOR,
            peer.name,
            MessageKind.SYSTEM,
            f"the operator invited you to the private channel {name}: join it to read and post",
            meta={"channel": name, "invited": True},
            lane=Lane.PRIORITY,
            joins_channel=False,
        )
        await delivery.route(told, Target(TargetKind.PEER, peer.name))
        return True

    async def remove(self, channel: str, peer_name: str) -> bool:
        """Take an agent out of a channel and withdraw its invitation. False if it was in
        neither."""
        name = check_channel_name(channel)
        peer = await self._registry.find(peer_name)

        def remove(r: Repos) -> bool:
            if r.channels.private(name) is None:
                raise _no_channel(name)
            invited = r.channels.uninvite(name, peer.id)
            return r.channels.remove_member(name, peer.id) or invited

        removed = await self._db.write(remove)
        if removed:
            self._notifier.emit(ChannelLeft(self._clock.now(), name, peer.name))
        return bool(removed)


def join_channel(
    r: Repos, peer_id: int, name: str, now: float, cap: int | None, *, private: bool = False
) -> tuple[Channel, bool]:
    """Create the channel if needed and add the peer (False: it already was a member). A peer
    already in `cap` channels is refused (`CapChannels`), nothing created; a closed channel
    refuses everyone (`ChannelClosed`); a private one everyone the operator did not invite
    (`ChannelPrivate`)."""
    member = r.channels.is_member(name, peer_id)
    if cap is not None:
        check_channels(member, r.channels.membership_count(peer_id), cap, name)
    exists = r.channels.private(name)
    if exists is None:
        r.channels.ensure(name, now, private=born_private(name, private))
    else:
        invited = exists and not member and r.channels.invited(name, peer_id)
        check_join(name, private=exists, member=member, invited=invited, asked=private)
    r.channels.check_open(name)
    joined = r.channels.add_member(name, peer_id, now)
    found = r.channels.get(name)
    assert found is not None
    return found, joined
