"""The credentials a watcher (`caucus watch`) holds instead of its peer's token.

A watch key waits for and acknowledges one peer's messages, and nothing else: a watcher's
command line, environment or session file can never act as the peer. A host on this machine
is handed a 0600 file holding a key; a host that reached the hub from elsewhere gets a ticket
instead, which `caucus watch --ticket` redeems once, within `watch_ticket_ttl`, for a key. A
peer has at most one live ticket (minting another voids the last), and every key and ticket
goes when the peer leaves, is kicked or expires.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from caucus.clock import Clock
from caucus.config import Settings
from caucus.domain.peers import Peer
from caucus.errors import Hint, TicketRejected
from caucus.ids import hash_token, new_token
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos

KEY_PREFIX = "wk_"
TICKET_PREFIX = "wt_"
KEYS_KEPT = 4  # per peer: a watcher started from an older file keeps working a while
SEEN_MAX = 4096  # key hashes remembered as known parties (for the shield)


@dataclass(frozen=True, slots=True)
class Ticket:
    ticket: str
    expires_at: float


class Watchers:
    def __init__(self, db: Engine, clock: Clock, settings: Settings) -> None:
        self._db = db
        self._clock = clock
        self._settings = settings
        self._seen: OrderedDict[bytes, None] = OrderedDict()

    def knows(self, key_hash: bytes) -> bool:
        """Whether a watcher with this key was let in since the hub started (no I/O)."""
        return key_hash in self._seen

    async def mint_key(self, peer: Peer) -> str:
        key = new_token(KEY_PREFIX)
        now = self._clock.now()
        digest = hash_token(key)
        await self._db.write(lambda r: r.watch.add(peer.id, digest, "key", now, None, KEYS_KEPT))
        return key

    async def mint_ticket(self, peer: Peer) -> Ticket:
        ticket = new_token(TICKET_PREFIX)
        now = self._clock.now()
        expires = now + self._settings.watch_ticket_ttl
        digest = hash_token(ticket)
        await self._db.write(lambda r: r.watch.add(peer.id, digest, "ticket", now, expires, 1))
        return Ticket(ticket, expires)

    async def redeem(self, ticket: str) -> tuple[Peer, str]:
        """The ticket's peer and a fresh key for it; the ticket is spent. Refuses a ticket
        that is unknown, used, expired or whose peer has ended (`Principals.redeem` brings the
        peer back)."""
        key = new_token(KEY_PREFIX)
        found = None
        if ticket.startswith(TICKET_PREFIX):
            now = self._clock.now()
            ticket_hash, key_hash = hash_token(ticket), hash_token(key)
            found = await self._db.write(lambda r: redeem_ticket(r, ticket_hash, key_hash, now))
        if found is None or found.state.terminal:
            raise TicketRejected(
                "this watch ticket is unknown, used, expired or its peer has left: call "
                "watch_command for a new one",
                hint=Hint.REGISTER,
            )
        return found, key

    async def key_holder(self, key: str) -> Peer | None:
        """The peer a watch key was minted for, ended or not (None: no such key).
        `Principals.watcher` decides whether it stands."""
        if not key.startswith(KEY_PREFIX):
            return None
        digest = hash_token(key)
        found = await self._db.read(lambda r: key_holder(r, digest))
        if found is not None and not found.state.terminal:
            self._seen[digest] = None
            self._seen.move_to_end(digest)
            if len(self._seen) > SEEN_MAX:
                self._seen.popitem(last=False)
        return found


def redeem_ticket(r: Repos, ticket_hash: bytes, key_hash: bytes, now: float) -> Peer | None:
    """Spend an unexpired ticket: it is gone and a key stands in its place. The ticket's peer
    (in any state), or None for an unknown, spent or expired ticket."""
    peer_id = r.watch.spend_ticket(ticket_hash, now)
    peer = r.peers.by_id(peer_id) if peer_id is not None else None
    if peer is not None:
        r.watch.add(peer.id, key_hash, "key", now, None, KEYS_KEPT)
    return peer


def key_holder(r: Repos, key_hash: bytes) -> Peer | None:
    """The peer a watcher's key stands for (in any state)."""
    peer_id = r.watch.key_holder(key_hash)
    return r.peers.by_id(peer_id) if peer_id is not None else None
