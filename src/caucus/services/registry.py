"""Identities: register, authenticate, leave, liveness, reaping and revival."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.events import PeerJoined, PeerLeft, PeerPaused, PeerReaped, StatusChanged
from caucus.domain.names import check_peer_name
from caucus.domain.peers import (
    Liveness,
    Peer,
    PeerState,
    check_description,
    check_status,
    liveness,
    normalize_skills,
)
from caucus.errors import Forbidden, NameInUse, NotFound, Unauthorized
from caucus.ids import hash_token, new_token, tokens_equal
from caucus.protocol import PROTOCOL_VERSION, core_text
from caucus.services.notifier import Notifier
from caucus.services.ratelimit import TokenBuckets
from caucus.services.roles import Roles
from caucus.storage.base import Store

_REVIVABLE = (PeerState.ACTIVE, PeerState.REAPED)


@dataclass(frozen=True, slots=True)
class Registration:
    token: str
    peer: Peer
    outcome: str  # created | reaffirmed | replaced | revived
    protocol_version: int
    protocol: str | None
    note: str | None


@dataclass(frozen=True, slots=True)
class PeerView:
    name: str
    state: Liveness
    status: str
    status_age: float | None
    skills: list[dict[str, Any]]
    description: str
    last_seen_age: float
    listening: bool
    paused: bool
    uptime: float


class Registry:
    def __init__(
        self,
        store: Store,
        notifier: Notifier,
        clock: Clock,
        settings: Settings,
        roles: Roles | None = None,
    ) -> None:
        self._store = store
        self._roles = roles
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

    def touch(self, peer: Peer) -> None:
        now = self._clock.now()
        peer.last_seen = now
        self._dirty_seen[peer.id] = now

    def is_live_listener(self, peer: Peer) -> bool:
        if self._notifier.is_listening(peer.id):
            return True
        return self._clock.now() - peer.last_seen < self._settings.quiet_after

    # --- authentication ----------------------------------------------------------------------
    async def authenticate(self, token: str | None) -> Peer:
        """The peer a bearer token stands for; revives a reaped peer; refreshes last_seen."""
        if not token:
            raise Unauthorized(
                "missing credentials: send 'Authorization: Bearer <token>' with the token "
                "POST /register returned"
            )
        digest = hash_token(token)
        peer = self._by_hash.get(digest)
        if peer is None:
            peer = await self._store.peer_by_token(digest)
            if peer is None:
                if self._roles is not None and self._roles.role_of(token) is not None:
                    raise Forbidden(
                        "the operator and observer tokens do not act as an agent: agents "
                        "register for their own"
                    )
                raise Unauthorized("unknown or replaced token: call POST /register again")
            if peer.state.terminal:
                raise Unauthorized(_ended(peer))
            peer = self._remember(peer)
        if not tokens_equal(peer.token_hash, digest):  # constant-time, belt and braces
            raise Unauthorized("unknown or replaced token: call POST /register again")
        if peer.state is PeerState.REAPED:
            await self._revive(peer)
        elif peer.state.terminal:
            raise Unauthorized(_ended(peer))
        self.touch(peer)
        return peer

    async def _revive(self, peer: Peer) -> None:
        now = self._clock.now()
        await self._store.revive_peer(peer.id, now)
        peer.state = PeerState.ACTIVE
        peer.reaped_at = None
        peer.last_seen = now
        self._notifier.emit(PeerJoined(now, peer.name, "revived"))

    # --- register / leave ------------------------------------------------------------------
    async def register(
        self,
        *,
        name: str,
        token: str | None = None,
        skills: Any = None,
        description: str | None = None,
        protocol_version: int | None = None,
        agent_key: str | None = None,
    ) -> Registration:
        required = self._settings.agent_key
        if required and not (
            agent_key and tokens_equal(hash_token(agent_key), hash_token(required))
        ):
            raise Unauthorized(
                "this hub requires an agent key to register: send it in the "
                "X-Caucus-Agent-Key header (ask the hub's operator for it)"
            )
        check_peer_name(name)
        clean_skills = normalize_skills(skills) if skills is not None else None
        if description is not None:
            check_description(description)
        if token:
            registration = await self._reaffirm(token, name, clean_skills, description)
        else:
            registration = await self._claim_name(name, clean_skills, description)
        behind = protocol_version is None or protocol_version < PROTOCOL_VERSION
        return Registration(
            token=registration.token,
            peer=registration.peer,
            outcome=registration.outcome,
            protocol_version=PROTOCOL_VERSION,
            protocol=core_text() if behind else None,
            note=registration.note,
        )

    async def _reaffirm(
        self,
        token: str,
        name: str,
        skills: list[dict[str, Any]] | None,
        description: str | None,
    ) -> Registration:
        digest = hash_token(token)
        peer = self._by_hash.get(digest) or await self._store.peer_by_token(digest)
        if peer is None:
            raise Unauthorized(
                "unknown or replaced token: register without a token to get a new identity"
            )
        if peer.state.terminal:
            raise Unauthorized(_ended(peer) + "; register without a token for a new identity")
        peer = self._remember(peer)
        outcome = "reaffirmed"
        note: str | None = None
        fields: dict[str, Any] = {}
        if name != peer.name:
            fields["name"] = name
        if skills is not None:
            fields["skills"] = skills
        if description is not None:
            fields["description"] = description
        if peer.state is PeerState.REAPED:
            if "name" in fields:
                # Rename first so that reviving cannot collide with whoever took the old name.
                await self._store.update_peer(peer.id, {"name": name})
                old = peer.name
                peer.name = name
                fields.pop("name")
                note = f"renamed from {old!r}"
            await self._revive(peer)
            outcome = "revived"
        elif "name" in fields:
            note = f"renamed from {peer.name!r}"
        if fields:
            await self._store.update_peer(peer.id, fields)
            peer.name = fields.get("name", peer.name)
            peer.skills = fields.get("skills", peer.skills)
            peer.description = fields.get("description", peer.description)
        # A register with an existing token is a reconnect: whatever was handed out and not
        # acknowledged is redelivered now rather than after the visibility timeout.
        released = await self._store.release_inflight(peer.id, self._clock.now())
        self._notifier.wake([peer.id])
        if released:
            extra = f"{released} unacknowledged message(s) will be delivered again"
            note = f"{note}; {extra}" if note else extra
        self.touch(peer)
        if outcome == "reaffirmed":
            self._notifier.emit(PeerJoined(self._clock.now(), peer.name, outcome))
        return Registration(token, peer, outcome, PROTOCOL_VERSION, None, note)

    async def _claim_name(
        self, name: str, skills: list[dict[str, Any]] | None, description: str | None
    ) -> Registration:
        now = self._clock.now()
        holder = await self._store.peer_by_name(name)
        token = new_token()
        digest = hash_token(token)
        if holder is None:
            peer = await self._store.create_peer(
                name=name,
                token_hash=digest,
                skills=skills or [],
                description=description or "",
                now=now,
                announcements_since=now - self._settings.announce_catch_up,
            )
            self._remember(peer)
            self._notifier.emit(PeerJoined(now, name, "created"))
            return Registration(token, peer, "created", PROTOCOL_VERSION, None, None)
        holder = self._remember(holder)
        if self.is_live_listener(holder):
            raise NameInUse(
                f"the name {name!r} belongs to a peer that is listening now; choose another "
                "name, or register with that peer's token to resume it",
                name=name,
            )
        # Same identity, new credentials: the idle session's inbox and channels carry over and
        # its old token stops working.
        idle = now - holder.last_seen
        fields: dict[str, Any] = {"token_hash": digest, "last_seen": now}
        if skills is not None:
            fields["skills"] = skills
        if description is not None:
            fields["description"] = description
        await self._store.update_peer(holder.id, fields)
        released = await self._store.release_inflight(holder.id, now)
        self._notifier.wake([holder.id])
        self._by_hash.pop(holder.token_hash, None)
        holder.token_hash = digest
        holder.skills = skills if skills is not None else holder.skills
        holder.description = description if description is not None else holder.description
        self._remember(holder)
        self.touch(holder)
        pending = (await self._store.peek(holder.id)).pending
        note = (
            f"replaced an idle session of {name!r} (last seen {idle:.0f} s ago, not listening): "
            f"its {pending} pending message(s) and its channels carry over; its old token no "
            "longer works"
        )
        if released:
            note += f"; {released} unacknowledged message(s) will be delivered again"
        self._notifier.emit(PeerJoined(now, name, "replaced"))
        return Registration(token, holder, "replaced", PROTOCOL_VERSION, None, note)

    async def leave(self, peer: Peer) -> None:
        await self._end(peer, PeerState.LEFT)

    async def kick(self, peer: Peer) -> None:
        await self._end(peer, PeerState.KICKED)

    async def set_delivery_paused(self, peer: Peer, paused: bool) -> None:
        await self._store.update_peer(peer.id, {"delivery_paused": int(paused)})
        peer.delivery_paused = paused
        self._notifier.wake([peer.id])  # a parked receive re-claims under the new rule
        self._notifier.emit(PeerPaused(self._clock.now(), peer.name, paused))

    async def find(self, name: str) -> Peer:
        """The peer known by `name` now (the live one, else the latest reaped one)."""
        peer = await self._store.peer_by_name(name)
        if peer is None:
            reaped = [p for p in await self._store.list_peers([PeerState.REAPED]) if p.name == name]
            if not reaped:
                raise NotFound(f"no peer named {name!r} is here; GET /peers lists who is")
            peer = reaped[-1]
        return self._remember(peer)

    async def _end(self, peer: Peer, state: PeerState) -> None:
        now = self._clock.now()
        await self._store.end_peer(peer.id, state, now)
        peer.state = state
        self._forget(peer)
        self._status_budget.forget(peer.id)
        self._notifier.wake([peer.id])
        self._notifier.emit(PeerLeft(now, peer.name, state.value))

    # --- status, peers, ping ---------------------------------------------------------------
    async def set_status(self, peer: Peer, status: str) -> None:
        check_status(status)
        self._status_budget.take(peer.id)
        now = self._clock.now()
        await self._store.update_peer(peer.id, {"status": status, "status_at": now})
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
        return [self.view(p) for p in await self._store.list_peers(_REVIVABLE)]

    async def ping(self, name: str) -> PeerView:
        return self.view(await self.find(name))

    # --- maintenance -----------------------------------------------------------------------
    async def flush_last_seen(self) -> None:
        now = self._clock.now()
        for pid in self._notifier.listening_ids():
            peer = self._by_id.get(pid)
            if peer is not None:
                peer.last_seen = now
                self._dirty_seen[pid] = now
        dirty, self._dirty_seen = self._dirty_seen, {}
        await self._store.touch_peers(dirty)

    async def reap(self) -> list[str]:
        """Reap idle peers and forget those past their grace. Returns the names reaped."""
        await self.flush_last_seen()
        now = self._clock.now()
        reaped = await self._store.reap_peers(
            now - self._settings.peer_ttl, now, self._notifier.listening_ids()
        )
        for p in reaped:
            known = self._by_id.get(p.id)
            if known is not None:
                known.state = PeerState.REAPED
                known.reaped_at = now
            self._notifier.emit(PeerReaped(now, p.name))
        forgotten = await self._store.forget_peers(now - self._settings.reaped_grace, now)
        for p in forgotten:
            known = self._by_id.get(p.id)
            if known is not None:
                known.state = PeerState.FORGOTTEN
            self._forget(p)
            self._notifier.emit(PeerLeft(now, p.name, "forgotten"))
        return [p.name for p in reaped]


def _ended(peer: Peer) -> str:
    if peer.state is PeerState.LEFT:
        return f"the identity {peer.name!r} has left; its token is no longer valid"
    if peer.state is PeerState.KICKED:
        return f"the identity {peer.name!r} was removed by the operator"
    return f"the session of {peer.name!r} expired after being away too long: call register again"
