"""Floods shed, legit traffic served: budgets per address and per identity, the room's caps
with their codes, slow clients closed, and unauthenticated MCP traffic that can neither lock a
real client out nor evict anyone. (How fast legit traffic stays under each flood is measured by
benchmarks/floods.py, never asserted here.)"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn
from mcp import Client

from caucus.client import HubClient
from caucus.errors import CapChannels, CapHands, CapPeers, RateLimited
from caucus.server import CaucusApp, build_app
from caucus.services.hub import Hub
from caucus.testing import FakeClock, make_hub, serve, serve_app
from caucus.web.serving import uvicorn_config
from caucus.web.shield import REFUSAL_HOLD
from tests.conftest import eventually
from tests.interaction.test_mcp_http import INIT, JSON_RPC, rpc
from tests.mcptools import call
from tests.waiting import scaled

served_apps: dict[Hub, CaucusApp] = {}
# The shipped defaults, which caucus.testing.hub_settings relaxes for every other test.
DEFAULT_REGISTER = {"register_rate_capacity": 30.0, "register_rate_refill": 0.5}


@pytest.fixture
async def flooded(tmp_path: Path) -> AsyncIterator[tuple[str, Hub]]:
    settings = {
        **DEFAULT_REGISTER,
        "peers_max": 2000,
        "channels_per_peer_max": 3,
        "hands_per_floor_max": 2,
        "mcp_unjoined_max": 40,
        # Short, so slow clients are cut off quickly, but stretched on a loaded machine: a
        # deadline that runs out before a client's first bytes arrive is answered with a
        # reset, not the 408 a slow client is owed (seen once under CI's parallel workers).
        "head_timeout": scaled(0.5),
        "body_timeout": scaled(0.5),
    }
    # The budgets' clock stands still: what a loop of requests is allowed cannot depend on
    # how fast the machine runs it (the transport's own timeouts stay on real time).
    async with make_hub(tmp_path, clock=FakeClock(), **settings) as hub:
        app = served_apps[hub] = build_app(hub)
        async with serve(hub, app) as url:
            yield url, hub
        del served_apps[hub]


async def _head_only(url: str, path: str, headers: dict[str, str]) -> bytes:
    """The hub's answer to a POST whose head is sent and whose body is not."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        lines = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        writer.write(f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{lines}\r\n".encode())
        return await asyncio.wait_for(reader.readline(), 10)
    finally:
        writer.close()


def _from(address: str) -> httpx2.AsyncHTTPTransport:
    return httpx2.AsyncHTTPTransport(local_address=address)


async def test_registrations_from_one_address_are_throttled_and_another_still_registers(
    flooded: tuple[str, Hub],
) -> None:
    url, _ = flooded
    created = throttled = 0
    retry_after: set[str] = set()
    async with httpx2.AsyncClient(base_url=url, transport=_from("127.0.0.1")) as http:
        for n in range(300):
            response = await http.post("/register", json={"name": f"flood-{n}"})
            if response.status_code == 200:
                created += 1
            else:
                assert (response.status_code, response.json()["error"]) == (429, "rate_limited")
                retry_after.add(response.headers["retry-after"])
                throttled += 1
    assert created == 30  # the burst: nothing refills while the clock stands still
    assert throttled == 300 - created
    assert all(int(v) >= 1 for v in retry_after)
    async with HubClient(url, transport=_from("127.0.0.2")) as other:
        assert (await other.register("second-source")).outcome == "created"


async def test_joins_of_one_identity_are_budgeted(flooded: tuple[str, Hub]) -> None:
    url, _ = flooded
    async with HubClient(url) as alice:
        await alice.register("alice")
        for _ in range(30):  # the budget of joins with its token
            await alice.register("alice")
        with pytest.raises(RateLimited):
            await alice.register("alice")
        assert await alice.peers()  # the identity itself is untouched


async def test_caps_answer_with_their_codes_and_store_nothing(tmp_path: Path) -> None:
    async with make_hub(
        tmp_path, peers_max=4, channels_per_peer_max=2, hands_per_floor_max=1
    ) as hub:
        peers = [await hub.principals.register(name=f"p{n}") for n in range(4)]
        with pytest.raises(CapPeers) as full:
            await hub.principals.register(name="one-too-many")
        assert full.value.status == 503
        await hub.channels.join(peers[0].peer, "#a")
        await hub.channels.join(peers[0].peer, "#b")
        await hub.channels.join(peers[0].peer, "#a")  # already in: not a new membership
        with pytest.raises(CapChannels):
            await hub.channels.join(peers[0].peer, "#c")
        assert await hub._db.read(lambda r: r.channels.get("#c")) is None
        await hub.floors.act(peers[0].peer, "take", "all")
        await hub.floors.act(peers[1].peer, "raise", "all")
        with pytest.raises(CapHands):
            await hub.floors.act(peers[2].peer, "raise", "all")
        await hub.registry.leave(peers[3].peer)
        assert (await hub.principals.register(name="room-again")).outcome == "created"


async def test_slow_clients_are_answered_408_and_closed_while_others_are_served(
    flooded: tuple[str, Hub],
) -> None:
    url, _ = flooded
    port = int(url.rsplit(":", 1)[1])
    slow: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    try:
        for n in range(150):  # half send part of a head, half part of a body
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            slow.append((reader, writer))
            if n % 2:
                writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            else:
                writer.write(
                    b"POST /register HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
                )
            await writer.drain()
        async with httpx2.AsyncClient(base_url=url) as http:
            assert (await http.get("/health")).status_code == 200
        for reader, _ in slow:  # each is answered 408 and closed by the hub, unasked
            answer = await asyncio.wait_for(reader.read(), timeout=10)
            assert answer.startswith(b"HTTP/1.1 408"), answer
            assert b"request_timeout" in answer
    finally:
        for _, writer in slow:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bytes:
    """One whole `GET /health` on an open connection; the answer's head."""
    writer.write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    await writer.drain()
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    await asyncio.wait_for(reader.readexactly(length), 10)
    return head


async def test_an_idle_connection_is_closed_and_a_slow_later_head_is_answered_408(
    tmp_path: Path,
) -> None:
    """The keep-alive limit and a second request's head deadline (both on the loop's one
    clock, `web/deadlines.py`): a connection idle after its answer is closed by the hub, and
    one whose next request's head never ends is answered 408, not just dropped."""
    async with make_hub(tmp_path, head_timeout=scaled(0.5)) as hub:

        def config(idle: float) -> Callable[[Any], uvicorn.Config]:
            def make(app: Any) -> uvicorn.Config:
                limits = {"timeout_keep_alive": idle, "log_level": "warning"}
                return uvicorn_config(app, hub.settings, access_log=False, **limits)

            return make

        # Idle for longer than the keep-alive limit: closed, whatever the machine's speed.
        async with serve_app(config(scaled(0.3)), build_app(hub)) as url:
            idle = await asyncio.open_connection("127.0.0.1", int(url.rsplit(":", 1)[1]))
            try:
                assert (await _exchange(*idle)).startswith(b"HTTP/1.1 200")
                assert await asyncio.wait_for(idle[0].read(), 10) == b""  # closed, unasked
            finally:
                await _close(idle[1])
        # A keep-alive limit far past the head's deadline: the head's is the one that passes,
        # however long the test takes between the answer and the next request's first bytes.
        async with serve_app(config(600.0), build_app(hub)) as url:
            slow = await asyncio.open_connection("127.0.0.1", int(url.rsplit(":", 1)[1]))
            try:
                assert (await _exchange(*slow)).startswith(b"HTTP/1.1 200")
                slow[1].write(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                answer = await asyncio.wait_for(slow[0].read(), 10)
                assert answer.startswith(b"HTTP/1.1 408"), answer
            finally:
                await _close(slow[1])


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()


async def test_past_the_connection_cap_a_client_gets_503_at_once(tmp_path: Path) -> None:
    async with make_hub(tmp_path, max_connections=40) as hub, serve(hub) as url:
        port = int(url.rsplit(":", 1)[1])
        idle = [await asyncio.open_connection("127.0.0.1", port) for _ in range(45)]
        try:
            async with httpx2.AsyncClient(base_url=url) as http:
                refused = await http.get("/health")
                assert refused.status_code == 503  # refused at once, not queued
        finally:
            for _, writer in idle:
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
        async with httpx2.AsyncClient(base_url=url) as http:
            await eventually(
                lambda: _healthy(http), within=10, what="a connection under the cap served"
            )


async def _healthy(http: httpx2.AsyncClient) -> bool:
    return (await http.get("/health")).status_code == 200


async def test_a_flood_of_unjoined_mcp_sessions_never_locks_a_real_client_out(
    flooded: tuple[str, Hub],
) -> None:
    url, hub = flooded
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC, timeout=30) as http:
        big = {**INIT, "clientInfo": {"name": "x" * 60_000, "version": "1"}}
        for n in range(300):
            opened = await http.post("/mcp", json=rpc(n, "initialize", big if n % 2 else INIT))
            assert opened.status_code == 200
        async with Client(f"{url}/mcp", mode="legacy") as client:
            assert (await call(client, "join", name="legit"))["outcome"] == "created"
            for n in range(300):  # more flood while the real client works
                await http.post("/mcp", json=rpc(n, "initialize", INIT))
            assert (await call(client, "whoami"))["name"] == "legit"
        huge = {**INIT, "clientInfo": {"name": "x" * 4_000_000, "version": "1"}}
        # Refused unread and closed: httpx, which sends the whole body first, may see only
        # the close; one that asks first sees the 413 and sends nothing.
        with contextlib.suppress(httpx2.TransportError):
            assert (await http.post("/mcp", json=rpc(1, "initialize", huge))).status_code == 413
        asking = {"Expect": "100-continue", "Content-Length": "4000200"}
        assert (await _head_only(url, "/mcp", asking)).startswith(b"HTTP/1.1 413")
        # What stays open is the unjoined cap's worth, whatever the flood's size.
        assert served_apps[hub].mcp.open_sessions <= 40 + 1


async def test_bogus_bearer_tokens_evict_no_one(flooded: tuple[str, Hub]) -> None:
    url, _ = flooded
    async with Client(f"{url}/mcp", mode="legacy") as client:
        joined = await call(client, "join", name="kept")
        async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC, timeout=30) as http:
            call_body = rpc(1, "tools/call", {"name": "whoami", "arguments": {}})
            for n in range(2000):
                bogus = {"Authorization": f"Bearer cau_bogus{n:06d}xxxxxxxxxxxxxxxxxxxxxxxx"}
                response = await http.post("/mcp", json=call_body, headers=bogus)
                assert response.status_code < 500
        assert (await call(client, "whoami"))["name"] == "kept"
    async with Client(f"{url}/mcp", mode="legacy") as again:  # and its handle still resumes it
        back = await call(again, "join", handle=joined["handle"])
        assert (back["name"], back["outcome"]) == ("kept", "resumed")


async def test_an_address_that_earns_too_many_refusals_is_stopped_at_the_door(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path, clock=FakeClock(), shield_capacity=20, shield_refill=0.05) as hub,
        serve(hub) as url,
        HubClient(url) as alice,
    ):
        await alice.register("alice")  # an agent the hub knows, on the flooder's address
        async with httpx2.AsyncClient(base_url=url) as http:
            answers = []
            held = []
            for n in range(25):
                bogus = {"Authorization": f"Bearer cau_bogus{n:04d}"}
                started = time.monotonic()
                response = await http.get("/peers", headers=bogus)
                held.append(time.monotonic() - started)
                answers.append((response.status_code, response.json()["error"]))
            assert answers[:20] == [(401, "unauthorized")] * 20
            assert set(answers[20:]) == {(429, "rate_limited")}
            # Held before the answer, so a client retrying at once cannot spin the hub.
            assert min(held[20:]) >= 0.9 * REFUSAL_HOLD
            stopped = await http.get("/health")  # even what needs no token, for a while
            assert stopped.status_code == 429
            assert int(stopped.headers["retry-after"]) >= 1
        assert await alice.peers()  # a known token passes, whatever its address
        async with httpx2.AsyncClient(base_url=url) as http:  # and so does the operator
            operator = {"Authorization": f"Bearer {hub.operator.token}"}
            assert (await http.get("/operator/state", headers=operator)).status_code == 200
        async with httpx2.AsyncClient(base_url=url, transport=_from("127.0.0.2")) as other:
            assert (await other.get("/health")).status_code == 200
