"""The storage seam (issue 14, ADR 0013): an engine runs units of work; repositories speak SQL.

A *unit of work* is a plain function of `Repos`: it reads, lets the domain decide, and writes,
and the engine runs it inside one write transaction (group-committed with the units queued
beside it) or one read. Units never await: everything a unit needs is in the database or in
its closure, so a batch of them shares one transaction and one commit. A backend is an engine
(how units run, how wake-ups cross processes) plus one `queries.sql` of named statements; the
repositories, and every rule above them, are shared by all backends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from caucus.errors import QueryTimeout, StorageError

if TYPE_CHECKING:
    from caucus.domain.retention import StoreSize
    from caucus.storage.repos import Repos

T = TypeVar("T")
Params = Mapping[str, Any]
# A unit may carry `durable = False`: what it writes may be lost to a power cut (not to a
# crash of the hub), as only the newest writes, so an engine may commit it without waiting
# for the disk (ADR 0041). A receive's claim is such a unit: losing one only shows its
# deliveries again, which at-least-once delivery allows.
Unit = Callable[["Repos"], T]


class Together(Protocol):
    """A unit of work that may run together with the others of its kind queued beside it.

    On a backend where every statement is a round trip to a server, the hub's commonest units
    (a direct send, a receive's claim) would each cost one, in turn; such an engine instead
    gives all the units of one kind in a batch to `start_together` at once, which sends one
    statement for them all (`Tx.later`) and returns how to finish: a function answering for
    each unit what it would have returned (or the CaucusError it would have raised) alone. The
    engine starts every kind before it finishes any, so their statements share a round trip.
    Units in one batch were queued concurrently, so running them in any order is a serial
    order their callers could have seen. `together` names the kind, or is None for a unit
    that must run alone this time. Other engines call the unit itself."""

    together: str | None

    def __call__(self, r: Repos) -> Any: ...

    def start_together(self, r: Repos, units: list[Any]) -> Callable[[], list[Any]]: ...


class Row(Protocol):
    """One result row, read by column name (sqlite3.Row, psycopg's dict rows)."""

    def __getitem__(self, key: str) -> Any: ...


def late() -> QueryTimeout:
    """What a costly read that ran past its budget (`Engine.query`) raises, on every store."""
    return QueryTimeout(
        "the hub gave up on this read: it ran past its time budget (the hub is busy, or the "
        "read asks for too much); narrow it, or retry in a few seconds"
    )


class Duplicate(StorageError):
    """A write broke a uniqueness rule. Repositories turn it into the domain's own error."""


class Tx(Protocol):
    """The connection of one unit of work, speaking only named statements."""

    dialect: str
    shared: bool  # other processes use the same database (they must be told of deliveries)

    def one(self, name: str, params: Params | None = None) -> Row | None: ...

    def all(self, name: str, params: Params | None = None) -> list[Row]: ...

    def value(self, name: str, params: Params | None = None) -> Any:
        """The first column of the first row (None when there is no row)."""
        ...

    def run(self, name: str, params: Params | None = None) -> int:
        """Execute; the number of rows changed. Raises Duplicate on a uniqueness violation."""
        ...

    def insert(self, name: str, params: Params) -> int:
        """Insert one row; its generated key (SQLite's rowid, or the RETURNING column)."""
        ...

    def many(self, name: str, rows: Iterable[Params]) -> int: ...

    def later(self, name: str, params: Params) -> Callable[[], list[Row]]:
        """Send a statement now and read its rows when the returned function is called: a
        backend that pipelines sends every statement started so before waiting on any."""
        ...

    def array(self, values: Sequence[Any]) -> Any:
        """A list parameter as this backend's statements take it (JSON text, or an array)."""
        ...

    def woke(self, peer_ids: Iterable[int]) -> None:
        """These peers got deliveries in this unit: a backend shared by processes tells the
        others once its batch commits."""
        ...


class Engine(Protocol):
    """What a backend provides. `write` units run in one transaction each (batched, group
    committed, never undone by a neighbour's failure); `read` units see committed state."""

    dialect: str
    shared: bool  # several hub processes may use the database at once

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def write(self, unit: Unit[T]) -> T: ...

    async def read(self, unit: Unit[T]) -> T: ...

    async def index(self, unit: Unit[T]) -> T:
        """A unit of the search index's upkeep (following the log, forgetting what was
        purged, merging): where the index lives apart (SQLite: a file and a thread of its
        own), it never holds the room's writer; elsewhere it is a write."""
        ...

    async def query(self, unit: Unit[T], *, budget: float) -> T:
        """A costly read (a search, a summary): run apart from the other reads, so it never
        holds them up, and given up (`QueryTimeout`) once `budget` seconds have passed since
        it was asked for, its wait for the lane included."""
        ...

    def on_wake(self, callback: Callable[[Sequence[int]], None]) -> None:
        """Call `callback` with peer ids that have new deliveries, committed by any process
        sharing this database (this one included)."""
        ...

    def wake(self, peer_ids: Sequence[int]) -> None:
        """Say, in this process, that these peers have new deliveries (after the commit that
        queued them; other processes hear of it from the engine itself)."""
        ...

    def on_signal(self, callback: Callable[[str], None]) -> None:
        """Call `callback` with each topic another process signalled (`signal`)."""
        ...

    async def signal(self, topic: str) -> None:
        """Tell every other process sharing the database that `topic` changed (the room's
        mode, say), after what changed it has committed."""
        ...

    async def size(self) -> StoreSize: ...

    async def reclaim(self, pages: int | None = None, *, full: bool = False) -> float:
        """Give free space back to the file system (a backend without files does nothing);
        the seconds it held the store (waiting for its turn left out), to size the next."""
        ...

    async def settle(self) -> None:
        """After a bulk load (`caucus db import`): what the store does once, so that a hub
        serving the new history does not do it under load. On PostgreSQL a VACUUM (ANALYZE)
        of the messages table: the rows' hint bits, the visibility map and the planner's
        statistics, which autovacuum would otherwise set while the hub serves (on a room of
        ten million, a vacuum of gigabytes beside the sends). SQLite has none of these."""
        ...

    async def upkeep(self) -> None:
        """What the backend needs done as it churns, run on the hub's maintenance tick (on
        PostgreSQL, vacuuming the deliveries table: `postgres_tidy.py`)."""
        ...

    @property
    def stats(self) -> dict[str, int]: ...
