"""Message, delivery and room-state operations of the SQLite store."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from caucus.domain.caps import HOUR, check_announcement
from caucus.domain.messages import (
    AppendOutcome,
    ClaimResult,
    Delivery,
    Message,
    NewMessage,
    Peek,
    Recipient,
    SendReceipt,
)
from caucus.domain.names import Target, TargetKind
from caucus.errors import (
    ChannelClosed,
    Hint,
    InvalidRequest,
    NotFound,
)
from caucus.storage.sqlite_base import (
    _CLAIM_ALL,
    _CLAIM_PRIORITY,
    _MSG_COLS,
    SqliteOps,
    _message,
    _names_json,
    stored_json,
)


class MessageOps(SqliteOps):
    async def append_message(
        self, msg: NewMessage, target: Target, *, idempotency_since: float
    ) -> AppendOutcome:
        def op(conn: sqlite3.Connection) -> AppendOutcome:
            return self._append(conn, msg, target, idempotency_since)

        result: AppendOutcome = await self._writer.submit(op)
        return result

    def _append(
        self, conn: sqlite3.Connection, msg: NewMessage, target: Target, idem_since: float
    ) -> AppendOutcome:
        key = msg.idempotency_key
        if key is not None and msg.sender_id is not None:
            hit = conn.execute(
                "SELECT seq FROM idempotency WHERE sender_id = ? AND key = ? AND created_at >= ?",
                (msg.sender_id, key, idem_since),
            ).fetchone()
            if hit is not None:
                return _replay(conn, hit[0])
        thread = msg.thread
        if msg.reply_to is not None:
            parent = conn.execute(
                "SELECT id, thread FROM messages WHERE id = ?", (msg.reply_to,)
            ).fetchone()
            if parent is None:
                raise NotFound(f"reply_to {msg.reply_to!r} is not a known message id")
            if thread is None:
                thread = parent[1] or parent[0]

        joined = False
        sender_id = msg.sender_id if msg.sender_id is not None else -1
        if target.kind is TargetKind.PEER:
            row = self._recipients.get(target.name)
            if row is None:
                row = conn.execute(
                    "SELECT id, name, state FROM peers WHERE name = ?"
                    " AND state IN ('active','reaped') ORDER BY state = 'active' DESC, id DESC"
                    " LIMIT 1",
                    (target.name,),
                ).fetchone()
                if row is None:
                    raise NotFound(
                        f"no peer named {target.name!r} is here",
                        hint=Hint.LIST_PEERS,
                        to=target.name,
                    )
                self._recipients[target.name] = row
            if row[0] == sender_id:
                raise InvalidRequest("you cannot send a message to yourself", field="to")
            rows = [row]
        elif target.kind is TargetKind.ALL:
            rows = conn.execute(
                "SELECT id, name, state FROM peers WHERE state IN ('active','reaped') AND id != ?",
                (sender_id,),
            ).fetchall()
        else:
            found = conn.execute(
                "SELECT closed_at FROM channels WHERE name = ?", (target.name,)
            ).fetchone()
            if found is not None and found[0] is not None:
                raise ChannelClosed(f"the operator closed {target.name}", channel=target.name)
            if found is None and not msg.joins_channel:
                raise NotFound(
                    f"there is no channel {target.name}",
                    hint=Hint.LIST_CHANNELS,
                    channel=target.name,
                )
            if found is None:
                conn.execute(
                    "INSERT INTO channels (name, created_at) VALUES (?, ?)", (target.name, msg.ts)
                )
            if msg.sender_id is not None and msg.joins_channel:
                joined = (
                    conn.execute(
                        "INSERT OR IGNORE INTO channel_members (channel, peer_id, joined_at)"
                        " VALUES (?, ?, ?)",
                        (target.name, msg.sender_id, msg.ts),
                    ).rowcount
                    == 1
                )
            rows = conn.execute(
                "SELECT p.id, p.name, p.state FROM channel_members cm JOIN peers p"
                " ON p.id = cm.peer_id WHERE cm.channel = ? AND p.id != ?"
                " AND p.state IN ('active','reaped')",
                (target.name, sender_id),
            ).fetchall()

        if len(rows) == 1:  # the common case, a direct message
            (row,) = rows
            recipients = [Recipient(row[0], row[1], row[2] == "reaped")]
        else:
            recipients = sorted(
                (Recipient(r[0], r[1], r[2] == "reaped") for r in rows), key=lambda r: r.name
            )
        delivered_to = [r.name for r in recipients]
        missed = [r.name for r in recipients if r.reaped]
        cur = conn.execute(
            "INSERT INTO messages (id, ts, sender_id, sender, target, kind, content, meta, thread,"
            " reply_to, delivered_to, missed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                msg.id,
                msg.ts,
                msg.sender_id,
                msg.sender,
                msg.to,
                msg.kind,
                msg.content,
                json.dumps(msg.meta) if msg.meta is not None else None,
                thread,
                msg.reply_to,
                _names_json(delivered_to),
                _names_json(missed),
            ),
        )
        seq = cur.lastrowid
        assert seq is not None
        lane, ephemeral = int(msg.lane), int(msg.ephemeral)
        if len(recipients) == 1:
            conn.execute(
                "INSERT INTO deliveries (peer_id, seq, lane, ephemeral) VALUES (?, ?, ?, ?)",
                (recipients[0].peer_id, seq, lane, ephemeral),
            )
        else:
            conn.executemany(
                "INSERT INTO deliveries (peer_id, seq, lane, ephemeral) VALUES (?, ?, ?, ?)",
                [(r.peer_id, seq, lane, ephemeral) for r in recipients],
            )
        if key is not None and msg.sender_id is not None:
            conn.execute(
                "INSERT OR REPLACE INTO idempotency (sender_id, key, created_at, seq)"
                " VALUES (?, ?, ?, ?)",
                (msg.sender_id, key, msg.ts, seq),
            )
        message = Message(
            seq=seq,
            id=msg.id,
            ts=msg.ts,
            sender=msg.sender,
            to=msg.to,
            kind=msg.kind,
            content=msg.content,
            meta=msg.meta,
            thread=thread,
            reply_to=msg.reply_to,
        )
        receipt = SendReceipt(msg.id, seq, delivered_to, missed)
        return AppendOutcome(receipt, message, recipients, joined)

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
        claim_sql, next_sql = _CLAIM_PRIORITY if priority_only else _CLAIM_ALL

        def op(conn: sqlite3.Connection) -> ClaimResult:
            acked = _ack(conn, peer_id, (), ack_through) if ack_through is not None else 0
            rows = conn.execute(claim_sql, (peer_id, now, limit)).fetchall()
            if rows:
                self._lease += 1
                lease = self._lease
                conn.executemany(
                    "UPDATE deliveries SET delivery_count = delivery_count + 1, visible_at = ?,"
                    " lease = ? WHERE peer_id = ? AND seq = ?",
                    [(now + visibility, lease, peer_id, r[1]) for r in rows],
                )
                deliveries = [Delivery(_message(r, 1), r[0] + 1) for r in rows]
                self._claimed(conn, peer_id, deliveries, now)
                return ClaimResult(deliveries, acked, None)
            nxt = conn.execute(next_sql, (peer_id, now)).fetchone()[0]
            return ClaimResult([], acked, nxt)

        result: ClaimResult = await self._writer.submit(op)
        return result

    def _claimed(
        self, conn: sqlite3.Connection, peer_id: int, deliveries: list[Delivery], now: float
    ) -> None:
        """Called inside a claim's transaction with what it hands out (tasks claim theirs)."""
        return

    async def ack(
        self, peer_id: int, *, seqs: Iterable[int] = (), through: int | None = None
    ) -> int:
        wanted = list(seqs)
        return await self._write(lambda conn: _ack(conn, peer_id, wanted, through))

    async def release_inflight(self, peer_id: int, now: float) -> int:
        def op(conn: sqlite3.Connection) -> int:
            conn.execute("DELETE FROM deliveries WHERE peer_id = ? AND ephemeral = 1", (peer_id,))
            return conn.execute(
                "UPDATE deliveries SET visible_at = 0"
                " WHERE peer_id = ? AND delivery_count > 0 AND visible_at > ?",
                (peer_id, now),
            ).rowcount

        return await self._write(op)

    async def peek(self, peer_id: int) -> Peek:
        def op(conn: sqlite3.Connection) -> Peek:
            pending = conn.execute(
                "SELECT COUNT(*) FROM deliveries WHERE peer_id = ?", (peer_id,)
            ).fetchone()[0]
            row = conn.execute(
                f"SELECT {_MSG_COLS} FROM deliveries d JOIN messages m ON m.seq = d.seq"
                " WHERE d.peer_id = ? ORDER BY d.seq DESC LIMIT 1",
                (peer_id,),
            ).fetchone()
            return Peek(pending, _message(row) if row else None)

        return await self._read(op)

    async def messages_after(
        self,
        seq: int,
        limit: int,
        *,
        since: float | None = None,
        until: float | None = None,
    ) -> list[Message]:
        def op(conn: sqlite3.Connection) -> list[Message]:
            sql = f"SELECT {_MSG_COLS}, m.delivered_to FROM messages m WHERE m.seq > ?"
            params: list[Any] = [seq]
            if since is not None:
                sql += " AND m.ts >= ?"
                params.append(since)
            if until is not None:
                sql += " AND m.ts < ?"
                params.append(until)
            rows = conn.execute(sql + " ORDER BY m.seq LIMIT ?", (*params, limit)).fetchall()
            out = []
            for r in rows:
                message = _message(r)
                message.delivered_to = stored_json(r[10])
                out.append(message)
            return out

        return await self._read(op)

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
        def op(conn: sqlite3.Connection) -> list[Message]:
            sql = f"SELECT {_MSG_COLS}, m.delivered_to FROM messages m WHERE 1 = 1"
            params: list[Any] = []
            if before is not None:
                sql += " AND m.seq < ?"
                params.append(before)
            if peer is not None:
                # Names need no JSON escaping, so the quoted name finds it in delivered_to.
                sql += " AND (m.sender = ? OR m.target = ? OR instr(m.delivered_to, ?) > 0)"
                params += [peer, peer, json.dumps(peer)]
            if channel is not None:
                sql += " AND m.target = ?"
                params.append(channel)
            if kind is not None:
                sql += " AND m.kind = ?"
                params.append(kind)
            if text:
                sql += " AND instr(lower(m.content), lower(?)) > 0"
                params.append(text)
            rows = conn.execute(sql + " ORDER BY m.seq DESC LIMIT ?", (*params, limit)).fetchall()
            out = []
            for r in reversed(rows):
                message = _message(r)
                message.delivered_to = stored_json(r[10])
                out.append(message)
            return out

        return await self._read(op)

    async def last_seq(self) -> int:
        def op(conn: sqlite3.Connection) -> int:
            value: int = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM messages").fetchone()[0]
            return value

        return await self._read(op)

    async def pending_count(self) -> int:
        def op(conn: sqlite3.Connection) -> int:
            value: int = conn.execute("SELECT COUNT(*) FROM deliveries").fetchone()[0]
            return value

        return await self._read(op)

    async def message_counts(self) -> dict[str, int]:
        def op(conn: sqlite3.Connection) -> dict[str, int]:
            rows = conn.execute(
                "SELECT sender, COUNT(*) FROM messages WHERE sender_id IS NOT NULL GROUP BY sender"
            ).fetchall()
            return {r[0]: r[1] for r in rows}

        return await self._read(op)

    # --- room state -----------------------------------------------------------------------
    async def room_state(self) -> dict[str, Any]:
        def op(conn: sqlite3.Connection) -> dict[str, Any]:
            rows = conn.execute("SELECT key, value FROM room_state").fetchall()
            return {r[0]: stored_json(r[1]) for r in rows}

        return await self._read(op)

    async def set_room_state(self, key: str, value: Any) -> None:
        encoded = json.dumps(value)

        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO room_state (key, value) VALUES (?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, encoded),
            )

        await self._write(op)

    async def append_announcement(
        self, msg: NewMessage, *, min_interval: float, hourly: int
    ) -> AppendOutcome:
        """Announce to everyone, unless the sender's caps refuse it (then nothing is stored)."""
        return await self._write(lambda conn: self._announce(conn, msg, min_interval, hourly))

    def _announce(
        self, conn: sqlite3.Connection, msg: NewMessage, min_interval: float, hourly: int
    ) -> AppendOutcome:
        if msg.sender_id is not None:
            last, count = conn.execute(
                "SELECT MAX(ts), COUNT(*) FROM announcements WHERE sender_id = ? AND ts > ?",
                (msg.sender_id, msg.ts - HOUR),
            ).fetchone()
            check_announcement(msg.ts, last, count, min_interval, hourly)
        outcome = self._append(conn, msg, Target(TargetKind.ALL, "all"), 0.0)
        conn.execute(
            "INSERT INTO announcements (seq, sender_id, sender, ts) VALUES (?, ?, ?, ?)",
            (outcome.message.seq, msg.sender_id, msg.sender, msg.ts),
        )
        return outcome

    async def purge_idempotency(self, before: float) -> int:
        def op(conn: sqlite3.Connection) -> int:
            return conn.execute("DELETE FROM idempotency WHERE created_at < ?", (before,)).rowcount

        return await self._write(op)


def _ack(conn: sqlite3.Connection, peer_id: int, seqs: Iterable[int], through: int | None) -> int:
    count = 0
    wanted = list(seqs)
    if wanted:
        count += conn.executemany(
            "DELETE FROM deliveries WHERE peer_id = ? AND seq = ? AND delivery_count > 0",
            [(peer_id, s) for s in wanted],
        ).rowcount
    if through is not None:
        # Only the batch that held `through`: a batch the client never saw (a lost response)
        # must not be acknowledged by a later cursor. It comes back after its visibility timeout.
        count += conn.execute(
            "DELETE FROM deliveries WHERE peer_id = ? AND seq <= ? AND delivery_count > 0"
            " AND lease = (SELECT lease FROM deliveries WHERE peer_id = ? AND seq = ?)",
            (peer_id, through, peer_id, through),
        ).rowcount
    return count


def _replay(conn: sqlite3.Connection, seq: int) -> AppendOutcome:
    row = conn.execute(
        f"SELECT {_MSG_COLS}, m.delivered_to, m.missed FROM messages m WHERE m.seq = ?", (seq,)
    ).fetchone()
    message = _message(row)
    receipt = SendReceipt(
        message.id, message.seq, stored_json(row[10]), stored_json(row[11]), duplicate=True
    )
    return AppendOutcome(receipt, message, [], False)
