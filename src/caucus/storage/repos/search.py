"""Full-text search over the message log (`domain.search`), and a thread's messages.

On SQLite the FTS5 index, in a file of its own (`storage/sqlite_index.py`), follows the log in
batches (`index_more`) and forgets what retention purged; PostgreSQL keeps its GIN index as
each message is stored and dropped, and its statements say there is nothing to follow.
"""

from __future__ import annotations

from typing import Any

from caucus.domain.messages import Message
from caucus.domain.search import SearchFilters, SearchOrder, SearchQuery, message_kinds
from caucus.domain.visibility import Reader
from caucus.storage.engine import Tx
from caucus.storage.repos.messages import message

# Relevance ranks the newest this many matches the reader may see: ranking all of a word
# found in most of a million messages took a second, these ~30 ms (benchmarks/search.py).
RANK_WINDOW = 10_000


def _reader(reader: Reader | None) -> dict[str, Any]:
    """The parameters of the `reader_may_read` fragment (`domain.visibility`)."""
    return {"reader": None if reader is None else reader.peer_id}


class Search:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def unindexed(self) -> int:
        """How many stored messages the index does not hold yet (none where the store keeps
        its index as each message is stored)."""
        return int(self._tx.value("search_unindexed", {"upto": self._tx.value("search_upto")}))

    def index_more(self, limit: int) -> int:
        """Up to `limit` items of the index's upkeep: first purged messages it forgets, then
        new messages it indexes; how many. What is purged is forgotten before the index moves
        on, in one snapshot: a message purged before it was indexed is then known as never
        indexed (past `upto`), never told to an index that does not hold it."""
        tx = self._tx
        upto = int(tx.value("search_upto"))
        forgot = self._forget(upto, limit)
        if forgot >= limit:
            return forgot
        through = tx.value("search_next_upto", {"upto": upto, "limit": limit - forgot})
        if through is None:
            return forgot
        done = tx.run("search_index", {"upto": upto, "through": through})
        tx.run("search_mark", {"upto": through})
        return forgot + done

    def _forget(self, upto: int, limit: int) -> int:
        """Purged messages out of the index, up to `limit` (those it held: up to `upto`)."""
        tx = self._tx
        after = int(tx.value("search_gone_cursor"))
        gone = tx.all("search_gone_next", {"after": after, "limit": limit})
        if not gone:
            return 0
        held = [{"seq": g["seq"], "content": g["content"]} for g in gone if g["seq"] <= upto]
        if held:
            tx.many("search_unindex", held)
        tx.run("search_gone_mark", {"gone": gone[-1]["id"]})
        return len(gone)

    def gone_through(self) -> int:
        """Purged messages up to this queue position are out of the index."""
        return int(self._tx.value("search_gone_cursor"))

    def drop_gone(self, through: int, limit: int) -> int:
        """Up to `limit` of the queue of purged messages, up to what the index has forgotten,
        dropped (the log's side); how many."""
        params = {"through": through, "limit": limit}
        self._tx.run("search_gone_shrink", params)
        return self._tx.run("search_gone_drop", params)

    def merge_more(self, pages: int) -> bool:
        """About `pages` pages of merging the index's segments; whether there was any to do
        (SQLite's FTS5 says so by the changes the merge made; PostgreSQL has none to do)."""
        tx = self._tx
        before = int(tx.value("total_changes"))
        tx.run("search_merge", {"pages": pages})
        return int(tx.value("total_changes")) - before >= 2

    def optimize(self) -> None:
        """Merge the index into one segment (after a bulk import)."""
        self._tx.run("search_optimize")

    def messages(
        self,
        query: SearchQuery,
        filters: SearchFilters,
        reader: Reader | None,
        *,
        order: SearchOrder,
        limit: int,
    ) -> list[tuple[Message, float]]:
        """The best `limit` matches the reader may see, with the backend's score."""
        kinds = message_kinds(filters.kind)
        params = {
            # Each store's statement reads its own form of the query.
            "match_fts": query.fts5(),
            "match_tsquery": query.tsquery(),
            "sender": filters.sender,
            "channel": filters.channel,
            "since": filters.since,
            "until": filters.until,
            "kinds": None if kinds is None else self._tx.array(kinds),
            "thread": filters.thread,
            "recent": int(order is SearchOrder.RECENT),
            "window": limit if order is SearchOrder.RECENT else RANK_WINDOW,
            "limit": limit,
            **_reader(reader),
        }
        return [(message(r), float(r["score"])) for r in self._tx.all("search_messages", params)]

    def thread(self, thread: str, reader: Reader | None, limit: int) -> list[Message]:
        """A thread's newest `limit` messages the reader may see, in seq order."""
        params = {"thread": thread, "limit": limit, **_reader(reader)}
        return [message(r) for r in reversed(self._tx.all("thread_messages", params))]
