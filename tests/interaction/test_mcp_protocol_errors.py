"""What MCP answers with a protocol error, on `/mcp` and on `caucus bridge`, on both eras (the
official SDK client): an unknown tool or prompt is -32602 naming what there is, an unknown
resource -32002 (-32602 on 2026-07-28, which retired -32002) with its URI, none of them a
code 0 or a traceback in the hub's log; `resources/templates/list` answers with the inbox's
template; both doors declare the same capabilities, and both tell a session that listed its
resources when a join or a leave changes them."""

from __future__ import annotations

import json
import logging
import re
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.interaction.test_mcp_bridge import bridge
from tests.interaction.test_mcp_http import INIT, JSON_RPC, rpc
from tests.mcptools import call, reply_message
from tests.waiting import scaled, within

DOORS = ["mcp", "bridge"]
ERAS = ["legacy", "auto"]  # auto: the SDK client discovers 2026-07-28


@asynccontextmanager
async def door(kind: str, url: str, tmp_path: Path, mode: str) -> AsyncIterator[Client]:
    if kind == "bridge":
        async with bridge(url, tmp_path, "bob", mode=mode) as client:
            yield client
    else:
        async with Client(f"{url}/mcp", mode=mode) as client:
            yield client


async def refused(call_it: object) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await call_it  # type: ignore[misc]
    return caught.value


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("kind", DOORS)
async def test_unknown_names_are_protocol_errors_that_say_what_there_is(
    url: str, tmp_path: Path, kind: str, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with door(kind, url, tmp_path, mode) as client:
        modern = mode != "legacy"
        tool = await refused(client.call_tool("test_simple_text", {}))
        assert tool.code == -32602
        assert "join" in tool.data["tools"]
        assert tool.data["tool"] == "test_simple_text"
        prompt = await refused(client.get_prompt("test_simple_prompt"))
        assert prompt.code == -32602
        assert prompt.data == {
            "prompt": "test_simple_prompt",
            "prompts": ["join", "status", "leave"],
        }
        for uri in ("test://static-text", "caucus://inbox/bob?tag=0", "caucus://inbox/"):
            missing = await refused(client.read_resource(uri))
            assert (missing.code, missing.data) == (-32602 if modern else -32002, {"uri": uri})
        if not modern:
            with warnings.catch_warnings():  # the SDK marks the verb as the older era's
                warnings.simplefilter("ignore")
                missing = await refused(client.subscribe_resource("test://watched-resource"))
            assert missing.code == -32002
        # And the tools still answer: the session is none the worse.
        assert (await call(client, "protocol", section="delivery"))["section"] == "delivery"
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("kind", DOORS)
async def test_the_inbox_template_is_listed_and_join_s_uri_fits_it(
    url: str, tmp_path: Path, kind: str, mode: str
) -> None:
    async with door(kind, url, tmp_path, mode) as client:
        listed = await client.list_resource_templates()
        [template] = listed.resource_templates
        assert template.uri_template == "caucus://inbox/{name}{?tag}"
        assert template.mime_type == "application/json"
        joined = await call(client, "join", name="bob")
        assert re.fullmatch(r"caucus://inbox/bob\?tag=[0-9a-f]+", joined["inbox"])


async def _capabilities(kind: str, url: str, tmp_path: Path, mode: str) -> dict[str, object]:
    async with door(kind, url, tmp_path, mode) as client:
        caps = client.server_capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
        return {"version": client.protocol_version, **caps}


@pytest.mark.parametrize("mode", ERAS)
async def test_the_hub_and_the_bridge_declare_the_same_capabilities(
    url: str, tmp_path: Path, mode: str
) -> None:
    hub = await _capabilities("mcp", url, tmp_path, mode)
    assert hub == await _capabilities("bridge", url, tmp_path, mode)
    assert hub["resources"] == {"subscribe": True, "listChanged": True}


async def test_a_session_that_listed_resources_hears_join_and_leave_change_them(
    url: str,
) -> None:
    """(The bridge's own test is in test_bridge_inbox.py.) Raw HTTP, so the session's GET
    stream is known to be open before the join: streamable HTTP sends a notification that
    belongs to no request there, and only there."""
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC, timeout=scaled(15)) as http:
        opened = await http.post("/mcp", json=rpc(1, "initialize", INIT))
        session = {"mcp-session-id": opened.headers["mcp-session-id"]}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post("/mcp", json=initialized, headers=session)
        stream_headers = {**session, "accept": "text/event-stream"}
        async with http.stream("GET", "/mcp", headers=stream_headers) as stream:
            assert stream.status_code == 200
            events = stream.aiter_lines()

            async def next_notice() -> str:
                async for line in events:
                    if line.startswith("data: "):
                        return str(json.loads(line[6:])["method"])
                raise AssertionError("the stream ended")

            async def post(number: int, method: str, params: dict[str, object]) -> Any:
                return reply_message(
                    await http.post("/mcp", json=rpc(number, method, params), headers=session)
                )

            assert (await post(2, "resources/list", {}))["result"]["resources"] == []
            join = {"name": "join", "arguments": {"name": "bob"}}
            inbox = (await post(3, "tools/call", join))["result"]["structuredContent"]["inbox"]
            assert (
                await within(next_notice(), 15, "the hub") == "notifications/resources/list_changed"
            )
            listed = (await post(4, "resources/list", {}))["result"]["resources"]
            assert [r["uri"] for r in listed] == [inbox]
            await post(5, "tools/call", {"name": "leave", "arguments": {}})
            assert (
                await within(next_notice(), 15, "the hub") == "notifications/resources/list_changed"
            )
