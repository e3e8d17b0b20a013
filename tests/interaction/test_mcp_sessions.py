"""Handshake-era sessions opened on paper: an `initialize` answered from the SDK's own answer
to the first of its kind, and the SDK's session built only when the client comes back."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client

from caucus.api.mcp.sessions import Sessions
from caucus.domain.peers import PeerState
from caucus.server import build_app
from caucus.testing import FakeClock, make_hub, serve
from tests.interaction.test_mcp_http import INIT, JSON_RPC, rpc
from tests.mcptools import call, reply_message


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[str, Sessions]]:
    async with make_hub(tmp_path, mcp_unjoined_max=30) as hub:  # the default idle: no race
        app = build_app(hub)
        async with serve(hub, app) as url:
            yield url, (await app.mcp.loaded())._manager


async def _chunks(body: bytes) -> AsyncIterator[bytes]:
    yield body[:10]
    yield body[10:]


async def test_initializes_are_answered_on_paper_and_built_when_the_client_comes_back(
    served: tuple[str, Sessions],
) -> None:
    url, sessions = served
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        replies = [await http.post("/mcp", json=rpc(n, "initialize", INIT)) for n in range(20)]
        assert {r.status_code for r in replies} == {200}
        ids = [r.headers["mcp-session-id"] for r in replies]
        assert len(set(ids)) == 20
        answers = [reply_message(r) for r in replies]
        assert [a["id"] for a in answers] == list(range(20))  # each its own request's id
        assert all(a["result"] == answers[0]["result"] for a in answers)  # the SDK's result
        assert sessions.opened_on_paper == 19  # the first of the kind went to the SDK
        assert (sessions.built_sessions, sessions.open_sessions) == (1, 20)

        # The client comes back: its session is built, with the initialize it sent.
        later = {"mcp-session-id": ids[7], "mcp-protocol-version": "2025-11-25"}
        done = await http.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=later
        )
        assert done.status_code == 202
        assert sessions.built_sessions == 2
        join = rpc(30, "tools/call", {"name": "join", "arguments": {}})
        joined = reply_message(await http.post("/mcp", json=join, headers=later))
        content = joined["result"]["structuredContent"]
        assert (content["name"], content["outcome"]) == ("raw-test", "created")  # its clientInfo
        assert sessions.state(ids[7]) == "joined"
        assert sessions.state(ids[8]) == "unjoined"


async def test_the_official_client_works_on_a_paper_session(served: tuple[str, Sessions]) -> None:
    url, sessions = served
    async with Client(f"{url}/mcp", mode="legacy") as first:
        await call(first, "join", name="first")
        async with Client(f"{url}/mcp", mode="legacy") as second:
            assert sessions.opened_on_paper == 1  # the same kind of initialize as the first
            await call(second, "join", name="second")
            sent = await call(first, "say", to="second", content="hello")
            got = await call(second, "listen", timeout=5)
            assert [m["seq"] for m in got["messages"]] == [sent["seq"]]


async def test_paper_sessions_count_against_the_cap_and_idle_out(
    tmp_path: Path, clock: FakeClock
) -> None:
    async with (
        make_hub(tmp_path, clock=clock, mcp_unjoined_max=30, mcp_unjoined_idle=2.0) as hub,
        serve(hub, app := build_app(hub)) as url,
        httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http,
    ):
        sessions = (await app.mcp.loaded())._manager
        ids = []
        for n in range(100):
            reply = await http.post("/mcp", json=rpc(n, "initialize", INIT))
            ids.append(reply.headers["mcp-session-id"])
        assert sessions.open_sessions <= 30  # a new one ended the oldest
        headers = {"mcp-session-id": ids[0], "mcp-protocol-version": "2025-11-25"}
        ping = rpc(1, "ping", {})
        assert (await http.post("/mcp", json=ping, headers=headers)).status_code == 404
        clock.advance(2.2)  # past mcp_unjoined_idle
        headers["mcp-session-id"] = ids[-1]
        assert (await http.post("/mcp", json=ping, headers=headers)).status_code == 404
        assert sessions.built_sessions <= 1


async def test_an_initialize_the_sdk_refuses_is_never_answered_on_paper(
    served: tuple[str, Sessions],
) -> None:
    url, sessions = served
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        await http.post("/mcp", json=rpc(1, "initialize", INIT))  # the template is learned
        wrong_accept = await http.post(
            "/mcp", json=rpc(2, "initialize", INIT), headers={"Accept": "text/plain"}
        )
        assert wrong_accept.status_code == 406
        no_info = {k: v for k, v in INIT.items() if k != "clientInfo"}
        await http.post("/mcp", json=rpc(3, "initialize", no_info))  # the SDK judges it
        chunked = http.stream(  # no declared length: the SDK reads and judges the body
            "POST",
            "/mcp",
            content=_chunks(json.dumps(rpc(4, "initialize", INIT)).encode()),
            headers={"Content-Type": "application/json"},
        )
        async with chunked as reply:
            assert reply.status_code == 200
        assert sessions.opened_on_paper == 0


async def test_a_client_that_ends_its_session_finds_its_peer_offline_at_once(
    tmp_path: Path,
) -> None:
    """The session's end is answered only once the hub has marked its peer offline, so a
    client that joins again straight after resumes the peer, never races its own goodbye."""
    async with make_hub(tmp_path) as hub, serve(hub) as url:
        async with Client(f"{url}/mcp", mode="legacy") as client:
            handle = (await call(client, "join", name="kept"))["handle"]
        for n in range(5):
            assert (await hub.registry.find("kept")).state is PeerState.REAPED, n  # offline
            async with Client(f"{url}/mcp", mode="legacy") as again:
                back = await call(again, "join", handle=handle)
            assert (back["name"], back["outcome"]) == ("kept", "resumed"), n
