"""The embedded SQLite engine: WAL, one group-committing writer, one reader thread (ADR 0001).

Write units run on the writer (`sqlite_runners`), batched into one transaction per commit;
read units on the reader thread; the search index's upkeep on a thread of its own, in a file
of its own (`sqlite_index`, ADR 0042). One hub process owns the file (a lock beside it), so wake-ups
stay in the process and the writer may cache what only it changes.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any, TypeVar

from caucus.domain.retention import StoreSize
from caucus.errors import StorageError
from caucus.files import make_private, open_private, try_lock
from caucus.storage.engine import Duplicate, Params, Row, Unit
from caucus.storage.migrate import migrate_sqlite
from caucus.storage.queries import Queries, queries
from caucus.storage.repos import ROW_BY_ROW, RecipientCache, Repos
from caucus.storage.sqlite_index import attach, index_path, prepare
from caucus.storage.sqlite_runners import GroupCommitWriter, ReaderThread

T = TypeVar("T")
_EMPTY: dict[str, Any] = {}


class SqliteTx:
    """A connection speaking named statements, their parameters given by name (and bound by
    position: see `queries.positional`)."""

    dialect = "sqlite"
    shared = False
    __slots__ = ("_conn", "_q")

    def __init__(self, conn: sqlite3.Connection, q: Queries) -> None:
        self._conn = conn
        self._q = q

    def one(self, name: str, params: Params | None = None) -> Row | None:
        sql, bind = self._q.bound(name)
        try:
            row: Row | None = self._conn.execute(sql, bind(params or _EMPTY)).fetchone()
        except sqlite3.IntegrityError as exc:
            raise _duplicate(exc) from None
        return row

    def all(self, name: str, params: Params | None = None) -> list[Row]:
        sql, bind = self._q.bound(name)
        rows: list[Row] = self._conn.execute(sql, bind(params or _EMPTY)).fetchall()
        return rows

    def later(self, name: str, params: Params) -> Callable[[], list[Row]]:
        rows = self.all(name, params)  # in process, a statement costs no round trip
        return lambda: rows

    def value(self, name: str, params: Params | None = None) -> Any:
        sql, bind = self._q.bound(name)
        try:
            row = self._conn.execute(sql, bind(params or _EMPTY)).fetchone()
        except sqlite3.IntegrityError as exc:
            raise _duplicate(exc) from None
        return None if row is None else row[0]

    def run(self, name: str, params: Params | None = None) -> int:
        sql, bind = self._q.bound(name)
        try:
            return self._conn.execute(sql, bind(params or _EMPTY)).rowcount
        except sqlite3.IntegrityError as exc:
            raise _duplicate(exc) from None

    def insert(self, name: str, params: Params) -> int:
        sql, bind = self._q.bound(name)
        try:
            key = self._conn.execute(sql, bind(params)).lastrowid
        except sqlite3.IntegrityError as exc:
            raise _duplicate(exc) from None
        assert key is not None
        return key

    def many(self, name: str, rows: Iterable[Params]) -> int:
        sql, bind = self._q.bound(name)
        try:
            return self._conn.executemany(sql, map(bind, rows)).rowcount
        except sqlite3.IntegrityError as exc:
            raise _duplicate(exc) from None

    def array(self, values: Sequence[Any]) -> Any:
        return json.dumps(list(values))

    def woke(self, peer_ids: Iterable[int]) -> None:
        return  # one process owns the file: `SqliteEngine.wake` reaches every waiter

    def script(self, name: str, **ints: int) -> None:
        """A maintenance statement that must run to its end (PRAGMAs take no parameters, so
        whole numbers are formatted in)."""
        self._conn.executescript(self._q[name].format(**{k: int(v) for k, v in ints.items()}) + ";")


def _duplicate(exc: sqlite3.IntegrityError) -> Exception:
    if "UNIQUE" in str(exc) or "PRIMARY KEY" in str(exc):
        return Duplicate(str(exc))
    return exc


class SqliteEngine:
    """The engine on one SQLite file. Only one hub process may open a file at a time."""

    dialect = "sqlite"
    shared = False

    def __init__(
        self,
        path: Path,
        *,
        synchronous: str = "FULL",
        batch_max: int = 512,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self._synchronous = synchronous
        self._q = queries("sqlite")
        self._lease = 0
        self._lock_file: IO[str] | None = None
        self._recipients = RecipientCache()
        self._writes: Repos | None = None
        self._reads: Repos | None = None
        self._wake: list[Callable[[Sequence[int]], None]] = []
        self._writer = GroupCommitWriter(
            self._connect_writer,
            batch_max=batch_max,
            on_abort=self._recipients.clear,
            relax=(_SYNC_LEVELS[synchronous.upper()], _SYNC_LEVELS["NORMAL"]),
        )
        self._reader = ReaderThread(self._connect_reader)
        # Costly reads (searches, summaries) on a lane of their own, each within its budget:
        # they never queue the inbox's reads behind them (issue 47).
        self._monotonic = monotonic
        self._costly = ReaderThread(
            self._connect_costly, name="caucus-sqlite-costly", monotonic=monotonic
        )
        self._costly_reads: Repos | None = None
        self.index_path = index_path(path)
        self._indexer = ReaderThread(self._connect_index, name="caucus-sqlite-index")
        self._index_repos: Repos | None = None

    # --- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        # The database and its lock are 0600 in a 0700 folder; SQLite gives its -wal and -shm
        # files the database's mode.
        if not self.path.parent.exists():
            make_private(self.path.parent, directory=True)
        make_private(self.path)
        make_private(self.index_path)
        self._take_lock()
        try:
            await self._writer.open()
            await self._indexer.open()  # the index's file exists before a reader attaches it
            await self._reader.open()
            await self._costly.open()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        await self._costly.close()
        await self._reader.close()
        await self._indexer.close()
        await self._writer.close()
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    @property
    def stats(self) -> dict[str, int]:
        return {"write_batches": self._writer.batches, "write_ops": self._writer.ops}

    # --- units of work ---------------------------------------------------------------------
    async def write(self, unit: Unit[T]) -> T:
        repos = self._writes
        if repos is None:
            raise StorageError("the database is not open")
        durable = getattr(unit, "durable", True)  # `Unit.durable`: False may be lost to a power cut
        result: T = await self._writer.submit(lambda _conn: unit(repos), durable=durable)
        return result

    async def read(self, unit: Unit[T]) -> T:
        repos = self._reads
        if repos is None:
            raise StorageError("the database is not open")
        result: T = await self._reader.submit(lambda _conn: unit(repos))
        return result

    async def index(self, unit: Unit[T]) -> T:
        repos = self._index_repos
        if repos is None:
            raise StorageError("the database is not open")
        result: T = await self._indexer.submit(lambda _conn: unit(repos))
        return result

    async def query(self, unit: Unit[T], *, budget: float) -> T:
        """A costly read: on its own lane, given up (`QueryTimeout`) once `budget` seconds
        have passed since it was asked for, waiting included."""
        repos = self._costly_reads
        if repos is None:
            raise StorageError("the database is not open")
        deadline = self._monotonic() + budget
        result: T = await self._costly.submit(lambda _conn: unit(repos), deadline)
        return result

    # --- wake-ups: one process owns the file, so they never leave it -----------------------
    def on_wake(self, callback: Callable[[Sequence[int]], None]) -> None:
        self._wake.append(callback)

    def wake(self, peer_ids: Sequence[int]) -> None:
        for callback in self._wake:
            callback(peer_ids)

    def on_signal(self, callback: Callable[[str], None]) -> None:
        return  # no other process can have changed anything

    async def signal(self, topic: str) -> None:
        return

    # --- the file --------------------------------------------------------------------------
    async def size(self) -> StoreSize:
        """The room's file: what the size bound reads, less the purged words waiting for the
        index to forget them (gone within a round). The search index's file beside it is
        derived from the log and keeps in step with it (`sqlite_index`)."""

        def op(repos: Repos) -> StoreSize:
            tx = repos.tx
            pages, free = tx.value("page_count"), tx.value("freelist_count")
            size = tx.value("page_size")
            queued = int(tx.value("search_gone_bytes"))  # purged words the index still needs
            return StoreSize(
                used_bytes=max(0, (pages - free) * size - queued),
                file_bytes=pages * size,
                incremental=tx.value("auto_vacuum") == 2,
            )

        return await self.write(op)  # the writer sees what it has just committed

    async def upkeep(self) -> None:
        return  # SQLite reuses a deleted row's space in place; retention reclaims the rest

    async def settle(self) -> None:
        return  # no hint bits or visibility map to set; the import merged the search index

    async def reclaim(self, pages: int | None = None, *, full: bool = False) -> float:
        """Give free pages back to the file system: `pages` of them (all when None) with an
        incremental vacuum, or with `full` a whole VACUUM, which also turns an older file to
        incremental auto-vacuum. All or full, the WAL is then truncated; a slice of `pages`
        leaves it to the checkpoints (the WAL's size limit cuts it back), since a truncating
        checkpoint holds every write while it copies the whole WAL (retention's slices)."""
        q = self._q

        def op(conn: sqlite3.Connection) -> float:
            began = self._monotonic()
            tx = SqliteTx(conn, q)
            if full:
                tx.script("auto_vacuum_incremental")
                tx.script("vacuum")
            elif pages is None:
                tx.script("incremental_vacuum", pages=0)
            else:
                # A slice moves pages only: lost to a power cut, the file is as it was, so it
                # does not wait for the disk while every write waits for it (ADR 0041).
                level = int(tx.value("commit_sync"))
                tx.script("synchronous", level=_SYNC_LEVELS["NORMAL"])
                try:
                    tx.script("incremental_vacuum", pages=pages)
                finally:
                    tx.script("synchronous", level=level)
            if full or pages is None:
                tx.all("wal_checkpoint")
            return self._monotonic() - began

        held: float = await self._writer.exclusive(op)
        return held

    def _take_lock(self) -> None:
        lock_path = self.path.with_name(self.path.name + ".lock")
        handle = open_private(lock_path, "a+")  # held until close()
        if not try_lock(handle):  # without advisory locks, SQLite still guards the file
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise StorageError(
                f"{self.path} is in use by another hub (pid {holder}); stop it or use --db "
                "to choose another file"
            )
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._lock_file = handle

    def _next_lease(self) -> int:
        self._lease += 1  # claims run on the writer only
        return self._lease

    def _connect_writer(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        tx = SqliteTx(conn, self._q)
        if tx.value("schema_objects") == 0:
            # A new file: free pages can then be given back a few at a time (retention), which
            # an older file needs one full VACUUM for (`caucus db purge` does it).
            tx.script("auto_vacuum_incremental")
        tx.script("journal_mode_wal")
        tx.script("journal_size_limit")
        tx.script("synchronous", level=_SYNC_LEVELS[self._synchronous.upper()])
        tx.script("busy_timeout")
        migrate_sqlite(conn)
        self._lease = int(tx.value("last_lease"))
        conn.row_factory = sqlite3.Row
        self._writes = Repos(
            tx, recipients=self._recipients, next_lease=self._next_lease, trips=ROW_BY_ROW
        )
        return conn

    def _connect_reader(self) -> sqlite3.Connection:
        conn, tx = self._read_only()
        self._reads = Repos(tx, trips=ROW_BY_ROW)
        return conn

    def _connect_costly(self) -> sqlite3.Connection:
        conn, tx = self._read_only()
        self._costly_reads = Repos(tx, trips=ROW_BY_ROW)
        return conn

    def _connect_index(self) -> sqlite3.Connection:
        """The index's upkeep: reads the room's file, writes only the index's (`sqlite_index`);
        a deferred BEGIN (the reader thread's) takes the index's write lock alone."""
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        tx = SqliteTx(conn, self._q)
        tx.script("busy_timeout")
        attach(tx, self.index_path)
        prepare(tx, _SYNC_LEVELS[self._synchronous.upper()])
        conn.row_factory = sqlite3.Row
        self._index_repos = Repos(tx, trips=ROW_BY_ROW)
        return conn

    def _read_only(self) -> tuple[sqlite3.Connection, SqliteTx]:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        tx = SqliteTx(conn, self._q)
        tx.script("busy_timeout")
        attach(tx, self.index_path)
        tx.script("query_only")
        conn.row_factory = sqlite3.Row
        return conn, tx


_SYNC_LEVELS = {"OFF": 0, "NORMAL": 1, "FULL": 2, "EXTRA": 3}
