"""The lean lane (ADR 0026): over real uvicorn, a known agent's send and receive are answered
from the protocol without an ASGI cycle, with the same answers; everything the ASGI stack
would refuse, queue or treat specially still goes that way; a long-poll whose client hangs up
claims nothing; pipelined requests are answered in order."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from caucus.client import HubClient
from caucus.server import CaucusApp, build_app
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from tests.waiting import eventually, within


@pytest.fixture
async def served(tmp_path: Path) -> AsyncIterator[tuple[Hub, CaucusApp, str]]:
    async with make_hub(tmp_path / "hub", max_body_bytes=4096) as hub:
        app = build_app(hub)
        async with serve(hub, app) as url:
            yield hub, app, url


class Raw:
    """One keep-alive connection, written to byte for byte."""

    def __init__(self, url: str) -> None:
        self.host, port = url.removeprefix("http://").split(":")
        self.port = int(port)

    async def __aenter__(self) -> Raw:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def __aexit__(self, *_: object) -> None:
        self.writer.close()

    def request(self, method: str, path: str, token: str, body: bytes = b"", **extra: str) -> None:
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
        head += f"Authorization: Bearer {token}\r\n"
        if body or method == "POST":
            if "Content_Type" not in extra:
                head += "Content-Type: application/json\r\n"
            head += f"Content-Length: {len(body)}\r\n"
        head += "".join(f"{k.replace('_', '-')}: {v}\r\n" for k, v in extra.items())
        self.writer.write(head.encode() + b"\r\n" + body)

    async def response(self) -> tuple[int, dict[str, str], dict[str, object]]:
        async def read() -> tuple[int, dict[str, str], dict[str, object]]:
            status = int((await self.reader.readline()).split()[1])
            headers: dict[str, str] = {}
            while (line := await self.reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            body = await self.reader.readexactly(int(headers["content-length"]))
            return status, headers, json.loads(body)

        return await within(read(), 30, "the hub's answer")


def said(to: str, content: str) -> bytes:
    return json.dumps({"to": to, "content": content}).encode()


async def test_a_known_agent_s_send_and_receive_take_the_lean_lane(
    served: tuple[Hub, CaucusApp, str],
) -> None:
    _, app, url = served
    async with HubClient(url) as alice, HubClient(url) as bob:
        await alice.register("alice")
        await bob.register("bob")
        before = app.lean_lane.answered
        await alice.send("bob", "hello over the lean lane")
        got = await bob.receive(timeout=5)
        assert [m.content for m in got.messages] == ["hello over the lean lane"]
        assert app.lean_lane.answered - before == 2
        await bob.receive(timeout=0)  # acknowledges the batch before
        assert app.lean_lane.answered - before == 3


async def test_what_the_asgi_stack_would_treat_otherwise_goes_its_way(
    served: tuple[Hub, CaucusApp, str],
) -> None:
    """An unknown token, a foreign Host or Origin, a body past the limit, HTTP/1.0 and a
    non-JSON body: each answered as before, none by the lane."""
    _, app, url = served
    async with HubClient(url) as alice:
        await alice.register("alice")
        token = alice.token
        assert token is not None
        before = app.lean_lane.answered
        async with Raw(url) as raw:
            raw.request("POST", "/send", "not-a-token", said("alice", "hi"))
            assert (await raw.response())[0] == 401
            raw.request("POST", "/send", token, said("alice", "hi"), Origin="http://evil.test")
            status, headers, body = await raw.response()
            assert (status, body["error"]) == (403, "forbidden")
            assert headers["x-frame-options"] == "DENY"
            raw.request("POST", "/send", token, b"x" * 5000)
            assert (await raw.response())[0] == 413
        async with Raw(url) as raw:
            raw.writer.write(
                f"GET /receive?timeout=0 HTTP/1.0\r\nHost: {raw.host}\r\n"
                f"Authorization: Bearer {token}\r\n\r\n".encode()
            )
            assert (await raw.response())[0] == 200
        assert app.lean_lane.answered == before
        async with Raw(url) as raw:  # taken by the lane, refused as the routes refuse it
            raw.request("POST", "/send", token, b"to=alice", Content_Type="text/plain")
            status, _, body = await raw.response()
        assert (status, body["error"]) == (415, "unsupported_media_type")
        assert app.lean_lane.answered == before + 1


async def test_a_parked_receive_whose_client_hangs_up_claims_nothing(
    served: tuple[Hub, CaucusApp, str],
) -> None:
    hub, app, url = served
    async with HubClient(url) as alice, HubClient(url) as bob:
        await alice.register("alice")
        await bob.register("bob")
        assert bob.token is not None
        bob_id = (await hub.registry.find("bob")).id
        before = app.lean_lane.answered
        async with Raw(url) as raw:
            raw.request("GET", "/receive?timeout=20", bob.token)

            async def parked() -> bool:
                return bob_id in hub.notifier.listening_ids()

            await eventually(parked, within=10, what="bob's receive to park")
        assert app.lean_lane.answered == before + 1

        async def let_go() -> bool:
            return bob_id not in hub.notifier.listening_ids()

        await eventually(let_go, within=10, what="the hung-up receive to end")
        await alice.send("bob", "for whoever reads next")
        got = await bob.receive(timeout=5)
        assert [m.content for m in got.messages] == ["for whoever reads next"]


async def test_pipelined_requests_are_answered_in_order(
    served: tuple[Hub, CaucusApp, str],
) -> None:
    """Three requests in one write: a send, a status route the lane does not take, another
    send. Answered in order, each once."""
    _, _, url = served
    async with HubClient(url) as alice, HubClient(url) as bob:
        await alice.register("alice")
        await bob.register("bob")
        token = alice.token
        assert token is not None
        async with Raw(url) as raw:
            raw.request("POST", "/send", token, said("bob", "one"))
            raw.request("GET", "/peers", token)
            raw.request("POST", "/send", token, said("bob", "two"))
            answers = [await raw.response() for _ in range(3)]
        assert [a[0] for a in answers] == [200, 200, 200]
        assert "message_id" in answers[0][2]
        assert "peers" in answers[1][2]
        got = await bob.receive(timeout=5)
        assert [m.content for m in got.messages] == ["one", "two"]


async def test_a_task_s_round_trip_takes_the_lean_lane(
    served: tuple[Hub, CaucusApp, str],
) -> None:
    """Sent, received, replied to, its result received: four requests, all the lane's."""
    _, app, url = served
    async with HubClient(url) as alice, HubClient(url) as bob:
        await alice.register("alice")
        await bob.register("bob")
        before = app.lean_lane.answered
        task = await alice.send_task("bob", "add 2 and 2")
        asked = await bob.receive(timeout=5)
        assert [m.kind for m in asked.messages] == ["task"]
        done = await bob.reply_task(task.task_id, "4")
        assert done.result == "4"
        result = await alice.receive(timeout=5)
        assert [m.content for m in result.messages] == ["4"]
        assert app.lean_lane.answered - before == 4
