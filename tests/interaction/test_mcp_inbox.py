"""The inbox as an MCP resource on `/mcp`: a host that supports subscriptions is woken when a
message arrives, without a watcher, on both protocol eras (the official SDK client)."""

from __future__ import annotations

import asyncio
import json
import warnings
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourceUpdated

from tests.conftest import ClientFactory
from tests.mcptools import Session, call
from tests.waiting import within


async def test_a_handshake_era_subscription_is_told_when_a_message_arrives(
    url: str, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    updated: asyncio.Queue[str] = asyncio.Queue()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            await updated.put(str(message.params.uri))

    async with Client(f"{url}/mcp", mode="legacy", message_handler=on_message) as bob:
        joined = await call(bob, "join", name="bob")
        uri = joined["inbox"]
        assert uri.startswith("caucus://inbox/bob?tag=")
        listed = await bob.list_resources()
        assert [str(r.uri) for r in listed.resources] == [uri]
        with warnings.catch_warnings():  # the SDK marks it as the older era's, which it is
            warnings.simplefilter("ignore")
            await bob.subscribe_resource(uri)
        await alice.send("bob", "are you there?")
        assert await within(updated.get(), 10, "the other process") == uri
        read = await bob.read_resource(uri)
        body = json.loads(read.contents[0].text)  # type: ignore[union-attr]
        assert body["pending"] == 1
        assert body["last"]["sender"] == "alice"
        # Reading consumed nothing: listen still gets it.
        heard = await call(bob, "listen", timeout=5)
        assert [m["content"] for m in heard["messages"]] == ["are you there?"]


async def test_a_2026_listen_stream_hears_the_inbox_change(
    url: str, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    async with Client(f"{url}/mcp") as client:  # 2026-07-28: no session; a handle
        bob = Session(client)
        uri = (await bob.call("join", name="bob"))["inbox"]
        async with client.listen(resource_subscriptions=[uri]) as stream:
            await alice.send("bob", "wake up")
            event = await within(anext(aiter(stream)), 10, "the other process")
        assert event == ResourceUpdated(uri=uri)


async def test_an_inbox_uri_is_a_capability_nobody_can_guess(
    url: str, connect: ClientFactory
) -> None:
    await connect("alice")
    async with Client(f"{url}/mcp", mode="legacy") as bob:
        uri = (await call(bob, "join", name="bob"))["inbox"]
        for wrong in (uri.replace("bob", "alice"), uri[:-2] + "00", "caucus://inbox/bob"):
            try:
                await bob.read_resource(wrong)
            except MCPError:
                continue
            raise AssertionError(f"{wrong} was readable")
