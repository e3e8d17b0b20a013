"""Announcements: caps that store nothing when they refuse, and newcomers catching up."""

from __future__ import annotations

import sqlite3

import pytest

from caucus.errors import CapHourly, CapInterval, CapPayloadSize, CapSubjectLength, RoomStopped
from caucus.services.hub import Hub
from caucus.testing import FakeClock
from tests.conftest import ClientFactory


def rows(hub: Hub, table: str) -> int:
    """How many rows a table holds, read straight from the database (either backend)."""
    query = f"SELECT COUNT(*) FROM {table}"  # noqa: S608 - the tests' own table names
    if hub.settings.postgres:
        import psycopg

        with psycopg.connect(hub.settings.db) as pg:
            found = pg.execute(query.encode()).fetchone()
            assert found is not None
            return int(found[0])
    assert hub.db_path is not None
    conn = sqlite3.connect(hub.db_path)
    try:
        count: int = conn.execute(query).fetchone()[0]
        return count
    finally:
        conn.close()


async def test_an_announcement_reaches_everyone_but_its_sender(hub: Hub) -> None:
    alice = (await hub.principals.register(name="alice")).peer
    bob = (await hub.principals.register(name="bob")).peer
    receipt = await hub.announcements.announce(alice, "release at noon", subject="release")
    assert receipt.delivered_to == ["bob"]
    (got,) = (await hub.delivery.receive(bob, wait=0)).deliveries
    assert (got.message.kind, got.message.content, got.message.meta) == (
        "announce",
        "release at noon",
        {"subject": "release"},
    )


@pytest.mark.parametrize(
    ("payload", "subject", "error", "cap"),
    [
        ("x" * 4097, None, CapPayloadSize, "payload_bytes"),
        ("é" * 2049, None, CapPayloadSize, "payload_bytes"),  # bytes, not characters
        ("ok", "s" * 121, CapSubjectLength, "subject_chars"),
    ],
)
async def test_size_caps_refuse_and_store_nothing(
    hub: Hub, payload: str, subject: str | None, error: type[Exception], cap: str
) -> None:
    alice = (await hub.principals.register(name="alice")).peer
    with pytest.raises(error) as caught:
        await hub.announcements.announce(alice, payload, subject=subject)
    assert caught.value.extra["cap"] == cap  # type: ignore[attr-defined]
    assert rows(hub, "announcements") == 0
    assert rows(hub, "messages") == 0


async def test_one_per_30_seconds_and_ten_per_rolling_hour(hub: Hub, clock: FakeClock) -> None:
    alice = (await hub.principals.register(name="alice")).peer
    await hub.principals.register(name="bob")
    await hub.announcements.announce(alice, "first")
    with pytest.raises(CapInterval) as caught:
        await hub.announcements.announce(alice, "too soon")
    assert caught.value.status == 429
    assert 0 < caught.value.extra["retry_after"] <= 30
    for i in range(9):
        clock.advance(31)
        await hub.announcements.announce(alice, f"news {i}")
    clock.advance(31)
    with pytest.raises(CapHourly):
        await hub.announcements.announce(alice, "the eleventh")
    assert rows(hub, "announcements") == 10
    clock.advance(3600)
    await hub.announcements.announce(alice, "a new hour")  # the window rolled on


async def test_a_newcomer_within_a_day_gets_recent_announcements_once(
    hub: Hub, clock: FakeClock
) -> None:
    alice = (await hub.principals.register(name="alice")).peer
    await hub.announcements.announce(alice, "old news")
    clock.advance(hub.settings.announce_catch_up + 1)  # "old news" is now too old
    await hub.announcements.announce(alice, "fresh news")
    await hub.control.announce("operator news")
    newcomer = (await hub.principals.register(name="newcomer")).peer
    got = (await hub.delivery.receive(newcomer, wait=0)).deliveries
    assert [d.message.content for d in got] == ["fresh news", "operator news"]
    await hub.delivery.ack(newcomer, seqs=[d.message.seq for d in got])
    token = (await hub.principals.register(name="other")).token
    again = await hub.principals.register(name="other", token=token)  # a reaffirm: no repeat
    assert (await hub.delivery.peek(again.peer)).pending == 2
    assert (await hub.delivery.receive(newcomer, wait=0)).deliveries == []


async def test_a_stopped_room_refuses_announcements(hub: Hub) -> None:
    alice = (await hub.principals.register(name="alice")).peer
    await hub.control.stop()
    with pytest.raises(RoomStopped):
        await hub.announcements.announce(alice, "anyone?")


async def test_announce_over_http_and_its_cap_codes(connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    sent = await alice.announce("lunch", subject="food")
    assert sent.delivered_to == ["bob"]
    with pytest.raises(CapInterval) as caught:
        await alice.announce("again")
    assert caught.value.code == "cap_interval"
    with pytest.raises(CapPayloadSize) as too_big:
        await bob.announce("x" * 5000)
    assert (too_big.value.code, too_big.value.status) == ("cap_payload_size", 413)
