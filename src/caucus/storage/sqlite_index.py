"""The search index in a file of its own, beside the room's (issue 53, ADR 0042).

FTS5 merges an index's segments a term at a time, so a merge step costs what the largest term
it reaches costs, whatever the pages asked: 16-37 ms at a million messages, once retention's
deletes had left tombstones beside the large segment. In the room's file every such step held
the one writer, so every send waited behind it. In `<room file>.search` the index's upkeep
(following the log, forgetting what is purged, merging) runs on a thread and a connection of
its own: that connection reads the room's file and writes only the index's, so it takes the
index's write lock, never the room's, and SQLite runs the statements with the GIL released.

The index holds no text (a contentless FTS5 table): it reads a message's words from the log as
it indexes it, and a purged message's words from `search_gone`, which a trigger in the room's
file fills as messages are deleted and the room's writer empties once the index has forgotten
them. Derived data: a missing index file is made and filled from the log again in the
background; one that is ahead of the log (the room's file was replaced) starts over.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from caucus.storage.sqlite_engine import SqliteTx

SUFFIX = ".search"


def index_path(db: Path) -> Path:
    """Where the search index of the room in `db` lives."""
    return db.with_name(db.name + SUFFIX)


def attach(tx: SqliteTx, path: Path) -> None:
    """The index's file, attached as `search` (the statements name it so)."""
    tx.run("search_attach", {"path": str(path)})


def prepare(tx: SqliteTx, synchronous: int) -> None:
    """On the index's own connection: its file made if new, synced as the room's is, and
    made this log's: a new index starts from the log's beginning with nothing to forget (what
    the queue holds went before it could hold it); one ahead of the log starts over."""
    tx.script("search_file_setup")
    tx.script("search_synchronous", level=synchronous)
    upto, last = int(tx.value("search_upto")), int(tx.value("messages_last_seq"))
    fresh = tx.one("search_state_row") is None
    if upto > last:
        tx.script("search_file_reset")
        fresh = True
    if fresh:
        tx.run("search_gone_mark", {"gone": int(tx.value("search_gone_newest"))})
