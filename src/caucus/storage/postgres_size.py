"""How much of a PostgreSQL database holds data, for retention's size bound.

`pg_database_size` is the files on disk, and deleting rows does not shrink them: autovacuum
marks the space free for the next rows, it does not give it back. Read as "used", a room once
over `retention_max_bytes` stays over it, and retention goes on purging every finished message.
So the bound reads the live data instead: the messages table (the one the bound purges) with
its indexes and TOAST counts in proportion to what its rows store: the live row count from the
server's statistics times what a row stores (measured on rows spread evenly over the whole
log, as stored: the newest rows alone misread a room whose recent messages differ from its
history, and ANALYZE's widths count a text search vector by its words), over the table's
size. Everything else counts whole. The statistics lag what a backend commits by up to a
second (ten when it then idles), so the size asks the writer for them first (`stats_flush`:
they reach the server as the writer's batch commits). An estimate: rows are counted alike,
so a purge of rows larger than the average frees more than it reads.
"""

from __future__ import annotations

from caucus.storage.engine import Row

ROW_BYTES_EVERY = 32  # size readings between two measures of what a row stores
ROW_OVERHEAD = 24 + 4 + 4  # a row's header, its line pointer, its alignment on average


def live_bytes(footprint: Row, row_bytes: float | None) -> int:
    """The database's bytes holding data, from the `messages_footprint` statement's row and
    what a message row stores on average (None when the table is empty)."""
    database = int(footprint["database"])
    stored = int(footprint["stored"])
    if stored == 0 or row_bytes is None:
        return database
    total = int(footprint["total"])
    live = max(0, int(footprint["live"]))
    held = min(1.0, live * (row_bytes + ROW_OVERHEAD) / stored)
    return database - total + round(total * held)
