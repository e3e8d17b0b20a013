"""What every part of the SQLite store shares: row shapes and how operations are run."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar

from caucus.domain.messages import (
    Message,
)
from caucus.domain.peers import Peer, PeerState
from caucus.storage.sqlite_runners import GroupCommitWriter, ReaderThread

T = TypeVar("T")


def stored_json(text: str) -> Any:
    """A JSON column as written. A lone UTF-16 surrogate (which the hub refuses now, but an
    older one stored) is read back as U+FFFD, so no value once stored can break a read."""
    value = json.loads(text)
    if "\\ud" in text or "\\uD" in text:
        value = _repaired(value)
    return value


def _repaired(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_repaired(v) for v in value]
    if isinstance(value, dict):
        return {_repaired(k): _repaired(v) for k, v in value.items()}
    return value


_PEER_COLS = (
    "id, name, token_hash, state, skills, description, status, status_at, created_at, "
    "last_seen, reaped_at, delivery_paused, offline_at"
)
_MSG_COLS = "m.seq, m.id, m.ts, m.sender, m.target, m.kind, m.content, m.meta, m.thread, m.reply_to"
# (claim the visible deliveries, when does the next in-flight one become visible), for all lanes
# or for the priority lane only (a paused peer).
_CLAIM_ALL = (
    f"SELECT d.delivery_count, {_MSG_COLS} FROM deliveries d JOIN messages m ON m.seq = d.seq"
    " WHERE d.peer_id = ? AND d.visible_at <= ? ORDER BY d.seq LIMIT ?",
    "SELECT MIN(visible_at) FROM deliveries WHERE peer_id = ? AND visible_at > ?",
)
_CLAIM_PRIORITY = (
    f"SELECT d.delivery_count, {_MSG_COLS} FROM deliveries d JOIN messages m ON m.seq = d.seq"
    " WHERE d.peer_id = ? AND d.visible_at <= ? AND d.lane = 0 ORDER BY d.seq LIMIT ?",
    "SELECT MIN(visible_at) FROM deliveries WHERE peer_id = ? AND visible_at > ? AND lane = 0",
)
_PEER_FIELDS = frozenset(
    {
        "name",
        "token_hash",
        "skills",
        "description",
        "status",
        "status_at",
        "last_seen",
        "delivery_paused",
    }
)


def _peer(row: sqlite3.Row | tuple[Any, ...]) -> Peer:
    return Peer(
        id=row[0],
        name=row[1],
        token_hash=bytes(row[2]),
        state=PeerState(row[3]),
        skills=stored_json(row[4]),
        description=row[5],
        status=row[6],
        status_at=row[7],
        created_at=row[8],
        last_seen=row[9],
        reaped_at=row[10],
        delivery_paused=bool(row[11]),
        offline_at=row[12],
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
        meta=stored_json(r[7]) if r[7] is not None else None,
        thread=r[8],
        reply_to=r[9],
    )


def _names_json(names: list[str]) -> str:
    # Peer names are letters, digits, '.', '_' and '-': a JSON array needs no escaping.
    return '["' + '","'.join(names) + '"]' if names else "[]"


class SqliteOps:
    """Base of the store's parts: runs an operation on the writer or the reader."""

    _writer: GroupCommitWriter
    _reader: ReaderThread
    # name -> (id, name, state) of the peer a direct message to that name reaches. Used and
    # cleared only by write operations (on the writer), so it never disagrees with the
    # database: every operation that changes a peer's name or state clears it, and so does
    # every rolled-back batch.
    _recipients: dict[str, tuple[int, str, str]]
    _lease: int  # the last claim's lease number; claims run on the writer only

    async def _write(self, op: Callable[[sqlite3.Connection], T]) -> T:
        result: T = await self._writer.submit(op)
        return result

    async def _read(self, op: Callable[[sqlite3.Connection], T]) -> T:
        result: T = await self._reader.submit(op)
        return result
