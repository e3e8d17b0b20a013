"""A joined MCP session's tool calls take the lean lane (ADR 0026, issue 33): over real
uvicorn, answered without an ASGI cycle, byte for byte as the SDK answers them; whatever on
`/mcp` is not one tool call goes the ASGI way once its body is in, in order behind and before
the requests around it; a long call still becomes a kept-alive stream, and a hang-up still
cancels it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from starlette.types import Receive, Scope, Send

from caucus.api.mcp import call_lane
from caucus.server import CaucusApp, build_app
from caucus.testing import make_hub, serve
from tests.interaction.test_mcp_call_lane import _answers, _session
from tests.interaction.test_mcp_http import JSON_RPC, rpc
from tests.mcptools import reply_message
from tests.waiting import eventually, within


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[CaucusApp, str]]:
    async with make_hub(tmp_path) as hub:
        app = build_app(hub)
        async with serve(hub, app) as url:
            yield app, url


def _kept(reply: httpx2.Response) -> dict[str, str]:
    """The headers that say what an answer is (not when it was made, nor its length)."""
    return {k: v for k, v in reply.headers.items() if k not in ("date", "content-length")}


@pytest.mark.parametrize("version", ["2025-11-25", "2025-03-26"])
async def test_a_joined_session_s_calls_take_the_lean_lane_as_the_sdk_answers(
    served: tuple[CaucusApp, str], monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    """The same calls three ways: the lean lane, `CallLane` in an ASGI cycle (the same bytes
    and headers), the SDK (the same messages)."""
    app, url = served
    whoami = rpc(30, "tools/call", {"name": "whoami", "arguments": {}})
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        headers = await _session(http, version, "lean")
        before = app.lean_lane.answered
        lean = await _answers(http, headers)
        lean_reply = await http.post("/mcp", json=whoami, headers=headers)
        taken = len(lean) - 1 + 1  # an unknown tool is the SDK's to refuse; whoami is taken
        assert app.lean_lane.answered - before == taken

        monkeypatch.setattr(app.mcp.calls, "may_take", lambda headers: False)
        cycle_reply = await http.post("/mcp", json=whoami, headers=headers)

        async def to_the_sdk(scope: Scope, receive: Receive, send: Send) -> Receive:
            return receive

        monkeypatch.setattr(app.mcp.calls, "serve", to_the_sdk)
        sdk = await _answers(http, headers)
        assert app.lean_lane.answered - before == taken
    assert lean == sdk
    assert lean_reply.content == cycle_reply.content
    assert _kept(lean_reply) == _kept(cycle_reply)


async def _raw_answers(
    reader: asyncio.StreamReader, count: int
) -> list[tuple[int, dict[str, Any]]]:
    """`count` HTTP answers off one connection: (status, the JSON-RPC message or {})."""

    async def one() -> tuple[int, dict[str, Any]]:
        status = int((await reader.readline()).split()[1])
        length, chunked, stream = 0, False, False
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding":
                chunked = value == "chunked"
            elif name == "content-type":
                stream = value.startswith("text/event-stream")
        if chunked:
            body = b""
            while size := int((await reader.readline()).strip(), 16):
                body += await reader.readexactly(size)
                await reader.readline()
            await reader.readline()
        else:
            body = await reader.readexactly(length)
        if not body:
            return status, {}
        if stream:
            data = [x[6:] for x in body.splitlines() if x.startswith(b"data: ")]
            assert len(data) == 1, body
            body = data[0]
        found: dict[str, Any] = json.loads(body)
        return status, found

    return [await within(one(), 30, "an answer") for _ in range(count)]


async def test_what_is_not_a_tool_call_goes_the_asgi_way_in_its_turn(
    served: tuple[CaucusApp, str],
) -> None:
    """A listing and a notification look like the lane's from their heads; read whole, they
    go the ASGI way, and a call written right behind the listing is answered after it."""
    app, url = served
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        headers = await _session(http, "2025-11-25", "turns")
    host, port = url.removeprefix("http://").split(":")
    head = "".join(f"{k}: {v}\r\n" for k, v in {**JSON_RPC, **headers}.items())

    def wire(message: dict[str, Any]) -> bytes:
        body = json.dumps(message).encode()
        return (
            f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{head}\r\n"
        ).encode() + body

    whoami = rpc(3, "tools/call", {"name": "whoami", "arguments": {}})
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        # The first call with these headers, in this order, goes the ASGI way: the SDK's
        # transport judges them there, once.
        writer.write(wire(whoami))
        await _raw_answers(reader, 1)
        lean, declined = app.lean_lane.answered, app.lean_lane.declined
        writer.write(wire(rpc(4, "tools/list", {})) + wire({**whoami, "id": 5}))
        listing, behind = await _raw_answers(reader, 2)
        assert (app.lean_lane.answered, app.lean_lane.declined) == (lean, declined + 1)
        writer.write(wire({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}))
        noted = await _raw_answers(reader, 1)
        assert (app.lean_lane.answered, app.lean_lane.declined) == (lean, declined + 2)
        writer.write(wire({**whoami, "id": 6}))
        last = await _raw_answers(reader, 1)
        assert (app.lean_lane.answered, app.lean_lane.declined) == (lean + 1, declined + 2)
    finally:
        writer.close()
    assert (listing[0], listing[1]["id"]) == (200, 4)
    assert "tools" in listing[1]["result"]
    assert (behind[0], behind[1]["id"]) == (200, 5)
    assert noted == [(202, {})]
    assert (last[0][0], last[0][1]["id"], last[0][1]["result"]["isError"]) == (200, 6, False)


async def test_a_long_lean_call_streams_and_carries_what_arrives(
    served: tuple[CaucusApp, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(call_lane, "STREAM_AFTER", 0.05)
    monkeypatch.setattr(call_lane, "PING_EVERY", 0.05)
    app, url = served
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        listener = await _session(http, "2025-11-25", "patient")
        speaker = await _session(http, "2025-11-25", "speaker")
        before = app.lean_lane.answered
        listen = rpc(5, "tools/call", {"name": "listen", "arguments": {"timeout": 20}})
        async with http.stream("POST", "/mcp", json=listen, headers=listener) as reply:
            # The head comes once the call has run past STREAM_AFTER; then the pings.
            chunks = reply.aiter_bytes()
            first = await within(anext(chunks), 30, "the stream's first ping")
            second = await within(anext(chunks), 30, "a second ping")
            say: dict[str, object] = {
                "name": "say",
                "arguments": {"to": "patient", "content": "hi"},
            }
            said = await http.post("/mcp", json=rpc(6, "tools/call", say), headers=speaker)
            assert said.status_code == 200
            rest = b"".join([chunk async for chunk in chunks])
    assert reply.headers["content-type"] == "text/event-stream"
    assert reply.headers["transfer-encoding"] == "chunked"
    assert reply.headers["mcp-session-id"] == listener["mcp-session-id"]
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert first == second == b": ping\r\n\r\n"
    events = [line[6:] for line in rest.splitlines() if line.startswith(b"data: ")]
    assert len(events) == 1, rest
    got = json.loads(events[0])
    assert got["id"] == 5
    assert [m["content"] for m in got["result"]["structuredContent"]["messages"]] == ["hi"]
    assert app.lean_lane.answered - before == 2


async def test_a_hang_up_cancels_a_lean_call_and_its_session_lives_on(
    served: tuple[CaucusApp, str],
) -> None:
    app, url = served
    async with httpx2.AsyncClient(base_url=url, headers=JSON_RPC) as http:
        headers = await _session(http, "2025-11-25", "hangs-up")
        endpoint = await app.mcp.loaded()
        transport = endpoint._manager._server_instances[headers["mcp-session-id"]]
        before = app.lean_lane.answered
        listen = rpc(6, "tools/call", {"name": "listen", "arguments": {"timeout": 30}})
        parked = asyncio.ensure_future(http.post("/mcp", json=listen, headers=headers))
        await eventually(lambda: transport._requests_in_flight == 1, what="the listen to park")
        assert app.lean_lane.answered == before + 1
        parked.cancel()  # the client hangs up
        await eventually(lambda: transport._requests_in_flight == 0, what="the call to end")
        whoami = rpc(7, "tools/call", {"name": "whoami", "arguments": {}})
        assert (await http.post("/mcp", json=whoami, headers=headers)).status_code == 200
        speaker = await _session(http, "2025-11-25", "speaker")
        say: dict[str, object] = {
            "name": "say",
            "arguments": {"to": "hangs-up", "content": "after"},
        }
        await http.post("/mcp", json=rpc(8, "tools/call", say), headers=speaker)
        again = rpc(9, "tools/call", {"name": "listen", "arguments": {"timeout": 5}})
        heard = reply_message(await http.post("/mcp", json=again, headers=headers))
    # The cancelled listen took nothing: the message sent after it is heard by the next.
    assert [m["content"] for m in heard["result"]["structuredContent"]["messages"]] == ["after"]
