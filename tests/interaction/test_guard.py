"""Safe defaults: Host and Origin checks on every route family, security headers, agent keys."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from caucus.client import HubClient
from caucus.errors import Unauthorized
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from caucus.web.guard import Guard
from tests.conftest import ClientFactory

# One representative of every route family: public, agent, the hot lane (both routes), the
# operator API, the live feed, export, and a route that does not exist.
FAMILIES = [
    ("GET", "/health"),
    ("GET", "/protocol"),
    ("POST", "/register"),
    ("GET", "/peers"),
    ("POST", "/channels/join"),
    ("POST", "/send"),
    ("GET", "/receive?timeout=0"),
    ("POST", "/operator/pause"),
    ("GET", "/operator/events"),
    ("GET", "/export"),
    ("GET", "/no-such-route"),
]


async def status(http: httpx2.AsyncClient, method: str, path: str, headers: dict[str, str]) -> int:
    async with http.stream(method, path, headers=headers, content=b"{}") as response:
        if response.status_code in (403, 421):
            body = await response.aread()
            assert b'"error"' in body
            assert response.headers["x-content-type-options"] == "nosniff"
        return response.status_code


@pytest.mark.parametrize(("method", "path"), FAMILIES)
async def test_a_foreign_origin_is_refused_with_403(url: str, method: str, path: str) -> None:
    async with httpx2.AsyncClient(base_url=url) as http:
        for origin in ("http://evil.example", "null", "http://localhost:3000", "file://"):
            assert await status(http, method, path, {"Origin": origin}) == 403, origin


@pytest.mark.parametrize(("method", "path"), FAMILIES)
async def test_an_unexpected_host_is_refused_with_421(url: str, method: str, path: str) -> None:
    async with httpx2.AsyncClient(base_url=url) as http:
        for host in ("evil.example", "attacker.test:8765", "127.0.0.1.nip.io"):
            assert await status(http, method, path, {"Host": host}) == 421, host


async def test_same_origin_and_loopback_names_are_served(url: str, connect: ClientFactory) -> None:
    alice = await connect("alice")
    port = url.rsplit(":", 1)[1]
    headers = {"Authorization": f"Bearer {alice.token}"}
    async with httpx2.AsyncClient(base_url=url, headers=headers) as http:
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
            response = await http.get("/peers", headers={"Host": host})
            assert response.status_code == 200, host
        response = await http.get("/peers", headers={"Origin": url})
        assert response.status_code == 200
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["x-content-type-options"] == "nosniff"


async def test_configured_hosts_and_origins_are_served(tmp_path: Path) -> None:
    async with (
        make_hub(
            tmp_path,
            allowed_hosts=["caucus.internal"],
            allowed_origins=["https://console.internal"],
        ) as hub,
        serve(hub) as url,
        httpx2.AsyncClient(base_url=url) as http,
    ):
        response = await http.get(
            "/health", headers={"Host": "caucus.internal:443", "Origin": "https://console.internal"}
        )
        assert response.status_code == 200


async def test_html_gets_a_strict_content_security_policy() -> None:
    async def page(scope, receive, send):  # type: ignore[no-untyped-def]
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/html; charset=utf-8")],
            }
        )
        await send({"type": "http.response.body", "body": b"<p>hi</p>"})

    guard = Guard(page, allowed_hosts=[], allowed_origins=[])
    async with httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=guard), base_url="http://127.0.0.1"
    ) as http:
        response = await http.get("/")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "'unsafe-inline'" not in csp
    assert "frame-ancestors 'none'" in csp


async def test_an_agent_key_is_required_to_register_when_set(tmp_path: Path) -> None:
    async with make_hub(tmp_path, agent_key="let-me-in") as hub, serve(hub) as url:
        async with HubClient(url) as stranger:
            with pytest.raises(Unauthorized, match="agent key"):
                await stranger.register("stranger")
        async with HubClient(url, agent_key="wrong") as guesser:
            with pytest.raises(Unauthorized):
                await guesser.register("guesser")
        async with HubClient(url, agent_key="let-me-in") as member:
            assert (await member.register("member")).outcome == "created"


async def test_the_operator_token_is_kept_in_a_private_file(tmp_path: Path) -> None:
    async with make_hub(tmp_path) as hub:
        path = hub.operator.path
        assert path is not None
        assert path.stat().st_mode & 0o777 == 0o600
        assert path.read_text().strip() == hub.operator.token
        assert len(hub.operator.token) >= 40
    async with make_hub(tmp_path) as again:
        assert again.operator.token == hub.operator.token  # kept across restarts
        assert not again.operator.created


def test_the_observer_token_must_differ_from_the_operator_token(tmp_path: Path) -> None:
    from caucus.testing import hub_settings

    with pytest.raises(ValueError, match="differ"):
        Hub(hub_settings(tmp_path, operator_token="same-token-x", observer_token="same-token-x"))
