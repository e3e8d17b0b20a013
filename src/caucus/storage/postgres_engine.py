"""The PostgreSQL engine: several hub processes, one room (issue 14, ADR 0014).

Units of work are synchronous functions (ADR 0013), so this engine runs them on connections
owned by threads, never on the event loop: one writer thread per process group-commits every
unit queued since its last commit (`postgres_writer.py`), and reads take one of a few kept
connections in a worker thread. Wake-ups cross processes by LISTEN/NOTIFY: the writer's NOTIFY
names the peers a batch queued deliveries for (committed with it, or with the next batch), and
a listening connection in each process hands the others' to this process's waiters.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from caucus.domain.retention import StoreSize
from caucus.errors import StorageError
from caucus.storage.engine import Unit, late
from caucus.storage.postgres_size import ROW_BYTES_EVERY, live_bytes
from caucus.storage.postgres_tidy import CHURN as TIDY_CHURN
from caucus.storage.postgres_tidy import Tidy, vacuum_with
from caucus.storage.postgres_tx import PgTx, storage_error
from caucus.storage.postgres_writer import PgWriter
from caucus.storage.queries import queries
from caucus.storage.repos import ONE_STATEMENT, Repos

try:
    import psycopg
    from psycopg.rows import dict_row
except ImportError:  # pragma: no cover - the extra is not installed
    psycopg = None  # type: ignore[assignment]

log = logging.getLogger(__name__)
T = TypeVar("T")
SWITCH_INTERVAL = 0.0005  # seconds (sys.setswitchinterval; Python's default is 0.005)


def require_psycopg() -> None:
    if psycopg is None:
        raise StorageError(
            "a postgresql:// database needs the PostgreSQL extra: pip install "
            "'caucus-hub[postgres]' (in a checkout: .venv/bin/pip install -e '.[postgres]')"
        )


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
                # One snapshot per read unit: under READ COMMITTED each statement saw its own,
                # so a peek could count one message and show a newer one committed between
                # its two statements. A read-only REPEATABLE READ transaction never fails to
                # serialize.
                conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
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

    def __init__(
        self,
        dsn: str,
        *,
        batch_max: int = 512,
        readers: int = 4,
        tidy_churn: int = TIDY_CHURN,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        require_psycopg()
        self.dsn = dsn
        self._q = queries("postgres")
        self._token = secrets.token_hex(8)  # tells this process's notifications apart
        self._writer = PgWriter(dsn, self._q, self._token, batch_max=batch_max)
        self._reads = ReadConnections(dsn, readers)
        self._costly = threading.Semaphore(1)  # costly reads at once (issue 47)
        self._monotonic = monotonic
        self._wake: list[Callable[[Sequence[int]], None]] = []
        self._signal: list[Callable[[str], None]] = []
        self._listener: asyncio.Task[None] | None = None
        self._listening: asyncio.Event | None = None
        vacuum = vacuum_with(self._reads.connection, self._q["deliveries_vacuum"])
        self.tidy = Tidy(lambda: self._writer.ops, vacuum, churn=tidy_churn)
        # What a message row stores (`postgres_size`): measured again every few size readings
        # (retention reads the size after each purge slice; the average moves slowly).
        self._row_bytes: float | None = None
        self._sized = 0

    @property
    def stats(self) -> dict[str, int]:
        w = self._writer
        return {
            "write_batches": w.batches,
            "write_ops": w.ops,
            "write_together": w.together,
            "write_committed_first": w.committed_first,
            "write_wakes_carried": w.wakes_carried,
        }

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

    async def index(self, unit: Unit[T]) -> T:
        return await self.write(unit)  # the GIN index keeps itself: nothing runs apart

    async def read(self, unit: Unit[T]) -> T:
        return await asyncio.to_thread(self._read, unit)

    def _read(self, unit: Unit[T]) -> T:
        try:
            with self._reads.connection() as conn, conn.transaction():
                return unit(Repos(PgTx(conn, self._q), trips=ONE_STATEMENT))
        except psycopg.Error as exc:
            raise storage_error(exc) from None

    async def query(self, unit: Unit[T], *, budget: float) -> T:
        """A costly read: one at a time in this process (the other reads keep the rest of
        the connections), under the server's `statement_timeout` for what is left of
        `budget` once it starts."""
        deadline = self._monotonic() + budget
        return await asyncio.to_thread(self._query, unit, deadline)

    def _query(self, unit: Unit[T], deadline: float) -> T:
        if not self._costly.acquire(timeout=max(0.0, deadline - self._monotonic())):
            raise late()
        try:
            left = deadline - self._monotonic()
            if left <= 0:
                raise late()
            with self._reads.connection() as conn, conn.transaction():
                tx = PgTx(conn, self._q)
                tx.value("read_budget_set", {"ms": str(max(1, int(left * 1000)))})
                return unit(Repos(tx, trips=ONE_STATEMENT))
        except psycopg.errors.QueryCanceled:
            raise late() from None
        except psycopg.Error as exc:
            raise storage_error(exc) from None
        finally:
            self._costly.release()

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
        def op(r: Repos) -> StoreSize:
            footprint = r.tx.one("messages_footprint")
            assert footprint is not None  # the table is the schema's
            if self._row_bytes is None or self._sized % ROW_BYTES_EVERY == 0:
                self._row_bytes = r.tx.value("message_row_bytes")
            self._sized += 1
            used = live_bytes(footprint, self._row_bytes)
            return StoreSize(used, int(footprint["database"]), incremental=True)

        # What this process wrote reaches the statistics once its writer has committed.
        await self.write(_StatsFlush())
        # Autovacuum marks freed space reusable; the files keep their size: nothing to give back.
        return await self.read(op)

    async def upkeep(self) -> None:
        try:
            await self.tidy.maybe()
        except Exception as exc:  # the next tick tries again; the rest of the round goes on
            log.warning("vacuuming the deliveries table failed: %s", exc)

    async def reclaim(self, pages: int | None = None, *, full: bool = False) -> float:
        return 0.0

    async def settle(self) -> None:
        settle = vacuum_with(self._reads.connection, self._q["messages_settle"])
        flush = vacuum_with(self._reads.connection, self._q["settle_checkpoint"])
        try:
            await asyncio.to_thread(settle)
            try:
                await asyncio.to_thread(flush)
            except psycopg.errors.InsufficientPrivilege:
                log.info("no right to CHECKPOINT: the import's pages reach the disk later")
        except psycopg.Error as exc:
            raise storage_error(exc) from None


class _StatsFlush:
    """The writer's statistics sent to the server as its batch commits (`postgres_size`):
    nothing to keep, so the commit need not wait for the disk (ADR 0041)."""

    durable = False

    def __call__(self, r: Repos) -> None:
        r.tx.run("stats_flush")
