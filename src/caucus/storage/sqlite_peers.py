"""Peer operations of the SQLite store."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from caucus.domain.caps import check_peers
from caucus.domain.peers import Peer, PeerState
from caucus.errors import Hint, NameInUse, NameTaken
from caucus.storage.sqlite_base import (
    _PEER_COLS,
    _PEER_FIELDS,
    SqliteOps,
    _peer,
)
from caucus.storage.watch_repo import WatchCredentials

_HOLDER = f"SELECT {_PEER_COLS} FROM peers WHERE name = ? AND state IN ('active', 'reaped')"
# Names are ASCII, which NOCASE folds; an exact holder sorts first.
_HOLDER_ANY_CASE = (
    f"SELECT {_PEER_COLS} FROM peers WHERE name = ? COLLATE NOCASE"
    " AND state IN ('active', 'reaped') LIMIT 1"
)


def _case_twin(conn: sqlite3.Connection, name: str, peer_id: int | None) -> None:
    row = conn.execute(
        "SELECT name FROM peers WHERE name = ? COLLATE NOCASE AND state IN ('active', 'reaped')"
        " AND id IS NOT ? LIMIT 1",
        (name, peer_id),
    ).fetchone()
    if row is not None:
        raise NameInUse(f"the name {name!r} is held by another peer as {row[0]!r}", name=row[0])


class PeerOps(SqliteOps):
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
        def op(conn: sqlite3.Connection) -> Peer:
            self._recipients.clear()
            _case_twin(conn, name, None)
            if max_peers is not None:
                (held,) = conn.execute(
                    "SELECT COUNT(*) FROM peers WHERE state IN ('active', 'reaped')"
                ).fetchone()
                check_peers(held, max_peers)
            try:
                cur = conn.execute(
                    "INSERT INTO peers (name, token_hash, state, skills, description, created_at,"
                    " last_seen) VALUES (?, ?, 'active', ?, ?, ?, ?)",
                    (name, token_hash, json.dumps(skills), description, now, now),
                )
            except sqlite3.IntegrityError:
                raise NameInUse(f"the name {name!r} is held by another peer", name=name) from None
            row = conn.execute(
                f"SELECT {_PEER_COLS} FROM peers WHERE id = ?", (cur.lastrowid,)
            ).fetchone()
            if announcements_since is not None:
                # A newcomer gets the recent announcements once.
                conn.execute(
                    "INSERT INTO deliveries (peer_id, seq) SELECT ?, seq FROM announcements"
                    " WHERE ts >= ? ORDER BY seq",
                    (cur.lastrowid, announcements_since),
                )
            return _peer(row)

        return await self._write(op)

    async def peer_by_token(self, token_hash: bytes) -> Peer | None:
        def op(conn: sqlite3.Connection) -> Peer | None:
            row = conn.execute(
                f"SELECT {_PEER_COLS} FROM peers WHERE token_hash = ?", (token_hash,)
            ).fetchone()
            return _peer(row) if row else None

        return await self._read(op)

    async def peer_by_name(self, name: str, *, any_case: bool = False) -> Peer | None:
        def op(conn: sqlite3.Connection) -> Peer | None:
            row = conn.execute(_HOLDER_ANY_CASE if any_case else _HOLDER, (name,)).fetchone()
            return _peer(row) if row else None

        return await self._read(op)

    async def peer_by_handle(self, handle_hash: bytes) -> Peer | None:
        def op(conn: sqlite3.Connection) -> Peer | None:
            row = conn.execute(
                f"SELECT {_PEER_COLS} FROM peers WHERE id ="
                " (SELECT peer_id FROM mcp_handles WHERE handle_hash = ?)",
                (handle_hash,),
            ).fetchone()
            return _peer(row) if row else None

        return await self._read(op)

    async def create_handle(self, peer_id: int, handle_hash: bytes, now: float, keep: int) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO mcp_handles (handle_hash, peer_id, created_at) VALUES (?, ?, ?)",
                (handle_hash, peer_id, now),
            )
            conn.execute(
                "DELETE FROM mcp_handles WHERE peer_id = ? AND handle_hash NOT IN ("
                " SELECT handle_hash FROM mcp_handles WHERE peer_id = ?"
                " ORDER BY created_at DESC LIMIT ?)",
                (peer_id, peer_id, keep),
            )

        await self._write(op)

    async def create_watch_credential(
        self,
        peer_id: int,
        digest: bytes,
        kind: str,
        now: float,
        expires_at: float | None,
        keep: int,
    ) -> None:
        def op(conn: sqlite3.Connection) -> None:
            WatchCredentials(conn).add(peer_id, digest, kind, now, expires_at, keep)

        await self._write(op)

    async def redeem_watch_ticket(
        self, ticket_hash: bytes, key_hash: bytes, now: float, keep: int
    ) -> Peer | None:
        def op(conn: sqlite3.Connection) -> Peer | None:
            credentials = WatchCredentials(conn)
            peer_id = credentials.spend_ticket(ticket_hash, now)
            if peer_id is None:
                return None
            found = conn.execute(f"SELECT {_PEER_COLS} FROM peers WHERE id = ?", (peer_id,))
            peer_row = found.fetchone()
            if peer_row is None:
                return None
            credentials.add(peer_id, key_hash, "key", now, None, keep)
            return _peer(peer_row)

        return await self._write(op)

    async def peer_by_watch_key(self, key_hash: bytes) -> Peer | None:
        def op(conn: sqlite3.Connection) -> Peer | None:
            peer_id = WatchCredentials(conn).key_holder(key_hash)
            if peer_id is None:
                return None
            found = conn.execute(f"SELECT {_PEER_COLS} FROM peers WHERE id = ?", (peer_id,))
            peer_row = found.fetchone()
            return _peer(peer_row) if peer_row else None

        return await self._read(op)

    async def set_offline(self, peer_id: int, now: float) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            self._recipients.clear()
            cur = conn.execute(
                "UPDATE peers SET state = 'reaped', reaped_at = ?, offline_at = ?"
                " WHERE id = ? AND state IN ('active', 'reaped') AND offline_at IS NULL",
                (now, now, peer_id),
            )
            return cur.rowcount == 1

        return await self._write(op)

    async def list_peers(self, states: Iterable[PeerState]) -> list[Peer]:
        wanted = [s.value for s in states]

        def op(conn: sqlite3.Connection) -> list[Peer]:
            marks = ",".join("?" * len(wanted))
            rows = conn.execute(
                f"SELECT {_PEER_COLS} FROM peers WHERE state IN ({marks}) ORDER BY name, id",
                wanted,
            ).fetchall()
            return [_peer(r) for r in rows]

        return await self._read(op)

    async def update_peer(self, peer_id: int, fields: Mapping[str, Any]) -> None:
        unknown = set(fields) - _PEER_FIELDS
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        if not fields:
            return
        values = [json.dumps(v) if k == "skills" else v for k, v in fields.items()]
        assignments = ", ".join(f"{k} = ?" for k in fields)

        def op(conn: sqlite3.Connection) -> None:
            if "name" in fields:
                self._recipients.clear()
                _case_twin(conn, fields["name"], peer_id)
            try:
                conn.execute(f"UPDATE peers SET {assignments} WHERE id = ?", (*values, peer_id))
            except sqlite3.IntegrityError:
                raise NameInUse(
                    f"the name {fields.get('name')!r} is in use by another peer"
                ) from None

        await self._write(op)

    async def revive_peer(self, peer_id: int, now: float) -> None:
        def op(conn: sqlite3.Connection) -> None:
            self._recipients.clear()
            try:
                conn.execute(
                    "UPDATE peers SET state = 'active', reaped_at = NULL, offline_at = NULL,"
                    " last_seen = ? WHERE id = ? AND state = 'reaped'",
                    (now, peer_id),
                )
            except sqlite3.IntegrityError:
                name = conn.execute("SELECT name FROM peers WHERE id = ?", (peer_id,)).fetchone()
                # Unreachable while names are held through the grace period; kept so that a
                # database in an unexpected state answers clearly rather than with a 500.
                raise NameTaken(
                    f"while this session was away, another peer took the name {name[0]!r}; "
                    "come back with your credentials and a new name to keep your inbox",
                    hint=Hint.RESUME,
                    name=name[0],
                ) from None

        await self._write(op)

    async def touch_peers(self, last_seen: Mapping[int, float]) -> None:
        if not last_seen:
            return
        rows = [(ts, pid) for pid, ts in last_seen.items()]

        def op(conn: sqlite3.Connection) -> None:
            conn.executemany("UPDATE peers SET last_seen = MAX(last_seen, ?) WHERE id = ?", rows)

        await self._write(op)

    async def reap_peers(
        self, idle_before: float, now: float, exclude: Iterable[int]
    ) -> list[Peer]:
        skip = set(exclude)

        def op(conn: sqlite3.Connection) -> list[Peer]:
            self._recipients.clear()
            rows = conn.execute(
                f"SELECT {_PEER_COLS} FROM peers WHERE state = 'active' AND last_seen < ?",
                (idle_before,),
            ).fetchall()
            reaped = [p for p in map(_peer, rows) if p.id not in skip]
            conn.executemany(
                "UPDATE peers SET state = 'reaped', reaped_at = ? WHERE id = ?",
                [(now, p.id) for p in reaped],
            )
            for p in reaped:
                p.state = PeerState.REAPED
                p.reaped_at = now
            return reaped

        return await self._write(op)

    async def forget_peers(self, reaped_before: float, now: float) -> list[Peer]:
        def op(conn: sqlite3.Connection) -> list[Peer]:
            self._recipients.clear()
            rows = conn.execute(
                f"SELECT {_PEER_COLS} FROM peers WHERE state = 'reaped' AND reaped_at < ?",
                (reaped_before,),
            ).fetchall()
            gone = [_peer(r) for r in rows]
            for p in gone:
                _end(conn, p.id, PeerState.FORGOTTEN, now)
                p.state = PeerState.FORGOTTEN
            return gone

        return await self._write(op)

    async def end_peer(self, peer_id: int, state: PeerState, now: float) -> None:
        if not state.terminal:
            raise ValueError(f"{state} is not terminal")

        def op(conn: sqlite3.Connection) -> None:
            self._recipients.clear()
            _end(conn, peer_id, state, now)

        await self._write(op)

    async def peer_channels(self, peer_id: int) -> list[str]:
        def op(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT channel FROM channel_members WHERE peer_id = ? ORDER BY channel",
                (peer_id,),
            ).fetchall()
            return [r[0] for r in rows]

        return await self._read(op)


def _end(conn: sqlite3.Connection, peer_id: int, state: PeerState, now: float) -> None:
    conn.execute(
        "UPDATE peers SET state = ?, ended_at = ? WHERE id = ?", (state.value, now, peer_id)
    )
    conn.execute("DELETE FROM deliveries WHERE peer_id = ?", (peer_id,))
    conn.execute("DELETE FROM channel_members WHERE peer_id = ?", (peer_id,))
    conn.execute("DELETE FROM mcp_handles WHERE peer_id = ?", (peer_id,))
    WatchCredentials(conn).forget_peer(peer_id)
