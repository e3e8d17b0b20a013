"""The PostgreSQL engine: several hub processes, one room (issue 14, ADR 0014).

Units of work are synchronous functions (ADR 0013), so this engine runs them on connections
owned by threads, never on the event loop: one writer thread per process group-commits every
unit queued since its last commit in one transaction, in pipeline mode, with the units of one
kind that may run together (`Together`: direct sends, claims) stored by one statement; if a
unit makes a statement fail, the batch is replayed with each unit in its own savepoint. Reads
take one of a few kept connections in a worker thread. Wake-ups cross processes by
LISTEN/NOTIFY: the writer sends one NOTIFY per committed batch naming the peers it queued
deliveries for, and a listening connection in each process hands the others' to this
process's waiters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import secrets
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from caucus.domain.retention import StoreSize
from caucus.errors import CaucusError, InvalidRequest, StorageError
from caucus.storage.engine import Duplicate, Params, Row, Together, Unit
from caucus.storage.queries import Queries, queries
from caucus.storage.repos import Repos

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg.rows import dict_row
except ImportError:  # pragma: no cover - the extra is not installed
    psycopg = None  # type: ignore[assignment]
else:
    _INERROR = psycopg.pq.TransactionStatus.INERROR
    _IDLE = psycopg.pq.TransactionStatus.IDLE

log = logging.getLogger(__name__)
T = TypeVar("T")
_STOP = object()
_RETRIES = 3  # a unit chosen as a deadlock's victim, or whose serialization failed
SWITCH_INTERVAL = 0.0005  # seconds (sys.setswitchinterval; Python's default is 0.005)
LEASE_BLOCK = 1024  # the delivery_lease sequence's increment (sql/postgres/0001_initial.sql)
NOTIFY_BYTES = 7000  # below PostgreSQL's 8000-byte payload limit
_EMPTY: dict[str, Any] = {}
Batch = list[tuple[Unit[Any], asyncio.Future[Any]]]  # units, each with its caller's future
Settled = list[tuple[asyncio.Future[Any], Any, BaseException | None]]  # (future, value, error)


def require_psycopg() -> None:
    if psycopg is None:
        raise StorageError(
            "a postgresql:// database needs the PostgreSQL extra: pip install "
            "'caucus-hub[postgres]' (in a checkout: .venv/bin/pip install -e '.[postgres]')"
        )


def storage_error(exc: Exception) -> CaucusError:
    if isinstance(exc, psycopg.OperationalError):
        return StorageError(
            f"the PostgreSQL server is unreachable ({exc}); check it is running and --db"
        )
    return StorageError(f"database error: {exc}; retry, and check the hub log if it persists")


class PgTx:
    """A connection speaking named statements, parameters by name."""

    dialect = "postgres"
    shared = True
    __slots__ = ("_conn", "_q", "pipeline", "woken")

    def __init__(self, conn: psycopg.Connection[Any], q: Queries) -> None:
        self._conn = conn
        self._q = q
        self.woken: set[int] = set()
        # In pipeline mode (a writer's batch) each statement is synced before its unit reads
        # the result, so a unit sees what it would see outside one.
        self.pipeline: psycopg.Pipeline | None = None

    def _execute(self, name: str, params: Params | None) -> psycopg.Cursor[Any]:
        try:
            cur = self._conn.execute(self._q[name], params or _EMPTY)
            if self.pipeline is not None:
                self.pipeline.sync()
            return cur
        except pg_errors.UniqueViolation as exc:
            raise Duplicate(str(exc)) from None
        except psycopg.DataError as exc:
            raise _unstorable(exc) from None

    def one(self, name: str, params: Params | None = None) -> Row | None:
        row: Row | None = self._execute(name, params).fetchone()
        return row

    def later(self, name: str, params: Params) -> Callable[[], list[Row]]:
        if self.pipeline is None:
            rows = self.all(name, params)
            return lambda: rows
        try:
            cur = self._conn.execute(self._q[name], params)  # sent, not waited on
        except psycopg.DataError as exc:
            raise _unstorable(exc) from None

        def fetch() -> list[Row]:
            # The first read waits for every statement sent before it (one round trip).
            try:
                rows: list[Row] = cur.fetchall()
            except pg_errors.UniqueViolation as exc:
                raise Duplicate(str(exc)) from None
            except psycopg.DataError as exc:
                raise _unstorable(exc) from None
            return rows

        return fetch

    def all(self, name: str, params: Params | None = None) -> list[Row]:
        rows: list[Row] = self._execute(name, params).fetchall()
        return rows

    def value(self, name: str, params: Params | None = None) -> Any:
        row = self._execute(name, params).fetchone()
        return None if row is None else next(iter(row.values()))

    def run(self, name: str, params: Params | None = None) -> int:
        return self._execute(name, params).rowcount

    def insert(self, name: str, params: Params) -> int:
        key: int = self.value(name, params)  # the statement ends RETURNING its key
        return key

    def many(self, name: str, rows: Iterable[Params]) -> int:
        wanted = list(rows)
        if not wanted:
            return 0
        try:
            with self._conn.cursor() as cur:
                cur.executemany(self._q[name], wanted)
                if self.pipeline is not None:
                    self.pipeline.sync()
                return cur.rowcount
        except pg_errors.UniqueViolation as exc:
            raise Duplicate(str(exc)) from None
        except psycopg.DataError as exc:
            raise _unstorable(exc) from None

    def array(self, values: Sequence[Any]) -> Any:
        return list(values)

    def woke(self, peer_ids: Iterable[int]) -> None:
        self.woken.update(peer_ids)


class Leases:
    """Lease numbers for one writer: blocks of LEASE_BLOCK taken from the database's sequence
    (its increment), so claims on every process and thread get numbers no other claim has,
    at one round trip per block rather than per claim."""

    def __init__(self, tx: PgTx) -> None:
        self._tx = tx
        self._next = self._end = 0

    def __call__(self) -> int:
        if self._next >= self._end:
            self._next = int(self._tx.value("next_lease"))
            self._end = self._next + LEASE_BLOCK
        lease = self._next
        self._next += 1
        return lease


def _unstorable(exc: psycopg.DataError) -> Exception:
    """A value PostgreSQL cannot hold, refused as bad input rather than failing the unit as a
    storage error: text with a NUL character (SQLite stores it; PostgreSQL text cannot)."""
    if "NUL" in str(exc):
        return InvalidRequest(
            "text may not contain the NUL character (U+0000) on this hub's PostgreSQL database"
        )
    return exc


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
        return conn, tx, Repos(tx, next_lease=Leases(tx))

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
            return conn, tx, Repos(tx)

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
                return self._pipelined(conn, tx, repos, batch)
            except _Replay:
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
        outcomes: list[tuple[Any, BaseException | None] | None] = [None] * len(batch)
        groups = _kinds(batch)
        with conn.pipeline() as pipe:
            tx.pipeline = pipe
            try:
                conn.execute(b"BEGIN")
                # Every kind's statement goes out before any is read: one round trip for all.
                started = [
                    (members, _start(conn, repos, [batch[j][0] for j in members]))
                    for members in groups
                ]
                for members, finish in started:
                    self.together += len(members)
                    for j, outcome in zip(members, _finish(conn, finish, members), strict=True):
                        outcomes[j] = outcome
                for i, (unit, _) in enumerate(batch):
                    if outcomes[i] is None:
                        outcomes[i] = _plain(conn, repos, unit)
                for payload in _wake_payloads(self._token, sorted(tx.woken)):
                    conn.execute(self._q["wake_notify"], {"payload": payload})
                conn.execute(b"COMMIT")
                pipe.sync()
            finally:
                tx.pipeline = None
        return [
            (fut, *outcome) for (_, fut), outcome in zip(batch, outcomes, strict=True) if outcome
        ]

    def _replayed(
        self,
        conn: psycopg.Connection[Any],
        tx: PgTx,
        repos: Repos,
        batch: Batch,
    ) -> Settled:
        """The batch again, each unit alone in its own savepoint."""
        tx.woken.clear()
        with conn.transaction():
            results = [(fut, *self._isolated(conn, repos, unit)) for unit, fut in batch]
            for payload in _wake_payloads(self._token, sorted(tx.woken)):
                tx.value("wake_notify", {"payload": payload})
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


def _plain(
    conn: psycopg.Connection[Any], repos: Repos, unit: Unit[Any]
) -> tuple[Any, BaseException | None]:
    try:
        value = unit(repos)
    except CaucusError as exc:
        if conn.info.transaction_status == _INERROR:
            raise _Replay from exc  # it caught a failed statement (Duplicate) and refused
        return None, exc
    except Exception as exc:
        raise _Replay from exc
    if conn.info.transaction_status == _INERROR:
        raise _Replay
    return value, None


def _rollback(conn: psycopg.Connection[Any]) -> None:
    """Leave a batch's failed transaction (a broken connection is replaced at the next batch)."""
    if conn.info.transaction_status != _IDLE:
        with contextlib.suppress(psycopg.Error):
            conn.execute(b"ROLLBACK")


def _kinds(batch: Batch) -> list[list[int]]:
    """The units that run together: for each kind with more than one unit in the batch, the
    indexes of its units."""
    by_kind: dict[str, list[int]] = {}
    for i, (unit, _) in enumerate(batch):
        kind = getattr(unit, "together", None)
        if kind is not None:
            by_kind.setdefault(kind, []).append(i)
    return [members for members in by_kind.values() if len(members) > 1]


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
    conn: psycopg.Connection[Any], finish: Callable[[], list[Any]], members: list[int]
) -> list[tuple[Any, BaseException | None]]:
    """Read what units of one kind became: each its own value or CaucusError."""
    try:
        values = finish()
    except Exception as exc:
        raise _Replay from exc
    if conn.info.transaction_status == _INERROR or len(values) != len(members):
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


class ReadConnections:
    """Connections for read units: made when needed, at most `size` in use at once, kept for
    the next read; a broken one is dropped (the next read makes another)."""

    def __init__(self, dsn: str, size: int) -> None:
        self._dsn = dsn
        self._idle: queue.SimpleQueue[psycopg.Connection[Any]] = queue.SimpleQueue()
        self._slots = threading.BoundedSemaphore(size)
        self._closed = False
        self._closing = threading.Lock()  # a connection is kept, or the pool closes: not both

    def check(self) -> None:
        """Fail now, not at the first read, if the server cannot be reached."""
        with self.connection():
            return

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        with self._slots:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = psycopg.connect(self._dsn, row_factory=dict_row, autocommit=True)
            try:
                yield conn
            finally:
                # A read still running when the engine closed closes its own connection.
                with self._closing:
                    keep = not (conn.broken or conn.closed or self._closed)
                    if keep:
                        self._idle.put(conn)
                if not keep:
                    conn.close()

    def close(self) -> None:
        with self._closing:
            self._closed = True
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


class PgEngine:
    """The engine on a PostgreSQL database that several hub processes may share."""

    dialect = "postgres"
    shared = True

    def __init__(self, dsn: str, *, batch_max: int = 512, readers: int = 4) -> None:
        require_psycopg()
        self.dsn = dsn
        self._q = queries("postgres")
        self._token = secrets.token_hex(8)  # tells this process's notifications apart
        self._writer = PgWriter(dsn, self._q, self._token, batch_max=batch_max)
        self._reads = ReadConnections(dsn, readers)
        self._wake: list[Callable[[Sequence[int]], None]] = []
        self._signal: list[Callable[[str], None]] = []
        self._listener: asyncio.Task[None] | None = None
        self._listening: asyncio.Event | None = None

    @property
    def stats(self) -> dict[str, int]:
        w = self._writer
        return {"write_batches": w.batches, "write_ops": w.ops, "write_together": w.together}

    async def open(self) -> None:
        from caucus.storage.migrate import migrate_postgres

        # Every statement is a round trip a writer thread waits out with the GIL released;
        # waking, it must get the GIL back from the event loop, which by default keeps it up
        # to 5 ms. A shorter interval turns that wait into a fraction of the round trip.
        sys.setswitchinterval(SWITCH_INTERVAL)
        try:
            await asyncio.to_thread(migrate_postgres, self.dsn)
            await self._writer.open()
            await asyncio.to_thread(self._reads.check)
        except psycopg.Error as exc:
            await self.close()
            raise storage_error(exc) from None
        except BaseException:
            await self.close()
            raise
        self._listening = asyncio.Event()
        self._listener = asyncio.create_task(self._listen(), name="caucus-pg-listen")
        await self._listening.wait()

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
            self._listener = None
        await self._writer.close()
        await asyncio.to_thread(self._reads.close)

    # --- units of work ---------------------------------------------------------------------
    async def write(self, unit: Unit[T]) -> T:
        result: T = await self._writer.submit(unit)
        return result

    async def read(self, unit: Unit[T]) -> T:
        return await asyncio.to_thread(self._read, unit)

    def _read(self, unit: Unit[T]) -> T:
        try:
            with self._reads.connection() as conn, conn.transaction():
                return unit(Repos(PgTx(conn, self._q)))
        except psycopg.Error as exc:
            raise storage_error(exc) from None

    # --- wake-ups and signals across processes ---------------------------------------------
    def on_wake(self, callback: Callable[[Sequence[int]], None]) -> None:
        self._wake.append(callback)

    def wake(self, peer_ids: Sequence[int]) -> None:
        for callback in self._wake:
            callback(peer_ids)

    def on_signal(self, callback: Callable[[str], None]) -> None:
        self._signal.append(callback)

    async def signal(self, topic: str) -> None:
        payload = f"{self._token} {topic}"
        await self.write(lambda r: r.tx.value("signal_notify", {"payload": payload}))

    async def _listen(self) -> None:
        """Hear the other processes' wake-ups and signals, reconnecting if the link drops
        (a receive parked meanwhile still ends at its own deadline)."""
        assert self._listening is not None
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
                async with conn:
                    await conn.execute(self._q["wake_listen"])
                    await conn.execute(self._q["signal_listen"])
                    self._listening.set()
                    async for note in conn.notifies():
                        self._heard(note.channel, note.payload)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._listening.set()
                log.warning("listening to PostgreSQL failed (%s); retrying in 1 s", exc)
                await asyncio.sleep(1.0)

    def _heard(self, channel: str, payload: str) -> None:
        token, _, body = payload.partition(" ")
        if token == self._token:
            return  # this process already woke its own waiters
        if channel == "caucus_wake":
            ids = [int(p) for p in body.split(",") if p.isdigit()]
            for wake in self._wake:
                wake(ids)
        else:
            for signalled in self._signal:
                signalled(body)

    # --- the database ------------------------------------------------------------------------
    async def size(self) -> StoreSize:
        used = int(await self.read(lambda r: r.tx.value("database_size")))
        # The server gives freed space back on its own (autovacuum): nothing to reclaim here.
        return StoreSize(used_bytes=used, file_bytes=used, incremental=True)

    async def reclaim(self, pages: int | None = None, *, full: bool = False) -> None:
        return
