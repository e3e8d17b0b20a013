"""Retention in the SQLite store: what may be dropped, in bounded batches, and giving the space
back to the file system.

Only what is finished goes: a message no peer still has to acknowledge (no delivery row) and
no idempotency key still answers for; an ended task with its events; a settled offer with its
claims; a canceled form, or an answered one whose record is on the decision ledger (the
ledger itself is never touched). Peers are kept: their ids are referenced by what remains.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from caucus.domain.retention import PurgeCounts, StoreSize
from caucus.storage.sqlite_base import SqliteOps

_MESSAGES = (
    "SELECT seq, ts FROM messages WHERE ts < ?"
    " AND seq NOT IN (SELECT seq FROM deliveries)"
    " AND seq NOT IN (SELECT seq FROM idempotency)"
    " ORDER BY seq LIMIT ?"
)
_TASKS = (
    "SELECT id FROM tasks WHERE state IN ('completed', 'failed', 'canceled', 'expired')"
    " AND updated_at < ? ORDER BY updated_at LIMIT ?"
)
_OFFERS = (
    "SELECT id FROM offers WHERE state IN ('completed', 'withdrawn', 'expired')"
    " AND updated_at < ? ORDER BY updated_at LIMIT ?"
)
_FORMS = (
    "SELECT id FROM forms WHERE (state = 'canceled' OR (state = 'answered'"
    " AND decision_hash IS NOT NULL)) AND updated_at < ? ORDER BY updated_at LIMIT ?"
)
_BIG = 1 << 62


def _ids(conn: sqlite3.Connection, query: str, before: float, limit: int) -> list[Any]:
    return [r[0] for r in conn.execute(query, (before, limit))]


def _delete(conn: sqlite3.Connection, table: str, column: str, ids: list[Any]) -> None:
    conn.executemany(f"DELETE FROM {table} WHERE {column} = ?", [(i,) for i in ids])


class RetentionOps(SqliteOps):
    async def purge_finished(
        self, before: float, limit: int, *, dry_run: bool = False
    ) -> PurgeCounts:
        def op(conn: sqlite3.Connection) -> PurgeCounts:
            cap = _BIG if dry_run else limit
            messages = conn.execute(_MESSAGES, (before, cap)).fetchall()
            tasks = _ids(conn, _TASKS, before, cap)
            offers = _ids(conn, _OFFERS, before, cap)
            forms = _ids(conn, _FORMS, before, cap)
            counts = PurgeCounts(
                messages=len(messages),
                tasks=len(tasks),
                offers=len(offers),
                forms=len(forms),
                newest_ts=max((ts for _, ts in messages), default=None),
                newest_seq=max((seq for seq, _ in messages), default=None),
            )
            if dry_run:
                return counts
            seqs = [seq for seq, _ in messages]
            _delete(conn, "messages", "seq", seqs)
            _delete(conn, "announcements", "seq", seqs)
            _delete(conn, "task_events", "task_id", tasks)
            _delete(conn, "tasks", "id", tasks)
            _delete(conn, "offer_claims", "offer_id", offers)
            _delete(conn, "offers", "id", offers)
            _delete(conn, "forms", "id", forms)
            return counts

        return await (self._read(op) if dry_run else self._write(op))

    async def oldest_purgeable_ts(self) -> float | None:
        def op(conn: sqlite3.Connection) -> float | None:
            row = conn.execute(_MESSAGES.replace("seq, ts", "ts", 1), (_BIG, 1)).fetchone()
            return float(row[0]) if row else None

        return await self._read(op)

    async def store_size(self) -> StoreSize:
        def op(conn: sqlite3.Connection) -> StoreSize:
            (pages,) = conn.execute("PRAGMA page_count").fetchone()
            (free,) = conn.execute("PRAGMA freelist_count").fetchone()
            (size,) = conn.execute("PRAGMA page_size").fetchone()
            (vacuum,) = conn.execute("PRAGMA auto_vacuum").fetchone()
            return StoreSize(
                used_bytes=(pages - free) * size,
                file_bytes=pages * size,
                incremental=vacuum == 2,
            )

        return await self._write(op)  # the writer sees what it has just committed

    async def reclaim(self, pages: int | None = None, *, full: bool = False) -> None:
        """Give free pages back to the file system: `pages` of them (all when None) with an
        incremental vacuum, or with `full` a whole VACUUM, which also turns an older file to
        incremental auto-vacuum. Then truncate the WAL."""

        def op(conn: sqlite3.Connection) -> None:
            if full:
                conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
                conn.execute("VACUUM")
            else:
                # executescript steps the pragma to its end; execute() frees one page only.
                conn.executescript(f"PRAGMA incremental_vacuum({int(pages or 0)});")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

        await self._writer.exclusive(op)
