"""The console shows the room's meaning, not its plumbing (issue 35), at a laptop's and a
phone's size, light and dark, with a screenshot of each kept in test-artifacts/console."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import pytest
from playwright.async_api import expect

from caucus.client import HubClient
from caucus.testing import FakeClock, make_hub, serve
from tests.browser.conftest import PageFactory, shot

SIZES = [(1440, 900), (390, 844)]
SCHEMES: list[Literal["light", "dark"]] = ["light", "dark"]


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_health_charts_begin_with_the_hubs_own_history_from_before_the_page_opened(
    open_console: PageFactory, tmp_path: Path, width: int, height: int, scheme: str
) -> None:
    clock = FakeClock()
    async with (
        make_hub(tmp_path / "history", clock=clock) as hub,
        serve(hub) as base,
        HubClient(base) as alice,
        HubClient(base) as bob,
    ):
        await alice.register("alice")
        await bob.register("bob")
        await hub.maintain()  # the first sample
        for minute in range(6):  # a minute of the hub's life before anyone looks
            await alice.send("bob", f"still there? ({minute})")
            clock.advance(10)
            await hub.maintain()
        page = await open_console(
            hub.operator.token, width=width, height=height, base=base, scheme=scheme
        )
        await page.locator("[data-tab=health]").click()
        for label in ("messages per minute", "hub memory (resident)"):
            start = page.locator(f"[data-chart='{label}'] [data-axis=x-start]")
            await expect(start).to_have_text(re.compile(r"^−\d+ s$"))
            seconds = int((await start.text_content() or "").strip("−s "))
            assert seconds >= 60, f"{label} starts {seconds} s back: the page's own ticks only"
        spark = page.locator("[data-chart='messages per minute'] polyline")
        assert len((await spark.get_attribute("points") or "").split()) >= 7
        # Six messages wait for bob to acknowledge them: the words count them right.
        words = page.locator("[data-room-words]")
        await expect(words).to_contain_text("6 deliveries wait to be acknowledged")
        await expect(words).not_to_contain_text("deliverys")
        await page.locator("[data-chart='messages per minute']").scroll_into_view_if_needed()
        await page.screenshot(path=shot(f"health-history-{width}-{scheme}"), full_page=False)
