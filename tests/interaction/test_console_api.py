"""What the console reads and how the hub serves it: the page under its CSP, its assets (and
nothing outside them), the session's role, filtered history, every task and offer, and the
floor events that keep its floors panel live."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx2
import pytest

from caucus.dashboard.console import STATIC
from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from tests.conftest import ClientFactory
from tests.interaction.test_feed import next_of
from tests.sse import read_events


def test_the_vendored_libraries_match_their_recorded_checksums() -> None:
    manifest = json.loads((STATIC / "vendor" / "VENDORED.json").read_text())
    shipped = set()
    for package in manifest["packages"]:
        for entry in package["files"]:
            data = (STATIC / "vendor" / entry["shipped"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == entry["sha256"], entry["shipped"]
            if entry["sha256"] != entry["upstream_sha256"]:
                assert entry["edit"], f"{entry['shipped']} differs from upstream without a note"
            shipped.add(entry["shipped"])
    js = {p.name for p in (STATIC / "vendor").glob("*.js")}
    assert js == shipped


def test_the_console_holds_no_inline_script_or_style() -> None:
    page = (STATIC / "index.html").read_text()
    assert "<script" in page
    for tag in page.split("<script")[1:]:
        assert 'src="' in tag.split(">")[0]
        assert tag.split(">", 1)[1].startswith("</script")
    assert "<style" not in page
    assert " style=" not in page
    for module in STATIC.glob("*.js"):
        text = module.read_text()
        assert "innerHTML" not in text, module.name  # content is rendered as text only
        assert "eval(" not in text, module.name


async def test_the_page_and_its_assets_are_served_under_a_strict_csp(url: str) -> None:
    async with httpx2.AsyncClient(base_url=url) as http:
        page = await http.get("/")
        assert page.status_code == 200
        assert page.headers["content-type"].startswith("text/html")
        policy = page.headers["content-security-policy"]
        assert "script-src 'self'" in policy
        assert "unsafe" not in policy
        app = await http.get("/console/app.js")
        assert app.headers["content-type"].startswith("text/javascript")
        assert (await http.get("/console/vendor/preact.module.js")).status_code == 200
        for path in (
            "/console/../../api/app.py",
            "/console/%2e%2e/%2e%2e/api/app.py",
            "/console/vendor/VENDORED.json",
            "/console/missing.js",
        ):
            refused = await http.get(path)
            assert refused.status_code == 404, path
            assert refused.json()["error"] in ("not_found", "http_error")


async def test_the_session_names_the_role(tmp_path: Path) -> None:
    observer = "cau_observer-for-the-session-test-0123456789"
    async with make_hub(tmp_path, observer_token=observer) as hub, serve(hub) as url:
        for token, role in ((hub.operator.token, "operator"), (observer, "observer")):
            async with OperatorClient(url, token=token) as client:
                data = (await client._call("GET", "/operator/session")).json()
                assert data["role"] == role


async def test_history_pages_back_and_filters_by_peer_channel_kind_and_text(
    connect: ClientFactory, operator: OperatorClient, url: str, live_hub: Hub
) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    await bob.join_channel("#ops")
    for n in range(30):
        await alice.send("bob", f"direct {n}")
    await alice.send("#ops", "Deploy at noon")
    await carol.send("all", "lunch?")
    await operator.say("carol", "answer bob first")
    headers = {"Authorization": f"Bearer {live_hub.operator.token}"}
    async with httpx2.AsyncClient(base_url=url, headers=headers) as http:

        async def page(**params: object) -> dict[str, object]:
            response = await http.get("/operator/messages", params=params)
            assert response.status_code == 200, response.text
            data: dict[str, object] = response.json()
            return data

        latest = await page(limit=10)
        seqs = [m["seq"] for m in latest["messages"]]  # type: ignore[attr-defined]
        assert len(seqs) == 10
        assert seqs == sorted(seqs)
        assert latest["more"] is True
        before = await page(limit=100, before=seqs[0])
        older = [m["seq"] for m in before["messages"]]  # type: ignore[attr-defined]
        assert older[-1] == seqs[0] - 1
        assert before["more"] is False
        assert len(older) + len(seqs) == 33

        def contents(data: dict[str, object]) -> list[str]:
            return [m["content"] for m in data["messages"]]  # type: ignore[attr-defined]

        assert contents(await page(channel="#ops")) == ["Deploy at noon"]
        assert contents(await page(q="DEPLOY")) == ["Deploy at noon"]
        assert contents(await page(kind="operator")) == ["answer bob first"]
        carols = contents(await page(peer="carol"))
        assert carols == ["lunch?", "answer bob first"]  # sent by, or delivered to, carol
        assert contents(await page(peer="operator")) == ["answer bob first"]
        for bad in ({"limit": 0}, {"limit": 501}, {"channel": "no spaces"}, {"peer": "a b"}):
            response = await http.get("/operator/messages", params=bad)
            assert response.status_code == 422, bad
            assert response.json()["error"] == "invalid_request"


async def test_every_task_and_offer_is_listed_for_the_operator(
    connect: ClientFactory, url: str, live_hub: Hub
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    task = await alice.send_task("bob", "review PR 12")
    await bob.send_task("alice", "and mine")
    offer = await bob.post_offer("index the docs")
    headers = {"Authorization": f"Bearer {live_hub.operator.token}"}
    async with httpx2.AsyncClient(base_url=url, headers=headers) as http:
        tasks = (await http.get("/operator/tasks")).json()["tasks"]
        assert {t["content"] for t in tasks} == {"review PR 12", "and mine"}
        pending = (await http.get("/operator/tasks", params={"status": "pending"})).json()
        assert task.task_id in {t["task_id"] for t in pending["tasks"]}
        assert (await http.get("/operator/tasks", params={"status": "later"})).status_code == 422
        offers = (await http.get("/operator/offers")).json()["offers"]
        assert [o["offer_id"] for o in offers] == [offer.offer_id]


async def test_floor_changes_reach_the_feed(tmp_path: Path) -> None:
    async with make_hub(tmp_path, health_interval=5) as hub, serve(hub) as url:
        alice = await hub.principals.register(name="alice")
        bob = await hub.principals.register(name="bob")
        headers = {"Authorization": f"Bearer {hub.operator.token}"}
        async with (
            httpx2.AsyncClient(base_url=url, headers=headers, timeout=30) as http,
            http.stream("GET", "/operator/events") as response,
        ):
            events = read_events(response)
            await next_of(events, "snapshot")
            skip = {"health", "message"}
            await hub.floors.act(alice.peer, "take", "all")
            assert (await next_of(events, "floor", skip)).data["holder"] == "alice"
            await hub.floors.act(bob.peer, "raise", "all")
            assert (await next_of(events, "floor", skip)).data["hands"] == ["bob"]
            await hub.registry.leave(alice.peer)
            passed = await next_of(events, "floor", skip | {"peer"})
            assert (passed.data["holder"], passed.data["hands"]) == ("bob", [])


@pytest.mark.parametrize("path", ["/operator/messages", "/operator/tasks", "/operator/offers"])
async def test_agent_tokens_cannot_read_the_operator_views(
    connect: ClientFactory, url: str, path: str
) -> None:
    alice = await connect("alice")
    async with httpx2.AsyncClient(base_url=url) as http:
        response = await http.get(path, headers={"Authorization": f"Bearer {alice.token}"})
    assert response.status_code == 403
