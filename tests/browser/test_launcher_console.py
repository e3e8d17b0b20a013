"""Launching a native agent from the console: the operator fills the Agents form (mock
backend), the agent joins the room and is flagged until it speaks, answers a peer, shows its
output, and is stopped from the roster (as any native agent can be) and, launched again, from
its card. An observer gets no launcher, and a hub that binds an address other machines reach
says why it launches nothing."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from tests.browser.conftest import PageFactory, shot
from tests.conftest import ClientFactory
from tests.interaction.test_launcher import answer_from


async def test_an_agent_launched_from_the_console_joins_answers_and_is_stopped(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory, tmp_path: Path
) -> None:
    carol = await connect("carol")
    page = await open_console(live_hub.operator.token)
    await page.get_by_role("tab", name="Agents").click()
    form = page.locator("form[data-launcher=on]")
    await form.get_by_label("Name").fill("ann")
    await form.get_by_label("Backend").select_option("mock")
    await form.get_by_label("Working directory").fill(str(tmp_path))
    await form.get_by_role("button", name="Launch").click()

    card = page.locator("[data-launched=ann]")
    await expect(card).to_have_attribute("data-state", "running")
    # Joined, not a word yet: flagged, and in the roster.
    await expect(card.locator("[data-silent]")).to_be_visible(timeout=30_000)
    await expect(page.locator("[data-peer=ann]")).to_be_visible()
    await page.screenshot(path=shot("launcher-running"))

    await carol.send("ann", "are you there?")
    answer = await answer_from(carol, "ann")
    assert "are you there?" in answer
    await expect(card.locator("[data-silent]")).to_have_count(0, timeout=10_000)
    await expect(page.locator("[data-output=ann]")).to_contain_text("ThreadRunComplete")

    # Stopped from the roster, as any native agent can be: it obeys and exits.
    row = page.locator("[data-peer=ann]")
    await row.get_by_role("button", name="actions for ann").click()
    await row.get_by_role("button", name="Stop", exact=True).click()
    await row.get_by_role("button", name="Confirm stop").click()
    await expect(card).to_have_attribute("data-state", "exited", timeout=15_000)
    await expect(card).to_contain_text("exited (0)")
    await expect(page.locator("[data-peer=ann] [data-state]")).not_to_have_text("online")

    # Launched again under the same name, and stopped from its card this time.
    await form.get_by_label("Name").fill("ann")
    await form.get_by_label("Backend").select_option("mock")
    await form.get_by_role("button", name="Launch").click()
    again = page.locator("[data-launched=ann][data-state=running]")
    await expect(again).to_have_count(1)
    await expect(page.locator("[data-peer=ann] [data-state]")).to_have_text(
        "online", timeout=30_000
    )
    await again.get_by_role("button", name="Stop ann").click()
    await expect(page.locator("[data-launched=ann][data-state=exited]")).to_have_count(
        2, timeout=15_000
    )


async def test_no_launcher_for_an_observer_or_on_an_exposed_hub(
    open_console: PageFactory, tmp_path: Path
) -> None:
    observer_token = "obs-" + "z" * 20
    async with (
        make_hub(
            tmp_path / "exposed",
            host="0.0.0.0",
            agent_key="k" * 24,
            observer_token=observer_token,
        ) as hub,
        serve(hub) as url,
    ):
        page = await open_console(hub.operator.token, base=url)
        await page.get_by_role("tab", name="Agents").click()
        off = page.locator("[data-launcher=off]")
        await expect(off).to_contain_text("127.0.0.1")
        await expect(page.get_by_role("button", name="Launch")).to_have_count(0)

        watcher = await open_console(observer_token, base=url)
        await watcher.get_by_role("tab", name="Agents").click()
        await expect(watcher.get_by_text("Only the operator launches agents")).to_be_visible()
