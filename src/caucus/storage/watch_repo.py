"""The first repository cut out of the store (issue 14): watch keys and tickets (ADR 0011).

A plain class of named statements (`sql/<dialect>/queries.sql`) over the connection of the
unit of work it is handed, rows read by column name. The store's operations compose it; it
inherits from nothing.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from caucus.storage.queries import Queries, queries


def row(cur: sqlite3.Cursor) -> dict[str, Any] | None:
    """The next row as a mapping of column name to value (None when there is none)."""
    found = cur.fetchone()
    if found is None:
        return None
    return {d[0]: v for d, v in zip(cur.description, found, strict=True)}


class WatchCredentials:
    def __init__(self, conn: sqlite3.Connection, q: Queries | None = None) -> None:
        self._conn = conn
        self._q = q or queries("sqlite")

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
        self._conn.execute(
            self._q["watch_credential_insert"],
            {
                "hash": digest,
                "peer_id": peer_id,
                "kind": kind,
                "created_at": now,
                "expires_at": expires_at,
            },
        )
        self._conn.execute(
            self._q["watch_credential_keep_newest"],
            {"peer_id": peer_id, "kind": kind, "keep": keep},
        )

    def spend_ticket(self, ticket_hash: bytes, now: float) -> int | None:
        """The peer id of an unexpired ticket, which is gone afterwards (expired ones go too)."""
        self._conn.execute(self._q["watch_tickets_expire"], {"now": now})
        found = row(self._conn.execute(self._q["watch_ticket_peer"], {"hash": ticket_hash}))
        if found is None:
            return None
        self._conn.execute(self._q["watch_credential_delete"], {"hash": ticket_hash})
        peer_id: int = found["peer_id"]
        return peer_id

    def key_holder(self, key_hash: bytes) -> int | None:
        found = row(self._conn.execute(self._q["watch_key_peer"], {"hash": key_hash}))
        return None if found is None else int(found["peer_id"])

    def forget_peer(self, peer_id: int) -> None:
        self._conn.execute(self._q["watch_credentials_of_peer_delete"], {"peer_id": peer_id})
