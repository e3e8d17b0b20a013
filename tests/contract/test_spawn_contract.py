"""The contract for spawn grants and spawned teammates, run against each backend (issue 34): a
grant belongs to an agent's identity (a later agent under its name does not inherit it) and
lists only while its agent is here; a spawn reads back as stored, ends once, and counts while
it runs, per spawner and in the room; the bounds refuse a spawn before anything is launched;
a hub alone on its database ends what its last run left running; ended teammates are
forgotten after the room's retention age."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from caucus.domain.peers import Peer
from caucus.domain.spawns import Spawn
from caucus.errors import CapTeammates, NotFound, SpawnNotGranted
from caucus.services.hub import Hub
from caucus.services.spawns import SpawnAsk
from tests.contract.conftest import NOW, RoomFactory

PROFILES = {"echo": {"backend": "mock"}}


async def join(room: Hub, name: str) -> Peer:
    return (await room.principals.register(name=name)).peer


def running(spawner: Peer, name: str, at: float = NOW) -> Spawn:
    return Spawn(
        id=f"sp_{name}",
        spawner_id=spawner.id,
        spawner=spawner.name,
        name=name,
        profile="echo",
        tools=("files",),
        prompt=f"You are {name}.",
        process="elsewhere",
        launch_id=None,
        record=None,
        state="running",
        ended_by=None,
        exit_code=None,
        started_at=at,
        ended_at=None,
    )


async def test_a_grant_is_the_agents_own_and_lists_only_while_it_is_here(
    rooms: RoomFactory,
) -> None:
    room = await rooms(spawn_profiles=PROFILES)
    lead = await join(room, "lead")
    await join(room, "bob")
    assert (await room.spawns.standing(lead)).grant is None  # never by default
    await room.spawns.grant("lead", 2)
    await room.spawns.grant("lead", 3)  # given again: the new number stands
    await room.spawns.grant("bob", 1)
    grants = (await room.spawns.standing(None)).grants
    assert [(g.peer, g.teammates) for g in grants] == [("bob", 1), ("lead", 3)]
    assert await room.spawns.revoke("bob")
    assert not await room.spawns.revoke("bob")
    with pytest.raises(NotFound):
        await room.spawns.grant("ghost", 1)

    await room.registry.leave(lead)
    assert (await room.spawns.standing(None)).grants == []
    again = await join(room, "lead")  # the name again, another identity
    assert (await room.spawns.standing(again)).grant is None


async def test_spawns_read_back_end_once_and_count_while_they_run(rooms: RoomFactory) -> None:
    room = await rooms(spawn_profiles=PROFILES)
    lead, bob = await join(room, "lead"), await join(room, "bob")
    first, second = running(lead, "a", NOW), running(lead, "b", NOW + 1)
    third = running(bob, "c", NOW + 2)
    for spawn in (first, second, third):
        await room._db.write(lambda r, s=spawn: r.spawns.insert(s))
    await room._db.write(lambda r: r.spawns.launched(first.id, "agent-7", "ab" * 32))

    stored = await room._db.read(lambda r: r.spawns.get(first.id))
    assert stored == dataclasses.replace(first, launch_id="agent-7", record="ab" * 32)
    standing = await room.spawns.standing(lead)
    assert (standing.running, standing.room_running) == (2, 3)
    assert [s.name for s in standing.teammates] == ["b", "a"]  # newest first, lead's only
    assert [s.name for s in (await room.spawns.standing(None)).teammates] == ["c", "b", "a"]
    assert [s.name for s in await room._db.read(lambda r: r.spawns.running_of("lead"))] == [
        "a",
        "b",
    ]

    assert await room._db.write(lambda r: r.spawns.end(first.id, "spawner", 0, NOW + 5))
    assert not await room._db.write(lambda r: r.spawns.end(first.id, "operator", 1, NOW + 6))
    ended = await room._db.read(lambda r: r.spawns.get(first.id))
    assert ended is not None
    assert (ended.state, ended.ended_by, ended.exit_code, ended.ended_at) == (
        "ended",
        "spawner",
        0,
        NOW + 5,
    )
    assert (await room.spawns.standing(lead)).running == 1
    with pytest.raises(NotFound):  # nobody reads another's teammate
        await room.spawns.get(third.id, by=lead)


async def test_the_bounds_refuse_a_spawn_before_anything_is_launched(rooms: RoomFactory) -> None:
    room = await rooms(spawn_profiles=PROFILES, spawn_room_max=2)
    lead, bob = await join(room, "lead"), await join(room, "bob")
    ask = SpawnAsk(prompt="You echo.", profile="echo", name="mate")
    with pytest.raises(SpawnNotGranted):
        await room.spawns.spawn(lead, ask, "http://127.0.0.1:9")
    await room.spawns.grant("lead", 1)
    await room.spawns.grant("bob", 5)
    await room._db.write(lambda r: r.spawns.insert(running(lead, "a")))
    with pytest.raises(CapTeammates, match="grant"):
        await room.spawns.spawn(lead, ask, "http://127.0.0.1:9")
    await room._db.write(lambda r: r.spawns.insert(running(bob, "b")))
    with pytest.raises(CapTeammates, match="room"):
        await room.spawns.spawn(bob, ask, "http://127.0.0.1:9")
    assert room.launcher.listing() == []  # nothing was started
    assert (await room.spawns.standing(None)).room_running == 2


async def test_ended_teammates_are_forgotten_after_the_retention_age(rooms: RoomFactory) -> None:
    room = await rooms(spawn_profiles=PROFILES, retention_age=3600)
    lead = await join(room, "lead")
    old, live = running(lead, "old"), running(lead, "live")
    for spawn in (old, live):
        await room._db.write(lambda r, s=spawn: r.spawns.insert(s))
    await room._db.write(lambda r: r.spawns.end(old.id, "exited", 0, NOW))
    room.clock.advance(3601)  # type: ignore[attr-defined]
    await room.spawns.sweep()
    left = (await room.spawns.standing(None)).teammates
    assert [(s.name, s.state) for s in left] == [("live", "running")]  # running: never forgotten


async def test_ending_every_running_teammate_at_once(rooms: RoomFactory) -> None:
    room = await rooms(spawn_profiles=PROFILES)
    lead = await join(room, "lead")
    for name in ("a", "b"):
        await room._db.write(lambda r, n=name: r.spawns.insert(running(lead, n)))
    assert await room._db.write(lambda r: r.spawns.end_running("hub-stopped", NOW + 9)) == 2
    standing = await room.spawns.standing(lead)
    assert standing.running == 0
    assert {(s.ended_by, s.ended_at) for s in standing.teammates} == {("hub-stopped", NOW + 9)}


async def test_two_racing_spawns_cannot_both_take_the_last_place(rooms: RoomFactory) -> None:
    room = await rooms(spawn_profiles=PROFILES)
    lead = await join(room, "lead")
    await room.spawns.grant("lead", 1)
    asks = [SpawnAsk(prompt="You echo.", profile="echo", name=n) for n in ("m1", "m2")]
    results = await asyncio.gather(
        *(room.spawns.spawn(lead, ask, "http://127.0.0.1:9") for ask in asks),
        return_exceptions=True,
    )
    refused = [r for r in results if isinstance(r, CapTeammates)]
    spawned = [r for r in results if isinstance(r, Spawn)]
    assert (len(refused), len(spawned)) == (1, 1), results
    assert len(room.launcher.listing()) == 1


async def test_a_teammate_whose_process_is_gone_is_ended_where_the_stop_was_asked(
    rooms: RoomFactory,
) -> None:
    room = await rooms(spawn_profiles=PROFILES)
    lead = await join(room, "lead")
    orphan = running(lead, "orphan")  # its process died without closing
    await room._db.write(lambda r: r.spawns.insert(orphan))
    stopped = await room.spawns.stop_teammate(orphan.id, None)
    assert (stopped.state, stopped.ended_by) == ("ended", "operator")
    assert (await room.spawns.standing(None)).room_running == 0
