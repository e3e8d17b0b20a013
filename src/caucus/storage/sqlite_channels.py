"""Channel operations of the SQLite store."""

from __future__ import annotations

import sqlite3
from typing import Any

from caucus.domain.caps import check_channels
from caucus.domain.channels import Channel
from caucus.errors import (
    ChannelClosed,
    NotFound,
)
from caucus.storage.sqlite_base import (
    SqliteOps,
)


class ChannelOps(SqliteOps):
    async def join_channel(
        self, peer_id: int, channel: str, now: float, max_channels: int | None = None
    ) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            if max_channels is not None:
                member = conn.execute(
                    "SELECT 1 FROM channel_members WHERE channel = ? AND peer_id = ?",
                    (channel, peer_id),
                ).fetchone()
                (count,) = conn.execute(
                    "SELECT COUNT(*) FROM channel_members WHERE peer_id = ?", (peer_id,)
                ).fetchone()
                check_channels(member is not None, count, max_channels, channel)
            conn.execute(
                "INSERT OR IGNORE INTO channels (name, created_at) VALUES (?, ?)", (channel, now)
            )
            closed = conn.execute(
                "SELECT closed_at FROM channels WHERE name = ?", (channel,)
            ).fetchone()[0]
            if closed is not None:
                raise ChannelClosed(f"the operator closed {channel}", channel=channel)
            cur = conn.execute(
                "INSERT OR IGNORE INTO channel_members (channel, peer_id, joined_at)"
                " VALUES (?, ?, ?)",
                (channel, peer_id, now),
            )
            return cur.rowcount == 1

        return await self._write(op)

    async def close_channel(self, channel: str, now: float) -> list[int]:
        """Close a channel: it keeps its history, loses its members and refuses joins and sends.
        Returns the ids of the members it had. Raises NotFound for an unknown channel."""

        def op(conn: sqlite3.Connection) -> list[int]:
            row = conn.execute(
                "SELECT closed_at FROM channels WHERE name = ?", (channel,)
            ).fetchone()
            if row is None:
                raise NotFound(f"there is no channel {channel}", channel=channel)
            members = [
                r[0]
                for r in conn.execute(
                    "SELECT peer_id FROM channel_members WHERE channel = ?", (channel,)
                )
            ]
            conn.execute("DELETE FROM channel_members WHERE channel = ?", (channel,))
            conn.execute(
                "UPDATE channels SET closed_at = COALESCE(closed_at, ?) WHERE name = ?",
                (now, channel),
            )
            return members

        return await self._write(op)

    async def leave_channel(self, peer_id: int, channel: str) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            cur = conn.execute(
                "DELETE FROM channel_members WHERE channel = ? AND peer_id = ?", (channel, peer_id)
            )
            return cur.rowcount == 1

        return await self._write(op)

    async def set_topic(self, channel: str, topic: str, by: str, now: float) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE channels SET topic = ?, topic_by = ?, topic_at = ? WHERE name = ?",
                (topic, by, now, channel),
            )

        await self._write(op)

    async def get_channel(self, channel: str) -> Channel | None:
        def op(conn: sqlite3.Connection) -> Channel | None:
            found = _channels(conn, channel)
            return found[0] if found else None

        return await self._read(op)

    async def list_channels(self) -> list[Channel]:
        return await self._read(lambda conn: _channels(conn, None))


def _channels(conn: sqlite3.Connection, name: str | None) -> list[Channel]:
    cols = "SELECT name, topic, created_at, topic_by, topic_at, closed_at FROM channels"
    if name is None:
        rows = conn.execute(cols + " ORDER BY name").fetchall()
    else:
        rows = conn.execute(cols + " WHERE name = ?", (name,)).fetchall()
    channels = {r[0]: Channel(r[0], r[1], r[2], [], r[3], r[4], r[5]) for r in rows}
    if not channels:
        return []
    member_sql = (
        "SELECT cm.channel, p.name FROM channel_members cm JOIN peers p ON p.id = cm.peer_id"
        " WHERE p.state IN ('active', 'reaped')"
    )
    params: tuple[Any, ...] = ()
    if name is not None:
        member_sql += " AND cm.channel = ?"
        params = (name,)
    for channel, member in conn.execute(member_sql + " ORDER BY p.name", params):
        if channel in channels:
            channels[channel].members.append(member)
    return list(channels.values())
