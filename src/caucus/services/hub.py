"""The façade transports talk to: builds every service over one storage engine, runs
background loops."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, Protocol, TypeVar

from caucus.clock import Clock, SystemClock
from caucus.config import Settings
from caucus.credentials import operator_token
from caucus.defaults import user_data_dir
from caucus.domain.control import Rate, Room, RoomMode
from caucus.services.activity import Activity
from caucus.services.announcements import Announcements
from caucus.services.channels import Channels
from caucus.services.control import ROOM_SIGNAL, Control
from caucus.services.decisions import DecisionLog
from caucus.services.deliberations import Deliberations
from caucus.services.delivery import DeliveryService
from caucus.services.floors import FLOORS_SIGNAL, Floors
from caucus.services.forms import Forms
from caucus.services.history import History
from caucus.services.holds import HoldKind, Holds
from caucus.services.launcher import Launcher
from caucus.services.ledger_home import room_ledger
from caucus.services.loop_watch import LoopWatch
from caucus.services.notifier import Notifier
from caucus.services.offers import OfferService
from caucus.services.principals import Principals
from caucus.services.registry import PEER_SIGNAL, Registry
from caucus.services.reservations import ReservationService
from caucus.services.retention import Retention
from caucus.services.roles import Roles
from caucus.services.search import SearchService
from caucus.services.spawns import SPAWN_SIGNAL, SpawnService
from caucus.services.tasks import TaskService
from caucus.services.watchers import Watchers
from caucus.storage.engine import Engine
from caucus.storage.sqlite_engine import SqliteEngine

log = logging.getLogger(__name__)

P = TypeVar("P", bound="Part")


class Part(Protocol):
    """Something the hub starts after its own services and stops before closing storage
    (the transcript writer, attached by the composition root)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


def open_engine(settings: Settings, clock: Clock | None = None) -> Engine:
    """The engine `settings.db` names: a PostgreSQL server (`postgresql://…`, the optional
    `postgres` extra), else the embedded SQLite file. Costly reads' budgets run on `clock`."""
    monotonic = (clock or SystemClock()).monotonic
    if settings.postgres:
        from caucus.storage.postgres_engine import PgEngine

        return PgEngine(settings.db, batch_max=settings.group_commit_max, monotonic=monotonic)
    return SqliteEngine(
        settings.db_path(),
        synchronous=settings.sqlite_synchronous,
        batch_max=settings.group_commit_max,
        monotonic=monotonic,
    )


class Hub:
    """One hub: its storage engine, its services and its maintenance loop.

    `start()` opens storage and starts the loop; `stop()` ends the loop, flushes and closes.
    Tests may call `maintain()` directly instead of waiting for the loop.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        db: Engine | None = None,
        clock: Clock | None = None,
        run_maintenance: bool = True,
    ) -> None:
        self.settings = settings
        self.clock: Clock = clock or SystemClock()
        self._db: Engine = db or open_engine(settings, self.clock)
        self.notifier = Notifier(self.clock)
        self.notifier.cross(self._db)  # what crosses processes: the engine's, through the notifier
        self._db.on_wake(self.notifier.wake)  # deliveries committed by any process sharing it
        self._db.on_signal(self._signalled)
        self._signalled_tasks: set[asyncio.Task[None]] = set()
        # Called after each round of upkeep (the console feed samples the hub's health there).
        self.after_upkeep: list[Callable[[], Awaitable[None]]] = []
        self.operator = operator_token(settings)
        self.roles = Roles(self.operator.token, settings.observer_token or None)
        self._who_is_here(settings)
        room = Room(RoomMode.OPEN, Rate(settings.send_rate_capacity, settings.send_rate_refill))
        self._talk_and_work(settings, room)
        self._records_and_rules(settings, room)
        self._agents(settings)
        self.activity = Activity(self.notifier, self.clock)
        self._parts: list[Part] = []
        self._run_maintenance = run_maintenance
        self._task: asyncio.Task[None] | None = None
        self.loop_watch = LoopWatch(self.clock, settings.loop_watch_interval)
        self.started_at: float | None = None

    # --- the services, by what they hold ------------------------------------------------------
    def _who_is_here(self, settings: Settings) -> None:
        """Identities, presence, what each holds open, who a credential is."""
        self.registry = Registry(self._db, self.notifier, self.clock, settings)
        self.holds = Holds(
            per_identity=settings.streams_per_identity_max,
            room=settings.streams_room_cap,
            per_viewer=settings.viewer_streams_max,
        )
        self.registry.on_gone.append(self._release_holds)
        self.registry.present_ids = self.holds.holders
        self.watchers = Watchers(self._db, self.clock, settings)
        self.principals = Principals(self._db, self.registry, self.roles, settings, self.watchers)

    def _talk_and_work(self, settings: Settings, room: Room) -> None:
        """Messages, channels, tasks, announcements, the job board, the floor, reservations."""
        self.delivery = DeliveryService(
            self._db, self.notifier, self.registry, self.clock, settings, room, self.holds
        )
        self.channels = Channels(
            self._db,
            self.notifier,
            self.clock,
            self.registry,
            self.delivery,
            max_per_peer=settings.channels_per_peer_max,
        )
        self.tasks = TaskService(self._db, self.delivery, self.notifier, self.clock, settings)
        self.announcements = Announcements(self._db, self.delivery, self.clock, settings)
        self.offers = OfferService(
            self._db, self.delivery, self.announcements, self.tasks, self.clock, settings
        )
        self.floors = Floors(self._db, self.notifier, self.delivery, self.clock, settings)
        self.reservations = ReservationService(self._db, self.notifier, self.clock, settings)

    def _records_and_rules(self, settings: Settings, room: Room) -> None:
        """The ledger, search, retention, history, forms, and the room's control."""
        # A room-keyed ledger (PostgreSQL, no path given) is found at start: the database
        # holds the room's identity. Until then, where it would be in the user data directory.
        ledger = (
            user_data_dir() / "decisions.jsonl"
            if settings.ledger_keyed_by_room
            else settings.ledger_path()
        )
        self.decisions = DecisionLog(self._db, self.notifier, self.clock, ledger)
        self.search = SearchService(self._db, self.decisions, self.clock, settings)
        self.retention = Retention(self._db, self.clock, settings)
        self.history = History(self._db, self.clock, settings.query_budget)
        self.forms = Forms(
            self._db,
            self.delivery,
            self.notifier,
            self.clock,
            self.decisions.record_pending,
            max_pending=settings.pending_forms_max,
        )
        self.delivery.floor_gate = self.floors.check_send
        self.control = Control(
            self._db,
            self.notifier,
            self.registry,
            self.delivery,
            self.clock,
            settings,
            room,
            self.announcements,
        )

    def _agents(self, settings: Settings) -> None:
        """Deliberations, the launcher and teammates on demand."""
        self.deliberations = Deliberations(
            registry=self.registry,
            channels=self.channels,
            tasks=self.tasks,
            forms=self.forms,
            decisions=self.decisions,
            delivery=self.delivery,
            notifier=self.notifier,
            clock=self.clock,
            settings=settings,
        )
        self.launcher = Launcher(settings, self.notifier, self.clock)
        self.spawns = SpawnService(
            self._db,
            self.launcher,
            self.decisions,
            self.registry,
            self.notifier,
            self.clock,
            settings,
        )

    def _release_holds(self, peer_id: int, for_good: bool) -> None:
        """A peer gone offline keeps its MCP sessions (each ends on its own, or with the peer
        for good); everything else it held open ends now."""
        self.holds.end(peer_id, keep=frozenset() if for_good else frozenset({HoldKind.MCP}))

    def attach(self, part: Part) -> None:
        """Run `part` with the hub: started after its services, stopped before storage."""
        if self.started_at is not None:
            raise RuntimeError("attach parts before the hub starts")
        self._parts.append(part)

    def part(self, kind: type[P]) -> P | None:
        """The attached part of type `kind`, if there is one."""
        return next((p for p in self._parts if isinstance(p, kind)), None)

    @property
    def db_path(self) -> Path | None:
        path = getattr(self._db, "path", None)
        return path if isinstance(path, Path) else None

    async def start(self) -> None:
        await self._db.open()
        if self.settings.ledger_keyed_by_room:
            self.decisions.move_to(await room_ledger(self.settings, self._db))
        await self.control.load()
        await self.decisions.start()
        await self.spawns.start()
        for part in self._parts:
            await part.start()
        self.started_at = self.clock.now()
        if self._run_maintenance:
            self._task = asyncio.create_task(self._loop(), name="caucus-maintenance")
            await self.loop_watch.start()

    def begin_shutdown(self) -> None:
        """Answer every parked long-poll now so the server can drain quickly."""
        self.notifier.close()

    async def stop(self) -> None:
        self.begin_shutdown()
        await self.loop_watch.stop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.launcher.close()
        await self.spawns.stop()
        await self.deliberations.stop()
        await self.decisions.stop()
        with contextlib.suppress(Exception):
            await self.registry.flush_last_seen()
        for part in reversed(self._parts):
            await part.stop()
        await self._db.close()

    def _signalled(self, topic: str) -> None:
        """Another hub process sharing the database changed something this one caches."""
        kind, _, arg = topic.partition(" ")
        work: Coroutine[Any, Any, None] | None = None
        if kind == ROOM_SIGNAL:
            work = self.control.reload()
        elif kind == PEER_SIGNAL and arg.isdigit():
            work = self.registry.refresh(int(arg))
        elif kind == FLOORS_SIGNAL:
            work = self.floors.reload()
        elif kind == SPAWN_SIGNAL:
            self.spawns.signalled(arg)
        if work is None:
            return
        task = asyncio.create_task(work)
        self._signalled_tasks.add(task)
        task.add_done_callback(self._signal_done)

    def _signal_done(self, task: asyncio.Task[None]) -> None:
        self._signalled_tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("could not apply another process's change", exc_info=task.exception())

    async def maintain(self) -> None:
        """One round of upkeep: flush liveness, reap, forget, purge old idempotency keys, and
        what the database itself needs (`Engine.upkeep`)."""
        await self._db.upkeep()
        await self.registry.reap()
        await self.tasks.sweep()
        await self.offers.sweep()
        await self.reservations.sweep()
        await self.spawns.sweep()
        await self.search.follow()
        await self.history.count_more()
        before = self.clock.now() - self.settings.idempotency_window
        await self._db.write(lambda r: r.idempotency.purge(before))
        await self.retention.sweep()
        for then in list(self.after_upkeep):
            await then()

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.maintenance_interval)
            try:
                await self.maintain()
            except Exception:  # keep the hub serving; the next round may succeed
                log.exception("maintenance round failed")
