"""A PostgreSQL connection speaking the named statements (`Tx`), and what it maps: a unique
violation to `Duplicate`, a value the server cannot hold to bad input, a lost server to a
`StorageError` that says what to check. Lease numbers for claims come in blocks from the
database's sequence."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from caucus.errors import CaucusError, InvalidRequest, StorageError
from caucus.storage.engine import Duplicate, Params, Row
from caucus.storage.queries import Queries

try:
    import psycopg
    from psycopg import errors as pg_errors
except ImportError:  # pragma: no cover - the extra is not installed
    psycopg = None  # type: ignore[assignment]

LEASE_BLOCK = 1024  # the delivery_lease sequence's increment (sql/postgres/0001_initial.sql)
_EMPTY: dict[str, Any] = {}


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
    __slots__ = ("_conn", "_q", "failed", "pipeline", "woken")

    def __init__(self, conn: psycopg.Connection[Any], q: Queries) -> None:
        self._conn = conn
        self._q = q
        self.woken: set[int] = set()
        # In pipeline mode (a writer's batch) each statement is synced before its unit reads
        # the result, so a unit sees what it would see outside one.
        self.pipeline: psycopg.Pipeline | None = None
        # A statement of the batch failed on the server: whatever a unit made of it (a caught
        # Duplicate, a refusal), the transaction is aborted. Told by this, not by the
        # connection's status, which a pipeline may still report as active just then.
        self.failed = False

    def _execute(self, name: str, params: Params | None) -> psycopg.Cursor[Any]:
        try:
            cur = self._conn.execute(self._q[name], params or _EMPTY)
            if self.pipeline is not None:
                self.pipeline.sync()
            return cur
        except psycopg.Error as exc:
            raise self._failure(exc) from None

    def _failure(self, exc: psycopg.Error) -> Exception:
        self.failed = True
        if isinstance(exc, pg_errors.UniqueViolation):
            return Duplicate(str(exc))
        if isinstance(exc, psycopg.DataError):
            return _unstorable(exc)
        return exc

    def one(self, name: str, params: Params | None = None) -> Row | None:
        row: Row | None = self._execute(name, params).fetchone()
        return row

    def later(self, name: str, params: Params) -> Callable[[], list[Row]]:
        if self.pipeline is None:
            rows = self.all(name, params)
            return lambda: rows
        try:
            cur = self._conn.execute(self._q[name], params)  # sent, not waited on
        except psycopg.Error as exc:
            raise self._failure(exc) from None

        def fetch() -> list[Row]:
            # The first read waits for every statement sent before it (one round trip).
            try:
                rows: list[Row] = cur.fetchall()
            except psycopg.Error as exc:
                raise self._failure(exc) from None
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
        except psycopg.Error as exc:
            raise self._failure(exc) from None

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
    storage error: text with a NUL character (SQLite stores it; PostgreSQL text cannot). The
    client names it when it sends text; the server, as "0x00", when it reads an array."""
    if "NUL" in str(exc) or "0x00" in str(exc):
        return InvalidRequest(
            "text may not contain the NUL character (U+0000) on this hub's PostgreSQL database",
            field="body",
        )
    return exc
