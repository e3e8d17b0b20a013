"""The talking stick: one speaker at a time per scope (`all` or a `#channel`).

While a peer holds a scope's floor, every other peer's send to that scope is refused with 423
`floor_held`; other scopes, and direct messages, keep flowing. A contested take raises the
caller's hand (FIFO). The holder passes the floor to the next hand or drops it. The floor never
outlives a holder who can no longer use it: leaving, being kicked or reaped, or leaving the
channel passes it on. The operator is never barred, can clear any floor, and a stop clears all.
On SQLite the floors live in the hub process's memory (a restart starts with every floor free);
on a database several hub processes share, the book is kept in the database, every change is
made under its row lock, and the other processes reload it when told (ADR 0014), so a floor
taken on one process bars sends on every other.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.events import (
    ChannelClosed,
    ChannelLeft,
    Event,
    FloorChanged,
    ModeChanged,
    PeerLeft,
    PeerOffline,
    PeerReaped,
)
from caucus.domain.floors import Floor, FloorAction, FloorBook, parse_scope
from caucus.domain.messages import Lane, MessageKind, SystemSender
from caucus.domain.names import BROADCAST, Target, TargetKind
from caucus.domain.peers import Peer
from caucus.errors import CapHands, FloorHeld, Forbidden, Hint, InvalidRequest, NotFound
from caucus.services.delivery import DeliveryService
from caucus.services.notifier import Notifier
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

log = logging.getLogger(__name__)
R = TypeVar("R")
FLOORS_KEY = "floors"  # the room_state row of the shared book
FLOORS_SIGNAL = "floors"  # another process changed the book (Engine.signal)


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
        self._book = FloorBook()
        self._shared = db.shared
        self._pending: set[asyncio.Task[Any]] = set()
        notifier.subscribe(self._on_event)

    # --- the gate -----------------------------------------------------------------------------
    def check_send(self, peer: Peer, target: Target) -> None:
        """Refuse a send into a scope whose floor another peer holds."""
        if not self._book.floors or target.kind is TargetKind.PEER:
            return
        floor = self._book.floors.get(target.name)
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
        if action == "status" or (action == "lower" and name not in self._book.floors):
            if self._shared:
                await self.reload()
            return self._book.floors.get(name, Floor(name)).copy()  # a look leaves nothing
        now, me, cap = self._clock.now(), peer.name, self._settings.hands_per_floor_max

        def change(book: FloorBook) -> Floor:
            floor = book.get(name)
            if action in ("take", "raise"):
                if floor.holder is None:
                    book.give(floor, me, now, reason, f"{me} took the floor in {name}")
                elif floor.holder != me and me not in floor.hands:
                    if len(floor.hands) >= cap:
                        raise CapHands(
                            f"{len(floor.hands)} hands are already raised for {name}, its "
                            "limit; wait for the queue to move",
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
                    book.advance(floor, now, f"{me} passed it")
                else:
                    book.release(floor, f"{me} dropped it")
            book.mark(floor)
            return floor.copy()

        return await self._change(change)

    async def _memberships(self, peer: Peer) -> list[str]:
        return await self._db.read(lambda r: r.channels.of_peer(peer.id))

    def status(self) -> list[Floor]:
        return self._book.busy()

    async def look(self, scope: str) -> Floor:
        """One scope's floor as it is now: anyone may look, joined or not."""
        name = parse_scope(scope)
        if self._shared:
            await self.reload()
        return self._book.floors.get(name, Floor(name)).copy()

    async def clear(self, scope: str) -> Floor:
        """The operator frees a floor (hands stay raised); a channel that does not exist has
        none to free."""
        name = parse_scope(scope)
        if name != BROADCAST and await self._db.read(lambda r: r.channels.get(name)) is None:
            raise NotFound(f"no channel {name}", hint=Hint.LIST_CHANNELS, channel=name)

        def change(book: FloorBook) -> Floor:
            floor = book.get(name)
            if floor.holder is not None:
                book.release(floor, "cleared by the operator")
                book.mark(floor)
            return floor.copy()

        return await self._change(change)

    # --- one change: in memory, or under the shared book's lock --------------------------------
    async def _change(self, change: Callable[[FloorBook], R]) -> R:
        if not self._shared:
            book = self._book
            try:
                return change(book)
            finally:
                self._tell(book)

        def unit(r: Repos) -> tuple[FloorBook, R]:
            book = FloorBook.of_records(r.room.locked(FLOORS_KEY, []))
            result = change(book)  # raises before anything is written
            r.room.set(FLOORS_KEY, book.records())
            return book, result

        book, result = await self._db.write(unit)
        self._book = FloorBook(book.floors)
        self._tell(book)
        await self._db.signal(FLOORS_SIGNAL)
        return result

    async def reload(self) -> None:
        """Another process changed the shared book: take it, and show what moved."""
        records = (await self._db.read(lambda r: r.room.all())).get(FLOORS_KEY, [])
        fresh = FloorBook.of_records(records)
        before = {s: f.copy() for s, f in self._book.floors.items()}
        self._book = fresh
        for scope in set(before) | set(fresh.floors):
            old, new = before.get(scope), fresh.floors.get(scope)
            if old != new:
                self._notifier.emit(FloorChanged(self._clock.now(), (new or Floor(scope)).copy()))

    def _tell(self, book: FloorBook) -> None:
        notices, changed = book.notices, book.changed
        book.notices, book.changed = [], []
        for floor, text in notices:
            self._announce(floor, text)
        for floor in changed:
            self._notifier.emit(FloorChanged(self._clock.now(), floor))

    def _on_event(self, event: Event) -> None:
        now = self._clock.now()
        if isinstance(event, ModeChanged) and event.mode == "stopped":
            self._react(lambda b: b.clear_all("the room stopped"))
            return
        if isinstance(event, ChannelClosed):
            closed = event.channel
            if closed in self._book.floors:
                self._react(lambda b: b.close(closed))
            return
        if isinstance(event, PeerLeft | PeerReaped | PeerOffline):
            name, scopes = event.name, None
        elif isinstance(event, ChannelLeft):
            name, scopes = event.name, [event.channel]
        else:
            return
        if not any(
            name == f.holder or name in f.hands
            for f in self._book.floors.values()
            if scopes is None or f.scope in scopes
        ):
            return  # (a shared book is reloaded on every change, so this copy is current)
        self._react(lambda b: b.gone(name, scopes, now))

    def _react(self, change: Callable[[FloorBook], None]) -> None:
        """A change an event calls for: at once in memory, or soon under the shared lock."""
        if self._shared:
            self._background(self._change(change))
        else:
            change(self._book)
            self._tell(self._book)

    def _background(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._pending.add(task)
        task.add_done_callback(self._settled)

    def _announce(self, floor: Floor, text: str) -> None:
        target = (
            Target(TargetKind.ALL, BROADCAST)
            if floor.scope == BROADCAST
            else Target(TargetKind.CHANNEL, floor.scope)
        )
        message = self._delivery.compose(
            SystemSender.HUB,
            target.name,
            MessageKind.SYSTEM,
            text,
            meta={"floor": floor_data(floor)},
            lane=Lane.PRIORITY,
            joins_channel=False,
        )
        self._background(self._delivery.route(message, target))

    def _settled(self, task: asyncio.Task[Any]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a floor change was not applied or announced: %s", task.exception())
