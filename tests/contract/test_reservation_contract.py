"""The contract for file reservations, run against each backend (issue 34): granted and read
back as stored; void past their time to live unless renewed; void once their holder is reaped;
the maintenance round deleting what is void; and two agents racing for one file in one write
batch seeing each other (the reservation is read and written in one unit)."""

from __future__ import annotations

import asyncio

import pytest

from caucus.domain.peers import Peer
from caucus.errors import ReservationsHeld
from caucus.services.hub import Hub
from tests.contract.conftest import NOW, RoomFactory


async def join(room: Hub, name: str) -> Peer:
    return (await room.principals.register(name=name)).peer


def advance(room: Hub, seconds: float) -> None:
    room.clock.advance(seconds)  # type: ignore[attr-defined]


async def test_a_reservation_reads_back_as_granted(room: Hub) -> None:
    alice = await join(room, "alice")
    done = await room.reservations.reserve(
        alice, ["src/**/*.py", "docs/"], exclusive=False, ttl=600, reason="a typing pass"
    )
    assert done.conflicts == []
    (first, second) = await room.reservations.listing()
    assert (first.holder, first.pattern, first.exclusive) == ("alice", "src/**/*.py", False)
    assert (first.reason, first.created_at, first.expires_at) == ("a typing pass", NOW, NOW + 600)
    assert second.pattern == "docs/"
    assert [r.id for r in done.granted] == [first.id, second.id]


async def test_reservations_lapse_unless_renewed_and_the_sweep_deletes_them(
    room: Hub,
) -> None:
    alice = await join(room, "alice")
    kept, lapsed = (await room.reservations.reserve(alice, ["a.py", "b.py"], ttl=120)).granted
    advance(room, 100)
    (renewed,) = await room.reservations.renew(alice, ids=[kept.id], ttl=300)
    assert renewed.expires_at == NOW + 100 + 300
    advance(room, 30)  # b.py lapses at NOW + 120
    assert [r.pattern for r in await room.reservations.listing()] == ["a.py"]
    assert await room.reservations.renew(alice, ids=[lapsed.id]) == []  # too late
    bob = await join(room, "bob")
    assert (await room.reservations.reserve(bob, ["b.py"])).conflicts == []
    await room.maintain()
    assert sorted(r.pattern for r in await room.reservations.listing()) == ["a.py", "b.py"]


async def test_a_reaped_holder_s_reservations_are_void_and_swept(rooms: RoomFactory) -> None:
    room = await rooms(peer_ttl=60)
    alice, bob = await join(room, "alice"), await join(room, "bob")
    await room.reservations.reserve(alice, ["src/"])
    await room.reservations.reserve(bob, ["docs/"], ttl=3600)
    advance(room, 61)
    room.registry.touch(bob)  # bob is still about; alice went quiet
    await room.registry.reap()
    assert [r.holder for r in await room.reservations.listing()] == ["bob"]  # void at once
    now = room.clock.now()
    assert await room._db.read(lambda r: r.reservations.of_holder(alice.id, now)) != []
    await room.maintain()
    assert await room._db.read(lambda r: r.reservations.of_holder(alice.id, now)) == []
    carol = await join(room, "carol")
    assert (await room.reservations.reserve(carol, ["src/app.py"])).conflicts == []


async def test_two_agents_racing_for_one_file_meet(rooms: RoomFactory) -> None:
    room = await rooms(reservations="enforce")
    alice, bob = await join(room, "alice"), await join(room, "bob")
    results = await asyncio.gather(
        room.reservations.reserve(alice, ["src/app.py"]),
        room.reservations.reserve(bob, ["src/app.py"]),
        return_exceptions=True,
    )
    refused = [r for r in results if isinstance(r, ReservationsHeld)]
    assert len(refused) == 1  # in one write batch or two, the second sees the first
    assert len(await room.reservations.listing()) == 1


@pytest.mark.parametrize("everything", [False, True])
async def test_release_takes_only_the_holder_s_own(room: Hub, everything: bool) -> None:
    alice, bob = await join(room, "alice"), await join(room, "bob")
    (mine,) = (await room.reservations.reserve(alice, ["a.py"])).granted
    await room.reservations.reserve(bob, ["b.py"])
    if everything:
        released = await room.reservations.release(alice, everything=True)
    else:  # bob naming alice's id releases nothing
        assert await room.reservations.release(bob, ids=[mine.id]) == []
        released = await room.reservations.release(alice, ids=[mine.id])
    assert [r.pattern for r in released] == ["a.py"]
    assert [r.holder for r in await room.reservations.listing()] == ["bob"]
