"""Identities: register and resume, the roster of who is here (cached), go offline, leave, liveness
and reaping. Who a credential stands for is `Principals`' to decide.

A name belongs to its peer for as long as the peer can come back: while it is active, and while
it is away (offline after a goodbye, or reaped after a silence) within the grace period. Only
that peer's credentials (its token, or an MCP state handle minted for it) get the name back;
leave, an operator kick, or the end of the grace period free it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.buckets import TokenBuckets
from caucus.domain.caps import check_peers
from caucus.domain.events import (
    PeerJoined,
    PeerLeft,
    PeerOffline,
    PeerPaused,
    PeerReaped,
    StatusChanged,
)
from caucus.domain.names import check_peer_name
from caucus.domain.peers import (
    Peer,
    PeerState,
    PeerView,
    Registration,
    check_description,
    check_status,
    liveness,
    normalize_skills,
)
from caucus.errors import Hint, NameInUse, NotFound
from caucus.ids import hash_token, new_token
from caucus.protocol import PROTOCOL_VERSION, core_text
from caucus.services.name_claims import name_in_use
from caucus.services.notifier import Notifier
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

_HELD = (PeerState.ACTIVE, PeerState.REAPED)
HANDLE_PREFIX = "h_"
PEER_SIGNAL = "peer"  # `peer <id>`: a peer's row changed in a way caches must see
HANDLES_KEPT = 8  # per peer: each join of a session-less client may mint one


class Registry:
    def __init__(self, db: Engine, notifier: Notifier, clock: Clock, settings: Settings) -> None:
        self._db = db
        self._notifier = notifier
        self._clock = clock
        self._settings = settings
        self._by_hash: dict[bytes, Peer] = {}
        self._by_id: dict[int, Peer] = {}
        self._dirty_seen: dict[int, float] = {}
        self._status_budget = TokenBuckets(
            clock,
            capacity=settings.status_rate_capacity,
            refill=settings.status_rate_refill,
            what="status updates",
        )
        # Floods: new identities per client address, joins per identity (issue 12).
        self._new_by_source = TokenBuckets(
            clock,
            capacity=settings.register_rate_capacity,
            refill=settings.register_rate_refill,
            what="new identities from this address",
        )
        self._joins_by_peer = TokenBuckets(
            clock,
            capacity=settings.resume_rate_capacity,
            refill=settings.resume_rate_refill,
            what="joins of this identity",
        )
        # Told when a peer is gone (its id, and whether for good): what it held open ends.
        self.on_gone: list[Callable[[int, bool], None]] = []
        # Who else is present beside parked receives (those holding a stream open).
        self.present_ids: Callable[[], set[int]] = set

    def _gone(self, peer_id: int, for_good: bool) -> None:
        for callback in self.on_gone:
            callback(peer_id, for_good)

    def knows(self, token_hash: bytes) -> bool:
        """Whether a peer with this token is in the cache (seen since the hub started)."""
        return token_hash in self._by_hash

    # --- cache -----------------------------------------------------------------------------
    def _remember(self, peer: Peer) -> Peer:
        known = self._by_id.get(peer.id)
        if known is not None:
            self._by_hash.pop(known.token_hash, None)
            # Keep the freshest last_seen: the in-memory one may not be flushed yet.
            peer.last_seen = max(peer.last_seen, known.last_seen)
        self._by_id[peer.id] = peer
        self._by_hash[peer.token_hash] = peer
        return peer

    def _forget(self, peer: Peer) -> None:
        known = self._by_id.pop(peer.id, None)
        if known is not None:
            self._by_hash.pop(known.token_hash, None)
        self._by_hash.pop(peer.token_hash, None)
        self._dirty_seen.pop(peer.id, None)

    def cached(self, peer_id: int) -> Peer | None:
        """The peer with this id, if it was seen since the hub started (no I/O)."""
        return self._by_id.get(peer_id)

    async def refresh(self, peer_id: int) -> None:
        """Another hub process changed this peer (ended it, renamed or paused it): the copy
        cached here takes the database's state, and a receive parked for it claims again (and
        ends, if the peer has)."""
        known = self._by_id.get(peer_id)
        if known is None:
            return
        found = await self._db.read(lambda r: r.peers.by_id(peer_id))
        if found is None or found.state.terminal:
            known.state = found.state if found is not None else PeerState.FORGOTTEN
            self._forget(known)
            self._gone(peer_id, True)
        else:
            if found.state is PeerState.REAPED and known.state is not PeerState.REAPED:
                self._gone(peer_id, False)
            self._by_hash.pop(known.token_hash, None)
            known.name, known.state = found.name, found.state
            known.delivery_paused, known.token_hash = found.delivery_paused, found.token_hash
            self._by_hash[known.token_hash] = known
        self._notifier.wake([peer_id])

    async def _changed(self, peer: Peer) -> None:
        """Tell the other hub processes sharing the database (Engine.signal)."""
        await self._db.signal(f"{PEER_SIGNAL} {peer.id}")

    def touch(self, peer: Peer) -> None:
        now = self._clock.now()
        peer.last_seen = now
        self._dirty_seen[peer.id] = now

    # --- who a credential found (`Principals` decides whether it stands) --------------------
    async def by_token(self, digest: bytes) -> Peer | None:
        """The peer whose token hashes to `digest`, ended or not: the cached copy when there is
        one (no I/O on the hot path), else the database's, cached from now on."""
        peer = self._by_hash.get(digest)
        if peer is not None:
            return peer
        found = await self._db.read(lambda r: r.peers.by_token(digest))
        return None if found is None else self.adopt(found)

    async def by_handle(self, digest: bytes) -> Peer | None:
        """The peer an MCP state handle hashing to `digest` was minted for, ended or not."""
        found = await self._db.read(lambda r: r.peers.by_handle(digest))
        return None if found is None else self.adopt(found)

    def adopt(self, peer: Peer) -> Peer:
        """The one live copy of `peer` this process keeps: the cached one if any, else `peer`
        (cached from now on, unless it has ended)."""
        known = self._by_id.get(peer.id)
        if known is not None:
            return known
        return peer if peer.state.terminal else self._remember(peer)

    async def present(self, peer: Peer) -> Peer:
        """A call from `peer` (already authenticated): revived if it was away, seen now."""
        if peer.state is PeerState.REAPED:
            await self._revive(peer)
        self.touch(peer)
        return peer

    async def _revive(self, peer: Peer) -> None:
        now = self._clock.now()
        await self._db.write(lambda r: r.peers.revive(peer.id, now))
        self._revived(peer, now)

    def _revived(self, peer: Peer, now: float) -> None:
        peer.state = PeerState.ACTIVE
        peer.reaped_at = peer.offline_at = None
        peer.last_seen = now
        self._notifier.emit(PeerJoined(now, peer.name, "resumed"))

    async def mint_handle(self, peer: Peer) -> str:
        """A fresh state handle for `peer` (MCP clients that keep no session carry it)."""
        handle = new_token(HANDLE_PREFIX)[:24]
        digest, now = hash_token(handle), self._clock.now()
        await self._db.write(lambda r: r.peers.add_handle(peer.id, digest, now, HANDLES_KEPT))
        return handle

    # --- register / resume / offline / leave -----------------------------------------------
    async def register(
        self,
        *,
        name: str,
        skills: Any = None,
        description: str | None = None,
        protocol_version: int | None = None,
        source: str | None = None,
        returning: tuple[str, Peer] | None = None,
    ) -> Registration:
        """Join as `name`: a new identity, or with `returning` (the token a caller presented
        and the peer `Principals` found it stands for) that identity back, renamed to `name`.
        `source` is the client's address, which a transport gives: new identities from one
        address are budgeted (`register_rate_*`). Credentials are `Principals.register`'s."""
        check_peer_name(name)
        clean_skills = normalize_skills(skills) if skills is not None else None
        if description is not None:
            check_description(description)
        if returning is not None:
            token, peer = returning
            registration = await self.resume(token, peer, name, clean_skills, description)
        else:
            if source is not None:
                self._new_by_source.take(source)
            registration = await self._create(name, clean_skills, description)
        return self.with_protocol(registration, protocol_version)

    def with_protocol(self, reg: Registration, known: int | None) -> Registration:
        """`reg` with the protocol text, if `known` (the version the caller read) is behind."""
        behind = known is None or known < PROTOCOL_VERSION
        text = core_text() if behind else None
        return Registration(reg.token, reg.peer, reg.outcome, PROTOCOL_VERSION, text, reg.note)

    async def resume(
        self,
        token: str | None,
        peer: Peer,
        name: str | None,
        skills: Any,
        description: str | None,
    ) -> Registration:
        """Come back as `peer` (whose credential `Principals` accepted), optionally renamed and
        with new skills or description. Whatever was handed out and not acknowledged is
        delivered again now: this is a reconnect."""
        if name is not None:
            check_peer_name(name)
        skills = normalize_skills(skills) if skills is not None else None
        if description is not None:
            check_description(description)
        self._joins_by_peer.take(peer.id)
        peer = self._remember(peer)
        note: str | None = None
        new_name = name if name is not None and name != peer.name else None
        if new_name is not None:
            holder = await self._holder(new_name)
            if holder is not None and holder.id != peer.id:
                raise self._in_use(self._remember(holder), new_name)
        away = peer.state is PeerState.REAPED
        now = self._clock.now()
        peer_id = peer.id

        def reconnect(r: Repos) -> int:
            if new_name is not None:
                r.peers.rename(peer_id, new_name)
            if away:
                r.peers.revive(peer_id, now)
            if skills is not None or description is not None:
                r.peers.set_profile(peer_id, skills=skills, description=description)
            return r.inbox.release(peer_id, now)

        released = await self._db.write(reconnect)
        if new_name is not None:
            note = f"renamed from {peer.name!r}"
            peer.name = new_name
            await self._changed(peer)
        if away:
            self._revived(peer, now)
        peer.skills = peer.skills if skills is None else skills
        peer.description = peer.description if description is None else description
        self._notifier.wake([peer.id])
        if released:
            extra = f"{released} unacknowledged message(s) will be delivered again"
            note = f"{note}; {extra}" if note else extra
        self.touch(peer)
        outcome = "resumed" if away else "reaffirmed"
        if not away:
            self._notifier.emit(PeerJoined(self._clock.now(), peer.name, outcome))
        return Registration(token, peer, outcome, PROTOCOL_VERSION, None, note)

    async def _create(
        self, name: str, skills: list[dict[str, Any]] | None, description: str | None
    ) -> Registration:
        holder = await self._holder(name)
        if holder is not None:
            raise self._in_use(self._remember(holder), name)
        now = self._clock.now()
        token = new_token()
        digest = hash_token(token)
        since = now - self._settings.announce_catch_up
        max_peers = self._settings.peers_max

        def create(r: Repos) -> Peer:
            r.peers.check_name_free(name)
            check_peers(r.peers.held_count(), max_peers)
            peer = r.peers.create(
                name=name,
                token_hash=digest,
                skills=skills or [],
                description=description or "",
                now=now,
            )
            r.inbox.queue_announcements(peer.id, since)  # a newcomer hears them once
            return peer

        try:
            peer = await self._db.write(create)
        except NameInUse:  # someone registered it since the check above
            raced = await self._holder(name)
            if raced is None:
                raise
            raise self._in_use(self._remember(raced), name) from None
        self._remember(peer)
        self._notifier.emit(PeerJoined(now, name, "created"))
        return Registration(token, peer, "created", PROTOCOL_VERSION, None, None)

    async def _holder(self, name: str) -> Peer | None:
        """Who holds `name`, or one a person could not tell from it (case)."""
        return await self._db.read(lambda r: r.peers.holder(name, any_case=True))

    def _in_use(self, holder: Peer, asked: str | None = None) -> NameInUse:
        view = self.view(holder)
        return name_in_use(holder, view, self._clock.now(), self._settings.reaped_grace, asked)

    async def offline(self, peer: Peer) -> bool:
        """The peer's session ended and said so: it shows offline at once and keeps its
        identity, inbox and channels for the grace period. False if nothing changed."""
        now = self._clock.now()
        seen = {peer.id: peer.last_seen}

        def goodbye(r: Repos) -> bool:
            if not r.peers.set_offline(peer.id, now):
                return False
            r.peers.touch(seen)
            return True

        if peer.state.terminal or not await self._db.write(goodbye):
            return False
        self._dirty_seen.pop(peer.id, None)
        peer.state = PeerState.REAPED
        peer.reaped_at = peer.offline_at = now
        self._status_budget.forget(peer.id)
        self._notifier.wake([peer.id])
        self._gone(peer.id, False)
        self._notifier.emit(PeerOffline(now, peer.name))
        return True

    async def leave(self, peer: Peer) -> None:
        await self._end(peer, PeerState.LEFT)

    async def kick(self, peer: Peer) -> None:
        await self._end(peer, PeerState.KICKED)

    async def set_delivery_paused(self, peer: Peer, paused: bool) -> None:
        await self._db.write(lambda r: r.peers.set_paused(peer.id, paused))
        peer.delivery_paused = paused
        self._notifier.wake([peer.id])  # a parked receive re-claims under the new rule
        await self._changed(peer)
        self._notifier.emit(PeerPaused(self._clock.now(), peer.name, paused))

    async def find(self, name: str) -> Peer:
        """The peer known by `name` now (active or away)."""
        peer = await self._db.read(lambda r: r.peers.holder(name))
        if peer is None:
            raise NotFound(f"no peer named {name!r} is here", hint=Hint.LIST_PEERS, peer=name)
        known = self._by_id.get(peer.id)
        return known if known is not None else self._remember(peer)

    async def _end(self, peer: Peer, state: PeerState) -> None:
        now = self._clock.now()
        await self._db.write(lambda r: end_peer(r, peer.id, state, now))
        peer.state = state
        self._forget(peer)
        self._status_budget.forget(peer.id)
        self._notifier.wake([peer.id])
        self._gone(peer.id, True)
        await self._changed(peer)
        self._notifier.emit(PeerLeft(now, peer.name, state.value))

    # --- status, peers, ping ---------------------------------------------------------------
    async def set_status(self, peer: Peer, status: str) -> None:
        check_status(status)
        self._status_budget.take(peer.id)
        now = self._clock.now()
        await self._db.write(lambda r: r.peers.set_status(peer.id, status, now))
        peer.status = status
        peer.status_at = now
        self._notifier.emit(StatusChanged(now, peer.name, status))

    def view(self, peer: Peer) -> PeerView:
        known = self._by_id.get(peer.id)
        if known is not None and known is not peer:
            peer.last_seen = max(peer.last_seen, known.last_seen)
            peer.delivery_paused = known.delivery_paused
        now = self._clock.now()
        listening = self._notifier.is_listening(peer.id)
        return PeerView(
            name=peer.name,
            state=liveness(
                peer,
                now=now,
                listening=listening,
                quiet_after=self._settings.quiet_after,
                stale_after=self._settings.stale_after,
            ),
            status=peer.status,
            status_age=(now - peer.status_at) if peer.status_at is not None else None,
            skills=peer.skills,
            description=peer.description,
            last_seen_age=0.0 if listening else max(0.0, now - peer.last_seen),
            listening=listening,
            paused=peer.delivery_paused,
            uptime=max(0.0, now - peer.created_at),
        )

    async def peers(self) -> list[PeerView]:
        return [self.view(p) for p in await self._db.read(lambda r: r.peers.in_states(_HELD))]

    async def ping(self, name: str) -> PeerView:
        return self.view(await self.find(name))

    # --- maintenance -----------------------------------------------------------------------
    async def flush_last_seen(self) -> None:
        now = self._clock.now()
        for pid in self._notifier.listening_ids() | self.present_ids():
            peer = self._by_id.get(pid)
            if peer is not None:
                peer.last_seen = now
                self._dirty_seen[pid] = now
        dirty, self._dirty_seen = self._dirty_seen, {}
        if dirty:
            await self._db.write(lambda r: r.peers.touch(dirty))

    async def reap(self) -> list[str]:
        """Reap idle peers and forget those past their grace. Returns the names reaped."""
        await self.flush_last_seen()
        now = self._clock.now()
        idle_before = now - self._settings.peer_ttl
        listening = self._notifier.listening_ids() | self.present_ids()
        reaped = await self._db.write(lambda r: r.peers.reap_idle(idle_before, now, listening))
        for p in reaped:
            known = self._by_id.get(p.id)
            if known is not None:
                known.state = PeerState.REAPED
                known.reaped_at = now
            self._gone(p.id, False)
            self._notifier.emit(PeerReaped(now, p.name))
        grace_before = now - self._settings.reaped_grace
        forgotten = await self._db.write(lambda r: forget_expired(r, grace_before, now))
        for p in forgotten:
            known = self._by_id.get(p.id)
            if known is not None:
                known.state = PeerState.FORGOTTEN
            self._forget(p)
            self._gone(p.id, True)
            self._notifier.emit(PeerLeft(now, p.name, "forgotten"))
        return [p.name for p in reaped]


def end_peer(r: Repos, peer_id: int, state: PeerState, now: float) -> None:
    """Terminal (left, kicked, forgotten): what it was waiting for and where it was go too."""
    r.peers.mark_ended(peer_id, state, now)
    r.inbox.forget_peer(peer_id)
    r.channels.forget_peer(peer_id)
    r.peers.forget_handles(peer_id)
    r.watch.forget_peer(peer_id)


def forget_expired(r: Repos, reaped_before: float, now: float) -> list[Peer]:
    """End the reaped peers whose grace ran out (reaped before `reaped_before`)."""
    gone = r.peers.grace_over(reaped_before)
    for p in gone:
        end_peer(r, p.id, PeerState.FORGOTTEN, now)
        p.state = PeerState.FORGOTTEN
    return gone
