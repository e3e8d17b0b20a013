"""What a caller holds open (issue 47, ADR 0033): parked receives and peeks, watches, A2A
streams and a blocking send's wait, MCP sessions, an agent's export, the operator's live feed.

Each takes a hold for as long as it stays open. An agent holds at most
`streams_per_identity_max` at once, and all agents together at most the room's cap, which is
kept below the connection cap so the operator and the observer always find room: their
holds count against a cap of their own per role, never the room's. A refused open is
`CapStreams` (429, `cap` naming which). When an agent leaves, is kicked, forgotten or goes
offline, everything it held ends at once (`ended` is set; the holder stops and answers), and
a hold is given back however its request ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum

from caucus.domain.control import Role
from caucus.errors import CapStreams, Hint

Owner = int | Role  # an agent's peer id, or the operator's or observer's role
RETRY_AFTER = 5.0  # seconds a refused caller is told to wait


class HoldKind(StrEnum):
    RECEIVE = "receive"  # a parked receive, a watch, an MCP listen
    PEEK = "peek"  # a peek waiting for the inbox to change
    A2A = "a2a"  # an A2A stream, or a blocking send waiting for the outcome
    MCP = "mcp"  # a joined MCP session (its stream and its calls)
    FEED = "feed"  # the operator's live feed
    EXPORT = "export"  # an agent's download of what it may read


class Hold:
    """One open thing. `ended` is done once its holder is gone: the holder stops."""

    __slots__ = ("_ended", "_holds", "kind", "owner")

    def __init__(self, holds: Holds, owner: Owner, kind: HoldKind) -> None:
        self._holds = holds
        self.owner = owner
        self.kind = kind
        self._ended: asyncio.Future[None] | None = None

    @property
    def ended(self) -> asyncio.Future[None]:
        """Done when the holder left, was kicked, forgotten or went offline."""
        if self._ended is None:
            self._ended = asyncio.get_running_loop().create_future()
        return self._ended

    @property
    def over(self) -> bool:
        return self._ended is not None and self._ended.done()

    def end(self) -> None:
        fut = self.ended
        if not fut.done():
            fut.set_result(None)

    def release(self) -> None:
        self._holds.release(self)


class Holds:
    def __init__(self, *, per_identity: int, room: int, per_viewer: int) -> None:
        self.per_identity = per_identity
        self.room = room
        self.per_viewer = per_viewer
        # An owner's one hold as itself, a set only from the second: most hold one (a parked
        # receive), and 10,000 parked agents would each carry an empty set's 200 bytes.
        self._held: dict[Owner, Hold | set[Hold]] = {}
        self._agents = 0  # holds of agents, the room's count

    def _mine(self, owner: Owner) -> set[Hold] | tuple[Hold, ...]:
        mine = self._held.get(owner)
        if mine is None:
            return ()
        return (mine,) if isinstance(mine, Hold) else mine

    def take(self, owner: Owner, kind: HoldKind) -> Hold:
        """A hold for `owner`, or `CapStreams` if it holds as many as it may or the room
        is full (agents only: the operator's room is its own)."""
        count = len(self._mine(owner))
        agent = isinstance(owner, int)
        cap = self.per_identity if agent else self.per_viewer
        if count >= cap:
            raise CapStreams(
                f"you hold {count} streams and waits open (at most {cap}): close one, or wait "
                "for one to end",
                cap="streams_per_identity",
                limit=cap,
                retry_after=RETRY_AFTER,
                hint=Hint.RETRY_LATER,
            )
        if agent and self._agents >= self.room:
            raise CapStreams(
                f"the room holds {self._agents} streams and waits open, its limit: retry later",
                cap="streams_room",
                limit=self.room,
                retry_after=RETRY_AFTER,
                hint=Hint.RETRY_LATER,
            )
        hold = Hold(self, owner, kind)
        mine = self._held.get(owner)
        if mine is None:
            self._held[owner] = hold
        elif isinstance(mine, Hold):
            self._held[owner] = {mine, hold}
        else:
            mine.add(hold)
        if agent:
            self._agents += 1
        return hold

    def release(self, hold: Hold) -> None:
        mine = self._held.get(hold.owner)
        if mine is hold:
            del self._held[hold.owner]
        elif isinstance(mine, set) and hold in mine:
            mine.discard(hold)
            if len(mine) == 1:
                self._held[hold.owner] = next(iter(mine))
        else:
            return
        if isinstance(hold.owner, int):
            self._agents -= 1

    @contextmanager
    def holding(self, owner: Owner, kind: HoldKind) -> Iterator[Hold]:
        hold = self.take(owner, kind)
        try:
            yield hold
        finally:
            hold.release()

    def end(self, peer_id: int, *, keep: frozenset[HoldKind] = frozenset()) -> int:
        """The agent is gone: everything it holds (but the kinds in `keep`) ends now, and is
        given back as its holder stops. How many ended."""
        ended = [h for h in self._mine(peer_id) if h.kind not in keep]
        for hold in ended:
            hold.end()
        return len(ended)

    def count(self, owner: Owner, kind: HoldKind | None = None) -> int:
        return sum(1 for h in self._mine(owner) if kind is None or h.kind is kind)

    @property
    def agents(self) -> int:
        """Holds of agents open now (the room's count)."""
        return self._agents

    def holders(self) -> set[int]:
        """Agents holding something open now: they are present (not reaped for silence)."""
        return {o for o in self._held if isinstance(o, int)}
