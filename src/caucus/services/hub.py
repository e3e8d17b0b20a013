"""The façade transports talk to: builds every service over one store, runs background loops."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Protocol, TypeVar

from caucus.clock import Clock, SystemClock
from caucus.config import Settings
from caucus.credentials import operator_token
from caucus.domain.control import Rate, Room, RoomMode
from caucus.services.announcements import Announcements
from caucus.services.channels import Channels
from caucus.services.control import Control
from caucus.services.decisions import DecisionLog
from caucus.services.delivery import DeliveryService
from caucus.services.floors import Floors
from caucus.services.forms import Forms
from caucus.services.notifier import Notifier
from caucus.services.offers import OfferService
from caucus.services.principals import Principals
from caucus.services.registry import Registry
from caucus.services.retention import Retention
from caucus.services.roles import Roles
from caucus.services.tasks import TaskService
from caucus.services.watchers import Watchers
from caucus.storage.base import Store
from caucus.storage.sqlite import SqliteStore

log = logging.getLogger(__name__)

P = TypeVar("P", bound="Part")


class Part(Protocol):
    """Something the hub starts after its own services and stops before closing storage
    (the transcript writer, attached by the composition root)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


def open_store(settings: Settings) -> Store:
    return SqliteStore(
        settings.db_path(),
        synchronous=settings.sqlite_synchronous,
        batch_max=settings.group_commit_max,
    )


class Hub:
    """One hub: its store, its services and its maintenance loop.

    `start()` opens storage and starts the loop; `stop()` ends the loop, flushes and closes.
    Tests may call `maintain()` directly instead of waiting for the loop.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        clock: Clock | None = None,
        run_maintenance: bool = True,
    ) -> None:
        self.settings = settings
        self.clock: Clock = clock or SystemClock()
        self.store: Store = store or open_store(settings)
        self.notifier = Notifier()
        self.operator = operator_token(settings)
        self.roles = Roles(self.operator.token, settings.observer_token or None)
        self.registry = Registry(self.store, self.notifier, self.clock, settings)
        self.watchers = Watchers(self.store, self.registry, self.clock, settings)
        self.principals = Principals(self.store, self.registry, self.roles, settings, self.watchers)
        room = Room(RoomMode.OPEN, Rate(settings.send_rate_capacity, settings.send_rate_refill))
        self.delivery = DeliveryService(
            self.store, self.notifier, self.registry, self.clock, settings, room
        )
        self.channels = Channels(
            self.store, self.notifier, self.clock, max_per_peer=settings.channels_per_peer_max
        )
        self.tasks = TaskService(self.store, self.delivery, self.clock, settings)
        self.announcements = Announcements(self.store, self.delivery, self.clock, settings)
        self.offers = OfferService(
            self.store, self.delivery, self.announcements, self.clock, settings
        )
        self.floors = Floors(self.store, self.notifier, self.delivery, self.clock, settings)
        self.decisions = DecisionLog(self.store, self.notifier, self.clock, settings.ledger_path())
        self.retention = Retention(self.store, self.clock, settings)
        self.forms = Forms(
            self.store,
            self.delivery,
            self.notifier,
            self.clock,
            self.decisions.record_pending,
            max_pending=settings.pending_forms_max,
        )
        self.delivery.floor_gate = self.floors.check_send
        self.control = Control(
            self.store,
            self.notifier,
            self.registry,
            self.delivery,
            self.clock,
            settings,
            room,
            self.announcements,
        )
        self._parts: list[Part] = []
        self._run_maintenance = run_maintenance
        self._task: asyncio.Task[None] | None = None
        self.started_at: float | None = None

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
        path = getattr(self.store, "path", None)
        return path if isinstance(path, Path) else None

    async def start(self) -> None:
        await self.store.open()
        await self.control.load()
        await self.decisions.start()
        for part in self._parts:
            await part.start()
        self.started_at = self.clock.now()
        if self._run_maintenance:
            self._task = asyncio.create_task(self._loop(), name="caucus-maintenance")

    def begin_shutdown(self) -> None:
        """Answer every parked long-poll now so the server can drain quickly."""
        self.notifier.close()

    async def stop(self) -> None:
        self.begin_shutdown()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.decisions.stop()
        with contextlib.suppress(Exception):
            await self.registry.flush_last_seen()
        for part in reversed(self._parts):
            await part.stop()
        await self.store.close()

    async def maintain(self) -> None:
        """One round of upkeep: flush liveness, reap, forget, purge old idempotency keys."""
        await self.registry.reap()
        await self.tasks.sweep()
        await self.offers.sweep()
        await self.store.purge_idempotency(self.clock.now() - self.settings.idempotency_window)
        await self.retention.sweep()

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.maintenance_interval)
            try:
                await self.maintain()
            except Exception:  # keep the hub serving; the next round may succeed
                log.exception("maintenance round failed")
