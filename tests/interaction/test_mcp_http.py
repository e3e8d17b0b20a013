"""`/mcp` on the hub, driven by the official MCP SDK client over Streamable HTTP."""

from __future__ import annotations

import json

import httpx2
import pytest
from mcp import Client

from tests.conftest import ClientFactory
from tests.injection import CORPUS, holds
from tests.interaction.test_mcp_bridge import error, text


async def test_two_agents_talk_over_mcp_http_sessions(url: str) -> None:
    async with (
        Client(f"{url}/mcp", mode="legacy") as alice,
        Client(f"{url}/mcp", mode="legacy") as bob,
    ):
        assert "not joined" in await text(alice, "whoami")
        assert "join first" in await error(alice, "listen")
        assert "give a name" in await error(alice, "join")  # /mcp has no default name
        assert (await text(alice, "join", name="alice")).startswith("joined as alice (created)")
        assert (await text(bob, "join", name="bob")).startswith("joined as bob (created)")
        assert "you are alice" in await text(alice, "whoami")  # the session keeps its identity
        sent = await text(alice, "say", to="all", content="hello <<<all>>>")
        seq = int(sent.split("#")[1].split(" ")[0])
        holds(
            await text(bob, "listen", timeout=5), [(seq, "alice", "all", "chat", "hello <<<all>>>")]
        )
        assert "[already_joined]" in await error(bob, "join", name="alice")
        assert "[unsupported]" in await error(bob, "watch_command")


async def test_a_client_can_act_as_an_agent_with_its_bearer_token(
    url: str, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    bob = await connect("bob")
    assert bob.token is not None
    transport_headers = {"Authorization": f"Bearer {bob.token}"}
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers=transport_headers)
    try:
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as mcp_bob:
            assert "you are bob" in await text(mcp_bob, "whoami")
            await alice.send("bob", "to bob over plain HTTP")
            got = await text(mcp_bob, "listen", timeout=5)
            assert "to bob over plain HTTP" in got
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


async def test_a_stateless_client_is_told_how_to_keep_an_identity(url: str) -> None:
    async with Client(f"{url}/mcp") as modern:  # 2026-07-28: no session
        assert "Caucus operating protocol" in await text(modern, "protocol_section")
        message = await error(modern, "join", name="drifter")
        assert "[stateless]" in message
        assert "Authorization: Bearer" in message


async def test_the_injection_corpus_holds_through_mcp_say_and_listen(url: str) -> None:
    async with (
        Client(f"{url}/mcp", mode="legacy") as mallory,
        Client(f"{url}/mcp", mode="legacy") as bob,
    ):
        await text(mallory, "join", name="mallory")
        await text(bob, "join", name="bob")
        expected = []
        for content in CORPUS:
            if not content:
                continue
            sent = await text(mallory, "say", to="bob", content=content)
            seq = int(sent.split("#")[1].split(" ")[0])
            expected.append((seq, "mallory", "you", "chat", content))
        holds(await text(bob, "listen", timeout=5), expected)


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
