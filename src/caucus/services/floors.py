"""The talking stick: one speaker at a time per scope (`all` or a `#channel`).

While a peer holds a scope's floor, every other peer's send to that scope is refused with 423
`floor_held`; other scopes, and direct messages, keep flowing. A contested take raises the
caller's hand (FIFO). The holder passes the floor to the next hand or drops it. The floor never
outlives a holder who can no longer use it: leaving, being kicked or reaped, or leaving the
channel passes it on. The operator is never barred, can clear any floor, and a stop clears all.
Floors live in the hub process's memory: a restart starts with every floor free.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.events import (
    ChannelLeft,
    Event,
    FloorChanged,
    ModeChanged,
    PeerLeft,
    PeerOffline,
    PeerReaped,
)
from caucus.domain.floors import Floor, FloorAction, parse_scope
from caucus.domain.messages import Lane, MessageKind, NewMessage, SystemSender
from caucus.domain.names import BROADCAST, Target, TargetKind
from caucus.domain.peers import Peer
from caucus.errors import CapHands, FloorHeld, Forbidden, Hint, InvalidRequest
from caucus.services.delivery import DeliveryService
from caucus.services.notifier import Notifier
from caucus.storage.engine import Engine

log = logging.getLogger(__name__)


def floor_data(floor: Floor) -> dict[str, Any]:
    """A floor as message metadata (the hub's floor notices carry it)."""
    return {
        "scope": floor.scope,
        "holder": floor.holder,
        "since": floor.since,
        "reason": floor.reason,
        "hands": list(floor.hands),
    }


class Floors:
    def __init__(
        self,
        db: Engine,
        notifier: Notifier,
        delivery: DeliveryService,
        clock: Clock,
        settings: Settings,
    ) -> None:
        self._settings = settings
        self._db = db
        self._notifier = notifier
        self._delivery = delivery
        self._clock = clock
        self._floors: dict[str, Floor] = {}
        self._pending: set[asyncio.Task[Any]] = set()
        notifier.subscribe(self._on_event)

    # --- the gate -----------------------------------------------------------------------------
    def check_send(self, peer: Peer, target: Target) -> None:
        """Refuse a send into a scope whose floor another peer holds."""
        if not self._floors or target.kind is TargetKind.PEER:
            return
        floor = self._floors.get(target.name)
        if floor is not None and floor.holder is not None and floor.holder != peer.name:
            raise FloorHeld(
                f"{floor.holder} holds the floor in {floor.scope}: raise your hand for it and "
                "wait for it to be passed to you",
                hint=Hint.RAISE_HAND,
                scope=floor.scope,
                holder=floor.holder,
            )

    # --- actions ------------------------------------------------------------------------------
    async def act(self, peer: Peer, action: str, scope: str, reason: str | None = None) -> Floor:
        if action not in FloorAction.__members__.values():
            choices = ", ".join(FloorAction)
            raise InvalidRequest(f"action is one of {choices}", field="action")
        name = parse_scope(scope)
        asks = action in ("take", "raise")
        if asks and name != BROADCAST and name not in await self._memberships(peer):
            raise Forbidden(f"join {name} before asking for its floor", hint=Hint.JOIN_CHANNEL)
        if action == "status" or (action == "lower" and name not in self._floors):
            return self._floors.get(name, Floor(name)).copy()  # a look leaves nothing behind
        floor = self._floors.setdefault(name, Floor(name))
        me = peer.name
        if action == "take" or action == "raise":
            if floor.holder is None:
                self._give(floor, me, reason, "took")
            elif floor.holder != me and me not in floor.hands:
                cap = self._settings.hands_per_floor_max
                if len(floor.hands) >= cap:
                    raise CapHands(
                        f"{len(floor.hands)} hands are already raised for {name}, its limit; "
                        "wait for the queue to move",
                        cap="hands_per_floor_max",
                        limit=cap,
                    )
                floor.hands.append(me)
        elif action == "lower":
            if me in floor.hands:
                floor.hands.remove(me)
        elif action in ("pass", "drop"):
            if floor.holder != me:
                raise Forbidden(f"you do not hold the floor in {name}")
            if action == "pass":
                self._advance(floor, "passed")
            else:
                self._release(floor, "dropped")
        if action != "status":
            self._changed(floor)
        return floor.copy()

    async def _memberships(self, peer: Peer) -> list[str]:
        return await self._db.read(lambda r: r.channels.of_peer(peer.id))

    def _changed(self, floor: Floor) -> None:
        self._notifier.emit(FloorChanged(self._clock.now(), floor.copy()))

    def status(self) -> list[Floor]:
        return [f.copy() for f in self._floors.values() if f.holder or f.hands]

    def clear(self, scope: str) -> Floor:
        """The operator frees a floor (hands stay raised)."""
        floor = self._floors.setdefault(parse_scope(scope), Floor(parse_scope(scope)))
        if floor.holder is not None:
            self._release(floor, "cleared by the operator")
            self._changed(floor)
        return floor.copy()

    def clear_all(self) -> None:
        for floor in self._floors.values():
            busy = floor.holder is not None or bool(floor.hands)
            floor.hands.clear()
            if floor.holder is not None:
                self._release(floor, "cleared: the room stopped")
            if busy:
                self._changed(floor)

    # --- transitions --------------------------------------------------------------------------
    def _give(self, floor: Floor, name: str, reason: str | None, how: str) -> None:
        floor.holder, floor.since, floor.reason = name, self._clock.now(), reason
        if name in floor.hands:
            floor.hands.remove(name)
        self._announce(floor, f"{name} {how} the floor in {floor.scope}")

    def _advance(self, floor: Floor, how: str) -> None:
        if floor.hands:
            self._give(floor, floor.hands.pop(0), None, f"has the floor ({how})")
        else:
            self._release(floor, how)

    def _release(self, floor: Floor, how: str) -> None:
        holder = floor.holder
        floor.holder = floor.since = floor.reason = None
        self._announce(floor, f"the floor in {floor.scope} is free ({holder} {how})")

    def _on_event(self, event: Event) -> None:
        if isinstance(event, ModeChanged) and event.mode == "stopped":
            self.clear_all()
            return
        if isinstance(event, PeerLeft | PeerReaped | PeerOffline):
            scopes = list(self._floors.values())
            name = event.name
        elif isinstance(event, ChannelLeft):
            scopes = [self._floors[event.channel]] if event.channel in self._floors else []
            name = event.name
        else:
            return
        for floor in scopes:
            involved = name in floor.hands or floor.holder == name
            if name in floor.hands:
                floor.hands.remove(name)
            if floor.holder == name:
                self._advance(floor, "gone")
            if involved:
                self._changed(floor)

    def _announce(self, floor: Floor, text: str) -> None:
        target = (
            Target(TargetKind.ALL, BROADCAST)
            if floor.scope == BROADCAST
            else Target(TargetKind.CHANNEL, floor.scope)
        )
        message = NewMessage(
            id=self._delivery.new_id(),
            ts=self._clock.now(),
            sender_id=None,
            sender=SystemSender.HUB,
            to=target.name,
            kind=MessageKind.SYSTEM,
            content=text,
            meta={"floor": floor_data(floor)},
            lane=Lane.PRIORITY,
            joins_channel=False,
        )
        task = asyncio.ensure_future(self._delivery.route(message, target))
        self._pending.add(task)
        task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Task[Any]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a floor announcement was not delivered: %s", task.exception())
