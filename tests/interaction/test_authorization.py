"""The authorization matrix: every route of the app by every kind of credential.

Built from the app's own route table: a route without a declared access level fails the test.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import pytest

from caucus.client import HubClient
from caucus.server import build_app
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from caucus.web.access import ACCESS_KEY
from tests.routes import api_operations

AGENT_NUMBERS = itertools.count(1)
OBSERVER = "cau_observer-token-for-the-matrix-test-0123456789"
CREDENTIALS = ["none", "malformed", "unknown", "agent", "watcher", "observer", "operator"]

# Which credentials each access level admits; everyone else gets 401 (no valid identity) or
# 403 (a valid identity of the wrong kind).
ADMITS = {
    "public": set(CREDENTIALS),
    "room": {"none", "agent", "observer", "operator"},
    "agent": {"agent"},
    "watcher": {"watcher"},
    "viewer": {"observer", "operator"},
    "operator": {"operator"},
}
WRONG_KIND = {"agent", "watcher", "observer", "operator"}
PATH_VALUES = {
    "{name}": "bob",
    "{channel}": "ops",
    "{task_id}": "t_none",
    "{offer_id}": "o_none",
    "{scope}": "all",
    "{form_id}": "f_none",
    "{asset}": "app.js",
}
QUERY = {
    "/receive": "?timeout=0",
    "/watch": "?timeout=0",
    "/ping": "?peer=bob",
    "/export": "?format=json",
}


@pytest.fixture
async def matrix_hub(tmp_path: Path) -> AsyncIterator[tuple[Hub, str]]:
    async with make_hub(tmp_path, observer_token=OBSERVER) as hub, serve(hub) as url:
        yield hub, url


def declared_access(hub: Hub) -> dict[tuple[str, str], str]:
    app = build_app(hub)
    spec = app.openapi()
    table = {}
    for method, path in api_operations(app):
        op = spec["paths"][path][method.lower()]
        assert ACCESS_KEY in op, f"{method} {path} declares no access level"
        table[(method, path)] = op[ACCESS_KEY]
    assert table
    return table


async def headers_for(credential: str, hub: Hub, url: str) -> dict[str, str]:
    if credential == "none":
        return {}
    if credential == "malformed":
        return {"Authorization": "Bearer two words"}
    if credential == "unknown":
        return {"Authorization": "Bearer cau_not-a-token-this-hub-ever-issued"}
    if credential == "agent":
        async with HubClient(url) as client:
            await client.register(f"agent-{next(AGENT_NUMBERS)}")
            return {"Authorization": f"Bearer {client.token}"}
    if credential == "watcher":  # a watch key: it waits for one agent's messages, nothing else
        async with HubClient(url) as client:
            await client.register(f"agent-{next(AGENT_NUMBERS)}")
            return {"Authorization": f"Bearer {(await client.mint_watch_key()).key}"}
    if credential == "observer":
        return {"Authorization": f"Bearer {OBSERVER}"}
    return {"Authorization": f"Bearer {hub.operator.token}"}


async def status_of(
    http: httpx2.AsyncClient, method: str, path: str, headers: dict[str, str]
) -> int:
    for key, value in PATH_VALUES.items():
        path = path.replace(key, value)
    path += QUERY.get(path, "")
    body = b"{}" if method == "POST" else None
    async with http.stream(
        method, path, content=body, headers={**headers, "Content-Type": "application/json"}
    ) as response:
        return response.status_code  # a stream (the event feed) is not read


async def test_every_route_admits_exactly_its_declared_credentials(
    matrix_hub: tuple[Hub, str],
) -> None:
    hub, url = matrix_hub
    table = declared_access(hub)
    async with HubClient(url) as bob:
        await bob.register("bob")
        await bob.join_channel("#ops")
    failures = []
    async with httpx2.AsyncClient(base_url=url, timeout=30) as http:
        for (method, path), level in sorted(table.items()):
            for credential in CREDENTIALS:
                headers = await headers_for(credential, hub, url)
                status = await status_of(http, method, path, headers)
                if credential in ADMITS[level]:
                    ok = status not in (401, 403)
                else:
                    ok = status == (403 if credential in WRONG_KIND else 401)
                if not ok:
                    failures.append(f"{method} {path} [{level}] as {credential}: {status}")
    assert not failures, "\n".join(failures)


async def test_an_observer_reads_everything_and_changes_nothing(
    matrix_hub: tuple[Hub, str],
) -> None:
    hub, url = matrix_hub
    async with HubClient(url) as bob:
        await bob.register("bob")
    headers = {"Authorization": f"Bearer {OBSERVER}"}
    async with httpx2.AsyncClient(base_url=url, headers=headers) as http:
        assert (await http.get("/operator/state")).status_code == 200
        assert (await http.get("/operator/peers/bob/ping")).status_code == 200
        for path, body in [
            ("/operator/pause", {}),
            ("/operator/stop", {}),
            ("/operator/say", {"to": "bob", "content": "hi"}),
            ("/operator/peers/bob/kick", {}),
            ("/operator/rate", {"capacity": 1, "refill": 1}),
        ]:
            response = await http.post(path, json=body)
            assert (response.status_code, response.json()["error"]) == (403, "forbidden"), path
    assert hub.control.room.mode.value == "open"
    assert hub.control.room.rate.capacity == hub.settings.send_rate_capacity
    views = await hub.registry.peers()
    assert [v.name for v in views] == ["bob"]
    peer = await hub.registry.find("bob")
    assert (await hub.delivery.peek(peer)).pending == 0


async def test_agent_tokens_never_authorize_operator_actions(
    matrix_hub: tuple[Hub, str],
) -> None:
    hub, url = matrix_hub
    async with HubClient(url) as alice:
        await alice.register("alice")
        async with httpx2.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {alice.token}"}
        ) as http:
            response = await http.post("/operator/stop", json={})
    assert response.status_code == 403
    assert "agent tokens never authorize" in response.json()["detail"]
    assert hub.control.room.mode.value == "open"
