"""Retention's size bound on each backend (issue 53): a room over it keeps about what fits
and no less. On PostgreSQL the files do not shrink when rows go (autovacuum only marks the
space free), so a bound read from the files alone would purge every finished message."""

from __future__ import annotations

import random

from caucus.services.hub import Hub
from caucus.services.retention import Retention
from tests.contract.conftest import RoomFactory

MESSAGES = 1200
WORDS = [f"w{n:04d}" for n in range(5000)]


async def test_a_room_over_its_size_bound_keeps_about_what_fits(rooms: RoomFactory) -> None:
    room: Hub = await rooms(retention_batch=40)
    alice = (await room.principals.register(name="alice")).peer
    bob = (await room.principals.register(name="bob")).peer
    empty = (await room.retention.size()).used_bytes
    pick = random.Random(53)
    for n in range(MESSAGES):
        words = " ".join(pick.choice(WORDS) for _ in range(150))  # ~900 bytes, not compressible
        await room.delivery.send(alice, to="bob", content=f"m{n} {words}")
        room.clock.advance(1.0)  # type: ignore[attr-defined]
    while got := (await room.delivery.receive(bob, wait=0, limit=200)).deliveries:
        await room.delivery.ack(bob, through=got[-1].message.seq)
    full = (await room.retention.size()).used_bytes
    assert full - empty > MESSAGES * 900  # the messages are what fills it
    bound = empty + (full - empty) // 2
    settings = room.settings.model_copy(update={"retention_max_bytes": bound})
    retention = Retention(room._db, room.clock, settings)
    for _ in range(20):  # maintenance rounds, as the loop would run them
        if (await retention.sweep()).total == 0:
            break
    assert (await retention.size()).used_bytes <= bound
    kept = MESSAGES - (await retention.dropped()).messages
    assert 0.35 * MESSAGES <= kept <= 0.65 * MESSAGES, kept  # about half fits: half stays
    assert (await retention.sweep()).total == 0  # and stays: under the bound, nothing goes


async def test_after_the_statistics_reset_the_bound_reads_the_catalog(
    rooms: RoomFactory, backend: str
) -> None:
    """PostgreSQL discards its statistics after a crash (and a copied database starts without
    them); the live rows then come from the catalog's count at the last ANALYZE plus what
    changed since, so the room does not read as empty (and grow past its bound until
    autovacuum counts again)."""
    if backend != "postgres":
        return  # SQLite's size is its pages: nothing is estimated
    import psycopg

    room: Hub = await rooms(send_rate_capacity=1e9)
    alice = (await room.principals.register(name="alice")).peer
    await room.principals.register(name="bob")
    empty = (await room.retention.size()).used_bytes
    for n in range(300):
        await room.delivery.send(alice, to="bob", content=f"m{n} " + "y" * 3000)
    full = (await room.retention.size()).used_bytes
    with psycopg.connect(room._db.dsn, autocommit=True) as conn:  # type: ignore[attr-defined]
        conn.execute("ANALYZE messages")
        conn.execute("SELECT pg_stat_reset()")
    after = (await room.retention.size()).used_bytes
    assert after - empty > (full - empty) * 0.8
    for n in range(30):  # the room goes on after the reset: the changes add to the catalog's
        await room.delivery.send(alice, to="bob", content=f"after {n}")
    later = (await room.retention.size()).used_bytes
    assert later - empty > (full - empty) * 0.8


async def test_recent_messages_unlike_the_history_do_not_skew_the_bound(
    rooms: RoomFactory, backend: str
) -> None:
    """On PostgreSQL a row's size is measured on rows spread over the whole log, not on the
    newest: a history of long messages followed by short ones (an open loop of pings on a
    month of reports) must not read as a small room (and let it grow past its bound)."""
    if backend != "postgres":
        return  # SQLite's size is its pages: nothing is estimated
    room: Hub = await rooms()
    alice = (await room.principals.register(name="alice")).peer
    await room.principals.register(name="bob")
    empty = (await room.retention.size()).used_bytes
    pick = random.Random(54)
    for n in range(MESSAGES):
        words = " ".join(pick.choice(WORDS) for _ in range(150))
        await room.delivery.send(alice, to="bob", content=f"m{n} {words}")
        room.clock.advance(1.0)  # type: ignore[attr-defined]
    history = (await room.retention.size()).used_bytes - empty
    for n in range(600):  # the newest rows: short ones
        await room.delivery.send(alice, to="bob", content=f"ping {n}")
        room.clock.advance(1.0)  # type: ignore[attr-defined]
    now = (await room.retention.size()).used_bytes - empty
    assert now >= 0.8 * history  # the pings add a little; they take nothing away
