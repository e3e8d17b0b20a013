"""The hub's decision ledger: answered forms (and later, deliberations) become records.

`record_pending()` writes every answered form not yet on the ledger, then notes each record's
hash on its form; the forms service calls it after each answer, and the hub once at start.
The database says what must be recorded and the ledger what was, so a crash between the two
never loses a decision or records one twice: the forms still marked unrecorded are first
looked up in the ledger's tail, and only the missing ones are appended. Each appended record
is announced as a `DecisionRecorded` event. File work runs in a thread.
Before a record's line is written, its hash is noted in the database (`StoredIntents`); a
crash between the line's fsync and the checkpoint's move then heals itself on the next append
or start (the checkpoint moves over records the database vouches for, which `status()` shows).
Any other break is never appended to: the answers stay unrecorded, the failure is logged and
shown in `status()`, and recording resumes once the ledger is restored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from caucus.clock import Clock
from caucus.domain.decisions import (
    Decision,
    LedgerBreak,
    LedgerRecovery,
    LedgerStatus,
    audience_of,
    form_decision,
    form_id_of,
    visible_to,
)
from caucus.domain.events import DecisionRecorded
from caucus.domain.forms import Form
from caucus.domain.peers import Peer
from caucus.domain.search import DecisionHit, SearchQuery, holds, record_text, snippet
from caucus.errors import CaucusError, InvalidRequest
from caucus.files import tighten
from caucus.ledger.chain import Ledger
from caucus.ledger.records import DecisionRecord
from caucus.ledger.tail import newest_first
from caucus.ledger.verify import Report, head_path
from caucus.services.notifier import Notifier
from caucus.storage.engine import Engine

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_LIMIT = 200
BATCH = 100  # answered forms recorded per ledger append (one fsync, one checkpoint move)
# How far before the oldest unrecorded answer to look for its record on the ledger.
LOOKBACK = timedelta(minutes=10)


class DecisionLog:
    def __init__(self, db: Engine, notifier: Notifier, clock: Clock, path: Path) -> None:
        self._db = db
        self._notifier = notifier
        self._clock = clock
        self.path = path
        self._intents = StoredIntents(db, clock)
        self._ledger = Ledger(path, self._intents)
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[int] | None = None
        self.last_error: str | None = None

    def move_to(self, path: Path) -> None:
        """Keep the ledger at `path` instead (before `start`: a room-keyed ledger, whose path
        the database knows)."""
        self.path = path
        self._ledger = Ledger(path, self._intents)

    async def start(self) -> None:
        """Record, in the background, what an earlier run answered but did not record."""
        self._intents.loop = asyncio.get_running_loop()
        for path in (self.path, head_path(self.path)):
            tighten(path)  # an older hub made them world-readable
        self._task = asyncio.create_task(self.record_pending(), name="caucus-decisions")

    async def stop(self) -> None:
        """Let a write in progress finish and be noted."""
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task
            self._task = None
        async with self._lock:
            pass

    async def record(self, decision: DecisionRecord) -> tuple[int, dict[str, Any]]:
        """Chain one decision (a deliberation's) onto the ledger and announce it."""
        now = self._clock.now()
        return await self.record_dict(decision.to_dict(now=datetime.fromtimestamp(now, UTC)))

    async def record_dict(self, record: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Chain one record already in the ledger's format (a spawn's) and announce it; it is
        checked against the verifier's rules before a byte is written."""
        now = self._clock.now()
        async with self._lock:
            ((index, sealed),) = await asyncio.to_thread(self._ledger.append_many, [record])
        self._notifier.emit(DecisionRecorded(now, index, Decision(sealed)))
        return index, sealed

    async def record_pending(self) -> int:
        """Write every answered form that is not on the ledger yet, a batch at a time;
        returns how many."""
        total = 0
        while True:
            done, more = await self._record_batch()
            total += done
            if not more:
                return total

    async def _record_batch(self) -> tuple[int, bool]:
        async with self._lock:
            forms = await self._db.read(lambda r: r.forms.unrecorded(BATCH))
            if not forms:
                return 0, False
            try:
                appended, found = await asyncio.to_thread(self._write, forms)
            except (CaucusError, OSError) as exc:
                # The answers stand; the next answer or start tries again.
                self.last_error = exc.detail if isinstance(exc, CaucusError) else str(exc)
                log.error("decisions not recorded: %s", self.last_error)
                return 0, False
            self.last_error = None
            hashes = dict(found)
            for _, record in appended:
                hashes[form_id_of(record) or ""] = record["hash"]
            await self._db.write(lambda r: r.forms.mark_recorded(hashes))
            now = self._clock.now()
            for index, record in appended:
                self._notifier.emit(DecisionRecorded(now, index, Decision(record)))
            return len(appended), len(forms) == BATCH

    def _write(self, forms: list[Form]) -> tuple[list[tuple[int, dict[str, Any]]], dict[str, str]]:
        wanted = {f.id for f in forms}
        since = datetime.fromisoformat(form_decision(forms[0])["timestamp"]) - LOOKBACK

        def already() -> Mapping[str, str]:
            found: dict[str, str] = {}
            for record in newest_first(self.path):
                form_id = form_id_of(record)
                if form_id in wanted and isinstance(record.get("hash"), str):
                    found[form_id] = record["hash"]
                if _older(record, since):
                    break
            return found

        return self._ledger.append_new(
            [form_decision(f) for f in forms], key=lambda r: form_id_of(dict(r)), already=already
        )

    # --- reading ----------------------------------------------------------------------------
    async def recent(self, limit: int, channels: frozenset[str] | None) -> list[Decision]:
        """The newest decisions a reader in `channels` may see (None: the operator, all)."""
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidRequest(f"limit is 1-{MAX_LIMIT}", field="limit")

        def read() -> list[Decision]:
            out: list[Decision] = []
            for record in newest_first(self.path):
                if visible_to(record, channels):
                    out.append(Decision(record))
                    if len(out) >= limit:
                        break
            return out

        return await asyncio.to_thread(read)

    async def matching(
        self,
        query: SearchQuery,
        channels: frozenset[str] | None,
        limit: int,
        *,
        audience: str | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> list[DecisionHit]:
        """The newest decisions a reader in `channels` may see (None: all) that hold every
        word of `query`, optionally for one audience and recorded in [since, until)."""

        def read() -> list[DecisionHit]:
            out: list[DecisionHit] = []
            for record in newest_first(self.path):
                if not visible_to(record, channels):
                    continue
                if audience is not None and audience_of(record) != audience:
                    continue
                at = _epoch(record.get("timestamp"))
                if at is not None and since is not None and at < since:
                    break  # newest first: the rest are older still
                if at is not None and until is not None and at >= until:
                    continue
                text = record_text(record)
                if holds(text, query):
                    out.append(DecisionHit(record, snippet(text, query.words)))
                    if len(out) >= limit:
                        break
            return out

        return await asyncio.to_thread(read)

    async def visible(self, peer: Peer | None, limit: int) -> list[Decision]:
        """The newest decisions `peer` may see: broadcast ones and its channels' (before
        joining, None: the broadcast ones)."""
        if peer is None:
            return await self.recent(limit, frozenset())
        channels = frozenset(await self._db.read(lambda r: r.channels.of_peer(peer.id)))
        return await self.recent(limit, channels)

    async def status(self) -> LedgerStatus:
        """Whether the ledger verifies now (a full pass only when the file changed)."""
        report: Report = await asyncio.to_thread(self._ledger.status)
        broken = report.broken
        return LedgerStatus(
            path=str(self.path),
            records=report.count,
            intact=broken is None,
            anchored=report.anchored,
            head_hash=report.head_hash,
            broken=LedgerBreak(broken.index, broken.reason) if broken is not None else None,
            unrecorded_error=self.last_error,
            recovered=(
                LedgerRecovery(recovered.from_count, recovered.to_count, recovered.at)
                if (recovered := self._ledger.recovered) is not None
                else None
            ),
        )


class StoredIntents:
    """The ledger writer's intents, in the hub's database. The writer runs in a worker thread
    and calls these there; each waits for the database on the hub's event loop."""

    def __init__(self, db: Engine, clock: Clock) -> None:
        self._db = db
        self._clock = clock
        self.loop: asyncio.AbstractEventLoop | None = None

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        assert self.loop is not None, "DecisionLog.start() sets the loop"
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=60)

    def note(self, hashes: list[str]) -> None:
        now = self._clock.now()
        self._run(self._db.write(lambda r: r.ledger.note(hashes, now)))

    def written(self) -> set[str]:
        return self._run(self._db.read(lambda r: r.ledger.all()))

    def clear(self) -> None:
        self._run(self._db.write(lambda r: r.ledger.clear()))


def _older(record: dict[str, Any], since: datetime) -> bool:
    stamp = record.get("timestamp")
    if not isinstance(stamp, str):
        return False
    try:
        return datetime.fromisoformat(stamp) < since
    except (ValueError, TypeError):
        return False


def _epoch(stamp: object) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return None
