"""No caller can hold the room (issue 47 item 3), on a real uvicorn: what an agent keeps open
(A2A streams, parked peeks and receives, MCP streams) is capped per identity and for the
room, a refused open is 429 `cap_streams` naming the cap, a kick ends everything the kicked
agent held at once, and with every agent slot full (and every connection the cap allows
taken) the operator still reads its session, kicks and stops the room."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from caucus.client import HubClient
from caucus.operator_client import OperatorClient
from caucus.services.holds import HoldKind
from caucus.testing import make_hub, serve
from tests.mcptools import Session, call
from tests.waiting import eventually

A2A = {"A2A-Version": "1.0"}


def _rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


@contextlib.asynccontextmanager
async def subscribed(http: httpx2.AsyncClient, token: str, task_id: str) -> AsyncIterator[Any]:
    """An A2A SubscribeToTask stream, open once its first event (the task) arrived."""
    headers = {"Authorization": f"Bearer {token}", **A2A}
    body = _rpc("SubscribeToTask", {"id": task_id})
    async with http.stream("POST", "/a2a", json=body, headers=headers) as reply:
        assert reply.status_code == 200, await reply.aread()
        lines = reply.aiter_lines()
        async for line in lines:
            if line.startswith("data:"):
                break
        yield lines


async def _ends(lines: Any) -> None:
    """Reads the stream to its end (bounded by the test's own wait)."""
    async for _ in lines:
        pass


async def test_streams_are_capped_per_agent_and_a_kick_ends_them_at_once(tmp_path: Path) -> None:
    async with (
        make_hub(tmp_path / "hub", streams_per_identity_max=3) as hub,
        serve(hub) as url,
        HubClient(url) as bob,
        HubClient(url) as mallory,
        OperatorClient(url, token=hub.operator.token) as operator,
        httpx2.AsyncClient(base_url=url, timeout=30) as http,
    ):
        await bob.register("bob")
        me = await mallory.register("mallory")
        task = await mallory.send_task("bob", "a long job")
        async with contextlib.AsyncExitStack() as streams:
            opened = [
                await streams.enter_async_context(subscribed(http, me.token, task.task_id))
                for _ in range(3)
            ]
            headers = {"Authorization": f"Bearer {me.token}", **A2A}
            refused = await http.post(
                "/a2a", json=_rpc("SubscribeToTask", {"id": task.task_id}), headers=headers
            )
            assert refused.status_code == 429
            assert refused.json()["error"] == "cap_streams"
            assert refused.json()["cap"] == "streams_per_identity"
            assert int(refused.headers["retry-after"]) >= 1
            peek = await http.get(
                "/peek",
                params={"after": 0, "wait": 20},
                headers={"Authorization": f"Bearer {me.token}"},
            )
            assert (peek.status_code, peek.json()["error"]) == (429, "cap_streams")
            assert hub.holds.count((await hub.registry.find("mallory")).id) == 3

            await operator.kick("mallory")
            await asyncio.wait_for(asyncio.gather(*(_ends(lines) for lines in opened)), 10)
        await eventually(lambda: hub.holds.agents == 0, what="the kicked agent's streams")


async def test_with_every_agent_slot_and_connection_taken_the_operator_still_acts(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(
            tmp_path / "hub",
            max_connections=24,
            operator_reserve=4,
            streams_per_identity_max=2,
            head_timeout=300,
        ) as hub,
        serve(hub) as url,
        httpx2.AsyncClient(base_url=url, timeout=30) as http,
    ):
        cap = hub.settings.streams_room_cap
        assert cap == 16  # 24 less an eighth, at least 8
        agents = []
        for i in range(cap // 2 + 1):
            reg = (await http.post("/register", json={"name": f"a{i}"})).json()
            agents.append(reg["token"])
        waits: list[asyncio.Task[httpx2.Response]] = []
        for token in agents[:-1]:
            for _ in range(2):
                waits.append(asyncio.create_task(_peek(url, token)))
        await eventually(lambda: hub.holds.agents == cap, what="every slot held")
        late = await http.get(
            "/peek",
            params={"after": 0, "wait": 20},
            headers={"Authorization": f"Bearer {agents[-1]}"},
        )
        assert (late.status_code, late.json()["cap"]) == (429, "streams_room")

        # Every other connection the cap allows, taken by clients that say nothing.
        idle: list[socket.socket] = []
        try:
            while not await _refused(url, agents[-1]):
                assert len(idle) <= hub.settings.max_connections, "the cap never came"
                idle.append(_idle_socket(url))
            boss = {"Authorization": f"Bearer {hub.operator.token}"}
            async with httpx2.AsyncClient(base_url=url, timeout=10, headers=boss) as operator:
                assert (await operator.get("/operator/session")).status_code == 200
                kicked = await operator.post("/operator/peers/a0/kick")
                assert kicked.status_code == 200, kicked.text
                assert (await operator.post("/operator/stop", json={})).status_code == 200
        finally:
            for sock in idle:
                sock.close()
        await eventually(lambda: hub.holds.agents == cap - 2, what="the kicked agent's peeks")
        for wait in waits:
            wait.cancel()
        await asyncio.gather(*waits, return_exceptions=True)


async def _peek(url: str, token: str) -> httpx2.Response:
    async with httpx2.AsyncClient(base_url=url, timeout=60) as http:
        return await http.get(
            "/peek",
            params={"after": 10_000, "wait": 25},
            headers={"Authorization": f"Bearer {token}"},
        )


def _idle_socket(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=5)


async def _refused(url: str, token: str) -> bool:
    async with httpx2.AsyncClient(base_url=url, timeout=5) as http:
        reply = await http.get("/peers", headers={"Authorization": f"Bearer {token}"})
        return reply.status_code == 503


async def test_mcp_streams_are_held_by_their_agent_and_end_when_it_is_kicked(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path / "hub", streams_per_identity_max=2) as hub,
        serve(hub) as url,
        OperatorClient(url, token=hub.operator.token) as operator,
    ):
        async with Client(f"{url}/mcp", mode="legacy") as legacy:  # a session: its GET stream
            await call(legacy, "join", name="carol")
            carol = (await hub.registry.find("carol")).id
            await eventually(lambda: hub.holds.count(carol, HoldKind.MCP) == 1, what="GET")
            await operator.kick("carol")
            await eventually(lambda: hub.holds.count(carol) == 0, what="carol's stream ended")

        async with Client(f"{url}/mcp") as client:  # 2026-07-28: listen streams
            bob = Session(client)
            uri = (await bob.call("join", name="bob"))["inbox"]
            bob_id = (await hub.registry.find("bob")).id
            async with contextlib.AsyncExitStack() as streams:
                opened = [
                    await streams.enter_async_context(client.listen(resource_subscriptions=[uri]))
                    for _ in range(2)
                ]
                assert hub.holds.count(bob_id, HoldKind.MCP) == 2
                with pytest.raises(MCPError) as refused:
                    async with client.listen(resource_subscriptions=[uri]):
                        pass
                assert (refused.value.error.data or {})["error"] == "cap_streams"
                await operator.kick("bob")
                for stream in opened:
                    await asyncio.wait_for(_drained(stream), 10)
            assert hub.holds.count(bob_id) == 0


async def _drained(stream: Any) -> None:
    async for _ in stream:
        pass


async def test_an_agent_s_export_is_one_of_its_holds(tmp_path: Path) -> None:
    async with (
        make_hub(tmp_path / "hub", streams_per_identity_max=1) as hub,
        serve(hub) as url,
        HubClient(url) as alice,
        httpx2.AsyncClient(base_url=url, timeout=30) as http,
    ):
        me = await alice.register("alice")
        await alice.send("all", "a message to export")
        mine = {"Authorization": f"Bearer {me.token}"}
        peek = {"after": 10_000, "wait": 2}  # alice's one hold, for two seconds
        waiting = asyncio.create_task(http.get("/peek", params=peek, headers=mine))
        await eventually(lambda: hub.holds.agents == 1, what="the peek parked")
        refused = await http.get("/messages/export", headers=mine)
        assert (refused.status_code, refused.json()["error"]) == (429, "cap_streams")
        assert (await waiting).status_code == 200
        await eventually(lambda: hub.holds.agents == 0, what="the peek's hold given back")
        exported = await http.get("/messages/export", headers=mine)
        assert b"a message to export" in exported.content
        await eventually(lambda: hub.holds.agents == 0, what="the export's hold given back")
