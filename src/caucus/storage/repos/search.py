"""Full-text search over the message log (`domain.search`), and a thread's messages.

On SQLite the FTS5 index follows the log in batches (`index_more`); PostgreSQL keeps its GIN
index as each message is stored, and its statements say there is nothing to follow.
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
        """Index the next `limit` messages at most; how many."""
        tx = self._tx
        upto = int(tx.value("search_upto"))
        through = tx.value("search_next_upto", {"upto": upto, "limit": limit})
        if through is None:
            return 0
        done = tx.run("search_index", {"upto": upto, "through": through})
        tx.run("search_mark", {"upto": through})
        return done

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
