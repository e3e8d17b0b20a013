"""Sending, receiving and acknowledging: durable, at-least-once, in seq order.

Concurrent receives on one identity: the newest wins. A receive that is parked when another one
arrives for the same identity returns at once with no messages and `superseded: true`; it had
claimed nothing, so nothing is split or lost (unless a send was at that moment claiming for it,
ADR 0044: then it answers with what that send claimed, and the newer one finds the rest).
A batch already handed out is never taken back:
what its receiver does not acknowledge comes back after the visibility timeout, or at once when the
identity registers again (a reconnect).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.buckets import TokenBuckets
from caucus.domain.control import Room, RoomMode
from caucus.domain.events import ChannelJoined, MessageRouted
from caucus.domain.messages import (
    AppendOutcome,
    ClaimRequest,
    ClaimResult,
    Delivery,
    Lane,
    MessageKind,
    NewMessage,
    Peek,
    SendReceipt,
)
from caucus.domain.names import (
    Target,
    parse_target,
)
from caucus.domain.peers import Peer
from caucus.errors import InvalidRequest, PayloadTooLarge, RoomStopped
from caucus.ids import MessageIds
from caucus.services.delivery_units import Append, AppendClaim, Claim
from caucus.services.holds import Hold, HoldKind, Holds
from caucus.services.notifier import Notifier, Waiter
from caucus.services.registry import Registry
from caucus.storage.engine import Engine

MAX_THREAD = 128
MAX_IDEMPOTENCY_KEY = 200
MAX_ACK_SEQS = 1000


@dataclass(frozen=True, slots=True)
class ReceiveResult:
    deliveries: list[Delivery]
    acked: int
    superseded: bool = False
    displaced_watcher: bool = False  # this receive took the place of the peer's watcher


@dataclass(slots=True)
class _Poll:
    """One receive's state while it claims and parks (`DeliveryService.receive`)."""

    peer: Peer
    waiter: Waiter
    batch: int
    deadline: float  # on the event loop's clock
    pending_ack: int | None  # acknowledged through this seq, not yet stored
    on_park: Callable[[], object] | None
    defer_ack: bool  # the acknowledgement may wait for the next claim
    hold: Hold | None = None
    # A send's claim for this receive, in flight with the send (`AppendClaim`); its result,
    # or None if it was not made.
    ahead: asyncio.Future[ClaimResult | None] | None = None

    @property
    def displaced(self) -> bool:
        return self.waiter.displaced_watcher


class DeliveryService:
    def __init__(
        self,
        db: Engine,
        notifier: Notifier,
        registry: Registry,
        clock: Clock,
        settings: Settings,
        room: Room,
        holds: Holds,
    ) -> None:
        self._db = db
        self._room = room
        self._holds = holds
        self._notifier = notifier
        self._registry = registry
        self._clock = clock
        self._settings = settings
        self._ids = MessageIds()
        # The talking stick's gate: raises FloorHeld for a scope another peer holds.
        self.floor_gate: Callable[[Peer, Target], None] | None = None
        self._background: set[asyncio.Task[int]] = set()
        # Receives parked now, by their peer's name: a direct send to one claims for it as it
        # is stored (`AppendClaim`): one commit, not two. The name only finds the receive; the
        # claim is made for its identity.
        self._parked: dict[str, _Poll] = {}
        self.send_budget = TokenBuckets(
            clock, capacity=room.rate.capacity, refill=room.rate.refill, what="sends"
        )

    async def send(
        self,
        peer: Peer,
        *,
        to: str,
        content: str,
        thread: str | None = None,
        reply_to: str | None = None,
        meta: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> SendReceipt:
        target = parse_target(to)
        limit = self._settings.max_content_chars
        if not content:
            raise InvalidRequest("content is empty: say something", field="content")
        if len(content) > limit:
            raise PayloadTooLarge(
                f"content is {len(content)} characters; the limit is {limit}: split it or "
                "send a summary",
                field="content",
                limit=limit,
            )
        if thread is not None and not 0 < len(thread) <= MAX_THREAD:
            raise InvalidRequest(f"thread is 1-{MAX_THREAD} characters", field="thread")
        if idempotency_key is not None and not 0 < len(idempotency_key) <= MAX_IDEMPOTENCY_KEY:
            raise InvalidRequest(
                f"idempotency_key is 1-{MAX_IDEMPOTENCY_KEY} characters", field="idempotency_key"
            )
        self.check_can_send(peer)
        if self.floor_gate is not None:
            self.floor_gate(peer, target)
        outcome = await self.route(
            self.compose(
                peer,
                target.name,
                MessageKind.CHAT,
                content,
                meta=meta,
                thread=thread,
                reply_to=reply_to,
                idempotency_key=idempotency_key,
            ),
            target,
        )
        return outcome.receipt

    @property
    def notifier(self) -> Notifier:
        return self._notifier

    def compose(
        self,
        sender: Peer | str,
        to: str,
        kind: str,
        content: str,
        *,
        meta: dict[str, Any] | None = None,
        thread: str | None = None,
        reply_to: str | None = None,
        idempotency_key: str | None = None,
        lane: Lane = Lane.CHATTER,
        ephemeral: bool = False,
        joins_channel: bool = True,
    ) -> NewMessage:
        """The one way a service makes a message: a fresh id, the hub's time, and the sender as
        storage keeps it (a peer's row, or a system name such as `SystemSender.HUB` with none)."""
        return NewMessage(
            id=self._ids.next(),
            ts=self._clock.now(),
            sender_id=sender.id if isinstance(sender, Peer) else None,
            sender=sender.name if isinstance(sender, Peer) else sender,
            to=to,
            kind=kind,
            content=content,
            meta=meta,
            thread=thread,
            reply_to=reply_to,
            idempotency_key=idempotency_key,
            lane=lane,
            ephemeral=ephemeral,
            joins_channel=joins_channel,
        )

    def check_can_send(self, peer: Peer) -> None:
        """The room is not stopped and the peer's send budget allows one more."""
        if self._room.mode is RoomMode.STOPPED:
            raise RoomStopped("the operator stopped the room: sends are refused until it resumes")
        self.send_budget.take(peer.id)

    async def route(self, message: NewMessage, target: Target) -> AppendOutcome:
        """Store a message durably, queue it for its audience, wake them and tell subscribers.
        The one way every message (agent, operator, control) enters the hub."""
        since = message.ts - self._settings.idempotency_window
        append = Append(message, target, since)
        poll = self._parked.get(target.name) if append.together == "direct" else None
        # Not for a peer's send to itself: refused, its claim would hide what it handed out.
        if poll is not None and poll.ahead is None and poll.peer.id != message.sender_id:
            return await self._claiming(append, poll)
        outcome: AppendOutcome = await self._db.write(append)
        if not outcome.receipt.duplicate:
            self.after_append(outcome)
        return outcome

    async def _claiming(self, append: Append, poll: _Poll) -> AppendOutcome:
        """Store a direct message and claim for its recipient's parked receive in the same
        unit; the receive, woken, answers with that claim instead of making one."""
        ahead = poll.ahead = asyncio.get_running_loop().create_future()
        claim = Claim(self._request(poll.peer, self._clock.now(), poll.batch, poll.pending_ack))
        try:
            outcome, claimed = await self._db.write(AppendClaim(append, claim))
        except BaseException:
            ahead.set_result(None)  # the receive claims for itself, as it would have
            raise
        ahead.set_result(claimed)
        self.after_append(outcome)
        # The wake just given was for what the claim took: the receive need not claim again
        # for it (a send stored after the claim wakes it anew, after this).
        poll.waiter.signalled = False
        if claimed.claimed_for:
            self._db.wake(claimed.claimed_for)
        return outcome

    def after_append(self, outcome: AppendOutcome) -> None:
        """Wake the recipients of a stored message and tell subscribers it was routed."""
        message = outcome.message
        ids = tuple(r.peer_id for r in outcome.recipients)
        self._db.wake(ids)
        if outcome.joined_channel:
            self._notifier.emit(ChannelJoined(message.ts, message.to, message.sender))
        if self._notifier.has_subscribers:
            self._notifier.emit(
                MessageRouted(message.ts, message, tuple(outcome.receipt.delivered_to), ids)
            )

    async def receive(
        self,
        peer: Peer,
        *,
        wait: float,
        ack_through: int | None = None,
        limit: int | None = None,
        on_park: Callable[[], object] | None = None,
        watcher: bool = False,
    ) -> ReceiveResult:
        """Long-poll for pending deliveries; returns as soon as there is at least one.

        `on_park` is called once, the first time the call has to wait (a transport uses it to
        start watching for its client hanging up only when that can matter). A `watcher` (the
        `caucus watch` process) gives way to every other receive: it answers `superseded` at
        once when one holds the slot or displaced it since its last call.
        """
        poll = self._listen(peer, wait, limit, ack_through, on_park, watcher)
        if poll is None:  # a watcher that was displaced: it claims nothing
            return ReceiveResult([], 0, superseded=True)
        # One coroutine from here to the end, parked or not: a receive that waits holds one
        # frame (10,000 parked agents, `benchmarks/parked.py`); what it decides is in helpers.
        waiter, notifier, acked = poll.waiter, self._notifier, 0
        try:
            while True:
                claiming = self._next_claim(poll)
                if claiming is None:
                    idle = notifier.idle_until(peer.id)
                else:
                    result = await claiming
                    poll.pending_ack = None  # it rode on that claim
                    acked += result.acked
                    if result.deliveries:
                        if result.drained and not waiter.signalled:
                            # The next receive parks without a claim (its ack waits for one).
                            notifier.set_idle(peer.id, result.next_visible_at)
                        return ReceiveResult(result.deliveries, acked, False, poll.displaced)
                    notifier.set_idle(peer.id, result.next_visible_at)
                    idle = result.next_visible_at
                    del result  # not held while it parks
                remaining = self._parking(poll, idle)
                if remaining is None:
                    break
                await self._park(poll, remaining)
                if poll.ahead is None and (waiter.superseded or notifier.closing):
                    break
            if poll.pending_ack is not None:
                acked += await self._ack(peer.id, (), poll.pending_ack)
                poll.pending_ack = None
            return ReceiveResult([], acked, waiter.superseded, poll.displaced)
        finally:
            self._unlisten(poll)

    def _listen(
        self,
        peer: Peer,
        wait: float,
        limit: int | None,
        ack_through: int | None,
        on_park: Callable[[], object] | None,
        watcher: bool,
    ) -> _Poll | None:
        """A receive's state, its caller now the one listener of `peer` (None: a watcher that
        gives way). While nothing is claimable the acknowledgement waits, to ride on the next
        claim: one storage operation per batch instead of two; it is applied before the
        receive returns, long before the acknowledged batch could become visible again."""
        wait = min(max(wait, 0.0), self._settings.receive_timeout_max)
        if limit is not None and limit < 1:
            raise InvalidRequest("limit must be at least 1", field="limit")
        batch = min(limit or self._settings.receive_batch_max, self._settings.receive_batch_max)
        waiter = self._notifier.listen(peer.id, watcher=watcher)
        if waiter.superseded:
            self._registry.touch(peer)
            return None
        deadline = asyncio.get_running_loop().time() + wait
        defer = self._settings.visibility_timeout > self._settings.receive_timeout_max + 5
        return _Poll(peer, waiter, batch, deadline, ack_through, on_park, defer)

    def _parking(self, poll: _Poll, idle: float | None) -> float | None:
        """How long the receive parks now (None: it ends): until its deadline, or just past
        the next delivery's visibility. The first park takes a hold (an open wait, counted
        against the caps) and tells the transport (`on_park`)."""
        if poll.waiter.superseded or poll.peer.state.terminal or self._notifier.closing:
            return None
        remaining = poll.deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            return None
        if idle is not None:
            remaining = min(remaining, max(idle - self._clock.now(), 0.0) + 0.005)
        if poll.hold is None:
            poll.hold = self._holds.take(poll.peer.id, HoldKind.RECEIVE)
        if poll.on_park is not None:
            poll.on_park()
            poll.on_park = None
        return remaining

    def _next_claim(self, poll: _Poll) -> Awaitable[ClaimResult] | None:
        """The claim a receive answers with now: the one a send made for it while it was
        parked, or its own; None while nothing can be claimable (it parks, its ack waits).
        Not a coroutine itself: on every receive, it adds no frame to the claim's."""
        if poll.ahead is not None:
            return self._taken(poll, poll.ahead)
        idle, now = self._notifier.idle_until(poll.peer.id), self._clock.now()
        if idle is None or idle <= now or poll.waiter.signalled or not poll.defer_ack:
            poll.waiter.signalled = False
            return self._claim(poll.peer, now, poll.batch, poll.pending_ack)
        return None

    async def _taken(self, poll: _Poll, ahead: asyncio.Future[ClaimResult | None]) -> ClaimResult:
        """What a send claimed for this receive; if it could not, the receive's own claim."""
        poll.ahead = None
        claimed = await ahead
        if claimed is not None:
            return claimed
        poll.waiter.signalled = False
        return await self._claim(poll.peer, self._clock.now(), poll.batch, poll.pending_ack)

    async def _park(self, poll: _Poll, remaining: float) -> None:
        """Wait to be woken, findable meanwhile by a send that can claim for it."""
        name = poll.peer.name
        if not poll.waiter.watcher:
            self._parked[name] = poll
        try:
            await poll.waiter.wait(remaining)
        finally:
            if self._parked.get(name) is poll:
                del self._parked[name]

    def _unlisten(self, poll: _Poll) -> None:
        if poll.hold is not None:
            poll.hold.release()
        self._notifier.unlisten(poll.waiter)
        self._registry.touch(poll.peer)
        if poll.pending_ack is not None:  # cancelled (the client hung up): still honour it
            self._ack_later(poll.peer.id, poll.pending_ack)

    async def _claim(self, peer: Peer, now: float, batch: int, ack: int | None) -> ClaimResult:
        """One claim of up to `batch` visible deliveries, with the acknowledgement that waited
        for it; the senders of tasks it claimed are woken once it is stored."""
        result: ClaimResult = await self._db.write(Claim(self._request(peer, now, batch, ack)))
        if result.claimed_for:
            self._db.wake(result.claimed_for)
        return result

    def _request(self, peer: Peer, now: float, batch: int, ack: int | None) -> ClaimRequest:
        paused = self._room.mode is RoomMode.PAUSED or peer.delivery_paused
        return ClaimRequest(peer.id, now, self._settings.visibility_timeout, batch, ack, paused)

    def _ack_later(self, peer_id: int, through: int) -> None:
        task = asyncio.ensure_future(self._ack(peer_id, (), through))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def ack(
        self, peer: Peer, *, seqs: list[int] | None = None, through: int | None = None
    ) -> int:
        if not seqs and through is None:
            raise InvalidRequest(
                "give seqs (a list) or through (a seq) to acknowledge", field="seqs"
            )
        if seqs and len(seqs) > MAX_ACK_SEQS:
            raise InvalidRequest(f"at most {MAX_ACK_SEQS} seqs per ack", field="seqs")
        return await self._ack(peer.id, seqs or (), through)

    async def _ack(self, peer_id: int, seqs: Sequence[int], through: int | None) -> int:
        return await self._db.write(lambda r: r.inbox.ack(peer_id, seqs=seqs, through=through))

    async def peek(self, peer: Peer, *, after: int | None = None, wait: float = 0.0) -> Peek:
        """How many messages wait and the newest, claiming nothing. With `after` and `wait`,
        wait up to `wait` seconds (at most a receive's longest wait) for a pending message
        newer than seq `after` first (a follower of the inbox: the bridge's inbox resource)."""
        if after is None or wait <= 0:
            return await self._db.read(lambda r: r.inbox.peek(peer.id))
        notifier = self._notifier
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(wait, self._settings.receive_timeout_max)
        with self._holds.holding(peer.id, HoldKind.PEEK) as hold:
            while True:
                # Registered before the read: a message routed in between still wakes it.
                with notifier.woken(peer.id) as fut:
                    found = await self._db.read(lambda r: r.inbox.peek(peer.id))
                    left = deadline - loop.time()
                    newer = found.last is not None and found.last.seq > after
                    if newer or left <= 0 or notifier.closing or hold.over:
                        return found
                    first = asyncio.FIRST_COMPLETED
                    await asyncio.wait({fut, hold.ended}, timeout=left, return_when=first)
