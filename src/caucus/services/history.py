"""What was said, read back: the transcript's pages, its newest seq, who sent how much, how much
waits. The console, the export, the transcript file and the hub's `/mcp` inbox read the room's
history through here, never through storage (DESIGN.md §2)."""

from __future__ import annotations

from caucus.clock import Clock
from caucus.domain.messages import Message, SystemSender
from caucus.domain.names import check_channel_name, check_peer_name
from caucus.domain.peers import Peer
from caucus.domain.search import SearchQuery
from caucus.domain.slices import Slices
from caucus.domain.visibility import Reader
from caucus.errors import InvalidRequest
from caucus.services.search import index_caught_up
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

SYSTEM_SENDERS = frozenset(s.value for s in SystemSender)
COUNTS_KEY = "sent_counts"  # room state: {"upto": the last seq the sent counts hold}
COUNT_SLICE = 50_000  # messages counted per unit of work at most
MAX_PAGE = 500  # messages in one page of the operator's transcript


def count_slice(r: Repos, size: int) -> int:
    """A slice of the sent counts, under the state row's lock (processes take turns); how
    many message numbers it walked."""
    upto = int(r.room.locked(COUNTS_KEY, {"upto": 0})["upto"])
    through = r.messages.count_more(upto, size)
    if through is None:
        return 0
    r.room.set(COUNTS_KEY, {"upto": through})
    return through - upto


def _walked(walked: int) -> int:
    return walked


class History:
    def __init__(self, db: Engine, clock: Clock, query_budget: float = 3.0) -> None:
        self._db = db
        self._budget = query_budget
        self._slices = Slices(clock.monotonic, most=COUNT_SLICE, least=100)

    async def after(
        self, seq: int, limit: int, *, since: float | None = None, until: float | None = None
    ) -> list[Message]:
        """Routed messages after `seq`, in seq order, with who each reached; optionally only
        those sent at `since <= ts < until`."""
        return await self._db.read(lambda r: r.messages.after(seq, limit, since=since, until=until))

    async def page(
        self,
        *,
        before: int | None = None,
        limit: int = 200,
        peer: str | None = None,
        channel: str | None = None,
        kind: str | None = None,
        text: str | None = None,
    ) -> tuple[list[Message], bool]:
        """The operator's view back in time: the newest `limit` messages before seq `before`,
        optionally from, to or delivered to `peer`, in `channel`, of `kind`, or holding the
        words of `text` (through the search index, as search finds them); and whether older
        ones match too."""
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidRequest(f"limit is 1-{MAX_PAGE}", field="limit")
        if peer is not None and peer not in SYSTEM_SENDERS:
            peer = check_peer_name(peer)
        if channel is not None:
            channel = check_channel_name(channel)
        query = SearchQuery.parse(text) if text else None
        if query is not None:
            await index_caught_up(self._db)

        def read(r: Repos) -> list[Message]:
            return r.messages.before(
                before, limit + 1, peer=peer, channel=channel, kind=kind or None, query=query
            )

        if query is not None:  # through the index: a costly read, with its budget
            found = await self._db.query(read, budget=self._budget)
        else:
            found = await self._db.read(read)
        more = len(found) > limit
        return (found[1:] if more else found), more

    async def readable_after(
        self,
        peer: Peer,
        seq: int,
        limit: int,
        *,
        since: float | None = None,
        until: float | None = None,
    ) -> list[Message]:
        """As `after`, only what `peer` may read (`domain.visibility`): a costly read, within
        its budget (`Engine.query`)."""
        reader = Reader(peer.id)
        return await self._db.query(
            lambda r: r.messages.readable_after(seq, limit, reader, since=since, until=until),
            budget=self._budget,
        )

    async def recent(self, count: int) -> list[Message]:
        """The newest `count` messages, oldest first."""

        def read(r: Repos) -> list[Message]:  # one unit: the last seq and the page after it
            return r.messages.after(max(0, r.messages.last_seq() - count), count)

        return await self._db.read(read)

    async def last_seq(self) -> int:
        return await self._db.read(lambda r: r.messages.last_seq())

    async def sent_by(self) -> dict[str, int]:
        """Messages each agent sent, every kind (the operator's and the hub's are not an
        agent's), those retention dropped too; the console's live count adds the same
        ones."""

        def read(r: Repos) -> dict[str, int]:
            upto = int(r.room.get(COUNTS_KEY, {"upto": 0})["upto"])
            return r.messages.counts_by_sender(upto)

        return await self._db.read(read)

    async def count_more(self) -> int:
        """Take the messages stored since into the sent counts, a slice per unit of work, for
        at most this round's budget (`domain.slices`); how many."""
        return await self._slices.drain(self._db.write, count_slice, _walked)

    async def waiting(self) -> int:
        """Deliveries not yet acknowledged, over every inbox."""
        return await self._db.read(lambda r: r.inbox.pending_count())

    async def holder(self, name: str) -> Peer | None:
        """The peer holding `name` now (an inbox URI names it)."""
        return await self._db.read(lambda r: r.peers.holder(name))


def sent_by_an_agent(message: Message) -> bool:
    return message.sender not in SYSTEM_SENDERS
