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
from caucus.services.registry import Registry
from caucus.storage.base import Store

KEY_PREFIX = "wk_"
TICKET_PREFIX = "wt_"
KEYS_KEPT = 4  # per peer: a watcher started from an older file keeps working a while
SEEN_MAX = 4096  # key hashes remembered as known parties (for the shield)


@dataclass(frozen=True, slots=True)
class Ticket:
    ticket: str
    expires_at: float


class Watchers:
    def __init__(self, store: Store, registry: Registry, clock: Clock, settings: Settings) -> None:
        self._store = store
        self._registry = registry
        self._clock = clock
        self._settings = settings
        self._seen: OrderedDict[bytes, None] = OrderedDict()

    def knows(self, key_hash: bytes) -> bool:
        """Whether a watcher with this key was let in since the hub started (no I/O)."""
        return key_hash in self._seen

    async def mint_key(self, peer: Peer) -> str:
        key = new_token(KEY_PREFIX)
        now = self._clock.now()
        await self._store.create_watch_credential(
            peer.id, hash_token(key), "key", now, None, KEYS_KEPT
        )
        return key

    async def mint_ticket(self, peer: Peer) -> Ticket:
        ticket = new_token(TICKET_PREFIX)
        now = self._clock.now()
        expires = now + self._settings.watch_ticket_ttl
        await self._store.create_watch_credential(
            peer.id, hash_token(ticket), "ticket", now, expires, 1
        )
        return Ticket(ticket, expires)

    async def redeem(self, ticket: str) -> tuple[Peer, str]:
        """The ticket's peer and a fresh key for it; the ticket is spent."""
        key = new_token(KEY_PREFIX)
        found = None
        if ticket.startswith(TICKET_PREFIX):
            now = self._clock.now()
            found = await self._store.redeem_watch_ticket(
                hash_token(ticket), hash_token(key), now, KEYS_KEPT
            )
        if found is None or found.state.terminal:
            raise TicketRejected(
                "this watch ticket is unknown, used, expired or its peer has left: call "
                "watch_command for a new one",
                hint=Hint.REGISTER,
            )
        return await self._registry.authenticate_found(found, "unknown peer"), key

    async def holder(self, key: str | None) -> Peer:
        """The peer a watch key stands for, revived if it was away (a watcher waiting is a
        peer that can be reached)."""
        found = None
        digest = b""
        if key and key.startswith(KEY_PREFIX):
            digest = hash_token(key)
            found = await self._store.peer_by_watch_key(digest)
        peer = await self._registry.authenticate_found(
            found, "unknown watch key: call join, then watch_command, for a new watcher"
        )
        self._seen[digest] = None
        self._seen.move_to_end(digest)
        if len(self._seen) > SEEN_MAX:
            self._seen.popitem(last=False)
        return peer
