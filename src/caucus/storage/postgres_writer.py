"""The PostgreSQL writer: one thread per process, group-committing every unit queued since its
last commit in one transaction, in pipeline mode. Units of one kind that may run together
(`Together`: direct sends, claims) are stored by one statement; if a unit makes a statement
fail, the batch is replayed with each unit in its own savepoint. A NOTIFY names the peers a
batch queued deliveries for, committed with it (ADR 0014). A batch of direct sends and claims
alone commits in the round trip that stores them (ADR 0043); its NOTIFY rides on the next
batch's COMMIT, or goes alone when no batch waits (ADR 0045). The grouped statements are
planned once, not at each batch (ADR 0045)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from caucus.errors import CaucusError, StorageError
from caucus.storage.engine import Together, Unit
from caucus.storage.postgres_tx import Leases, PgTx, storage_error
from caucus.storage.queries import Queries
from caucus.storage.repos import ONE_STATEMENT, Repos

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg.rows import dict_row
except ImportError:  # pragma: no cover - the extra is not installed
    psycopg = None  # type: ignore[assignment]
else:
    _IDLE = psycopg.pq.TransactionStatus.IDLE

log = logging.getLogger(__name__)
_STOP = object()
_RETRIES = 3  # a unit chosen as a deadlock's victim, or whose serialization failed
NOTIFY_BYTES = 7000  # below PostgreSQL's 8000-byte payload limit
Batch = list[tuple[Unit[Any], asyncio.Future[Any]]]  # units, each with its caller's future
Settled = list[tuple[asyncio.Future[Any], Any, BaseException | None]]  # (future, value, error)
# The kinds of unit (`Together`) whose one statement answers nothing that asks for another:
# their COMMIT may go out before their answers are read (ADR 0043).
COMMIT_FIRST = frozenset({"direct", "claim", "direct_claim"})


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, pg_errors.DeadlockDetected | pg_errors.SerializationFailure)


class PgWriter:
    """The process's writer: one thread with its own connection, taking everything queued (up
    to `batch_max` units) as a batch and group-committing it. One writer, not several: with a
    batch's sends and claims one statement each, a second connection only split the batches
    and cost the process more GIL hand-offs than it overlapped (ADR 0014 has the figures)."""

    def __init__(self, dsn: str, q: Queries, token: str, *, batch_max: int) -> None:
        self._dsn = dsn
        self._q = q
        self._token = token
        self._batch_max = batch_max
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.batches = 0
        self.ops = 0
        self.together = 0  # units that ran together with others of their kind
        self.committed_first = 0  # batches that committed in the round trip storing them
        self.wakes_carried = 0  # batches whose COMMIT told an earlier batch's wake-ups
        # Peers a batch that committed first woke, not yet told to the other processes: told
        # with the next batch's COMMIT, or alone when none is waiting (`_wake_others`).
        self._owed: set[int] = set()

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = self._loop.create_future()
        self._thread = threading.Thread(
            target=self._run, args=(ready,), name="caucus-pg-writer", daemon=True
        )
        self._thread.start()
        await ready

    async def close(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None and thread.is_alive():
            self._queue.put(_STOP)
            await asyncio.to_thread(thread.join)

    def submit(self, unit: Unit[Any]) -> asyncio.Future[Any]:
        if self._loop is None or self._thread is None:
            raise StorageError("the database is not open")
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._queue.put((unit, fut))
        return fut

    # --- on the writer thread --------------------------------------------------------------
    def _connect(self) -> tuple[psycopg.Connection[Any], PgTx, Repos]:
        conn = psycopg.connect(self._dsn, row_factory=dict_row, autocommit=True)
        tx = PgTx(conn, self._q)
        return conn, tx, Repos(tx, next_lease=Leases(tx), trips=ONE_STATEMENT)

    def _run(self, ready: asyncio.Future[None]) -> None:
        loop = self._loop
        assert loop is not None
        try:
            conn, tx, repos = self._connect()
        except Exception as exc:  # report to open() rather than die silently
            loop.call_soon_threadsafe(_settle, ready, None, storage_error(exc))
            return
        loop.call_soon_threadsafe(_settle, ready, None, None)
        try:
            while True:
                item = self._queue.get()
                if item is _STOP:
                    self._wake_others(conn)
                    return
                batch = [item]
                while len(batch) < self._batch_max:
                    try:
                        more = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if more is _STOP:
                        self._queue.put(_STOP)  # after this batch
                        break
                    batch.append(more)
                self.batches += 1
                self.ops += len(batch)
                if conn.broken:
                    conn, tx, repos = self._reconnected(conn)
                results = self._commit(conn, tx, repos, batch)
                with contextlib.suppress(RuntimeError):  # the loop closed during shutdown
                    loop.call_soon_threadsafe(_resolve, results)
                if self._queue.empty():  # no batch next to carry the wake-ups: now, alone
                    self._wake_others(conn)
        finally:
            conn.close()

    def _reconnected(
        self, old: psycopg.Connection[Any]
    ) -> tuple[psycopg.Connection[Any], PgTx, Repos]:
        """A new connection for the batch at hand (its units fail alone if there is none)."""
        with contextlib.suppress(Exception):
            old.close()
        try:
            return self._connect()
        except Exception as exc:
            log.error("the writer cannot reach PostgreSQL: %s", exc)
            conn = old  # broken: the batch fails with a clear error and the next one retries
            tx = PgTx(conn, self._q)
            return conn, tx, Repos(tx, trips=ONE_STATEMENT)

    def _commit(
        self,
        conn: psycopg.Connection[Any],
        tx: PgTx,
        repos: Repos,
        batch: Batch,
    ) -> Settled:
        """The batch in one transaction. First as it comes, with no savepoints (a unit raises
        a CaucusError only before it writes, ADR 0013); if a unit makes a statement fail, the
        transaction is rolled back and replayed with each unit in its own savepoint, so one
        bad unit never undoes or loses the others."""
        try:
            try:
                if all(getattr(unit, "together", None) in COMMIT_FIRST for unit, _ in batch):
                    return self._committed_first(conn, tx, repos, batch)
                return self._pipelined(conn, tx, repos, batch)
            except (_Replay, pg_errors.InFailedSqlTransaction):
                # The second: a failed statement nothing read, found out at the COMMIT.
                _rollback(conn)
                return self._replayed(conn, tx, repos, batch)
        except psycopg.Error as exc:  # the commit itself failed: nothing of the batch holds
            _rollback(conn)
            err = storage_error(exc)
            return [(fut, None, err) for _, fut in batch]

    def _pipelined(
        self,
        conn: psycopg.Connection[Any],
        tx: PgTx,
        repos: Repos,
        batch: Batch,
    ) -> Settled:
        """The batch as it comes, in pipeline mode: BEGIN travels with the first statement,
        and the wake-up notifications with the COMMIT, so a batch costs the server one round
        trip per statement its units wait on, plus one. The units of one kind that may run
        together (`Together`) do so, where the first of them stands in the batch."""
        tx.woken.clear()
        tx.woken.update(self._owed)
        tx.failed = False
        outcomes: list[tuple[Any, BaseException | None] | None] = [None] * len(batch)
        groups = _kinds(batch)
        with conn.pipeline() as pipe:
            tx.pipeline = pipe
            try:
                started = _begin(conn, repos, batch, groups)
                for members, finish in started:
                    self.together += len(members)
                    for j, outcome in zip(members, _finish(tx, finish, members), strict=True):
                        outcomes[j] = outcome
                for i, (unit, _) in enumerate(batch):
                    if outcomes[i] is None:
                        outcomes[i] = _plain(tx, repos, unit)
                for payload in _wake_payloads(self._token, sorted(tx.woken)):
                    conn.execute(self._q["wake_notify"], {"payload": payload})
                # No sync here: leaving the pipeline sends one and reads every result, the
                # COMMIT's included (a failure raises there), in one round trip, not two.
                conn.execute(b"COMMIT")
            finally:
                tx.pipeline = None
        self._owed.clear()
        return [
            (fut, *outcome) for (_, fut), outcome in zip(batch, outcomes, strict=True) if outcome
        ]

    def _committed_first(
        self,
        conn: psycopg.Connection[Any],
        tx: PgTx,
        repos: Repos,
        batch: Batch,
    ) -> Settled:
        """Units of a `COMMIT_FIRST` kind: BEGIN, the one statement that stores them all and
        the COMMIT go out together and come back in one round trip, not two (the server does
        not wait for the client between the statement and the COMMIT). A statement that fails
        makes the server skip the COMMIT: nothing holds, and the batch is replayed. Once the
        COMMIT is read the batch holds, so nothing after it replays it; the other processes'
        wake-ups go once the callers have their answers: with the next batch's COMMIT, or alone
        if none is waiting (`_wake_others`), not in a round trip of their own each batch."""
        tx.woken.clear()
        tx.failed = False
        groups = _kinds(batch, alone=True)
        try:
            with conn.pipeline() as pipe:
                tx.pipeline = pipe
                try:
                    started = _begin(conn, repos, batch, groups)
                    for payload in _wake_payloads(self._token, sorted(self._owed)):
                        conn.execute(self._q["wake_notify"], {"payload": payload})
                    conn.execute(b"COMMIT")
                finally:
                    tx.pipeline = None
        except psycopg.Error as exc:
            if conn.broken:
                raise  # whether the COMMIT arrived is unknown: every caller hears so
            raise _Replay from exc
        self.committed_first += 1
        self.wakes_carried += bool(self._owed)
        outcomes: list[tuple[Any, BaseException | None]] = [(None, None)] * len(batch)
        for members, finish in started:
            self.together += len(members)
            try:
                answers = _finish(tx, finish, members)
            except _Replay as exc:  # stored, but its answers could not be read
                lost = StorageError(f"stored, but its answer was lost: {exc.__cause__!r}")
                answers = [(None, lost)] * len(members)
            for j, outcome in zip(members, answers, strict=True):
                outcomes[j] = outcome
        self._owed = set(tx.woken)  # those before were told with this COMMIT
        return [(fut, *outcome) for (_, fut), outcome in zip(batch, outcomes, strict=True)]

    def _wake_others(self, conn: psycopg.Connection[Any]) -> None:
        """The wake-ups owed, each NOTIFY in a transaction of its own. Lost (the connection
        broke), the other processes' receives find the deliveries when their wait ends, as
        after a restart."""
        wakes = _wake_payloads(self._token, sorted(self._owed))
        self._owed = set()
        if not wakes:
            return
        try:
            with conn.pipeline():
                for payload in wakes:
                    conn.execute(self._q["wake_notify"], {"payload": payload})
        except psycopg.Error as exc:
            log.warning("could not wake the other processes' receivers: %s", exc)

    def _replayed(
        self,
        conn: psycopg.Connection[Any],
        tx: PgTx,
        repos: Repos,
        batch: Batch,
    ) -> Settled:
        """The batch again, each unit alone in its own savepoint."""
        tx.woken.clear()
        tx.woken.update(self._owed)
        with conn.transaction():
            results = [(fut, *self._isolated(conn, repos, unit)) for unit, fut in batch]
            for payload in _wake_payloads(self._token, sorted(tx.woken)):
                tx.value("wake_notify", {"payload": payload})
        self._owed.clear()
        return results

    def _isolated(
        self, conn: psycopg.Connection[Any], repos: Repos, unit: Unit[Any]
    ) -> tuple[Any, BaseException | None]:
        for attempt in range(_RETRIES):
            try:
                with conn.transaction():  # a savepoint: a failure undoes this unit alone
                    return unit(repos), None
            except CaucusError as exc:
                return None, exc
            except psycopg.Error as exc:
                if _retryable(exc) and attempt + 1 < _RETRIES:
                    continue
                return None, storage_error(exc)
            except Exception as exc:
                return None, exc
        raise AssertionError("unreachable")


class _Replay(Exception):
    """A unit made a statement fail: the batch is rolled back and replayed unit by unit."""


def _plain(tx: PgTx, repos: Repos, unit: Unit[Any]) -> tuple[Any, BaseException | None]:
    try:
        value = unit(repos)
    except CaucusError as exc:
        if tx.failed:
            raise _Replay from exc  # it caught a failed statement (Duplicate) and refused
        return None, exc
    except Exception as exc:
        raise _Replay from exc
    if tx.failed:
        raise _Replay
    return value, None


def _rollback(conn: psycopg.Connection[Any]) -> None:
    """Leave a batch's failed transaction (a broken connection is replaced at the next batch)."""
    if conn.info.transaction_status != _IDLE:
        with contextlib.suppress(psycopg.Error):
            conn.execute(b"ROLLBACK")


def _kinds(batch: Batch, *, alone: bool = False) -> list[list[int]]:
    """The units that run together: for each kind with more than one unit in the batch (or
    any, with `alone`), the indexes of its units."""
    by_kind: dict[str, list[int]] = {}
    for i, (unit, _) in enumerate(batch):
        kind = getattr(unit, "together", None)
        if kind is not None:
            by_kind.setdefault(kind, []).append(i)
    least = 1 if alone else 2
    return [members for members in by_kind.values() if len(members) >= least]


def _begin(
    conn: psycopg.Connection[Any], repos: Repos, batch: Batch, groups: list[list[int]]
) -> list[tuple[list[int], Callable[[], list[Any]]]]:
    """BEGIN, and each group's statement (`_start`), all sent before any answer is read: one
    round trip for all. A batch of claims alone commits without waiting for the disk."""
    conn.execute(b"BEGIN")
    if not any(getattr(unit, "durable", True) for unit, _ in batch):
        # Only claims: a power cut may lose them (`storage.engine.Unit`, ADR 0041).
        conn.execute(b"SET LOCAL synchronous_commit TO off")
    if not groups:
        return []
    # A group's statement takes arrays, whose lengths alone its best plan could follow: left
    # to choose, the server plans it afresh at every batch (0.4-0.9 ms of its time, ADR 0045).
    conn.execute(b"SET LOCAL plan_cache_mode TO force_generic_plan")
    started = [(members, _start(conn, repos, [batch[j][0] for j in members])) for members in groups]
    if sum(len(members) for members in groups) < len(batch):
        conn.execute(b"SET LOCAL plan_cache_mode TO DEFAULT")  # the units after, as they were
    return started


def _start(
    conn: psycopg.Connection[Any], repos: Repos, units: list[Unit[Any]]
) -> Callable[[], list[Any]]:
    """Send the statement that stores units of one kind (`Together`). Any failure replays
    the batch, where every unit runs alone."""
    first: Together = units[0]  # type: ignore[assignment]
    try:
        return first.start_together(repos, units)
    except Exception as exc:
        raise _Replay from exc


def _finish(
    tx: PgTx, finish: Callable[[], list[Any]], members: list[int]
) -> list[tuple[Any, BaseException | None]]:
    """Read what units of one kind became: each its own value or CaucusError."""
    try:
        values = finish()
    except Exception as exc:
        raise _Replay from exc
    if tx.failed or len(values) != len(members):
        raise _Replay
    return [(None, v) if isinstance(v, CaucusError) else (v, None) for v in values]


def _wake_payloads(token: str, ids: list[int]) -> list[str]:
    """`<process token> <id>,<id>,…`, split to fit NOTIFY's payload limit."""
    out: list[str] = []
    current: list[str] = []
    size = len(token) + 1
    for pid in ids:
        text = str(pid)
        if current and size + len(text) + 1 > NOTIFY_BYTES:
            out.append(f"{token} {','.join(current)}")
            current, size = [], len(token) + 1
        current.append(text)
        size += len(text) + 1
    if current:
        out.append(f"{token} {','.join(current)}")
    return out


def _settle(fut: asyncio.Future[Any], value: Any, exc: BaseException | None) -> None:
    if fut.done():
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(value)


def _resolve(results: Settled) -> None:
    for fut, value, exc in results:
        _settle(fut, value, exc)
