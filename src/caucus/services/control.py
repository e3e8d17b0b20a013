"""The operator's powers: room modes, speaking, per-peer control, channels, the send budget.

Operator and control traffic rides the priority lane, which a pause does not hold back; it is
ordered by `seq` with everything else. A peer's `interrupt`, `reset` and `stop` are ephemeral:
a peer that reconnects does not get them replayed.
"""

from __future__ import annotations

from typing import Any

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.channels import MAX_TOPIC
from caucus.domain.control import Rate, Room, RoomMode
from caucus.domain.events import ChannelClosed, ChannelReopened, ModeChanged, RateChanged
from caucus.domain.messages import (
    ControlAction,
    Lane,
    MessageKind,
    SendReceipt,
    SystemSender,
)
from caucus.domain.names import BROADCAST, Target, TargetKind, check_channel_name, parse_target
from caucus.domain.peers import Peer, PeerView
from caucus.errors import InvalidRequest, PayloadTooLarge
from caucus.services.announcements import Announcements
from caucus.services.delivery import DeliveryService
from caucus.services.notifier import Notifier
from caucus.services.registry import Registry
from caucus.storage.engine import Engine

MAX_REASON = 500


ROOM_SIGNAL = "room"  # the mode or the send budget changed (Engine.signal)


class Control:
    def __init__(
        self,
        db: Engine,
        notifier: Notifier,
        registry: Registry,
        delivery: DeliveryService,
        clock: Clock,
        settings: Settings,
        room: Room,
        announcements: Announcements,
    ) -> None:
        self._db = db
        self._announcements = announcements
        self._notifier = notifier
        self._registry = registry
        self._delivery = delivery
        self._clock = clock
        self._settings = settings
        self.room = room

    async def load(self) -> None:
        """Restore the room's mode and send budget from storage (they survive restarts, and
        another hub process sharing the database may have changed them: `reload`)."""
        state = await self._db.read(lambda r: r.room.all())
        if "mode" in state:
            self.room.mode = RoomMode(state["mode"])
        if "rate" in state:
            self._apply_rate(Rate(float(state["rate"][0]), float(state["rate"][1])))

    async def reload(self) -> None:
        """Another process changed the room: take its mode and budget, and let every parked
        receive claim again under the mode now in force."""
        before = self.room.mode
        await self.load()
        self._notifier.wake_everyone()
        if self.room.mode is not before:
            self._notifier.emit(ModeChanged(self._clock.now(), self.room.mode.value, None))

    def state(self) -> Room:
        """A snapshot of the room's mode and send budget."""
        return Room(self.room.mode, Rate(self.room.rate.capacity, self.room.rate.refill))

    # --- room modes ------------------------------------------------------------------------
    async def pause(self) -> Room:
        await self._set_mode(RoomMode.PAUSED)
        return self.state()

    async def resume(self) -> Room:
        await self._set_mode(RoomMode.OPEN)
        return self.state()

    async def stop(self, reason: str | None = None) -> Room:
        _check_reason(reason)
        await self._set_mode(RoomMode.STOPPED, reason)
        await self._control(Target(TargetKind.ALL, BROADCAST), ControlAction.STOP, reason)
        return self.state()

    async def reset(self, reason: str | None = None) -> Room:
        """Back to an open room: peers' pauses lifted, the default send budget, and every peer
        told to reset."""
        _check_reason(reason)
        for peer in await self._paused_peers():
            await self._registry.set_delivery_paused(peer, False)
        await self.set_rate(self._settings.send_rate_capacity, self._settings.send_rate_refill)
        await self._set_mode(RoomMode.OPEN, reason)
        await self._control(
            Target(TargetKind.ALL, BROADCAST), ControlAction.RESET, reason, ephemeral=True
        )
        return self.state()

    async def _set_mode(self, mode: RoomMode, reason: str | None = None) -> None:
        await self._db.write(lambda r: r.room.set("mode", mode.value))
        self.room.mode = mode
        await self._db.signal(ROOM_SIGNAL)
        # Parked receives claim again under the new rule (a resume releases held chatter).
        self._notifier.wake_everyone()
        self._notifier.emit(ModeChanged(self._clock.now(), mode.value, reason))

    async def _paused_peers(self) -> list[Peer]:
        views = await self._registry.peers()
        return [await self._registry.find(v.name) for v in views if v.paused]

    # --- speaking --------------------------------------------------------------------------
    async def say(
        self,
        to: str,
        content: str,
        *,
        thread: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> SendReceipt:
        """A message from `operator` to a peer, `all` or a #channel, in the priority lane."""
        return await self._speak(parse_target(to), MessageKind.OPERATOR, content, thread, meta)

    async def announce(self, content: str, *, subject: str | None = None) -> SendReceipt:
        if subject is not None and len(subject) > MAX_TOPIC:
            raise InvalidRequest(f"subject is at most {MAX_TOPIC} characters", field="subject")
        if not content:
            raise InvalidRequest("content is empty", field="content")
        # Recorded as an announcement, so peers joining later catch up on it too.
        return await self._announcements.announce(None, content, subject=subject)

    async def _speak(
        self,
        target: Target,
        kind: MessageKind,
        content: str,
        thread: str | None,
        meta: dict[str, Any] | None,
        sender: str = SystemSender.OPERATOR,
    ) -> SendReceipt:
        limit = self._settings.max_content_chars
        if not content:
            raise InvalidRequest("content is empty", field="content")
        if len(content) > limit:
            raise PayloadTooLarge(
                f"content is {len(content)} characters; the limit is {limit}", field="content"
            )
        if target.kind is TargetKind.PEER:
            await self._registry.find(target.name)  # a clear 404 for an unknown peer
        outcome = await self._delivery.route(
            self._delivery.compose(
                sender,
                target.name,
                kind,
                content,
                meta=meta,
                thread=thread,
                lane=Lane.PRIORITY,
                joins_channel=False,
            ),
            target,
        )
        return outcome.receipt

    async def _control(
        self,
        target: Target,
        action: ControlAction,
        reason: str | None,
        *,
        ephemeral: bool = False,
    ) -> SendReceipt:
        outcome = await self._delivery.route(
            self._delivery.compose(
                SystemSender.OPERATOR,
                target.name,
                MessageKind.CONTROL,
                action.value,
                meta={"reason": reason} if reason else None,
                lane=Lane.PRIORITY,
                ephemeral=ephemeral,
                joins_channel=False,
            ),
            target,
        )
        return outcome.receipt

    # --- one peer --------------------------------------------------------------------------
    async def kick(self, name: str) -> PeerView:
        peer = await self._registry.find(name)
        view = self._registry.view(peer)
        await self._registry.kick(peer)
        return view

    async def pause_peer(self, name: str, paused: bool) -> PeerView:
        peer = await self._registry.find(name)
        await self._registry.set_delivery_paused(peer, paused)
        return self._registry.view(peer)

    async def interrupt(self, name: str, reason: str | None = None) -> SendReceipt:
        return await self._peer_control(name, ControlAction.INTERRUPT, reason)

    async def reset_peer(self, name: str, reason: str | None = None) -> SendReceipt:
        return await self._peer_control(name, ControlAction.RESET, reason)

    async def stop_peer(self, name: str, reason: str | None = None) -> SendReceipt:
        """Tell one peer to finish and stop (a native agent exits); the room stays open."""
        return await self._peer_control(name, ControlAction.STOP, reason)

    async def _peer_control(
        self, name: str, action: ControlAction, reason: str | None
    ) -> SendReceipt:
        _check_reason(reason)
        peer = await self._registry.find(name)
        target = Target(TargetKind.PEER, peer.name)
        return await self._control(target, action, reason, ephemeral=True)

    async def ping(self, name: str) -> PeerView:
        return await self._registry.ping(name)

    # --- channels and budget ----------------------------------------------------------------
    async def close_channel(self, channel: str) -> list[str]:
        """Tell the members, then close: history stays, joins and sends are refused."""
        name = check_channel_name(channel)
        found = await self._db.read(lambda r: r.channels.get(name))
        if found is None:
            await self._close(name)  # raises NotFound
            return []
        members = list(found.members)
        if found.closed_at is None and members:
            await self._speak(
                Target(TargetKind.CHANNEL, name),
                MessageKind.SYSTEM,
                f"the operator closed {name}",
                None,
                {"channel": name},
                sender=SystemSender.HUB,
            )
        await self._close(name)
        self._notifier.emit(ChannelClosed(self._clock.now(), name))
        return members

    async def reopen_channel(self, channel: str) -> bool:
        """Open a closed channel again: joins and sends are taken from now on (its former
        members join again themselves; its floor starts free). False if it was open."""
        name = check_channel_name(channel)
        reopened = await self._db.write(lambda r: r.channels.reopen(name))
        if reopened:
            self._notifier.emit(ChannelReopened(self._clock.now(), name))
        return bool(reopened)

    async def set_rate(self, capacity: float, refill: float) -> Room:
        rate = Rate(capacity, refill).check()
        budget = [rate.capacity, rate.refill]
        await self._db.write(lambda r: r.room.set("rate", budget))
        self._apply_rate(rate)
        await self._db.signal(ROOM_SIGNAL)
        self._notifier.emit(RateChanged(self._clock.now(), rate.capacity, rate.refill))
        return self.state()

    async def _close(self, name: str) -> None:
        now = self._clock.now()
        await self._db.write(lambda r: r.channels.close(name, now))

    def _apply_rate(self, rate: Rate) -> None:
        self.room.rate = rate
        self._delivery.send_budget.configure(capacity=rate.capacity, refill=rate.refill)


def _check_reason(reason: str | None) -> None:
    if reason is not None and len(reason) > MAX_REASON:
        raise InvalidRequest(f"reason is at most {MAX_REASON} characters", field="reason")
