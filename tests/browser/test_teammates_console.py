"""Teammates on demand in the console (issue 34): the operator sees which model profiles are
approved, grants an agent the spawn grant from the Agents view, watches the teammate it
spawns appear (as the spawner's, in the launched agents too), stops it from its card, and
takes the grant back; the agent is refused from then on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import expect

from caucus.errors import SpawnNotGranted
from caucus.services.hub import Hub
from caucus.testing import make_hub
from tests.browser.conftest import PageFactory, shot
from tests.conftest import ClientFactory

PROFILES = {"echo": {"backend": "mock", "description": "echoes"}}


@pytest.fixture
async def live_hub(tmp_path: Path) -> AsyncIterator[Hub]:
    async with make_hub(tmp_path, send_rate_capacity=1000, spawn_profiles=PROFILES) as hub:
        yield hub


async def test_the_operator_grants_watches_and_stops_a_spawned_teammate(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    lead = await connect("lead")
    await connect("bob")
    page = await open_console(live_hub.operator.token)
    await page.get_by_role("tab", name="Agents").click()
    panel = page.locator("section.teammates")
    await expect(panel.locator("[data-profiles]")).to_contain_text("echo (mock)")
    await expect(panel).to_contain_text("No agent may spawn")

    form = panel.locator("form[data-grant-form]")
    await form.get_by_label("Agent").select_option("lead")
    await form.get_by_label("At once").fill("2")
    await form.get_by_role("button", name="Grant spawn").click()
    await expect(panel.locator("[data-grant=lead]")).to_contain_text("may run 2 at once")
    assert (await lead.teammates()).allowed == 2

    mate = await lead.spawn("You echo for lead.", "echo", name="mate")
    card = panel.locator("[data-teammate=mate]")
    await expect(card).to_have_attribute("data-state", "running")
    await expect(card).to_contain_text("spawned by lead")
    await expect(page.locator("[data-launched=mate] [data-spawned-by=lead]")).to_be_visible()
    await card.get_by_text("Prompt").click()
    await expect(card).to_contain_text("You echo for lead.")
    await page.screenshot(path=shot("teammates-running"))

    await card.get_by_role("button", name="Stop mate").click()
    await expect(card).to_have_attribute("data-state", "ended", timeout=15_000)
    await expect(card).to_contain_text("ended: operator")
    assert (await lead.teammates()).teammates[0].spawn_id == mate.spawn_id

    await panel.get_by_role("button", name="Revoke lead's grant").click()
    await expect(panel.locator("[data-grant=lead]")).to_have_count(0)
    with pytest.raises(SpawnNotGranted):
        await lead.spawn("Another.", "echo")
