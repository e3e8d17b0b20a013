"""Over real uvicorn with the hub's protocol, a response whose head waits for its body
(`OneWrite`) still reaches the client whole and in order: a stream's head arrives before its
first event is written, a `100 Continue` before the answer, a large body intact, keep-alive
answers one after another."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from caucus.config import Settings
from caucus.testing import serve_app
from caucus.web.one_write import OneWrite
from caucus.web.serving import uvicorn_config
from tests.waiting import within

LARGE = b"y" * (300 * 1024)


class App:
    """Three routes: `/small` answers at once, `/large` answers 300 KiB, `/stream` sends its
    head and writes its event only when the test lets it."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["path"] == "/stream":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await self.release.wait()
            await send({"type": "http.response.body", "body": b"event", "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        answer = LARGE if scope["path"] == "/large" else b"got " + body
        headers = [(b"content-length", str(len(answer)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": answer})


@pytest.fixture
async def served() -> AsyncIterator[tuple[App, str]]:
    app = App()

    def config(served: Any) -> Any:
        return uvicorn_config(served, Settings(), log_level="warning", access_log=False)

    async with serve_app(config, app) as url:
        yield app, url


async def connect(url: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    host, port = url.removeprefix("http://").split(":")
    return await asyncio.open_connection(host, int(port))


async def head_of(reader: asyncio.StreamReader) -> dict[str, str]:
    status = await reader.readline()
    assert status.startswith(b"HTTP/1.1 "), status
    headers = {"status": status.split()[1].decode()}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    return headers


async def test_keep_alive_answers_arrive_whole_and_in_order(served: tuple[App, str]) -> None:
    _, url = served
    joined = OneWrite.joined
    reader, writer = await connect(url)
    try:
        for path in ("/small", "/large", "/small"):
            writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            head = await within(head_of(reader), 10, f"the head of {path}")
            body = await within(
                reader.readexactly(int(head["content-length"])), 10, f"the body of {path}"
            )
            assert body == (LARGE if path == "/large" else b"got ")
        assert OneWrite.joined == joined + 3  # each head went out with its body
    finally:
        writer.close()


async def test_a_stream_s_head_arrives_before_its_first_event(served: tuple[App, str]) -> None:
    app, url = served
    reader, writer = await connect(url)
    try:
        writer.write(b"GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
        head = await within(head_of(reader), 10, "the stream's head, with no event yet")
        assert head["status"] == "200"
        app.release.set()
        event = await within(reader.readuntil(b"event"), 10, "the event")
        assert event.endswith(b"5\r\nevent")
    finally:
        writer.close()


async def test_a_continue_goes_before_the_answer(served: tuple[App, str]) -> None:
    _, url = served
    reader, writer = await connect(url)
    try:
        writer.write(
            b"POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"
        )
        assert (await within(head_of(reader), 10, "the 100 Continue"))["status"] == "100"
        writer.write(b"hello")
        head = await within(head_of(reader), 10, "the answer")
        assert head["status"] == "200"
        body = await within(reader.readexactly(int(head["content-length"])), 10, "its body")
        assert body == b"got hello"
    finally:
        writer.close()
