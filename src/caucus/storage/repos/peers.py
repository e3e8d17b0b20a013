"""Peers and their MCP state handles."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from caucus.domain.peers import Peer, PeerState
from caucus.errors import Hint, NameInUse, NameTaken
from caucus.storage.engine import Duplicate, Row, Tx
from caucus.storage.rows import stored_json

# (id, name, state) of the peer a direct message to a name reaches.
Holder = tuple[int, str, str]


class RecipientCache:
    """name → the peer a direct message to it reaches, for a backend with one writer (SQLite):
    every write that changes a peer's name or state clears it, and so does a rolled-back batch,
    so it never disagrees with the database. A backend shared by processes has none (ADR 0012).
    """

    def __init__(self) -> None:
        self.by_name: dict[str, Holder] = {}

    def clear(self) -> None:
        self.by_name.clear()


def peer(row: Row) -> Peer:
    return Peer(
        id=row["id"],
        name=row["name"],
        token_hash=bytes(row["token_hash"]),
        state=PeerState(row["state"]),
        skills=stored_json(row["skills"]),
        description=row["description"],
        status=row["status"],
        status_at=row["status_at"],
        created_at=row["created_at"],
        last_seen=row["last_seen"],
        reaped_at=row["reaped_at"],
        delivery_paused=bool(row["delivery_paused"]),
        offline_at=row["offline_at"],
    )


def _maybe(row: Row | None) -> Peer | None:
    return peer(row) if row is not None else None


class Peers:
    def __init__(self, tx: Tx, recipients: RecipientCache | None) -> None:
        self._tx = tx
        self._recipients = recipients

    def _changed(self) -> None:
        if self._recipients is not None:
            self._recipients.clear()

    # --- reading ---------------------------------------------------------------------------
    def by_id(self, peer_id: int) -> Peer | None:
        return _maybe(self._tx.one("peer_by_id", {"id": peer_id}))

    def by_token(self, token_hash: bytes) -> Peer | None:
        return _maybe(self._tx.one("peer_by_token", {"token_hash": token_hash}))

    def holder(self, name: str, *, any_case: bool = False) -> Peer | None:
        """The peer holding `name`: active, or away (reaped) within its grace. With `any_case`,
        a holder whose name differs only by case counts too."""
        query = "peer_holder_any_case" if any_case else "peer_holder"
        return _maybe(self._tx.one(query, {"name": name}))

    def by_handle(self, handle_hash: bytes) -> Peer | None:
        peer_id = self._tx.value("handle_peer", {"hash": handle_hash})
        return None if peer_id is None else self.by_id(peer_id)

    def held_count(self) -> int:
        return int(self._tx.value("peers_held_count"))

    def in_states(self, states: Iterable[PeerState]) -> list[Peer]:
        wanted = self._tx.array([s.value for s in states])
        return [peer(r) for r in self._tx.all("peers_in_states", {"states": wanted})]

    def present(self, peer_id: int) -> bool:
        """Active or away (reaped), not ended."""
        return self._tx.one("peer_present", {"id": peer_id}) is not None

    def active(self, peer_id: int) -> bool:
        """Here now (not reaped, not ended)."""
        return self._tx.one("peer_active", {"id": peer_id}) is not None

    def recipient(self, name: str) -> Holder | None:
        """The peer a direct message to `name` reaches (cached where the backend allows)."""
        cache = self._recipients
        if cache is not None:
            found = cache.by_name.get(name)
            if found is not None:
                return found
        row = self._tx.one("peer_recipient", {"name": name})
        if row is None:
            return None
        holder: Holder = (row["id"], row["name"], row["state"])
        if cache is not None:
            cache.by_name[name] = holder
        return holder

    def everyone_but(self, sender_id: int) -> list[Holder]:
        rows = self._tx.all("peers_everyone_but", {"sender_id": sender_id})
        return [(r["id"], r["name"], r["state"]) for r in rows]

    # --- writing ---------------------------------------------------------------------------
    def check_name_free(self, name: str, except_id: int | None = None) -> None:
        """NameInUse if a present peer other than `except_id` holds `name` in any case."""
        twin = self._tx.value("peer_case_twin", {"name": name, "except_id": except_id})
        if twin is not None:
            raise NameInUse(f"the name {name!r} is held by another peer as {twin!r}", name=twin)

    def create(
        self,
        *,
        name: str,
        token_hash: bytes,
        skills: list[dict[str, Any]],
        description: str,
        now: float,
    ) -> Peer:
        self._changed()
        params = {
            "name": name,
            "token_hash": token_hash,
            "skills": json.dumps(skills),
            "description": description,
            "now": now,
        }
        try:
            row = self._tx.one("peer_insert", params)
        except Duplicate:
            raise NameInUse(f"the name {name!r} is held by another peer", name=name) from None
        assert row is not None
        return peer(row)

    def rename(self, peer_id: int, name: str) -> None:
        self._changed()
        self.check_name_free(name, peer_id)
        try:
            self._tx.run("peer_rename", {"id": peer_id, "name": name})
        except Duplicate:
            raise NameInUse(f"the name {name!r} is in use by another peer", name=name) from None

    def set_profile(
        self, peer_id: int, *, skills: list[dict[str, Any]] | None, description: str | None
    ) -> None:
        encoded = json.dumps(skills) if skills is not None else None
        self._tx.run(
            "peer_set_profile", {"id": peer_id, "skills": encoded, "description": description}
        )

    def set_status(self, peer_id: int, status: str, at: float) -> None:
        self._tx.run("peer_set_status", {"id": peer_id, "status": status, "status_at": at})

    def set_paused(self, peer_id: int, paused: bool) -> None:
        self._tx.run("peer_set_paused", {"id": peer_id, "paused": int(paused)})

    def touch(self, last_seen: dict[int, float]) -> None:
        self._tx.many("peer_touch", [{"id": i, "last_seen": ts} for i, ts in last_seen.items()])

    def set_offline(self, peer_id: int, now: float) -> bool:
        """Reaped now and marked offline; False if it already was, or has ended."""
        self._changed()
        return self._tx.run("peer_set_offline", {"id": peer_id, "now": now}) == 1

    def revive(self, peer_id: int, now: float) -> None:
        """Reaped (or offline) → active. NameTaken if another peer now holds its name."""
        self._changed()
        try:
            self._tx.run("peer_revive", {"id": peer_id, "now": now})
        except Duplicate:
            found = self.by_id(peer_id)
            name = found.name if found else "?"
            # Unreachable while names are held through the grace period; kept so that a
            # database in an unexpected state answers clearly rather than with a 500.
            raise NameTaken(
                f"while this session was away, another peer took the name {name!r}; "
                "come back with your credentials and a new name to keep your inbox",
                hint=Hint.RESUME,
                name=name,
            ) from None

    def reap_idle(self, idle_before: float, now: float, exclude: set[int]) -> list[Peer]:
        """Active peers last seen before `idle_before` (but those in `exclude`) are reaped."""
        self._changed()
        rows = self._tx.all("peers_idle", {"idle_before": idle_before})
        reaped = [p for p in map(peer, rows) if p.id not in exclude]
        self._tx.many("peer_reap", [{"id": p.id, "now": now} for p in reaped])
        for p in reaped:
            p.state = PeerState.REAPED
            p.reaped_at = now
        return reaped

    def grace_over(self, reaped_before: float) -> list[Peer]:
        return [peer(r) for r in self._tx.all("peers_grace_over", {"reaped_before": reaped_before})]

    def mark_ended(self, peer_id: int, state: PeerState, now: float) -> None:
        if not state.terminal:
            raise ValueError(f"{state} is not terminal")
        self._changed()
        self._tx.run("peer_end", {"id": peer_id, "state": state.value, "now": now})

    # --- MCP state handles -----------------------------------------------------------------
    def add_handle(self, peer_id: int, handle_hash: bytes, now: float, keep: int) -> None:
        """Record a state handle, keeping only the peer's `keep` newest."""
        self._tx.run("handle_insert", {"hash": handle_hash, "peer_id": peer_id, "now": now})
        self._tx.run("handle_keep_newest", {"peer_id": peer_id, "keep": keep})

    def forget_handles(self, peer_id: int) -> None:
        self._tx.run("handles_of_peer_delete", {"peer_id": peer_id})
