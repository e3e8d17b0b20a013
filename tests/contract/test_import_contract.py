"""The contract for carrying history into a room (`caucus db import`, issue 53), run against
each backend: the messages arrive in order as archived history (no inbox holds them), a reply
points at its parent's number here, a second import adds nothing, search finds them, and no
identity travels: a new holder of a name does not read the imported directs to that name."""

from __future__ import annotations

from caucus.domain.peers import Peer
from caucus.services.history_import import HistoryImport, archived_row
from caucus.services.hub import Hub
from caucus.wire.messages import RoutedMessage
from tests.contract.conftest import RoomFactory


async def join(room: Hub, name: str) -> Peer:
    return (await room.principals.register(name=name)).peer


async def exported(room: Hub) -> list[dict[str, object]]:
    """The room's transcript as its JSON export holds it."""
    found = await room.history.after(0, 1000)
    return [RoutedMessage.of(m).model_dump(mode="json") for m in found]


def rows_of(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    return [archived_row(RoutedMessage.model_validate(m).message(), 8192) for m in messages]


async def old_room(rooms: RoomFactory) -> list[dict[str, object]]:
    old = await rooms()
    alice, bob = await join(old, "alice"), await join(old, "bob")
    for p in (alice, bob):
        await old.channels.join(p, "#ops")
    asked = await old.delivery.send(alice, to="bob", content="the kumquat secret")
    await old.delivery.send(bob, to="alice", content="kumquat noted", reply_to=asked.message_id)
    await old.delivery.send(alice, to="#ops", content="zebrafish plan for ops")
    await old.delivery.send(bob, to="all", content="zebrafish lunch for everyone")
    return await exported(old)


async def test_history_arrives_archived_in_order_once(rooms: RoomFactory) -> None:
    history = await old_room(rooms)
    room = await rooms()
    first = await join(room, "first")  # the room has its own traffic already
    await room.delivery.send(first, to="all", content="hello new room")
    loader = HistoryImport(room._db, 8192)
    before = _wal_position(room)
    report = await loader.load(rows_of(history), lambda stage, n: None)
    assert (report.read, report.added, report.skipped) == (4, 4, 0)
    if before is not None:  # and what it dirtied written out: a checkpoint began after it
        assert _checkpointed_since(room, before)
    again = await loader.load(rows_of(history), lambda stage, n: None)
    assert (again.read, again.added, again.skipped) == (4, 0, 4)
    now = await room.history.after(0, 100)
    assert [m.content for m in now] == ["hello new room"] + [str(m["content"]) for m in history]
    assert [m.id for m in now[1:]] == [m["id"] for m in history]
    asked, answer = now[1], now[2]
    assert (answer.reply_to, answer.reply_seq, answer.reply_sender) == (
        asked.id,
        asked.seq,
        "alice",
    )
    assert now[1].delivered_to == ["bob"]
    if room._db.dialect == "postgres":  # settled: nothing left for autovacuum under load
        import psycopg

        with psycopg.connect(room._db.dsn) as conn:  # type: ignore[attr-defined]
            settled = conn.execute(
                "SELECT last_vacuum IS NOT NULL AND last_analyze IS NOT NULL "
                "FROM pg_stat_user_tables WHERE relname = 'messages'"
            ).fetchone()
        assert settled == (True,)
    assert await room.history.waiting() == 0  # archived: nobody's inbox


def _wal_position(room: Hub) -> str | None:
    """PostgreSQL's WAL position now (None on SQLite)."""
    if room._db.dialect != "postgres":
        return None
    import psycopg

    with psycopg.connect(room._db.dsn) as conn:  # type: ignore[attr-defined]
        row = conn.execute("SELECT pg_current_wal_lsn()::text").fetchone()
    return str(row[0]) if row else None


def _checkpointed_since(room: Hub, position: str) -> bool:
    import psycopg

    with psycopg.connect(room._db.dsn) as conn:  # type: ignore[attr-defined]
        row = conn.execute(
            "SELECT redo_lsn >= %s::pg_lsn FROM pg_control_checkpoint()", (position,)
        ).fetchone()
    return bool(row and row[0])


async def test_no_identity_travels_with_imported_history(rooms: RoomFactory) -> None:
    history = await old_room(rooms)
    room = await rooms()
    await HistoryImport(room._db, 8192).load(rows_of(history), lambda stage, n: None)
    bob = await join(room, "bob")  # the same name, another identity
    carol = await join(room, "carol")
    await room.channels.join(carol, "#ops")

    async def said(peer: Peer | None, q: str) -> list[str]:
        return sorted(h.message.content for h in (await room.search.search(peer, q)).hits)

    assert await said(bob, "kumquat") == []  # the old bob's directs are not the new bob's
    assert await said(bob, "zebrafish") == ["zebrafish lunch for everyone"]
    assert await said(carol, "zebrafish") == [
        "zebrafish lunch for everyone",
        "zebrafish plan for ops",
    ]
    assert await said(None, "kumquat") == ["kumquat noted", "the kumquat secret"]
    assert await room.history.sent_by() == {}  # nobody here sent them
