"""The fast lane answers the hot routes itself (send, receive, and a task's round trip), with
the same answers and the same refusals the documented FastAPI routes give (ADR 0002, 0015)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest
from starlette.types import Receive, Scope, Send

from caucus.api.hotpath import FastLane
from caucus.dashboard.feed import Feed
from caucus.testing import make_hub
from caucus.web.context import SCOPE_KEY, Served
from caucus.web.guard import SECURITY_HEADERS


class Elsewhere:
    """What the lane hands on to: it records every request that reached it."""

    def __init__(self) -> None:
        self.reached: list[tuple[str, str]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.reached.append((scope["method"], scope["path"]))
        await send({"type": "http.response.start", "status": 599, "headers": []})
        await send({"type": "http.response.body", "body": b""})


@pytest.fixture
async def lane(
    tmp_path: Path,
) -> AsyncIterator[tuple[httpx2.AsyncClient, Elsewhere, dict[str, str]]]:
    async with make_hub(tmp_path) as hub:
        feed = Feed(hub)
        elsewhere = Elsewhere()
        front = FastLane(elsewhere, max_body_bytes=4096, headers=list(SECURITY_HEADERS))

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            scope[SCOPE_KEY] = Served(hub, feed)
            await front(scope, receive, send)

        tokens: dict[str, str] = {}
        for name in ("alice", "bob"):
            token = (await hub.principals.register(name=name)).token
            assert token is not None
            tokens[name] = token
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            yield http, elsewhere, tokens
        feed.close()


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_a_task_round_trip_never_leaves_the_lane(
    lane: tuple[httpx2.AsyncClient, Elsewhere, dict[str, str]],
) -> None:
    http, elsewhere, tokens = lane
    alice, bob = auth(tokens["alice"]), auth(tokens["bob"])
    sent = await http.post("/tasks", json={"to": "bob", "content": "count"}, headers=alice)
    assert sent.status_code == 200, sent.text
    task_id = sent.json()["task_id"]
    assert sent.json()["state"] == "pending"
    got = (await http.get("/receive?timeout=1", headers=bob)).json()["messages"]
    assert [m["meta"]["task_id"] for m in got] == [task_id]
    asked = await http.post(f"/tasks/{task_id}/input", json={"question": "which?"}, headers=bob)
    assert asked.json()["state"] == "input_required"
    answered = await http.post(f"/tasks/{task_id}/reply", json={"result": "a"}, headers=alice)
    assert answered.json()["state"] == "pending"
    await http.get("/receive?timeout=1", headers=bob)
    done = await http.post(f"/tasks/{task_id}/reply", json={"result": "412"}, headers=bob)
    assert (done.json()["state"], done.json()["result"]) == ("completed", "412")
    other = (await http.post("/tasks", json={"to": "bob", "content": "x"}, headers=alice)).json()
    canceled = await http.post(f"/tasks/{other['task_id']}/cancel", headers=alice)
    assert canceled.json()["state"] == "canceled"
    third = (await http.post("/tasks", json={"to": "bob", "payload": "y"}, headers=alice)).json()
    await http.get("/receive?timeout=1", headers=bob)
    failed = await http.post(f"/tasks/{third['task_id']}/fail", json={"error": "no"}, headers=bob)
    assert failed.json()["state"] == "failed"
    assert elsewhere.reached == []


async def test_the_lane_refuses_as_the_documented_routes_do(
    lane: tuple[httpx2.AsyncClient, Elsewhere, dict[str, str]],
) -> None:
    http, elsewhere, tokens = lane
    alice = auth(tokens["alice"])
    cases = [
        (await http.post("/tasks", json={"to": "bob"}, headers=alice), 422, "invalid_request"),
        (await http.post("/tasks", json={"to": "bob", "payload": "x"}), 401, "unauthorized"),
        (
            await http.post("/tasks", json={"to": "nobody", "payload": "x"}, headers=alice),
            404,
            "not_found",
        ),
        (
            await http.post("/tasks/t_none/reply", json={"result": "x"}, headers=alice),
            404,
            "not_found",
        ),
        (
            await http.post(
                "/tasks", content=b"to=bob", headers={**alice, "Content-Type": "text/plain"}
            ),
            415,
            "unsupported_media_type",
        ),
        (
            await http.post("/tasks", content=b"{" + b" " * 5000 + b"}", headers=alice),
            413,
            "payload_too_large",
        ),
    ]
    assert [(r.status_code, r.json()["error"]) for r, _, _ in cases] == [
        (status, code) for _, status, code in cases
    ]
    assert all(r.headers["x-content-type-options"] == "nosniff" for r, _, _ in cases)
    assert elsewhere.reached == []


async def test_what_is_not_hot_goes_on(
    lane: tuple[httpx2.AsyncClient, Elsewhere, dict[str, str]],
) -> None:
    http, elsewhere, tokens = lane
    alice = auth(tokens["alice"])
    for method, path in [
        ("GET", "/tasks"),
        ("GET", "/tasks/t_1"),
        ("POST", "/tasks/t_1/reply/"),
        ("POST", "/tasks/t_1/archive"),
        ("POST", "/tasks//reply"),
    ]:
        assert (await http.request(method, path, headers=alice)).status_code == 599
    assert elsewhere.reached == [
        ("GET", "/tasks"),
        ("GET", "/tasks/t_1"),
        ("POST", "/tasks/t_1/reply/"),
        ("POST", "/tasks/t_1/archive"),
        ("POST", "/tasks//reply"),
    ]
    assert FastLane.serves("POST", "/tasks/t_1/fail")
    assert not FastLane.serves("GET", "/tasks/t_1/fail")
