"""A tool call on a handshake-era `/mcp` session is answered by `CallLane`, outside the SDK's
session machinery, exactly as the SDK would have answered it (issue 33)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.types import Message, Receive, Scope, Send

from caucus.api.mcp import call_lane
from caucus.api.mcp.http import McpEndpoint
from caucus.server import build_app
from caucus.testing import make_hub, serve
from tests.interaction.test_mcp_http import INIT, JSON_RPC, rpc
from tests.mcptools import reply_message
from tests.waiting import eventually


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[str, McpEndpoint]]:
    # The default idle timeout (long): a pause between two calls on a busy machine must not
    # end the session. That a running call holds it open is read from its idle deadline.
    async with make_hub(tmp_path) as hub:
        app = build_app(hub)
        async with serve(hub, app) as url:
            yield url, await app.mcp.loaded()


async def _session(http: httpx2.AsyncClient, version: str, name: str) -> dict[str, str]:
    """A joined session's headers."""
    initialize = rpc(0, "initialize", {**INIT, "protocolVersion": version})
    opened = await http.post("/mcp", json=initialize)
    headers = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": version}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await http.post("/mcp", json=note, headers=headers)).status_code == 202
    join = rpc(1, "tools/call", {"name": "join", "arguments": {"name": name}})
    joined = reply_message(await http.post("/mcp", json=join, headers=headers))
    assert not joined["result"]["isError"], joined
    return headers


CALLS: list[dict[str, Any]] = [
    {"name": "whoami", "arguments": {}},
    {"name": "say", "arguments": {"to": "nobody", "content": "hi"}},  # an error result
    {"name": "say", "arguments": {"to": "nobody"}},  # invalid arguments
    {"name": "no_such_tool", "arguments": {}},
    {"name": "protocol", "arguments": {"section": "delivery"}},
    {"name": "listen", "arguments": {"timeout": 0}},
    {"name": "whoami"},  # no arguments at all
]


async def _answers(http: httpx2.AsyncClient, headers: dict[str, str]) -> list[dict[str, Any]]:
    replies = [
        await http.post("/mcp", json=rpc(10 + n, "tools/call", call), headers=headers)
        for n, call in enumerate(CALLS)
    ]
    assert {r.status_code for r in replies} == {200}
    return [reply_message(r) for r in replies]


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26"])
async def test_the_lane_answers_a_tool_call_as_the_sdk_does(
    served: tuple[str, McpEndpoint], monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    url, mcp = served
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        headers = await _session(http, version, "lane")
        before = mcp.calls.answered
        fast = await _answers(http, headers)
        assert mcp.calls.answered - before == len(CALLS) - 1  # an unknown tool: the SDK's

        async def to_the_sdk(scope: Scope, receive: Receive, send: Send) -> Receive:
            return receive

        monkeypatch.setattr(mcp.calls, "serve", to_the_sdk)
        monkeypatch.setattr(mcp.calls, "may_take", lambda headers: False)  # nor the lean lane
        slow = await _answers(http, headers)
    assert fast == slow


async def test_other_methods_and_refusals_go_to_the_sdk(served: tuple[str, McpEndpoint]) -> None:
    url, mcp = served
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        headers = await _session(http, "2025-11-25", "other")
        before = mcp.calls.answered
        listed = await http.post("/mcp", json=rpc(2, "tools/list", {}), headers=headers)
        assert "tools" in reply_message(listed)["result"]
        whoami = rpc(3, "tools/call", {"name": "whoami", "arguments": {}})
        unknown = {**headers, "mcp-session-id": "f" * 32}
        assert (await http.post("/mcp", json=whoami, headers=unknown)).status_code == 404
        json_only = await http.post(
            "/mcp", json=whoami, headers={**headers, "accept": "application/json"}
        )
        assert json_only.status_code == 406  # the SDK asks for both kinds
        hostile = await http.post(
            "/mcp", json=whoami, headers={**headers, "origin": "http://evil.example"}
        )
        assert hostile.status_code == 403
        bad_id = {"jsonrpc": "2.0", "id": True, "method": "tools/call", "params": {"name": "x"}}
        await http.post("/mcp", json=bad_id, headers=headers)  # the SDK judges it
        assert mcp.calls.answered == before


async def test_a_long_call_becomes_a_kept_alive_stream(
    served: tuple[str, McpEndpoint], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(call_lane, "STREAM_AFTER", 0.05)
    monkeypatch.setattr(call_lane, "PING_EVERY", 0.05)
    url, _ = served
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        headers = await _session(http, "2025-11-25", "patient")
        listen = rpc(5, "tools/call", {"name": "listen", "arguments": {"timeout": 0.8}})
        reply = await http.post("/mcp", json=listen, headers=headers)
        assert reply.headers["content-type"] == "text/event-stream"
        assert reply.text.startswith(": ping\r\n\r\n")
        assert reply_message(reply)["result"]["structuredContent"]["messages"] == []


async def test_a_call_holds_its_session_open_and_a_hang_up_cancels_it(
    served: tuple[str, McpEndpoint],
) -> None:
    url, mcp = served
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        headers = await _session(http, "2025-11-25", "hangs-up")
        transport = mcp._manager._server_instances[headers["mcp-session-id"]]
        listen = rpc(6, "tools/call", {"name": "listen", "arguments": {"timeout": 30}})
        parked = asyncio.ensure_future(http.post("/mcp", json=listen, headers=headers))
        await eventually(lambda: transport._requests_in_flight == 1, what="the listen to park")
        idle = transport.idle_scope  # no idle countdown while a call runs
        assert idle is not None
        assert idle.deadline == float("inf")
        parked.cancel()  # the client hangs up
        await eventually(lambda: transport._requests_in_flight == 0, what="the call to end")
        assert not transport.is_terminated
        whoami = rpc(7, "tools/call", {"name": "whoami", "arguments": {}})
        assert (await http.post("/mcp", json=whoami, headers=headers)).status_code == 200


MODERN = "2026-07-28"


def _modern(number: int, call: dict[str, Any], client: str, handle: str | None) -> Any:
    """A 2026-07-28 request: its envelope in `_meta`, the routing headers beside it."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    arguments = dict(call.get("arguments", {}))
    if handle is not None:
        arguments["handle"] = handle
    params = {"name": call["name"], "arguments": arguments, "_meta": meta}
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": call["name"]}
    return rpc(number, "tools/call", params), headers


@pytest.mark.parametrize("client", ["a-host", "claude-code"])
async def test_the_lane_answers_a_sessionless_call_as_the_sdk_does(
    served: tuple[str, McpEndpoint], monkeypatch: pytest.MonkeyPatch, client: str
) -> None:
    url, mcp = served
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        body, headers = _modern(1, {"name": "join", "arguments": {"name": "modern"}}, client, None)
        joined = reply_message(await http.post("/mcp", json=body, headers=headers))
        assert not joined["result"]["isError"], joined
        found = re.search(r"Your handle: (\S+) ", joined["result"]["content"][0]["text"])
        assert found is not None, joined
        handle = found.group(1)

        async def answers() -> list[tuple[int, dict[str, Any]]]:
            found = []
            for n, call in enumerate(CALLS):
                body, headers = _modern(10 + n, call, client, handle)
                reply = await http.post("/mcp", json=body, headers=headers)
                found.append((reply.status_code, reply_message(reply)))
            return found

        before = mcp.calls.answered
        fast = await answers()
        # An unknown tool is a protocol error (400 on this era), and the SDK's to answer.
        assert [status for status, _ in fast] == [
            400 if "no_such" in c["name"] else 200 for c in CALLS
        ]
        assert mcp.calls.answered - before == len(CALLS) - 1

        async def to_the_sdk(scope: Scope, receive: Receive, send: Send) -> Receive:
            return receive

        monkeypatch.setattr(mcp.calls, "serve", to_the_sdk)
        monkeypatch.setattr(mcp.calls, "may_take", lambda headers: False)  # nor the lean lane
        slow = await answers()
    assert fast == slow
    results = [a["result"] for _, a in fast if "result" in a]
    assert len(results) == len(CALLS) - 1
    assert all(r["resultType"] == "complete" for r in results)
    assert all("io.modelcontextprotocol/serverInfo" in r["_meta"] for r in results)


async def test_a_sessionless_call_the_sdk_would_refuse_goes_to_it(
    served: tuple[str, McpEndpoint],
) -> None:
    url, mcp = served
    whoami = {"name": "whoami", "arguments": {}}
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        body, headers = _modern(1, whoami, "a-host", None)
        mismatch = await http.post("/mcp", json=body, headers={**headers, "mcp-name": "say"})
        assert mismatch.status_code == 400
        del body["params"]["_meta"]
        assert (await http.post("/mcp", json=body, headers=headers)).status_code == 400
        assert mcp.calls.answered == 0


async def test_a_stream_closed_before_its_head_went_out_says_so() -> None:
    """The stream's timer may fire just as the call ends: its keep-alive task is made but has
    not run. Closing it must say nothing was sent, so the answer goes out as one JSON body
    (not a body without its head)."""
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        await asyncio.Event().wait()  # the client never hangs up
        raise AssertionError

    stream = call_lane._Stream(send, receive, [], asyncio.current_task())
    stream.open()
    assert await stream.close() is False
    assert sent == []

    opened = call_lane._Stream(send, receive, [], asyncio.current_task())
    opened.open()
    await eventually(lambda: len(sent) == 2, what="the head and a first keep-alive")
    assert await opened.close() is True
    assert sent[0]["type"] == "http.response.start"
