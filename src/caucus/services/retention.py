"""Retention: finished items older than `retention_age` go, and the oldest finished messages
go too while the database is over `retention_max_bytes`, a bounded batch at a time.

The maintenance loop calls `sweep()` each round: one batch by age and, when over the size
bound, batches of the oldest messages until it is under or a round's budget of batches is
spent, then a few free pages back to the file system. Each batch is one short write
transaction, so sends queue behind it for milliseconds, not for the whole purge. `purge()` is
the operator's: everything eligible before a date, then the file compacted.
"""

from __future__ import annotations

import logging

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.retention import Dropped, PurgeCounts, PurgeReport, StoreSize
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

log = logging.getLogger(__name__)

ROUND_BATCHES = 8  # batches per maintenance round while over the size bound
RECLAIM_PAGES = 2048  # free pages given back per round (8 MiB at 4 KiB pages)
STATE_KEY = "retention"


class Retention:
    def __init__(self, db: Engine, clock: Clock, settings: Settings) -> None:
        self._db = db
        self._clock = clock
        self._settings = settings
        self._warned_full_vacuum = False

    async def dropped(self) -> Dropped:
        """What retention has dropped so far (zero on a database it never touched)."""
        state = (await self._db.read(lambda r: r.room.all())).get(STATE_KEY) or {}
        return Dropped(
            messages=int(state.get("messages", 0)),
            through_seq=state.get("through_seq"),
            through_ts=state.get("through_ts"),
            at=state.get("at"),
        )

    async def size(self) -> StoreSize:
        """How big the store is, and how much of it holds data."""
        return await self._db.size()

    async def sweep(self) -> PurgeCounts:
        """One maintenance round (see the module docstring)."""
        settings = self._settings
        batch = settings.retention_batch
        done = await self._purge(self._clock.now() - settings.retention_age, batch)
        rounds = 0
        while rounds < ROUND_BATCHES:
            size = await self._db.size()
            if size.used_bytes <= settings.retention_max_bytes:
                break
            oldest = await self._db.read(lambda r: r.retention.oldest_ts())
            if oldest is None:
                break
            # Everything finished up to a little past the oldest message: the oldest go first.
            step = await self._purge(oldest + 3600, batch)
            if step.total == 0:
                break
            done += step
            rounds += 1
        if done.total:
            await self._note(done)
            await self._give_back(RECLAIM_PAGES)
        return done

    async def purge(self, before: float | None, *, dry_run: bool = False) -> PurgeReport:
        """Drop every finished item older than `before` (default: the retention age), then
        compact the file; a dry run says what would go and changes nothing."""
        cut = before if before is not None else self._clock.now() - self._settings.retention_age
        size_before = await self._db.size()
        if dry_run:
            counts = await self._db.read(lambda r: r.retention.purge(cut, 0, dry_run=True))
            return PurgeReport(counts, cut, True, size_before, size_before)
        total = PurgeCounts()
        while True:
            step = await self._purge(cut, self._settings.retention_batch)
            total += step
            if step.total == 0:
                break
        if total.total:
            await self._note(total)
        await self._db.reclaim(full=not size_before.incremental)
        if size_before.incremental:
            await self._db.reclaim(None)
        return PurgeReport(total, cut, False, size_before, await self._db.size())

    async def _purge(self, before: float, limit: int) -> PurgeCounts:
        return await self._db.write(lambda r: r.retention.purge(before, limit))

    async def _note(self, counts: PurgeCounts) -> None:
        if not counts.messages:
            return
        now = self._clock.now()

        def note(r: Repos) -> None:
            # Read and written under the row's lock: processes purging at once add up.
            known = r.room.locked(STATE_KEY, {})
            r.room.set(
                STATE_KEY,
                {
                    "messages": int(known.get("messages", 0)) + counts.messages,
                    "through_seq": max(known.get("through_seq") or 0, counts.newest_seq or 0),
                    "through_ts": max(known.get("through_ts") or 0.0, counts.newest_ts or 0.0),
                    "at": now,
                },
            )

        await self._db.write(note)
        log.info(
            "retention dropped %d messages, %d tasks, %d offers and %d forms",
            counts.messages,
            counts.tasks,
            counts.offers,
            counts.forms,
        )

    async def _give_back(self, pages: int) -> None:
        size = await self._db.size()
        if size.incremental:
            await self._db.reclaim(pages)
        elif not self._warned_full_vacuum:
            self._warned_full_vacuum = True
            log.warning(
                "this database predates incremental vacuum, so the space retention frees is "
                "reused but the file does not shrink; `caucus db purge` compacts it once"
            )
