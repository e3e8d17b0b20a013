"""Several hub processes, one room (issue 14): real `caucus hub` processes on loopback sharing
one PostgreSQL database. What an agent does on one process reaches, binds and is seen by
agents on the others: messages of every audience (woken across processes by LISTEN/NOTIFY),
tasks and the job board, the room's mode, the operator's kicks, floors, and the operator's feed."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from caucus.client import HubClient
from caucus.errors import FloorHeld, Unauthorized
from caucus.operator_client import OperatorClient
from tests.acceptance.hubproc import HubProcess
from tests.conftest import eventually
from tests.scaleout.conftest import Room, operator_token
from tests.sse import read_events


@pytest.fixture
async def clients() -> AsyncIterator[list[HubClient]]:
    made: list[HubClient] = []
    yield made
    for client in made:
        await client.aclose()


async def agent(hub: HubProcess, name: str, made: list[HubClient]) -> HubClient:
    client = HubClient(hub.url)
    made.append(client)
    await client.register(name)
    return client


async def _listening(client: HubClient, name: str) -> bool:
    return (await client.ping(name)).listening  # who waits is known to the process they wait on


async def texts(client: HubClient, wait: float = 10.0) -> list[str]:
    return [m.content for m in (await client.receive(timeout=wait)).messages]


async def test_messages_of_every_audience_cross_processes_and_wake_at_once(
    room: Room, clients: list[HubClient]
) -> None:
    a, b = room(2)
    alice = await agent(a, "alice", clients)
    bob, carol = await agent(b, "bob", clients), await agent(b, "carol", clients)
    # bob waits on B before alice sends on A: the NOTIFY after A's commit wakes him.
    parked = asyncio.create_task(bob.receive(timeout=20))
    await eventually(lambda: _listening(carol, "bob"), what="bob parked on B")
    started = time.monotonic()
    await alice.send("bob", "direct, across processes")
    got = await parked
    assert [m.content for m in got.messages] == ["direct, across processes"]
    assert time.monotonic() - started < 15  # woken, not timed out (the wait was 20 s)
    await alice.send("all", "to everyone")
    assert await texts(bob) == ["to everyone"]
    assert await texts(carol) == ["direct, across processes", "to everyone"][1:]
    await bob.join_channel("#dev")
    await carol.join_channel("#dev")
    await alice.send("#dev", "into the channel")
    assert await texts(bob) == ["into the channel"]
    assert await texts(carol) == ["into the channel"]
    await bob.send("alice", "and back")
    assert await texts(alice) == ["and back"]
    names = {p.name for p in await alice.peers()}
    assert names >= {"alice", "bob", "carol"}


async def test_a_task_sent_on_one_process_is_answered_on_another(
    room: Room, clients: list[HubClient]
) -> None:
    a, b = room(2)
    alice, bob = await agent(a, "alice", clients), await agent(b, "bob", clients)
    task = await alice.send_task("bob", "review the parser")
    got = (await bob.receive(timeout=10)).messages
    assert [(m.kind, m.meta and m.meta.get("task_id")) for m in got] == [("task", task.task_id)]
    await bob.reply_task(task.task_id, "looks good")
    result = (await alice.receive(timeout=10)).messages
    assert [(m.kind, m.content) for m in result] == [("result", "looks good")]
    assert (await alice.task_status(task.task_id)).state == "completed"


async def test_the_job_board_crosses_processes(room: Room, clients: list[HubClient]) -> None:
    a, b = room(2)
    alice = await agent(a, "alice", clients)
    bob, carol = await agent(b, "bob", clients), await agent(b, "carol", clients)
    offer = await alice.post_offer("port the parser", subject="help wanted")
    assert await texts(bob) == ["port the parser"]  # the announcement, on B
    await texts(carol)
    await bob.claim_offer(offer.offer_id, "I know the grammar")
    await carol.claim_offer(offer.offer_id)
    claims = [m.kind for m in (await alice.receive(timeout=10)).messages]
    assert claims == ["offer_claim", "offer_claim"]
    won = await alice.resolve_offer(offer.offer_id, select="bob")  # on A
    assert (won.state, won.winner) == ("assigned", "bob")
    assert [m.kind for m in (await bob.receive(timeout=10)).messages] == ["task"]
    assert [m.kind for m in (await carol.receive(timeout=10)).messages] == ["offer_not_selected"]
    assert won.task_id is not None
    await bob.reply_task(won.task_id, "ported")  # on B: the offer follows the task
    done = [o for o in await alice.list_offers() if o.offer_id == offer.offer_id]
    assert [o.state for o in done] == ["completed"]


async def test_pause_on_one_process_holds_sends_on_another_and_a_kick_ends_the_peer(
    room: Room, clients: list[HubClient], tmp_path: Path
) -> None:
    a, b = room(2)
    bob, carol = await agent(b, "bob", clients), await agent(b, "carol", clients)
    token = operator_token(tmp_path)
    on_a = OperatorClient(a.url, token=token)
    on_b = OperatorClient(b.url, token=token)
    try:
        await on_a.pause()

        async def b_paused() -> bool:
            return (await on_b.state()).mode == "paused"

        await eventually(b_paused, what="B to see the pause made on A")
        await bob.send("carol", "held while paused")
        assert await texts(carol, wait=1.0) == []  # accepted, held
        await on_a.resume()
        assert await texts(carol) == ["held while paused"]
        await on_a.kick("bob")

        async def refused() -> bool:
            try:
                await bob.set_status("still here?")
            except Unauthorized:
                return True
            return False

        await eventually(refused, what="B to refuse the peer kicked on A")
    finally:
        await on_a.aclose()
        await on_b.aclose()


async def test_four_processes_each_reach_the_others(room: Room, clients: list[HubClient]) -> None:
    hubs = room(4)
    agents = [await agent(h, f"agent{i}", clients) for i, h in enumerate(hubs)]
    for i, sender in enumerate(agents):
        await sender.send("all", f"hello from {i}")
    for i, receiver in enumerate(agents):
        heard: list[str] = []
        deadline = time.monotonic() + 15
        while len(heard) < 3 and time.monotonic() < deadline:
            heard += await texts(receiver, wait=2.0)
        assert sorted(heard) == sorted(f"hello from {j}" for j in range(4) if j != i)


async def test_a_floor_taken_on_one_process_bars_sends_on_another(
    room: Room, clients: list[HubClient]
) -> None:
    a, b = room(2)
    alice = await agent(a, "alice", clients)
    bob, carol = await agent(b, "bob", clients), await agent(b, "carol", clients)
    taken = await alice.floor("take", "all", "my turn")
    assert taken.holder == "alice"

    async def barred() -> bool:
        try:
            await bob.send("all", "may I?")
        except FloorHeld:
            return True
        return False

    await eventually(barred, what="B to bar a send into the floor A gave away")
    assert (await bob.floor("raise", "all")).hands == ["bob"]  # the hand is raised on B
    passed = await alice.floor("pass", "all")
    assert passed.holder == "bob"  # passed on A to the hand raised on B
    await eventually(lambda: _sends(bob, "all", "my turn now"), what="B to let bob speak")
    heard = await texts(carol)
    assert "my turn now" in heard
    assert any("has the floor" in t for t in heard)  # the hub's floor notices reach B's agents


async def _sends(client: HubClient, to: str, text: str) -> bool:
    try:
        await client.send(to, text)
    except FloorHeld:
        return False
    return True


async def test_the_operator_feed_on_one_process_shows_the_others_events(
    room: Room, clients: list[HubClient], tmp_path: Path
) -> None:
    a, b = room(2)
    token = operator_token(tmp_path)
    seen: list[tuple[str, Any]] = []
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        http.stream(
            "GET", f"{b.url}/operator/events", headers={"Authorization": f"Bearer {token}"}
        ) as response,
    ):
        assert response.status_code == 200
        events = read_events(response)
        first = await anext(events)
        assert first.type == "snapshot"

        async def follow() -> None:
            async for event in events:
                seen.append((event.type, event.data))

        following = asyncio.create_task(follow())
        try:
            alice = await agent(a, "alice", clients)  # joins on A
            await agent(b, "bob", clients)
            await alice.set_status("reviewing")
            await alice.send("bob", "hello from A")
            await alice.join_channel("#ops")

            def shown() -> bool:
                kinds = {(t, d.get("change"), d.get("name")) for t, d in seen if t != "message"}
                texts = [d.get("content") for t, d in seen if t == "message"]
                return (
                    ("peer", "joined", "alice") in kinds
                    and ("peer", "status", "alice") in kinds
                    and ("channel", "joined", "alice") in kinds
                    and texts.count("hello from A") == 1
                )

            await eventually(shown, what="B's feed to show what happened on A")
        finally:
            following.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await following
