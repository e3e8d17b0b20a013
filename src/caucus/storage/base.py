"""The storage contract every backend implements.

Services call only these methods and never assume a particular database. Each method is one
atomic unit of work: a backend may batch several concurrent calls into one transaction (group
commit) but must not let a failure in one call undo another's.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, Protocol

from caucus.domain.channels import Channel
from caucus.domain.forms import Form, FormState, Reach
from caucus.domain.messages import AppendOutcome, ClaimResult, Message, NewMessage, Peek
from caucus.domain.names import Target
from caucus.domain.offers import Offer, Resolution
from caucus.domain.peers import Peer, PeerState
from caucus.domain.retention import PurgeCounts, StoreSize
from caucus.domain.tasks import Task, TaskState


class Store(Protocol):
    # --- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None: ...

    async def close(self) -> None: ...

    # --- peers -----------------------------------------------------------------------------
    async def create_peer(
        self,
        *,
        name: str,
        token_hash: bytes,
        skills: list[dict[str, Any]],
        description: str,
        now: float,
        announcements_since: float | None = None,
        max_peers: int | None = None,
    ) -> Peer:
        """Insert an active peer. Raises NameInUse if another peer holds the name. With
        `announcements_since`, the announcements made since then are queued for it."""
        ...

    async def peer_by_token(self, token_hash: bytes) -> Peer | None: ...

    async def peer_by_name(self, name: str, *, any_case: bool = False) -> Peer | None:
        """The peer holding `name`, if any: active, or away (reaped) within its grace. With
        `any_case`, a holder whose name differs only by case counts too."""
        ...

    async def peer_by_handle(self, handle_hash: bytes) -> Peer | None:
        """The peer an MCP state handle stands for (in any state)."""
        ...

    async def create_handle(self, peer_id: int, handle_hash: bytes, now: float, keep: int) -> None:
        """Record a state handle for a peer, keeping only its `keep` newest."""
        ...

    async def create_watch_credential(
        self,
        peer_id: int,
        digest: bytes,
        kind: str,
        now: float,
        expires_at: float | None,
        keep: int,
    ) -> None:
        """Record a watcher's key or ticket (`kind`) for a peer, keeping its `keep` newest of
        that kind."""
        ...

    async def redeem_watch_ticket(
        self, ticket_hash: bytes, key_hash: bytes, now: float, keep: int
    ) -> Peer | None:
        """Spend an unexpired ticket: it is gone, a key stands in its place; the ticket's peer
        (in any state), or None for an unknown, spent or expired ticket."""
        ...

    async def peer_by_watch_key(self, key_hash: bytes) -> Peer | None:
        """The peer a watcher's key stands for (in any state)."""
        ...

    async def set_offline(self, peer_id: int, now: float) -> bool:
        """The peer's session ended with a goodbye: reaped now, marked offline. False if it was
        already offline or has ended."""
        ...

    async def list_peers(self, states: Iterable[PeerState]) -> list[Peer]: ...

    async def update_peer(self, peer_id: int, fields: Mapping[str, Any]) -> None:
        """Set columns of one peer: name, token_hash, skills, description, status, status_at,
        last_seen. Raises NameInUse if a rename collides with an active peer."""
        ...

    async def revive_peer(self, peer_id: int, now: float) -> None:
        """Reaped (or offline) → active. Raises NameTaken if another peer now holds its name."""
        ...

    async def touch_peers(self, last_seen: Mapping[int, float]) -> None: ...

    async def reap_peers(
        self, idle_before: float, now: float, exclude: Iterable[int]
    ) -> list[Peer]:
        """Mark active peers last seen before `idle_before` as reaped; return them."""
        ...

    async def forget_peers(self, reaped_before: float, now: float) -> list[Peer]:
        """End reaped peers whose grace ran out; their pending deliveries are dropped."""
        ...

    async def end_peer(self, peer_id: int, state: PeerState, now: float) -> None:
        """Terminal: left or kicked. Drops pending deliveries and channel memberships."""
        ...

    async def peer_channels(self, peer_id: int) -> list[str]: ...

    # --- messages and deliveries ---------------------------------------------------------
    async def append_message(
        self, msg: NewMessage, target: Target, *, idempotency_since: float
    ) -> AppendOutcome:
        """Persist a message and queue it for its audience, durably, in one transaction.

        Audience: the named active or reaped peer; every active or reaped peer but the sender
        for `all`; the channel's members but the sender (with `joins_channel`, the channel is
        created and the sender joins it; otherwise it must exist). A closed channel raises
        ChannelClosed. Each delivery gets the message's lane and ephemeral flag. A repeat
        of (sender, idempotency_key) newer than `idempotency_since` returns the first outcome
        with `duplicate=True` and stores nothing. Raises NotFound for an unknown peer or an
        unknown `reply_to`.
        """
        ...

    async def claim(
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
        `priority_only` (a paused recipient) hands out only the priority lane."""
        ...

    async def ack(
        self, peer_id: int, *, seqs: Iterable[int] = (), through: int | None = None
    ) -> int:
        """Delete handed-out deliveries: exactly `seqs`, and/or those of the batch that held
        `through` with seq ≤ `through`. Never acknowledges a delivery not yet handed out."""
        ...

    async def release_inflight(self, peer_id: int, now: float) -> int:
        """A reconnect: drop ephemeral deliveries (interrupt, reset) and make every other
        handed-out, unacknowledged one visible again. Returns how many were made visible."""
        ...

    async def peek(self, peer_id: int) -> Peek: ...

    async def messages_after(
        self,
        seq: int,
        limit: int,
        *,
        since: float | None = None,
        until: float | None = None,
    ) -> list[Message]:
        """Routed messages after `seq` in seq order, with `delivered_to`; optionally only those
        with `since <= ts < until`."""
        ...

    async def messages_before(
        self,
        before: int | None,
        limit: int,
        *,
        peer: str | None = None,
        channel: str | None = None,
        kind: str | None = None,
        text: str | None = None,
    ) -> list[Message]:
        """The newest `limit` routed messages with seq < `before` (all, if None), in seq
        order, with `delivered_to`; optionally only those from, to or delivered to `peer`, to
        `channel`, of `kind`, or whose content holds `text` (ignoring case)."""
        ...

    async def last_seq(self) -> int: ...

    async def pending_count(self) -> int:
        """Deliveries not yet acknowledged, across every peer (the total queue depth)."""
        ...

    async def message_counts(self) -> dict[str, int]:
        """Messages sent, by sender name (agents only)."""
        ...

    async def room_state(self) -> dict[str, Any]: ...

    async def set_room_state(self, key: str, value: Any) -> None: ...

    async def purge_idempotency(self, before: float) -> int: ...

    async def append_announcement(
        self, msg: NewMessage, *, min_interval: float, hourly: int
    ) -> AppendOutcome:
        """Route `msg` to everyone and record it as an announcement, unless its sender made one
        less than `min_interval` ago (CapInterval) or `hourly` in the last hour (CapHourly)."""
        ...

    # --- tasks -----------------------------------------------------------------------------
    async def create_task(
        self,
        *,
        task_id: str,
        sender_id: int,
        sender: str,
        to: str,
        subject: str | None,
        payload: str,
        thread: str,
        now: float,
        expires_at: float,
        message: NewMessage,
    ) -> tuple[Task, AppendOutcome]:
        """Store a pending task and queue its `task` item for the worker, atomically."""
        ...

    async def task_transition(
        self,
        task_id: str,
        *,
        actor_id: int | None,
        actor: str,
        role: str,
        allowed: Collection[TaskState],
        to_state: TaskState,
        now: float,
        fields: dict[str, Any],
        notify: Callable[[Task], tuple[NewMessage, str] | None],
        detail: str | None = None,
    ) -> tuple[Task, AppendOutcome | None]:
        """Change a task's state and send the resulting item, atomically. NotFound for a task
        the actor is no party to, Forbidden for the wrong party, Conflict for a state that does
        not allow it (nothing changes)."""
        ...

    async def get_task(self, task_id: str) -> Task | None: ...

    async def task_parties(self, task_id: str) -> tuple[int, int] | None:
        """(sender_id, worker_id) of a task."""
        ...

    async def list_tasks(
        self, peer_id: int, role: str, state: TaskState | None, limit: int = 200
    ) -> list[Task]: ...

    async def all_tasks(self, state: TaskState | None, limit: int = 200) -> list[Task]:
        """Every peer's tasks (optionally in one state), most recently changed first."""
        ...

    async def sweep_tasks(
        self,
        now: float,
        silent_before: float,
        requeue: Callable[[Task], NewMessage],
        expire: Callable[[Task], NewMessage],
    ) -> list[AppendOutcome]:
        """Tasks claimed (in progress) since before `silent_before` go back to pending and to
        their worker's inbox; pending and parked tasks past their TTL expire. (A receive that
        hands out a task's item claims the task in the same transaction.)"""
        ...

    # --- the job board ---------------------------------------------------------------------
    async def create_offer(
        self,
        *,
        offer_id: str,
        poster_id: int,
        announcement: NewMessage,
        subject: str | None,
        payload: str,
        required_skills: list[dict[str, Any]],
        now: float,
        expires_at: float,
        max_open: int,
        min_interval: float,
        hourly: int,
    ) -> tuple[Offer, AppendOutcome]:
        """Announce and open an offer, or neither (CapOpenOffers, CapInterval, CapHourly)."""
        ...

    async def claim_offer(
        self,
        offer_id: str,
        *,
        claimant_id: int,
        claimant: str,
        note: str | None,
        now: float,
        notice: Callable[[Offer], NewMessage],
    ) -> tuple[Offer, AppendOutcome | None]:
        """One pending claim per claimant, never on one's own offer; tells the poster."""
        ...

    async def resolve_offer(
        self,
        offer_id: str,
        *,
        poster_id: int,
        select: str | None,
        now: float,
        assign: Callable[[Offer, str], tuple[str, NewMessage, float]],
        notice: Callable[[Offer, str, str], NewMessage],
    ) -> Resolution:
        """Select a claimant (who gets the payload as a task) or withdraw (select None)."""
        ...

    async def get_offer(self, offer_id: str) -> Offer | None: ...

    async def list_offers(self, state: str | None, limit: int = 200) -> list[Offer]: ...

    async def expire_offers(self, now: float) -> int: ...

    # --- operator forms ------------------------------------------------------------------
    async def create_form(
        self, form: Form, *, asker_id: int, max_pending: int
    ) -> tuple[Form, bool]:
        """Store a pending form. If the asker already has an identical one pending, return
        that instead (True); past `max_pending` pending forms per asker, CapOpenForms."""
        ...

    async def get_form(self, form_id: str) -> Form | None: ...

    async def list_forms(self, state: FormState | None, limit: int = 200) -> list[Form]:
        """Forms in one state, oldest first (or every form, newest first)."""
        ...

    async def settle_form(
        self,
        form_id: str,
        *,
        state: FormState,
        answer: dict[str, Any] | None,
        reason: str | None,
        now: float,
        notify: Callable[[Form, Reach], list[tuple[NewMessage, Target]]],
    ) -> tuple[Form, list[AppendOutcome]]:
        """Answer or cancel a pending form and route the messages `notify` builds, atomically.
        `notify` learns whether the asker is still here and already in the form's audience.
        NotFound for an unknown form, Conflict for one already settled (nothing changes)."""
        ...

    async def unrecorded_forms(self, limit: int = 100) -> list[Form]:
        """Answered forms whose ledger record is not written yet, oldest first."""
        ...

    async def mark_forms_recorded(self, hashes: dict[str, str]) -> None:
        """Note the ledger record (its hash) each form's answer became."""
        ...

    async def note_ledger_intents(self, hashes: list[str], now: float) -> None:
        """Durably note the hashes of records about to be appended to the ledger."""
        ...

    async def ledger_intents(self) -> set[str]:
        """The hashes noted and not yet cleared: records this hub wrote or was writing."""
        ...

    async def clear_ledger_intents(self) -> None:
        """Forget every intent (the ledger's checkpoint has passed them all)."""
        ...

    # --- retention -------------------------------------------------------------------------
    async def purge_finished(
        self, before: float, limit: int, *, dry_run: bool = False
    ) -> PurgeCounts:
        """Drop up to `limit` of each kind of finished item older than `before` (see
        `storage/sqlite_retention.py` for what is finished); a dry run only counts, all."""
        ...

    async def oldest_purgeable_ts(self) -> float | None:
        """When the oldest message retention may drop was sent."""
        ...

    async def store_size(self) -> StoreSize: ...

    async def reclaim(self, pages: int | None = None, *, full: bool = False) -> None:
        """Give free pages back to the file system (see the SQLite store)."""
        ...

    # --- channels --------------------------------------------------------------------------
    async def join_channel(
        self, peer_id: int, channel: str, now: float, max_channels: int | None = None
    ) -> bool:
        """Create the channel if needed and add the peer; False if already a member. A peer
        already in `max_channels` channels is refused (`CapChannels`), nothing created."""
        ...

    async def leave_channel(self, peer_id: int, channel: str) -> bool: ...

    async def close_channel(self, channel: str, now: float) -> list[int]:
        """Close a channel (history kept, members removed, joins and sends refused); returns
        the ids of its former members. Raises NotFound for an unknown channel."""
        ...

    async def set_topic(self, channel: str, topic: str, by: str, now: float) -> None: ...

    async def get_channel(self, channel: str) -> Channel | None: ...

    async def list_channels(self) -> list[Channel]: ...
