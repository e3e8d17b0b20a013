"""The embedded SQLite store: WAL, one group-committing writer, one reader thread.

Each method is one operation: a function of a connection, run by `sqlite_runners` (ADR 0001).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any, TypeVar

from caucus.domain.channels import Channel
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
from caucus.domain.peers import Peer, PeerState
from caucus.errors import (
    InvalidRequest,
    NameInUse,
    NameTaken,
    NotFound,
    StorageError,
)
from caucus.storage.migrate import migrate_sqlite
from caucus.storage.sqlite_runners import GroupCommitWriter, ReaderThread

T = TypeVar("T")
_PEER_COLS = (
    "id, name, token_hash, state, skills, description, status, status_at, created_at, "
    "last_seen, reaped_at"
)
_MSG_COLS = "m.seq, m.id, m.ts, m.sender, m.target, m.kind, m.content, m.meta, m.thread, m.reply_to"
_PEER_FIELDS = frozenset(
    {"name", "token_hash", "skills", "description", "status", "status_at", "last_seen"}
)


def _peer(row: sqlite3.Row | tuple[Any, ...]) -> Peer:
    return Peer(
        id=row[0],
        name=row[1],
        token_hash=bytes(row[2]),
        state=PeerState(row[3]),
        skills=json.loads(row[4]),
        description=row[5],
        status=row[6],
        status_at=row[7],
        created_at=row[8],
        last_seen=row[9],
        reaped_at=row[10],
    )


def _message(row: sqlite3.Row | tuple[Any, ...], offset: int = 0) -> Message:
    r = row[offset:]
    return Message(
        seq=r[0],
        id=r[1],
        ts=r[2],
        sender=r[3],
        to=r[4],
        kind=r[5],
        content=r[6],
        meta=json.loads(r[7]) if r[7] is not None else None,
        thread=r[8],
        reply_to=r[9],
    )


class SqliteStore:
    """`Store` on one SQLite file. Only one hub process may open a file at a time."""

    def __init__(self, path: Path, *, synchronous: str = "FULL", batch_max: int = 512) -> None:
        self.path = path
        self._synchronous = synchronous
        self._lease = 0
        self._lock_file: IO[str] | None = None
        # name -> (id, name, state) of the peer a direct message to that name reaches. Used and
        # cleared only by write operations (on the writer), so it never disagrees with the
        # database: every operation that changes a peer's name or state clears it, and so does
        # every rolled-back batch.
        self._recipients: dict[str, tuple[int, str, str]] = {}
        self._writer = GroupCommitWriter(
            self._connect_writer, batch_max=batch_max, on_abort=self._recipients.clear
        )
        self._reader = ReaderThread(self._connect_reader)

    # --- lifecycle -------------------------------------------------------------------------
    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._take_lock()
        try:
            await self._writer.open()
            await self._reader.open()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        await self._reader.close()
        await self._writer.close()
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    @property
    def stats(self) -> dict[str, int]:
        return {"write_batches": self._writer.batches, "write_ops": self._writer.ops}

    def _take_lock(self) -> None:
        lock_path = self.path.with_name(self.path.name + ".lock")
        handle = open(lock_path, "a+", encoding="utf-8")  # noqa: SIM115 - held until close()
        try:
            import fcntl

            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                handle.close()
                raise StorageError(
                    f"{self.path} is in use by another hub (pid {holder}); stop it or use --db "
                    "to choose another file"
                ) from None
        except ImportError:  # no advisory locks on this platform; SQLite still guards the file
            pass
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self._lock_file = handle

    def _connect_writer(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={self._synchronous}")
        conn.execute("PRAGMA busy_timeout=5000")
        migrate_sqlite(conn)
        self._lease = conn.execute("SELECT COALESCE(MAX(lease), 0) FROM deliveries").fetchone()[0]
        return conn

    def _connect_reader(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=5000")
        conn.execute("PRAGMA query_only=ON")
        return conn

    async def _write(self, op: Callable[[sqlite3.Connection], T]) -> T:
        result: T = await self._writer.submit(op)
        return result

    async def _read(self, op: Callable[[sqlite3.Connection], T]) -> T:
        result: T = await self._reader.submit(op)
        return result

    # --- peers -----------------------------------------------------------------------------
    async def create_peer(
        self,
        *,
        name: str,
        token_hash: bytes,
        skills: list[dict[str, Any]],
        description: str,
        now: float,
    ) -> Peer:
        def op(conn: sqlite3.Connection) -> Peer:
            self._recipients.clear()
            try:
                cur = conn.execute(
                    "INSERT INTO peers (name, token_hash, state, skills, description, created_at,"
                    " last_seen) VALUES (?, ?, 'active', ?, ?, ?, ?)",
                    (name, token_hash, json.dumps(skills), description, now, now),
                )
            except sqlite3.IntegrityError:
                raise NameInUse(f"the name {name!r} is in use by another peer") from None
            row = conn.execute(
                f"SELECT {_PEER_COLS} FROM peers WHERE id = ?", (cur.lastrowid,)
            ).fetchone()
            return _peer(row)

        return await self._write(op)

    async def peer_by_token(self, token_hash: bytes) -> Peer | None:
        def op(conn: sqlite3.Connection) -> Peer | None:
            row = conn.execute(
                f"SELECT {_PEER_COLS} FROM peers WHERE token_hash = ?", (token_hash,)
            ).fetchone()
            return _peer(row) if row else None

        return await self._read(op)

    async def peer_by_name(self, name: str) -> Peer | None:
        def op(conn: sqlite3.Connection) -> Peer | None:
            row = conn.execute(
                f"SELECT {_PEER_COLS} FROM peers WHERE name = ? AND state = 'active'", (name,)
            ).fetchone()
            return _peer(row) if row else None

        return await self._read(op)

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
                    "UPDATE peers SET state = 'active', reaped_at = NULL, last_seen = ?"
                    " WHERE id = ? AND state = 'reaped'",
                    (now, peer_id),
                )
            except sqlite3.IntegrityError:
                name = conn.execute("SELECT name FROM peers WHERE id = ?", (peer_id,)).fetchone()
                raise NameTaken(
                    f"while this session was away, another peer registered the name "
                    f"{name[0]!r}; call register with your token and a new name to keep your "
                    "inbox",
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

    # --- messages and deliveries ---------------------------------------------------------
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
                        f"no peer named {target.name!r} is here; GET /peers lists who is",
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
            conn.execute(
                "INSERT OR IGNORE INTO channels (name, created_at) VALUES (?, ?)",
                (target.name, msg.ts),
            )
            if msg.sender_id is not None:
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
        if len(recipients) == 1:
            conn.execute(
                "INSERT INTO deliveries (peer_id, seq) VALUES (?, ?)", (recipients[0].peer_id, seq)
            )
        else:
            conn.executemany(
                "INSERT INTO deliveries (peer_id, seq) VALUES (?, ?)",
                [(r.peer_id, seq) for r in recipients],
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
    ) -> ClaimResult:
        def op(conn: sqlite3.Connection) -> ClaimResult:
            acked = _ack(conn, peer_id, (), ack_through) if ack_through is not None else 0
            rows = conn.execute(
                f"SELECT d.delivery_count, {_MSG_COLS} FROM deliveries d JOIN messages m"
                " ON m.seq = d.seq WHERE d.peer_id = ? AND d.visible_at <= ?"
                " ORDER BY d.seq LIMIT ?",
                (peer_id, now, limit),
            ).fetchall()
            if rows:
                self._lease += 1
                lease = self._lease
                conn.executemany(
                    "UPDATE deliveries SET delivery_count = delivery_count + 1, visible_at = ?,"
                    " lease = ? WHERE peer_id = ? AND seq = ?",
                    [(now + visibility, lease, peer_id, r[1]) for r in rows],
                )
                deliveries = [Delivery(_message(r, 1), r[0] + 1) for r in rows]
                return ClaimResult(deliveries, acked, None)
            nxt = conn.execute(
                "SELECT MIN(visible_at) FROM deliveries WHERE peer_id = ? AND visible_at > ?",
                (peer_id, now),
            ).fetchone()[0]
            return ClaimResult([], acked, nxt)

        result: ClaimResult = await self._writer.submit(op)
        return result

    async def ack(
        self, peer_id: int, *, seqs: Iterable[int] = (), through: int | None = None
    ) -> int:
        wanted = list(seqs)
        return await self._write(lambda conn: _ack(conn, peer_id, wanted, through))

    async def release_inflight(self, peer_id: int, now: float) -> int:
        def op(conn: sqlite3.Connection) -> int:
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

    async def messages_after(self, seq: int, limit: int) -> list[Message]:
        def op(conn: sqlite3.Connection) -> list[Message]:
            rows = conn.execute(
                f"SELECT {_MSG_COLS} FROM messages m WHERE m.seq > ? ORDER BY m.seq LIMIT ?",
                (seq, limit),
            ).fetchall()
            return [_message(r) for r in rows]

        return await self._read(op)

    async def purge_idempotency(self, before: float) -> int:
        def op(conn: sqlite3.Connection) -> int:
            return conn.execute("DELETE FROM idempotency WHERE created_at < ?", (before,)).rowcount

        return await self._write(op)

    # --- channels --------------------------------------------------------------------------
    async def join_channel(self, peer_id: int, channel: str, now: float) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            conn.execute(
                "INSERT OR IGNORE INTO channels (name, created_at) VALUES (?, ?)", (channel, now)
            )
            cur = conn.execute(
                "INSERT OR IGNORE INTO channel_members (channel, peer_id, joined_at)"
                " VALUES (?, ?, ?)",
                (channel, peer_id, now),
            )
            return cur.rowcount == 1

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


def _names_json(names: list[str]) -> str:
    # Peer names are letters, digits, '.', '_' and '-': a JSON array needs no escaping.
    return '["' + '","'.join(names) + '"]' if names else "[]"


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


def _end(conn: sqlite3.Connection, peer_id: int, state: PeerState, now: float) -> None:
    conn.execute(
        "UPDATE peers SET state = ?, ended_at = ? WHERE id = ?", (state.value, now, peer_id)
    )
    conn.execute("DELETE FROM deliveries WHERE peer_id = ?", (peer_id,))
    conn.execute("DELETE FROM channel_members WHERE peer_id = ?", (peer_id,))


def _replay(conn: sqlite3.Connection, seq: int) -> AppendOutcome:
    row = conn.execute(
        f"SELECT {_MSG_COLS}, m.delivered_to, m.missed FROM messages m WHERE m.seq = ?", (seq,)
    ).fetchone()
    message = _message(row)
    receipt = SendReceipt(
        message.id, message.seq, json.loads(row[10]), json.loads(row[11]), duplicate=True
    )
    return AppendOutcome(receipt, message, [], False)


def _channels(conn: sqlite3.Connection, name: str | None) -> list[Channel]:
    if name is None:
        rows = conn.execute(
            "SELECT name, topic, created_at, topic_by, topic_at FROM channels ORDER BY name"
        ).fetchall()
    else:
        rows = conn.execute(
            "SELECT name, topic, created_at, topic_by, topic_at FROM channels WHERE name = ?",
            (name,),
        ).fetchall()
    channels = {r[0]: Channel(r[0], r[1], r[2], [], r[3], r[4]) for r in rows}
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
