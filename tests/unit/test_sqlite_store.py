"""SQLite-specific behaviour of its engine: group commit, durability settings, the
single-process lock."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from caucus.domain.messages import NewMessage
from caucus.domain.names import parse_target
from caucus.errors import StorageError
from caucus.ids import hash_token, new_token
from caucus.storage.sqlite_engine import SqliteEngine
from caucus.storage.sqlite_runners import GroupCommitWriter


async def test_concurrent_sends_share_commits(tmp_path: Path) -> None:
    store = SqliteEngine(tmp_path / "g.db")
    await store.open()
    try:
        for name in ("a", "b"):
            digest = hash_token(new_token())
            await store.write(
                lambda r: r.peers.create(
                    name=name,  # noqa: B023
                    token_hash=digest,  # noqa: B023
                    skills=[],
                    description="",
                    now=1.0,
                )
            )
        a = await store.read(lambda r: r.peers.holder("a"))
        assert a is not None
        messages = [
            NewMessage(
                id=f"m{i}", ts=1.0, sender_id=a.id, sender="a", to="b", kind="chat", content="x"
            )
            for i in range(300)
        ]
        before = store.stats["write_batches"]
        await asyncio.gather(
            *[
                store.write(lambda r, m=m: r.inbox.append(m, parse_target("b")))  # type: ignore[misc]
                for m in messages
            ]
        )
        batches = store.stats["write_batches"] - before
        # 300 operations queued at once are committed together, not one fsync each.
        assert batches < 50
    finally:
        await store.close()


async def test_the_database_is_in_wal_mode_with_full_sync(tmp_path: Path) -> None:
    store = SqliteEngine(tmp_path / "w.db")
    await store.open()
    await store.close()
    conn = sqlite3.connect(tmp_path / "w.db")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


async def test_a_batch_of_claims_alone_commits_without_syncing(tmp_path: Path) -> None:
    """What may be lost to a power cut (a receive's claim) commits at NORMAL, so it does not
    wait for the disk; a batch holding anything else (a send beside it) syncs as configured."""
    writer = GroupCommitWriter(
        lambda: sqlite3.connect(tmp_path / "s.db", isolation_level=None, check_same_thread=False),
        batch_max=64,
        relax=(2, 1),
    )
    await writer.open()

    def level(conn: sqlite3.Connection) -> int:
        return int(conn.execute("PRAGMA synchronous").fetchone()[0])

    try:
        assert await writer.submit(level, durable=False) == 1
        assert await writer.submit(level) == 2
        # Queued in one turn, one batch: the durable one decides for both.
        both = await asyncio.gather(writer.submit(level, durable=False), writer.submit(level))
        assert both == [2, 2]
        assert await writer.submit(level, durable=False) == 1
    finally:
        await writer.close()


async def test_an_engine_set_to_normal_never_syncs_harder_for_claims(tmp_path: Path) -> None:
    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(tmp_path / "n.db", isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA synchronous=1")
        return conn

    writer = GroupCommitWriter(connect, batch_max=64, relax=(1, 1))
    await writer.open()
    try:
        for durable in (False, True):
            got = await writer.submit(
                lambda conn: conn.execute("PRAGMA synchronous").fetchone()[0], durable=durable
            )
            assert got == 1
    finally:
        await writer.close()


async def test_a_second_hub_cannot_open_the_same_database(tmp_path: Path) -> None:
    first = SqliteEngine(tmp_path / "one.db")
    await first.open()
    try:
        with pytest.raises(StorageError, match="in use by another hub"):
            await SqliteEngine(tmp_path / "one.db").open()
    finally:
        await first.close()
    again = SqliteEngine(tmp_path / "one.db")
    await again.open()
    await again.close()


async def test_the_wal_is_cut_back_by_its_size_limit_not_by_each_slice(tmp_path: Path) -> None:
    """Retention's slices give pages back without a truncating checkpoint (it would hold every
    write while it copied the whole WAL); the writer's WAL size limit cuts a grown WAL back
    when a checkpoint restarts it."""
    store = SqliteEngine(tmp_path / "j.db")
    await store.open()
    try:
        limit = await store._writer.submit(
            lambda conn: conn.execute("PRAGMA journal_size_limit").fetchone()[0]
        )
        assert limit == 64 * 2**20
    finally:
        await store.close()
