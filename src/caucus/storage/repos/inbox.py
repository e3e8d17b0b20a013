"""The inbox: routing a message to its audience, and the deliveries each recipient claims,
acknowledges and gets again after a reconnect or a visibility timeout (ADR 0001)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from caucus.domain.channels import born_private, check_post
from caucus.domain.messages import (
    REPLY_FORMS,
    AppendOutcome,
    ClaimRequest,
    ClaimResult,
    Delivery,
    Message,
    NewMessage,
    Peek,
    Recipient,
    SendReceipt,
)
from caucus.domain.names import Target, TargetKind
from caucus.errors import CaucusError, ChannelClosed, Hint, InvalidRequest, NotFound
from caucus.storage.engine import Tx
from caucus.storage.repos.channels import Channels
from caucus.storage.repos.messages import Idempotency, Messages, message
from caucus.storage.repos.peers import Holder, Peers
from caucus.storage.repos.trips import Trips

_ALL = Target(TargetKind.ALL, "all")

PENDING_COUNTED = 100_000  # the queue depth counts this many deliveries at most


class Inbox:
    def __init__(
        self,
        tx: Tx,
        peers: Peers,
        channels: Channels,
        messages: Messages,
        idempotency: Idempotency,
        next_lease: Callable[[], int],
        trips: Trips,
        claim_tasks: Callable[[int, Iterable[Delivery], float], list[int]],
    ) -> None:
        self._tx = tx
        self._peers = peers
        self._channels = channels
        self.messages = messages
        self._idempotency = idempotency
        self._next_lease = next_lease
        self._trips = trips
        self._claim_tasks = claim_tasks  # `Tasks.claim_received`

    # --- routing ---------------------------------------------------------------------------
    def append(self, msg: NewMessage, target: Target, idem_since: float = 0.0) -> AppendOutcome:
        """Persist a message and queue it for its audience.

        Audience: the named active or reaped peer; every active or reaped peer but the sender
        for `all`; the channel's members but the sender (with `joins_channel`, the channel is
        created and the sender joins it; otherwise it must exist). A closed channel raises
        ChannelClosed. A repeat of (sender, idempotency_key) newer than `idem_since` returns
        the first outcome with `duplicate=True` and stores nothing. NotFound for an unknown
        peer or `reply_to`. Everything is checked before anything is written.
        """
        key = msg.idempotency_key
        if key is not None and msg.sender_id is not None:
            hit = self._idempotency.hit(msg.sender_id, key, idem_since)
            if hit is not None:
                return self._replay(hit)
        thread = msg.thread
        if msg.reply_to is not None:
            parent = self.messages.parent(msg.reply_to, msg.sender_id)
            if parent is None:
                raise NotFound(
                    f"reply_to {msg.reply_to!r} is not a message you can read: give {REPLY_FORMS}"
                )
            msg.reply_to, msg.reply_seq, msg.reply_sender = parent.id, parent.seq, parent.sender
            if thread is None:
                thread = parent.thread or parent.id
        if target.kind is TargetKind.PEER:
            outcome = self._trips.direct(self, msg, target.name, thread)
        else:
            sender_id = msg.sender_id if msg.sender_id is not None else -1
            if target.kind is TargetKind.ALL:
                joined, holders = False, self._peers.everyone_but(sender_id)
            else:
                joined = self._enter_channel(msg, target.name)
                holders = self._channels.members_but(target.name, sender_id)
            outcome = self.routed(msg, thread, holders, joined)
        if key is not None and msg.sender_id is not None:
            self._idempotency.record(msg.sender_id, key, msg.ts, outcome.receipt.seq)
        return outcome

    def routed(
        self, msg: NewMessage, thread: str | None, holders: list[Holder], joined: bool
    ) -> AppendOutcome:
        """Store `msg` for `holders` (its trips' way) and say who it reached."""
        if len(holders) == 1:  # the common case, a direct message
            ((pid, name, state),) = holders
            recipients = [Recipient(pid, name, state == "reaped")]
        else:
            recipients = sorted(
                (Recipient(h[0], h[1], h[2] == "reaped") for h in holders), key=lambda r: r.name
            )
        delivered_to = [r.name for r in recipients]
        missed = [r.name for r in recipients if r.reaped]
        seq = self._trips.store(self, msg, thread, recipients, delivered_to, missed)
        if recipients and self._tx.shared:
            self._tx.woke(r.peer_id for r in recipients)
        receipt = SendReceipt(msg.id, seq, delivered_to, missed)
        return AppendOutcome(receipt, _stored(msg, seq, thread), recipients, joined)

    def append_direct_many(
        self, messages: Sequence[tuple[NewMessage, str]]
    ) -> Callable[[], list[AppendOutcome | CaucusError]]:
        """Direct messages, each to the peer named beside it, as `append` stores them one
        after another; the returned function answers for each its outcome, or the error
        `append` raises for it (and nothing stored for it). On PostgreSQL, one statement for
        them all, sent before the function is called (`Tx.later`). None of them may carry an
        idempotency key or a reply_to (`append` looks those up first)."""
        if any(m.idempotency_key is not None or m.reply_to is not None for m, _ in messages):
            raise ValueError("append_direct_many takes no idempotency key or reply_to")
        return self._trips.directs(self, messages)

    def direct_statement(
        self, items: list[tuple[NewMessage, str, str | None]]
    ) -> Callable[[], list[AppendOutcome | CaucusError]]:
        """Direct messages (message, recipient's name, thread) stored by one statement that
        also finds their recipients, where each statement is a round trip to a server."""
        fetch = self.messages.insert_directs(items)

        def outcomes() -> list[AppendOutcome | CaucusError]:
            out: list[AppendOutcome | CaucusError] = []
            woken: list[int] = []
            for (msg, name, thread), found in zip(items, fetch(), strict=True):
                peer_id, reached, state, seq = found
                if peer_id is None or reached is None:
                    out.append(
                        NotFound(f"no peer named {name!r} is here", hint=Hint.LIST_PEERS, to=name)
                    )
                    continue
                if seq is None:
                    out.append(InvalidRequest("you cannot send a message to yourself", field="to"))
                    continue
                recipient = Recipient(peer_id, reached, state == "reaped")
                woken.append(peer_id)
                missed = [reached] if recipient.reaped else []
                receipt = SendReceipt(msg.id, seq, [reached], missed)
                out.append(AppendOutcome(receipt, _stored(msg, seq, thread), [recipient], False))
            if woken:
                self._tx.woke(woken)
            return out

        return outcomes

    def deliver(self, seq: int, recipients: list[Recipient], lane: int, ephemeral: int) -> None:
        if len(recipients) == 1:
            self._tx.run(
                "delivery_insert",
                {
                    "peer_id": recipients[0].peer_id,
                    "seq": seq,
                    "lane": lane,
                    "ephemeral": ephemeral,
                },
            )
        elif recipients:
            self._tx.many(
                "delivery_insert",
                [
                    {"peer_id": r.peer_id, "seq": seq, "lane": lane, "ephemeral": ephemeral}
                    for r in recipients
                ],
            )

    def to_peer(self, msg: NewMessage, name: str) -> AppendOutcome | None:
        """A notice to one peer, or None if it has left for good (the change that sends it
        still happens)."""
        try:
            return self.append(msg, Target(TargetKind.PEER, name))
        except NotFound:
            return None

    def to_everyone(self, msg: NewMessage) -> AppendOutcome:
        return self.append(msg, _ALL)

    def holder(self, name: str, sender_id: int) -> Holder:
        """The peer a direct message to `name` reaches (NotFound; InvalidRequest: oneself)."""
        holder = self._peers.recipient(name)
        if holder is None:
            raise NotFound(f"no peer named {name!r} is here", hint=Hint.LIST_PEERS, to=name)
        if holder[0] == sender_id:
            raise InvalidRequest("you cannot send a message to yourself", field="to")
        return holder

    def _enter_channel(self, msg: NewMessage, channel: str) -> bool:
        closed = self._channels.closed(channel)
        if closed is None and not msg.joins_channel:
            raise NotFound(
                f"there is no channel {channel}", hint=Hint.LIST_CHANNELS, channel=channel
            )
        if closed:
            raise ChannelClosed(f"the operator closed {channel}", channel=channel)
        if closed is None:
            self._channels.ensure(channel, msg.ts, private=born_private(channel, False))
        elif msg.sender_id is not None and self._channels.private(channel):
            member = self._channels.is_member(channel, msg.sender_id)
            check_post(channel, private=True, member=member)
        if msg.sender_id is not None and msg.joins_channel:
            return self._channels.add_member(channel, msg.sender_id, msg.ts)
        return False

    def _replay(self, seq: int) -> AppendOutcome:
        found = self.messages.by_seq(seq)
        assert found is not None  # an idempotency key keeps its message from retention
        stored, delivered_to, missed = found
        receipt = SendReceipt(stored.id, stored.seq, delivered_to, missed, duplicate=True)
        return AppendOutcome(receipt, stored, [], False)

    # --- a recipient's side ----------------------------------------------------------------
    def claim(
        self,
        peer_id: int,
        *,
        now: float,
        visibility: float,
        limit: int,
        ack_through: int | None,
        priority_only: bool = False,
    ) -> ClaimResult:
        """Acknowledge (see `ack`), then hand out up to `limit` visible deliveries in seq order,
        hiding them for `visibility` seconds and counting the attempt. When there is nothing to
        hand out, `next_visible_at` says when an in-flight delivery becomes visible again.
        `priority_only` (a paused recipient) hands out only the priority lane. Receiving a
        task's item claims the task (`Tasks.claim_received`): `claimed_for` names the senders
        of the tasks it claimed, woken with the commit."""
        request = ClaimRequest(peer_id, now, visibility, limit, ack_through, priority_only)
        return self._trips.claim(self, request)

    def claim_one(self, request: ClaimRequest) -> ClaimResult:
        """`claim` as simple statements, one after another."""
        result = self._claim_deliveries(request)
        if result.deliveries:
            result.claimed_for = self._claim_tasks(request.peer_id, result.deliveries, request.now)
        return result

    def _claim_deliveries(self, request: ClaimRequest) -> ClaimResult:
        peer_id, now, ack_through = request.peer_id, request.now, request.ack_through
        visibility, limit, priority_only = request.visibility, request.limit, request.priority_only
        acked = self.ack(peer_id, through=ack_through) if ack_through is not None else 0
        visible, later = (
            ("deliveries_visible_priority", "deliveries_next_visible_priority")
            if priority_only
            else ("deliveries_visible", "deliveries_next_visible")
        )
        params = {"peer_id": peer_id, "now": now, "limit": limit}
        rows = self._tx.all(visible, params)
        if not rows:
            return ClaimResult([], acked, self._tx.value(later, params))
        lease = self._next_lease()
        hidden_until = now + visibility
        self._tx.many(
            "delivery_hand_out",
            [
                {"visible_at": hidden_until, "lease": lease, "peer_id": peer_id, "seq": r["seq"]}
                for r in rows
            ],
        )
        handed = [Delivery(message(r), r["delivery_count"] + 1) for r in rows]
        if len(rows) < limit:  # all that was visible: the next to show is known (these included)
            return ClaimResult(handed, acked, self._tx.value(later, params), drained=True)
        return ClaimResult(handed, acked, None)

    def claim_many(self, requests: Sequence[ClaimRequest]) -> Callable[[], list[ClaimResult]]:
        """Several peers' claims (one each at most), each as `claim` makes it; the returned
        function answers for each in order. On PostgreSQL, one statement for them all, sent
        before the function is called (`Tx.later`)."""
        if len({r.peer_id for r in requests}) != len(requests):
            raise ValueError("claim_many takes one claim per peer")
        return self._trips.claims(self, requests)

    def claim_statement(self, requests: Sequence[ClaimRequest]) -> Callable[[], list[ClaimResult]]:
        """Acknowledge and claim for several peers as one statement, where each statement is a
        round trip to a server. Every peer gets one row at least, carrying what it
        acknowledged and when its next hidden delivery shows; a row with no message says
        nothing was handed out to it. The tasks whose items it hands out are claimed by the
        same statement (as `Tasks.claim_received` claims them), their senders on the row."""
        tx = self._tx
        params = {
            "peer_ids": tx.array([r.peer_id for r in requests]),
            "throughs": tx.array([r.ack_through for r in requests]),
            "nows": tx.array([r.now for r in requests]),
            "limits": tx.array([r.limit for r in requests]),
            "priority": tx.array([int(r.priority_only) for r in requests]),
            "visible_ats": tx.array([r.now + r.visibility for r in requests]),
            "leases": tx.array([self._next_lease() for _ in requests]),
        }
        fetch = tx.later("deliveries_ack_claim_many", params)

        def results() -> list[ClaimResult]:
            found: dict[int, ClaimResult] = {}
            for row in fetch():
                claimant = row["claimant"]
                result = found.get(claimant)
                if result is None:
                    result = found[claimant] = ClaimResult(
                        [], int(row["acked"]), row["next_visible"], drained=bool(row["drained"])
                    )
                    result.claimed_for = [int(s) for s in row["task_senders"] or ()]
                if row["seq"] is not None:
                    result.deliveries.append(Delivery(message(row), row["delivery_count"] + 1))
            senders = [s for result in found.values() for s in result.claimed_for]
            if senders:
                tx.woke(senders)
            return [found[r.peer_id] for r in requests]

        return results

    def ack(self, peer_id: int, *, seqs: Iterable[int] = (), through: int | None = None) -> int:
        """Delete handed-out deliveries: exactly `seqs`, and/or those of the batch that held
        `through` with seq ≤ `through`. Never acknowledges a delivery not yet handed out."""
        count = 0
        wanted = list(seqs)
        if wanted:
            count += self._tx.many("delivery_ack", [{"peer_id": peer_id, "seq": s} for s in wanted])
        if through is not None:
            count += self._tx.run(
                "deliveries_ack_through", {"peer_id": peer_id, "through": through}
            )
        return count

    def release(self, peer_id: int, now: float) -> int:
        """A reconnect: drop ephemeral deliveries (interrupt, reset) and make every other
        handed-out, unacknowledged one visible again. Returns how many were made visible."""
        self._tx.run("deliveries_drop_ephemeral", {"peer_id": peer_id})
        return self._tx.run("deliveries_release", {"peer_id": peer_id, "now": now})

    def peek(self, peer_id: int) -> Peek:
        pending = int(self._tx.value("deliveries_count_of_peer", {"peer_id": peer_id}))
        row = self._tx.one("delivery_newest_of_peer", {"peer_id": peer_id})
        return Peek(pending, message(row) if row is not None else None)

    def pending_count(self, cap: int = PENDING_COUNTED) -> int:
        """Deliveries not yet acknowledged, across every peer (the total queue depth), counted
        up to `cap`."""
        return int(self._tx.value("deliveries_count", {"cap": cap}))

    def forget_peer(self, peer_id: int) -> None:
        self._tx.run("deliveries_of_peer_delete", {"peer_id": peer_id})

    def queue_announcements(self, peer_id: int, since: float) -> None:
        """A newcomer gets the announcements made since `since`, once."""
        self._tx.run("deliveries_of_announcements_since", {"peer_id": peer_id, "since": since})


def _stored(msg: NewMessage, seq: int, thread: str | None) -> Message:
    return Message(
        seq=seq,
        id=msg.id,
        ts=msg.ts,
        sender=msg.sender,
        to=msg.to,
        kind=msg.kind,
        content=msg.content,
        meta=msg.meta,
        thread=thread,
        reply_to=msg.reply_to,
        reply_seq=msg.reply_seq,
        reply_sender=msg.reply_sender,
    )
