"""Where SQLite work runs: a group-committing writer and a reader thread (ADR 0001).

The writer runs the statements of every operation queued since the last commit on the event-loop
thread, inside one transaction, and hands only the COMMIT (the fsync) to a committer thread. While
that commit is in flight new operations queue up and form the next batch, so concurrent sends
share one fsync and durability costs latency per batch, not per message. Running the statements
on the loop rather than in a writer thread avoids handing the GIL back and forth for every SQLite
call, which profiling showed to cost more than the statements themselves. The loop never waits on
the disk.

A batch in which every operation may be lost to a power cut (`submit(durable=False)`: a receive's
claim, which only hides deliveries for a while) commits without syncing the WAL. WAL frames are
appended in order and the next synced commit syncs them all, so a power cut can lose only the
newest such commits, never one that a synced commit after it depends on (ADR 0041).

Operations raise a CaucusError only before they write anything (they validate first), so such a
failure needs no undo. Any other failure rolls the batch back and replays it with one savepoint per
operation, so one bad operation never undoes or loses the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from caucus.errors import CaucusError, StorageError, StorageFull
from caucus.storage.engine import late
from caucus.storage.queries import queries

Op = Callable[[sqlite3.Connection], Any]
# (future, value, exception) for one operation
Outcome = tuple["asyncio.Future[Any]", Any, BaseException | None]

_STOP = object()


def storage_error(exc: sqlite3.Error) -> CaucusError:
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and "full" in text:
        return StorageFull("the database disk is full; free space, then retry")
    return StorageError(f"database error: {text}; retry, and check the hub log if it persists")


def settle(fut: asyncio.Future[Any], value: Any, exc: BaseException | None) -> None:
    if fut.done():  # the awaiting request went away; the work itself is done
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(value)


def _resolve(results: list[Outcome]) -> None:
    for fut, value, exc in results:
        settle(fut, value, exc)


class GroupCommitWriter:
    """The one writer of a database file. `submit(op)` returns a future resolved after COMMIT."""

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        *,
        batch_max: int,
        on_abort: Callable[[], None] | None = None,
        relax: tuple[int, int] | None = None,
    ) -> None:
        """`relax`: (the file's synchronous level, the level for a batch nothing in which must
        survive a power cut), or None to commit every batch alike."""
        self._q = queries("sqlite")
        pragma = self._q["synchronous"]
        self._levels = (
            None
            if relax is None or relax[1] >= relax[0]
            else (pragma.format(level=relax[0]), pragma.format(level=relax[1]))
        )
        self._relaxed = False  # the connection commits at the relaxed level now
        self._connect = connect
        self._on_abort = on_abort  # a batch was rolled back: caches derived from it are stale
        self._batch_max = batch_max
        self._conn: sqlite3.Connection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: deque[tuple[Op, asyncio.Future[Any]]] = deque()
        self._durable: deque[bool] = deque()  # beside `_pending`: must it survive a power cut
        self._busy = False  # a batch is being run or committed
        self._idle: asyncio.Event | None = None
        self._commits: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._committer: threading.Thread | None = None
        self.batches = 0
        self.ops = 0

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._idle = asyncio.Event()
        self._idle.set()
        self._conn = await asyncio.to_thread(self._connect)  # migrations may take a while
        self._committer = threading.Thread(
            target=self._commit_loop, name="caucus-sqlite-commit", daemon=True
        )
        self._committer.start()

    async def close(self) -> None:
        if self._conn is None:
            return
        assert self._idle is not None
        while self._busy or self._pending:
            await self._idle.wait()
        self._commits.put(_STOP)
        if self._committer is not None:
            await asyncio.to_thread(self._committer.join)
        conn, self._conn = self._conn, None
        await asyncio.to_thread(conn.close)

    def submit(self, op: Op, *, durable: bool = True) -> asyncio.Future[Any]:
        loop = self._loop
        if loop is None or self._conn is None:
            raise StorageError("the database is not open")
        fut: asyncio.Future[Any] = loop.create_future()
        self._pending.append((op, fut))
        self._durable.append(durable)
        if not self._busy:
            self._busy = True
            assert self._idle is not None
            self._idle.clear()
            # Run on the next loop turn, so everything submitted in this one joins the batch.
            loop.call_soon(self._run_batch)
        return fut

    async def exclusive(self, op: Op) -> Any:
        """Run `op` alone, outside any transaction, in a worker thread (VACUUM, checkpoints):
        batches wait for it and it for them, and the event loop is never blocked by it."""
        assert self._idle is not None
        assert self._loop is not None
        while self._busy:
            await self._idle.wait()
        if self._conn is None:
            raise StorageError("the database is not open")
        self._busy = True
        self._idle.clear()
        try:
            return await asyncio.to_thread(op, self._conn)
        except sqlite3.Error as exc:
            raise storage_error(exc) from None
        finally:
            if self._pending:
                self._loop.call_soon(self._run_batch)
            else:
                self._busy = False
                self._idle.set()

    # --- on the event loop -------------------------------------------------------------------
    def _run_batch(self) -> None:
        conn = self._conn
        assert conn is not None
        pending, durable = self._pending, self._durable
        size = min(len(pending), self._batch_max)
        batch = [pending.popleft() for _ in range(size)]
        flags = [durable.popleft() for _ in range(size)]  # every one popped, beside its op
        must_sync = any(flags)
        self.batches += 1
        self.ops += len(batch)
        try:
            if self._levels is not None and self._relaxed == must_sync:
                conn.execute(self._levels[0] if must_sync else self._levels[1])
                self._relaxed = not must_sync
            conn.execute(self._q["begin_immediate"])
        except sqlite3.Error as exc:
            self._fail(batch, storage_error(exc))
            return
        results: list[Outcome] = []
        for op, fut in batch:
            try:
                value = op(conn)
            except CaucusError as exc:
                results.append((fut, None, exc))
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute(self._q["rollback"])
                self._aborted()
                replayed = self._replay_isolated(conn, batch)
                if replayed is None:
                    return
                results = replayed
                break
            else:
                results.append((fut, value, None))
        self._commits.put((conn, batch, results))

    def _replay_isolated(
        self, conn: sqlite3.Connection, batch: list[tuple[Op, asyncio.Future[Any]]]
    ) -> list[Outcome] | None:
        try:
            conn.execute(self._q["begin_immediate"])
        except sqlite3.Error as exc:
            self._fail(batch, storage_error(exc))
            return None
        results: list[Outcome] = []
        for op, fut in batch:
            try:
                conn.execute(self._q["savepoint"])
                try:
                    value = op(conn)
                except BaseException:
                    conn.execute(self._q["rollback_to_savepoint"])
                    raise
                finally:
                    conn.execute(self._q["release_savepoint"])
            except sqlite3.Error as exc:
                results.append((fut, None, storage_error(exc)))
            except BaseException as exc:
                results.append((fut, None, exc))
            else:
                results.append((fut, value, None))
        return results

    def _aborted(self) -> None:
        if self._on_abort is not None:
            self._on_abort()

    def _fail(self, batch: list[tuple[Op, asyncio.Future[Any]]], err: CaucusError) -> None:
        assert self._loop is not None
        failed: list[Outcome] = [(fut, None, err) for _, fut in batch]
        self._loop.call_soon(self._done, failed)

    def _done(self, results: list[Outcome]) -> None:
        _resolve(results)
        if self._pending:
            self._run_batch()
        else:
            self._busy = False
            assert self._idle is not None
            self._idle.set()

    # --- on the committer thread --------------------------------------------------------------
    def _commit_loop(self) -> None:
        loop = self._loop
        assert loop is not None
        while True:
            item = self._commits.get()
            if item is _STOP:
                return
            conn, batch, results = item
            try:
                conn.execute(self._q["commit"])
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute(self._q["rollback"])
                err = storage_error(exc)
                results = [(fut, None, err) for _, fut in batch]
                loop.call_soon_threadsafe(self._aborted)
            with contextlib.suppress(RuntimeError):  # loop closed during shutdown
                loop.call_soon_threadsafe(self._done, results)


class ReaderThread(threading.Thread):
    """One thread with one connection, running operations in order, each in a transaction
    (committed, or rolled back when it fails): reads, or the search index's upkeep. An
    operation given a deadline (on `monotonic`'s scale) is interrupted once it passes it, and
    not started at all past it (`QueryTimeout`)."""

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        *,
        name: str = "caucus-sqlite-reader",
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(name=name, daemon=True)
        self._q = queries("sqlite")
        self._connect = connect
        self._monotonic = monotonic
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready: asyncio.Future[None] | None = None

    async def open(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._ready = self._loop.create_future()
        self.start()
        await self._ready

    async def close(self) -> None:
        if self.is_alive():
            self._queue.put(_STOP)
            await asyncio.to_thread(self.join)

    def submit(self, op: Op, deadline: float | None = None) -> asyncio.Future[Any]:
        assert self._loop is not None
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._queue.put((op, fut, deadline))
        return fut

    def run(self) -> None:
        loop = self._loop
        ready = self._ready
        assert loop is not None
        assert ready is not None
        try:
            conn = self._connect()
        except BaseException as exc:  # report to open() rather than die silently
            loop.call_soon_threadsafe(settle, ready, None, exc)
            return
        loop.call_soon_threadsafe(settle, ready, None, None)
        try:
            while True:
                item = self._queue.get()
                if item is _STOP:
                    return
                op, fut, deadline = item
                outcome = self._run(conn, op, fut, deadline)
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(settle, *outcome)
        finally:
            conn.close()

    def _run(
        self, conn: sqlite3.Connection, op: Op, fut: asyncio.Future[Any], deadline: float | None
    ) -> Outcome:
        monotonic = self._monotonic
        if deadline is not None:
            if monotonic() >= deadline:
                return fut, None, late()
            conn.set_progress_handler(lambda: int(monotonic() >= deadline), PROGRESS_STEPS)
        try:
            conn.execute(self._q["begin"])
            try:
                value = op(conn)
            except BaseException:
                # Nothing half done stays (the search index's upkeep writes on such a thread).
                with contextlib.suppress(sqlite3.Error):
                    conn.execute(self._q["rollback"])
                raise
            finally:
                if deadline is not None:  # the commit of a read is never given up
                    conn.set_progress_handler(None, 0)
            conn.execute(self._q["commit"])
            return fut, value, None
        except sqlite3.OperationalError as exc:
            if deadline is not None and "interrupt" in str(exc):
                return fut, None, late()
            return fut, None, storage_error(exc)
        except sqlite3.Error as exc:
            return fut, None, storage_error(exc)
        except BaseException as exc:
            return fut, None, exc


# SQLite virtual-machine steps between two looks at a read's deadline (~0.1 ms of work).
PROGRESS_STEPS = 1000
