"""Watch keys and tickets (ADR 0011): what a watcher holds instead of its peer's token."""

from __future__ import annotations

from caucus.storage.engine import Tx


class WatchCredentials:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def add(
        self,
        peer_id: int,
        digest: bytes,
        kind: str,
        now: float,
        expires_at: float | None,
        keep: int,
    ) -> None:
        """Record one, keeping the peer's `keep` newest of that kind."""
        self._tx.run(
            "watch_credential_insert",
            {
                "hash": digest,
                "peer_id": peer_id,
                "kind": kind,
                "created_at": now,
                "expires_at": expires_at,
            },
        )
        self._tx.run(
            "watch_credential_keep_newest", {"peer_id": peer_id, "kind": kind, "keep": keep}
        )

    def spend_ticket(self, ticket_hash: bytes, now: float) -> int | None:
        """The peer id of an unexpired ticket, which is gone afterwards (expired ones go too)."""
        self._tx.run("watch_tickets_expire", {"now": now})
        peer_id = self._tx.value("watch_ticket_peer", {"hash": ticket_hash})
        if peer_id is None:
            return None
        self._tx.run("watch_credential_delete", {"hash": ticket_hash})
        return int(peer_id)

    def key_holder(self, key_hash: bytes) -> int | None:
        peer_id = self._tx.value("watch_key_peer", {"hash": key_hash})
        return None if peer_id is None else int(peer_id)

    def forget_peer(self, peer_id: int) -> None:
        self._tx.run("watch_credentials_of_peer_delete", {"peer_id": peer_id})
