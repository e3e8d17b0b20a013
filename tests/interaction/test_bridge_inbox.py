"""The inbox as a resource on `caucus bridge` (stdio), driven by the official MCP SDK client
against a real hub: a subscriber is told when a message arrives, on both protocol eras; join
and leave change the resource list; reading and following consume nothing."""

from __future__ import annotations

import asyncio
import json
import warnings
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated

from tests.conftest import ClientFactory
from tests.interaction.test_mcp_bridge import bridge
from tests.mcptools import call
from tests.waiting import scaled, within


class Heard:
    """Every server notification a legacy-era client gets, as a queue."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Any] = asyncio.Queue()

    async def __call__(self, message: Any) -> None:
        await self.queue.put(message)

    async def next(self, kind: type[Any]) -> Any:
        async with asyncio.timeout(scaled(15)):
            while True:
                message = await self.queue.get()
                if isinstance(message, kind):
                    return message


async def test_a_handshake_era_subscriber_hears_join_and_each_new_message(
    url: str, tmp_path: Path, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    heard = Heard()
    async with bridge(url, tmp_path, "bob", message_handler=heard) as bob:
        assert (await bob.list_resources()).resources == []  # nothing before join
        uri = (await call(bob, "join", name="bob"))["inbox"]
        assert uri.startswith("caucus://inbox/bob?tag=")
        await heard.next(types.ResourceListChangedNotification)
        assert [str(r.uri) for r in (await bob.list_resources()).resources] == [uri]
        with warnings.catch_warnings():  # the SDK marks the verb as the older era's
            warnings.simplefilter("ignore")
            await bob.subscribe_resource(uri)
        await alice.send("bob", "are you there?")
        assert str((await heard.next(types.ResourceUpdatedNotification)).params.uri) == uri
        body = json.loads((await bob.read_resource(uri)).contents[0].text)  # type: ignore[union-attr]
        assert (body["pending"], body["last"]["sender"]) == (1, "alice")
        await alice.send("bob", "hello?")
        assert str((await heard.next(types.ResourceUpdatedNotification)).params.uri) == uri
        # Following took nothing: listen gets both.
        got = await call(bob, "listen", timeout=5)
        assert [m["content"] for m in got["messages"]] == ["are you there?", "hello?"]
        # Another tag (its last character changed: a fixed suffix is the real one now and then).
        forged = uri[:-1] + ("1" if uri.endswith("0") else "0")
        for wrong in (forged, "caucus://inbox/bob", uri.replace("bob", "alice")):
            with pytest.raises(MCPError):
                await bob.read_resource(wrong)
        await call(bob, "leave")
        await heard.next(types.ResourceListChangedNotification)
        assert (await bob.list_resources()).resources == []


async def test_a_2026_listen_stream_hears_join_and_messages_waiting_before_it_opened(
    url: str, tmp_path: Path, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    async with bridge(url, tmp_path, "bob", mode="auto") as bob:
        async with bob.listen(resources_list_changed=True) as changes:
            uri = (await call(bob, "join", name="bob"))["inbox"]
            event = await within(anext(aiter(changes)), 15, "the other process")
        assert event == ResourcesListChanged()
        await alice.send("bob", "sent before anyone followed")
        async with bob.listen(resource_subscriptions=[uri]) as stream:
            events = aiter(stream)
            # A message already waiting is told as soon as the stream opens.
            assert await within(anext(events), 15, "the other process") == ResourceUpdated(uri=uri)
            got = await call(bob, "listen", timeout=5)
            assert [m["content"] for m in got["messages"]] == ["sent before anyone followed"]
            await alice.send("bob", "and one after")
            assert await within(anext(events), 15, "the other process") == ResourceUpdated(uri=uri)
