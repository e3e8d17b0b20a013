"""Malformed input anywhere gets a JSON error with a stable code and a 4xx status, never a 500."""

from __future__ import annotations

import httpx2
import pytest

from tests.conftest import ClientFactory

BAD_BODIES: list[tuple[bytes, str]] = [
    (b"", "application/json"),
    (b"{", "application/json"),
    (b"null", "application/json"),
    (b"[]", "application/json"),
    (b'"string"', "application/json"),
    (b"42", "application/json"),
    (b'{"unexpected": true}', "application/json"),
    (b'{"name": null, "to": null, "channel": null, "status": null}', "application/json"),
    (b'{"name": 1, "to": [], "channel": {}, "status": 5, "topic": 1}', "application/json"),
    (b'{"seqs": "all", "through": "x"}', "application/json"),
    (b"\xff\xfe\x00garbage", "application/json"),
    (b"name=alice", "application/x-www-form-urlencoded"),
    (b"plain text", "text/plain"),
    (b'{"name": "\\u0000"}', "application/json"),
]

POST_ROUTES = [
    "/register",
    "/send",
    "/ack",
    "/status",
    "/channels/join",
    "/channels/leave",
    "/channels/topic",
]


@pytest.mark.parametrize("route", POST_ROUTES)
async def test_bad_bodies_are_refused_with_a_code(
    url: str, connect: ClientFactory, route: str
) -> None:
    alice = await connect("alice")
    headers = {"Authorization": f"Bearer {alice.token}"}
    async with httpx2.AsyncClient(base_url=url, headers=headers) as http:
        for body, content_type in BAD_BODIES:
            response = await http.post(route, content=body, headers={"Content-Type": content_type})
            assert 400 <= response.status_code < 500, (route, body, response.text)
            payload = response.json()
            assert isinstance(payload["error"], str), (route, body)
            assert payload["detail"], (route, body)


@pytest.mark.parametrize(
    "query",
    [
        "/receive?timeout=nan",
        "/receive?timeout=1e999",
        "/receive?ack=1.5",
        "/receive?limit=-3",
        "/receive?limit=abc",
        "/ping",
        "/ping?peer=",
        "/ping?peer=%00",
        "/protocol?section=../../etc/passwd",
        "/protocol?section=",
    ],
)
async def test_bad_query_strings_are_refused_with_a_code(
    url: str, connect: ClientFactory, query: str
) -> None:
    alice = await connect("alice")
    async with httpx2.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {alice.token}"}, timeout=30
    ) as http:
        response = await http.get(query)
    assert response.status_code < 500, (query, response.text)
    if response.status_code >= 400:
        assert response.json()["error"]


async def test_a_huge_timeout_is_capped_not_refused(url: str, connect: ClientFactory) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.send("bob", "hi")
    async with httpx2.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {bob.token}"}
    ) as http:
        response = await http.get("/receive?timeout=100000")
    assert response.status_code == 200
    assert [m["content"] for m in response.json()["messages"]] == ["hi"]
