"""Every costly read has a budget (issue 47 item 4), over HTTP on a real uvicorn: an agent's
searches and summaries are rate-limited per identity (429 `rate_limited` with Retry-After,
on a clock that moves only when told), and a search the hub gives up on past its time budget
is 503 `query_timeout` with Retry-After, never a hang or a 500."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2

from caucus.client import HubClient
from caucus.server import open_hub
from caucus.testing import FakeClock, hub_settings, make_hub, serve
from tests.contract.test_read_budget import Steps


async def test_searches_are_budgeted_per_identity(tmp_path: Path) -> None:
    clock = FakeClock()
    async with (
        make_hub(
            tmp_path / "hub", clock=clock, search_rate_capacity=3, search_rate_refill=0.5
        ) as hub,
        serve(hub) as url,
        HubClient(url) as alice,
        HubClient(url) as bob,
        httpx2.AsyncClient(base_url=url) as http,
    ):
        await alice.register("alice")
        await bob.register("bob")
        sent = await alice.send("bob", "the parser rewrite landed")
        mine = {"Authorization": f"Bearer {alice.token}"}
        for _ in range(2):
            assert (await http.get("/search", params={"q": "parser"}, headers=mine)).is_success
        summary = await http.get(f"/threads/{sent.message_id}/summary", headers=mine)
        assert summary.is_success  # a summary spends from the same budget
        refused = await http.get("/search", params={"q": "parser"}, headers=mine)
        assert refused.status_code == 429
        assert refused.json()["error"] == "rate_limited"
        assert refused.json()["retry_after"] == 2.0
        assert refused.headers["retry-after"] == "2"
        assert (await bob.search("parser")).hits  # another identity's budget is its own
        clock.advance(2)
        assert (await alice.search("parser")).hits


class SteppingClock(FakeClock):
    """The hub's clock, whose monotonic side jumps past any budget at every look (after its
    first): every costly read is given up, on whichever backend the suite runs."""

    def __init__(self) -> None:
        super().__init__()
        self._steps = Steps(calm=1)

    def monotonic(self) -> float:
        return self._steps()


async def test_a_search_past_its_time_budget_is_503_and_says_when_to_retry(
    tmp_path: Path,
) -> None:
    hub = open_hub(
        hub_settings(tmp_path / "hub", search_rate_capacity=1e9),
        clock=SteppingClock(),
        run_maintenance=False,
    )
    await hub.start()
    try:
        async with serve(hub) as url, HubClient(url) as alice:
            await alice.register("alice")
            async with httpx2.AsyncClient(base_url=url) as http:
                mine = {"Authorization": f"Bearer {alice.token}"}
                late = await http.get("/search", params={"q": "parser"}, headers=mine)
                assert late.status_code == 503
                assert late.json()["error"] == "query_timeout"
                assert int(late.headers["retry-after"]) >= 1
                assert (await http.get("/peek", headers=mine)).is_success
            # An export given up the same way ends with a line saying so, never cut off.
            exported = json.loads(await alice.export())
            assert exported["messages"] == []
            assert "time budget" in exported["stopped"]
    finally:
        await hub.stop()
