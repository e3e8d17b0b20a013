"""`/mcp` on the hub, driven by the official MCP SDK client over Streamable HTTP, on both
protocol eras: handshake sessions (`mode="legacy"`) and 2026-07-28 without sessions (the
client's default), where the state handle `join` returns carries the identity."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from caucus.client import HubClient
from caucus.errors import NameInUse
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from tests.conftest import ClientFactory, eventually
from tests.injection import CORPUS, holds
from tests.mcptools import Session, call, fail, text_of


async def test_two_agents_talk_over_mcp_http_sessions(url: str) -> None:
    async with (
        Client(f"{url}/mcp", mode="legacy") as alice,
        Client(f"{url}/mcp", mode="legacy") as bob,
    ):
        assert (await call(alice, "whoami"))["joined"] is False
        assert (await fail(alice, "listen"))[0] == "not_joined"
        names = {t.name for t in (await alice.list_tools()).tools}
        assert "watch_command" in names  # a watcher for every connection
        joined = await call(alice, "join", name="alice")
        assert (joined["name"], joined["outcome"]) == ("alice", "created")
        assert joined["handle"].startswith("h_")
        await call(bob, "join", name="bob")
        assert (await call(alice, "whoami"))["name"] == "alice"  # the session keeps it
        sent = await call(alice, "say", to="all", content="hello <<<all>>>")
        holds(
            await text_of(bob, "listen", timeout=5),
            [(sent["seq"], "alice", "all", "chat", "hello <<<all>>>")],
        )
        assert (await fail(bob, "join", name="alice"))[0] == "invalid_request"


async def test_join_without_a_name_takes_the_clients_own(url: str) -> None:
    async with Client(f"{url}/mcp", mode="legacy") as legacy, Client(f"{url}/mcp") as modern:
        assert (await call(legacy, "whoami"))["default_name"] == "mcp"
        assert (await call(legacy, "join"))["name"] == "mcp"
        code, text = await fail(modern, "join")  # the same client name, held by the first
        assert code == "name_in_use"
        assert "Next: call join with the handle" in text


async def test_a_modern_client_joins_without_any_header_and_keeps_its_identity_by_handle(
    url: str, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    async with Client(f"{url}/mcp") as client:  # 2026-07-28: no session
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "handle" in tools["say"].input_schema["properties"]
        bob = Session(client)
        joined = await bob.call("join", name="bob")
        assert joined["protocol"]
        assert joined["handle"]
        sent = await alice.send("bob", "to bob, who has no session")
        heard = await bob.call("listen", timeout=5)
        assert [m["seq"] for m in heard["messages"]] == [sent.seq]
        assert (await bob.call("listen", timeout=0))["messages"] == []  # acknowledged
        assert (await bob.call("whoami"))["name"] == "bob"
        assert (await call(client, "whoami"))["joined"] is False  # no handle: nobody yet
        assert (await fail(client, "say", to="alice", content="hi"))[0] == "not_joined"
        assert "protocol" not in await bob.call("join")  # read once is enough
        assert (await bob.call("join", protocol_version=0))["protocol"]


async def test_a_handle_survives_a_hub_restart(tmp_path: Path) -> None:
    async with make_hub(tmp_path) as hub, serve(hub) as url, Client(f"{url}/mcp") as client:
        carol = Session(client)
        await carol.call("join", name="carol")
    async with make_hub(tmp_path) as hub, serve(hub) as url, Client(f"{url}/mcp") as client:
        again = Session(client)
        again.handle = carol.handle
        assert (await again.call("whoami"))["name"] == "carol"
        assert (await again.call("join", name="carol"))["outcome"] == "reaffirmed"


async def test_a_deleted_session_shows_offline_and_its_handle_resumes_it_in_a_new_one(
    url: str, live_hub: Hub, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    async with Client(f"{url}/mcp", mode="legacy") as first:
        joined = await call(first, "join", name="dave")
        await alice.send("dave", "before")
        assert [m["content"] for m in (await call(first, "listen", timeout=5))["messages"]] == [
            "before"
        ]
    # Leaving the block deletes the MCP session: the hub hears it at once.

    async def offline() -> bool:
        return (await alice.ping("dave")).state == "offline"

    await eventually(offline, within=10, what="dave offline once its session was deleted")
    async with HubClient(url) as stranger:
        with pytest.raises(NameInUse):  # no takeover without the handle or the token
            await stranger.register("dave")
    for n in range(2):
        await alice.send("dave", f"while away {n}")
    async with Client(f"{url}/mcp", mode="legacy") as second:
        back = await call(second, "join", name="dave", handle=joined["handle"])
        assert back["outcome"] == "resumed"
        seen = []
        while batch := (await call(second, "listen", timeout=1))["messages"]:
            seen += [(m["content"], m["redelivered"]) for m in batch]
    assert seen == [("before", True), ("while away 0", False), ("while away 1", False)]
    assert [p.name for p in await alice.peers()] == ["alice", "dave"]


async def test_a_client_can_act_as_an_agent_with_its_bearer_token(
    url: str, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    bob = await connect("bob")
    assert bob.token is not None
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bob.token}"})
    try:
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as mcp_bob:
            tools = {t.name: t for t in (await mcp_bob.list_tools()).tools}
            assert "handle" not in tools["say"].input_schema["properties"]  # it needs none
            assert (await call(mcp_bob, "whoami"))["name"] == "bob"
            await alice.send("bob", "to bob over plain HTTP")
            heard = await call(mcp_bob, "listen", timeout=5)
            assert [m["content"] for m in heard["messages"]] == ["to bob over plain HTTP"]
    finally:
        await http.aclose()


async def test_an_unknown_bearer_token_is_refused_and_remembered_nowhere(
    url: str, live_hub: Hub
) -> None:
    http = httpx2.AsyncClient(headers={"Authorization": "Bearer cau_nobody"})
    try:
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as stranger:
            assert (await fail(stranger, "whoami"))[0] == "unauthorized"
    finally:
        await http.aclose()


async def test_an_agent_joins_a_hub_that_requires_an_agent_key(tmp_path: Path) -> None:
    async with make_hub(tmp_path, agent_key="sesame") as hub, serve(hub) as url:
        async with Client(f"{url}/mcp", mode="legacy") as keyless:
            code, text = await fail(keyless, "join", name="keyless")
            assert code == "unauthorized"
            assert "X-Caucus-Agent-Key" in text
        http = httpx2.AsyncClient(headers={"X-Caucus-Agent-Key": "sesame"})
        try:
            async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as keyed:
                assert [p["name"] for p in (await call(keyed, "peers"))["peers"]] == []
                agent = Session(keyed)
                assert (await agent.call("join", name="keyed"))["outcome"] == "created"
                assert (await agent.call("whoami"))["name"] == "keyed"
        finally:
            await http.aclose()


@pytest.mark.parametrize(
    ("headers", "status"),
    [({"Origin": "http://evil.example"}, 403), ({"Host": "evil.example"}, 421)],
)
async def test_mcp_refuses_foreign_origins_and_hosts(
    url: str, headers: dict[str, str], status: int
) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with httpx2.AsyncClient(base_url=url) as http:
        response = await http.post(
            "/mcp",
            json=body,
            headers={"Accept": "application/json, text/event-stream", **headers},
        )
    assert response.status_code == status


async def test_the_injection_corpus_holds_through_mcp_say_and_listen(url: str) -> None:
    async with (
        Client(f"{url}/mcp", mode="legacy") as mallory,
        Client(f"{url}/mcp", mode="legacy") as bob,
    ):
        await call(mallory, "join", name="mallory")
        await call(bob, "join", name="bob")
        expected = []
        for content in CORPUS:
            if not content:
                continue
            sent = await call(mallory, "say", to="bob", content=content)
            expected.append((sent["seq"], "mallory", "you", "chat", content))
        result = await bob.call_tool("listen", {"timeout": 5})
        holds(str(result.content[0].text), expected)  # type: ignore[union-attr]
        structured = result.structured_content
        assert structured is not None
        assert structured["untrusted"]
        for message in structured["messages"]:
            # Structured content is what several hosts hand the model: nothing invisible rides it.
            assert all(ch in "\n\t" or ch.isprintable() for ch in message["content"])


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_handshake_era_protocol_versions_are_served(url: str, version: str) -> None:
    headers = {"Accept": "application/json, text/event-stream"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"},
        },
    }
    async with httpx2.AsyncClient(base_url=url, headers=headers) as http:
        response = await http.post("/mcp", json=init)
        assert response.status_code == 200
        body = response.text
        payload = json.loads(body[body.index("{") : body.rindex("}") + 1])
        assert payload["result"]["protocolVersion"] == version
        assert response.headers.get("mcp-session-id")


async def test_a_session_idle_past_its_timeout_shows_its_peer_offline(tmp_path: Path) -> None:
    async with (
        make_hub(tmp_path, mcp_session_idle=0.5) as hub,
        serve(hub) as url,
        httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http,
        HubClient(url) as alice,
    ):
        await alice.register("alice")
        opened = await http.post("/mcp", json=rpc(1, "initialize", INIT))
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        await http.post(
            "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session
        )
        joined = await http.post(
            "/mcp",
            json=rpc(2, "tools/call", {"name": "join", "arguments": {"name": "idle"}}),
            headers=session,
        )
        assert '"outcome":"created"' in joined.text.replace(" ", "")

        async def offline() -> bool:
            return (await alice.ping("idle")).state == "offline"

        # Nothing more arrives on the session: the SDK ends it, and the hub hears of it.
        await eventually(offline, within=20, what="the idle session's peer shown offline")


async def test_a_stale_protocol_version_gets_the_text_again(url: str) -> None:
    async with Client(f"{url}/mcp", mode="legacy") as client:
        assert (await call(client, "join", name="eve"))["protocol"]
        assert "protocol" not in await call(client, "join")
        assert (await call(client, "join", protocol_version=1))["protocol"]


JSON_RPC = {"Accept": "application/json, text/event-stream"}
INIT: dict[str, object] = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw-test", "version": "1"},
}


def rpc(number: int, method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": number, "method": method, "params": params}


async def test_mcp_bodies_are_bounded_like_every_route(url: str) -> None:
    big = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 70_000}}
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        response = await http.post("/mcp", json=big)
    assert response.status_code == 413
