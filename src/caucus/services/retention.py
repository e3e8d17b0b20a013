"""Retention: finished items older than `retention_age` go, and the oldest finished messages
go too while the database is over `retention_max_bytes`, a bounded batch at a time.

The maintenance loop calls `sweep()` each round: slices by age and, when over the size bound,
slices of the oldest messages until it is under, then free pages back to the file system, all
within a round's budget (`domain.slices`). Each slice is one short write, sized to hold the
store a few milliseconds, so sends queue behind it for that long, not for the whole purge.
`purge()` is the operator's: everything eligible before a date, then the file compacted.
"""

from __future__ import annotations

import logging

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.retention import Dropped, PurgeCounts, PurgeReport, StoreSize
from caucus.domain.slices import PRICED, Slices
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

log = logging.getLogger(__name__)

PURGE_TARGET = 0.001  # seconds a purge slice should hold the store
# Seconds of purge slices a round (every 2 s): while the room is quiet, and while others write
# (`BUSY_WRITES` units a second or more). Each slice's pages reach the disk with the next send's
# commit, so a purge among flowing sends goes gently: at 1M, 0.05 s kept the open loop's p99
# at 7-8 ms and 0.01 s at 5.7-6.3 (3.2-3.8 empty; 9-10 at 0.2 s). A quiet room purges at
# speed (~20,000 messages a round at a million), a busy one ~1,200 a round or what keeps pace
# with what comes in, whichever is more.
PURGE_BUDGET = 0.2
PURGE_BUDGET_BUSY = 0.01
BUSY_WRITES = 100.0
# While busy, a round purges this many items for each unit written since the last: a message
# is about two units (its send, and the claim that hands it out, the acknowledgement riding on
# the next), so a room at its bound keeps pace with the messages that come in.
KEEP_PACE = 0.5
# A busy room over its bound purges faster than it fills: the pace above times one plus this
# for each bound's worth over (40% over: 1.8x what comes in), so it comes down while the sends
# go on (at the plain pace a PostgreSQL room 40% over stayed there) and slows as it nears it.
OVER_GAIN = 2.0
KEPT_FREE = 0.25  # of the file, free pages kept for the next writes rather than given back
RECLAIM_PAGES = 2048  # free pages given back per slice at most (8 MiB at 4 KiB pages)
STATE_KEY = "retention"


class Retention:
    def __init__(self, db: Engine, clock: Clock, settings: Settings) -> None:
        self._db = db
        self._clock = clock
        self._settings = settings
        self._warned_full_vacuum = False
        # Half the usual slice: a purge runs slice after slice for its round's budget, so every
        # send in that spell queues behind one (the open loop's p99 while purging, issue 53).
        self._slices = Slices(
            clock.monotonic,
            most=settings.retention_batch,
            least=10,
            target=PURGE_TARGET,
            budget=PURGE_BUDGET,
        )
        self._pages = Slices(clock.monotonic, most=RECLAIM_PAGES, least=8)
        self._mark: tuple[float, int] | None = None  # when the last round ended, writes then
        self._each = 0.0  # seconds of slices an item purged cost of late

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
        slices = self._slices
        slices.begin_round(await self._budget())
        done = PurgeCounts()
        cut = self._clock.now() - self._settings.retention_age
        while slices.more:
            size = slices.size
            step = await self._slice(cut)
            done += step
            if _most(step) < size:
                break
        while slices.more and await self._over_bound():
            oldest = await self._db.read(lambda r: r.retention.oldest_ts())
            if oldest is None:
                break
            # Everything finished up to a little past the oldest message: the oldest go first.
            step = await self._slice(oldest + 3600)
            if step.total == 0:
                break
            done += step
        if done.total:
            await self._note(done)
        # Every round, not only one that purged: what the last round purged waited (its words
        # queued for the search index, `storage/sqlite_index.py`) and is free only now.
        await self._give_back()
        if _most(done) >= PRICED and slices.spent > 0:
            self._each = slices.spent / _most(done)
        self._mark = (self._clock.monotonic(), self._db.stats.get("write_ops", 0))
        return done

    async def _budget(self) -> float:
        """This round's seconds of purge slices (`purge_budget`); retention's own writes
        are left out of what others wrote."""
        if self._mark is None:
            return PURGE_BUDGET
        then, ops = self._mark
        elapsed = max(self._clock.monotonic() - then, 0.001)
        written = self._db.stats.get("write_ops", 0) - ops
        if written <= BUSY_WRITES * elapsed:
            return PURGE_BUDGET
        bound = self._settings.retention_max_bytes
        over = max((await self._db.size()).used_bytes - bound, 0) / bound if bound else 0.0
        return purge_budget(written, self._each, over)

    async def _over_bound(self) -> bool:
        return (await self._db.size()).used_bytes > self._settings.retention_max_bytes

    async def _slice(self, before: float) -> PurgeCounts:
        def purge(r: Repos, size: int) -> PurgeCounts:
            return r.retention.purge(before, size)

        return await self._db.write(self._slices.unit(purge, _most))

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

    async def _give_back(self) -> None:
        """Free pages back to the file system, a slice at a time (each one holds the writer
        while it moves pages), for at most this round's budget, while more than a quarter of
        the file is free. Less than that is kept: the next messages reuse freed pages, and a
        room at its bound frees and reuses about as much each round, so giving them back
        would only grow the file again (and hold every write a few ms a slice at 1M)."""
        size = await self._db.size()
        if not size.incremental:
            if not self._warned_full_vacuum:
                self._warned_full_vacuum = True
                log.warning(
                    "this database predates incremental vacuum, so the space retention frees "
                    "is reused but the file does not shrink; `caucus db purge` compacts it once"
                )
            return
        pages = self._pages
        pages.begin_round()
        while pages.more and size.file_bytes - size.used_bytes > size.file_bytes * KEPT_FREE:
            count = pages.size
            pages.took(await self._db.reclaim(count), count)
            smaller = await self._db.size()
            if smaller.file_bytes >= size.file_bytes:
                return  # nothing more to give back (or a store that gives back on its own)
            size = smaller


def purge_budget(written: int, each: float, over: float) -> float:
    """A busy round's seconds of purge slices: what purging as many items as others wrote
    since the last round takes (`KEEP_PACE` an item a unit, at `each` seconds an item, what
    one cost of late), so a room at its bound keeps pace with what comes in; `over` (bounds'
    worth over it) adds `OVER_GAIN` times that again for each, so a room over it comes down.
    At least `PURGE_BUDGET_BUSY`, at most a quiet round's `PURGE_BUDGET`."""
    pace = written * each * KEEP_PACE * (1.0 + OVER_GAIN * over)
    return min(PURGE_BUDGET, max(PURGE_BUDGET_BUSY, pace))


def _most(counts: PurgeCounts) -> int:
    """How far a slice went: the most of any one kind it dropped."""
    return max(counts.messages, counts.tasks, counts.offers, counts.forms)
