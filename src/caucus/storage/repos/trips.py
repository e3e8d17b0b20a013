"""How the inbox's hot writes reach the database: the one choice a backend makes for the
repositories (its engine passes one when it composes `Repos`).

An embedded database (SQLite) answers a statement as a function call does, so the inbox runs
one simple statement per row: `ROW_BY_ROW`. A server (PostgreSQL) costs a round trip per
statement, so each send and each batch of claims is one statement that finds, stores and
answers at once: `ONE_STATEMENT`. Both give the same outcomes; the contract suite runs every
repository on both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from caucus.domain.messages import AppendOutcome, ClaimRequest, ClaimResult, NewMessage, Recipient
from caucus.domain.names import Target, TargetKind
from caucus.domain.visibility import BROADCAST
from caucus.errors import CaucusError

if TYPE_CHECKING:
    from caucus.storage.repos.inbox import Inbox

Outcomes = Callable[[], list[AppendOutcome | CaucusError]]


class Trips(Protocol):
    def direct(self, inbox: Inbox, msg: NewMessage, name: str, thread: str | None) -> AppendOutcome:
        """Route `msg` to the peer `name` (NotFound, or InvalidRequest to oneself)."""
        ...

    def directs(self, inbox: Inbox, messages: Sequence[tuple[NewMessage, str]]) -> Outcomes:
        """Direct messages, each with its outcome or its error."""
        ...

    def store(
        self,
        inbox: Inbox,
        msg: NewMessage,
        thread: str | None,
        recipients: list[Recipient],
        delivered_to: list[str],
        missed: list[str],
    ) -> int:
        """Store a routed message and its deliveries; its seq."""
        ...

    def claim(self, inbox: Inbox, request: ClaimRequest) -> ClaimResult:
        """Acknowledge and claim for one peer."""
        ...

    def claims(
        self, inbox: Inbox, requests: Sequence[ClaimRequest]
    ) -> Callable[[], list[ClaimResult]]:
        """Acknowledge and claim for each request (one per peer), in order."""
        ...


def direct_to(msg: NewMessage, recipients: list[Recipient]) -> int | None:
    """The identity a direct message reached (`domain.visibility`: who may read it); None
    for a broadcast or a channel's message."""
    if len(recipients) != 1 or msg.to == BROADCAST or msg.to.startswith("#"):
        return None
    return recipients[0].peer_id


class RowByRow:
    def direct(self, inbox: Inbox, msg: NewMessage, name: str, thread: str | None) -> AppendOutcome:
        sender_id = msg.sender_id if msg.sender_id is not None else -1
        return inbox.routed(msg, thread, [inbox.holder(name, sender_id)], joined=False)

    def directs(self, inbox: Inbox, messages: Sequence[tuple[NewMessage, str]]) -> Outcomes:
        out: list[AppendOutcome | CaucusError] = []
        for msg, name in messages:
            try:
                out.append(inbox.append(msg, Target(TargetKind.PEER, name)))
            except CaucusError as exc:
                out.append(exc)
        return lambda: out

    def store(
        self,
        inbox: Inbox,
        msg: NewMessage,
        thread: str | None,
        recipients: list[Recipient],
        delivered_to: list[str],
        missed: list[str],
    ) -> int:
        seq = inbox.messages.insert(msg, thread, delivered_to, missed, direct_to(msg, recipients))
        inbox.deliver(seq, recipients, int(msg.lane), int(msg.ephemeral))
        return seq

    def claim(self, inbox: Inbox, request: ClaimRequest) -> ClaimResult:
        return inbox.claim_one(request)

    def claims(
        self, inbox: Inbox, requests: Sequence[ClaimRequest]
    ) -> Callable[[], list[ClaimResult]]:
        results = [inbox.claim_one(r) for r in requests]
        return lambda: results


class OneStatement:
    def direct(self, inbox: Inbox, msg: NewMessage, name: str, thread: str | None) -> AppendOutcome:
        (outcome,) = inbox.direct_statement([(msg, name, thread)])()
        if isinstance(outcome, CaucusError):
            raise outcome
        return outcome

    def directs(self, inbox: Inbox, messages: Sequence[tuple[NewMessage, str]]) -> Outcomes:
        return inbox.direct_statement([(m, name, m.thread) for m, name in messages])

    def store(
        self,
        inbox: Inbox,
        msg: NewMessage,
        thread: str | None,
        recipients: list[Recipient],
        delivered_to: list[str],
        missed: list[str],
    ) -> int:
        ids = [r.peer_id for r in recipients]
        return inbox.messages.insert_routed(
            msg,
            thread,
            delivered_to,
            missed,
            ids,
            direct_to(msg, recipients),
            lane=int(msg.lane),
            ephemeral=int(msg.ephemeral),
        )

    def claim(self, inbox: Inbox, request: ClaimRequest) -> ClaimResult:
        return inbox.claim_statement([request])()[0]

    def claims(
        self, inbox: Inbox, requests: Sequence[ClaimRequest]
    ) -> Callable[[], list[ClaimResult]]:
        return inbox.claim_statement(requests)


ROW_BY_ROW = RowByRow()
ONE_STATEMENT = OneStatement()
