"""The operator's live feed over a real uvicorn server: snapshot, events, health, resume."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from caucus.client import HubClient
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from caucus.testing import FakeClock, make_hub, serve
from tests.sse import Event, read_events


@pytest.fixture
async def feed_hub(tmp_path: Path) -> AsyncIterator[tuple[Hub, str]]:
    async with make_hub(tmp_path, health_interval=0.2) as hub, serve(hub) as url:
        yield hub, url


async def next_of(events: AsyncIterator[Event], kind: str, skip: set[str] | None = None) -> Event:
    """The next event of `kind`, failing on any other type not in `skip` (health by default)."""
    skip = {"health"} if skip is None else skip
    async with asyncio.timeout(10):
        async for event in events:
            if event.type == kind:
                return event
            assert event.type in skip, f"expected {kind}, got {event.type}: {event.data}"
    raise AssertionError(f"the stream ended before a {kind} event")


async def test_the_feed_starts_with_a_snapshot_then_streams_changes(
    feed_hub: tuple[Hub, str],
) -> None:
    hub, url = feed_hub
    async with HubClient(url) as early:
        await early.register("early", skills=["sql"])
        await early.set_status("indexing")
    headers = {"Authorization": f"Bearer {hub.operator.token}"}
    async with (
        httpx2.AsyncClient(base_url=url, headers=headers, timeout=30) as http,
        http.stream("GET", "/operator/events") as response,
    ):
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = read_events(response)
        snapshot = await next_of(events, "snapshot")
        assert snapshot.id is not None
        assert snapshot.data["mode"] == "open"
        (early_view,) = snapshot.data["peers"]
        assert early_view["name"] == "early"
        assert early_view["status"] == "indexing"
        assert {"listening", "paused", "uptime", "messages", "state"} <= set(early_view)
        assert {"uptime", "peers", "messages_per_minute", "queue_depth", "rss_bytes"} <= set(
            snapshot.data["health"]
        )

        async with HubClient(url) as alice, HubClient(url) as bob:
            await alice.register("alice")
            joined = await next_of(events, "peer")
            assert joined.data == {"change": "joined", "name": "alice", "how": "created"}
            await bob.register("bob")
            await next_of(events, "peer")
            sent = await alice.send("bob", "hello, operator sees this")
            message = await next_of(events, "message")
            assert message.data["seq"] == sent.seq
            assert message.data["delivered_to"] == ["bob"]
            async with OperatorClient(url, token=hub.operator.token) as operator:
                await operator.kick("bob")
            left = await next_of(events, "peer")
            assert left.data == {"change": "left", "name": "bob", "reason": "kicked"}
            health = await next_of(events, "health", skip=set())
            assert health.id is None
            assert health.data["peers"] == 2  # early and alice
            assert health.data["messages_per_minute"] == 1


async def test_reconnecting_with_last_event_id_misses_nothing(feed_hub: tuple[Hub, str]) -> None:
    hub, url = feed_hub
    headers = {"Authorization": f"Bearer {hub.operator.token}"}
    async with HubClient(url) as alice, HubClient(url) as bob:
        await alice.register("alice")
        await bob.register("bob")
        async with httpx2.AsyncClient(base_url=url, headers=headers, timeout=30) as http:
            async with http.stream("GET", "/operator/events") as response:
                events = read_events(response)
                await next_of(events, "snapshot")
                first = await alice.send("bob", "seen live")
                live = await next_of(events, "message")
                assert live.data["seq"] == first.seq
                last_id = live.id
            # Disconnected: these happen while nobody watches.
            missed = [(await alice.send("bob", f"missed {i}")).seq for i in range(5)]
            await bob.set_status("busy")
            async with http.stream(
                "GET", "/operator/events", headers={"Last-Event-ID": last_id or ""}
            ) as response:
                events = read_events(response)
                replayed = []
                async with asyncio.timeout(10):
                    async for event in events:
                        if event.type == "health":
                            continue
                        assert event.type != "snapshot", "a resume within the buffer replays"
                        replayed.append(event)
                        if event.type == "peer":
                            break
                assert [e.data["seq"] for e in replayed if e.type == "message"] == missed
                assert replayed[-1].data == {"change": "status", "name": "bob", "status": "busy"}
                ids = [int((e.id or "").rpartition("-")[2]) for e in replayed]
                assert ids == list(range(ids[0], ids[0] + len(ids)))


async def test_a_resume_that_cannot_be_served_gets_a_snapshot(feed_hub: tuple[Hub, str]) -> None:
    hub, url = feed_hub
    headers = {
        "Authorization": f"Bearer {hub.operator.token}",
        "Last-Event-ID": "0123abcd-42",  # from another hub process
    }
    async with (
        httpx2.AsyncClient(base_url=url, headers=headers, timeout=30) as http,
        http.stream("GET", "/operator/events") as response,
    ):
        assert (await next_of(read_events(response), "snapshot")).data["mode"] == "open"


async def test_the_snapshot_is_also_plain_json(feed_hub: tuple[Hub, str]) -> None:
    hub, url = feed_hub
    async with OperatorClient(url, token=hub.operator.token) as operator:
        data = (await operator.snapshot()).model_dump()
    assert data["event_id"].startswith(data["event_id"].split("-")[0])
    assert data["peers"] == []


async def test_the_roster_counts_what_an_agent_sent_alike_from_storage_and_live(
    feed_hub: tuple[Hub, str],
) -> None:
    """The first snapshot counts from storage, later ones add what the feed saw: both count
    every kind an agent sends (a chat, a task), never the operator's or the hub's."""
    hub, url = feed_hub
    async with (
        HubClient(url) as alice,
        HubClient(url) as bob,
        OperatorClient(url, token=hub.operator.token) as operator,
    ):
        await alice.register("alice")
        await bob.register("bob")
        await alice.send("bob", "before the console opened")

        async def counted() -> dict[str, int]:
            return {p.name: p.messages for p in (await operator.snapshot()).peers}

        assert (await counted())["alice"] == 1
        await alice.send_task("bob", "a task")
        await alice.send("bob", "a chat")
        await operator.say("alice", "the operator's words are not alice's")
        stored = await hub.history.sent_by()
        assert stored["alice"] == 3
        assert (await counted())["alice"] == stored["alice"]


async def test_nothing_is_kept_while_nobody_watches_and_a_late_resume_gets_a_snapshot(
    tmp_path: Path,
) -> None:
    """Issue 53: the feed keeps events to resume from while a console watches and for five
    minutes after (each as its JSON only); nobody watching, it keeps none, so a routed
    message's objects are not held for the garbage collector to walk, and a console that
    comes back later starts from a snapshot."""
    clock = FakeClock()
    async with make_hub(tmp_path, clock=clock) as hub, serve(hub) as url:
        headers = {"Authorization": f"Bearer {hub.operator.token}"}
        async with (
            HubClient(url) as alice,
            HubClient(url) as bob,
            httpx2.AsyncClient(base_url=url, headers=headers, timeout=30) as http,
        ):
            await alice.register("alice")
            await bob.register("bob")
            await alice.send("bob", "before the console looked")
            async with OperatorClient(url, token=hub.operator.token) as operator:
                last_id = (await operator.snapshot()).event_id  # one to resume from
            clock.advance(301)  # nobody has watched since, for five minutes
            await alice.send("bob", "routed while nobody watches")
            async with http.stream(
                "GET", "/operator/events", headers={"Last-Event-ID": last_id}
            ) as response:
                snapshot = await next_of(read_events(response), "snapshot")
        assert snapshot.data["messages"][-1]["content"] == "routed while nobody watches"
