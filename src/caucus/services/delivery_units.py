"""The units of work delivery writes (`storage.engine.Unit`): routing a message, a receive's
claim, and a direct send that claims for the receive it wakes, in one."""

from __future__ import annotations

from collections.abc import Callable

from caucus.domain.messages import AppendOutcome, ClaimRequest, ClaimResult, NewMessage
from caucus.domain.names import Target, TargetKind
from caucus.errors import CaucusError
from caucus.storage.repos import Repos


class Append:
    """Routing a message: a unit of work (`Inbox.append`). Direct messages with neither an
    idempotency key nor a reply_to may run together (`storage.engine.Together`)."""

    __slots__ = ("message", "since", "target", "together")

    def __init__(self, message: NewMessage, target: Target, since: float) -> None:
        self.message = message
        self.target = target
        self.since = since
        direct = target.kind is TargetKind.PEER
        plain = message.idempotency_key is None and message.reply_to is None
        self.together = "direct" if direct and plain else None

    def __call__(self, r: Repos) -> AppendOutcome:
        return r.inbox.append(self.message, self.target, self.since)

    @staticmethod
    def start_together(
        r: Repos, units: list[Append]
    ) -> Callable[[], list[AppendOutcome | CaucusError]]:
        return r.inbox.append_direct_many([(u.message, u.target.name) for u in units])


class Claim:
    """A receive's unit of work: acknowledge, hand out what is visible, and claim the tasks
    among it (receiving a task's item claims the task), in one transaction. Claims of
    different peers may run together (`storage.engine.Together`)."""

    __slots__ = ("request",)
    together = "claim"
    # Lost to a power cut, a claim only shows its deliveries (and its acknowledged batch)
    # again: at-least-once allows it, so it need not wait for the disk (ADR 0041).
    durable = False

    def __init__(self, request: ClaimRequest) -> None:
        self.request = request

    def __call__(self, r: Repos) -> ClaimResult:
        q = self.request
        return r.inbox.claim(
            q.peer_id,
            now=q.now,
            visibility=q.visibility,
            limit=q.limit,
            ack_through=q.ack_through,
            priority_only=q.priority_only,
        )

    @staticmethod
    def start_together(r: Repos, units: list[Claim]) -> Callable[[], list[ClaimResult]]:
        """One claim per peer in one go; a peer's further claims in the batch (two receives
        at once) each after it, alone. Every statement is sent before any answer is read (on
        PostgreSQL the batch may commit before then: `storage.postgres_writer`)."""
        first: dict[int, int] = {}
        for i, u in enumerate(units):
            first.setdefault(u.request.peer_id, i)
        fetch = r.inbox.claim_many([units[i].request for i in first.values()])
        after = [
            (i, r.inbox.claim_many([u.request]))
            for i, u in enumerate(units)
            if i not in first.values()
        ]

        def finish() -> list[ClaimResult]:
            results: dict[int, ClaimResult] = dict(zip(first.values(), fetch(), strict=True))
            for i, alone in after:
                (results[i],) = alone()
            return [results[i] for i in range(len(units))]

        return finish


class AppendClaim:
    """A direct send, then a claim for its recipient's parked receive, in one unit: the
    receive is answered by the commit that stores the message instead of a second one of its
    own (a batch, a commit and two thread hand-offs a message at low rates: issue 53). The
    claim is the receive's own (its identity, its batch size, its waiting acknowledgement),
    so it hands out only what that receive would have claimed on waking. Such units run
    together (`storage.engine.Together`): their sends in one statement, then their claims in
    one after it, which sees what it stored (ADR 0045)."""

    __slots__ = ("append", "claim")
    together = "direct_claim"

    def __init__(self, append: Append, claim: Claim) -> None:
        self.append = append
        self.claim = claim

    def __call__(self, r: Repos) -> tuple[AppendOutcome, ClaimResult]:
        outcome = self.append(r)
        return outcome, self.claim(r)

    @staticmethod
    def start_together(
        r: Repos, units: list[AppendClaim]
    ) -> Callable[[], list[tuple[AppendOutcome, ClaimResult] | CaucusError]]:
        """A send refused (its recipient gone) answers its error, as alone; the claim sent
        beside it is dropped, and what it handed out shows again after the visibility
        timeout, as a claim whose receive hung up (the hub sends one only to a parked
        receive of another peer, so this is rare)."""
        stored = Append.start_together(r, [u.append for u in units])
        claimed = Claim.start_together(r, [u.claim for u in units])

        def finish() -> list[tuple[AppendOutcome, ClaimResult] | CaucusError]:
            outcomes, claims = stored(), claimed()
            return [
                o if isinstance(o, CaucusError) else (o, c)
                for o, c in zip(outcomes, claims, strict=True)
            ]

        return finish
