"""What was said, read back: the transcript's pages, its newest seq, who sent how much, how much
waits. The console, the export, the transcript file and the hub's `/mcp` inbox read the room's
history through here, never through storage (DESIGN.md §2)."""

from __future__ import annotations

from caucus.domain.messages import Message, SystemSender
from caucus.domain.peers import Peer
from caucus.domain.visibility import Reader
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

SYSTEM_SENDERS = frozenset(s.value for s in SystemSender)


class History:
    def __init__(self, db: Engine, query_budget: float = 3.0) -> None:
        self._db = db
        self._budget = query_budget

    async def after(
        self, seq: int, limit: int, *, since: float | None = None, until: float | None = None
    ) -> list[Message]:
        """Routed messages after `seq`, in seq order, with who each reached; optionally only
        those sent at `since <= ts < until`."""
        return await self._db.read(lambda r: r.messages.after(seq, limit, since=since, until=until))

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
        agent's); the console's live count adds the same ones."""
        return await self._db.read(lambda r: r.messages.counts_by_sender())

    async def waiting(self) -> int:
        """Deliveries not yet acknowledged, over every inbox."""
        return await self._db.read(lambda r: r.inbox.pending_count())

    async def holder(self, name: str) -> Peer | None:
        """The peer holding `name` now (an inbox URI names it)."""
        return await self._db.read(lambda r: r.peers.holder(name))


def sent_by_an_agent(message: Message) -> bool:
    return message.sender not in SYSTEM_SENDERS
