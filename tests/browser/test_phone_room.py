"""The phone's Room sheet is the transcript's (issue 48): at 390x844, with a busy room and
three questions waiting, the messages get at least half the screen; the filters fold behind
one button that says how many are on; the pinned question is the oldest one, compact, with
"n more waiting" that opens them all; answering from it works. A laptop shows the filters
as before. Screenshots at both sizes in test-artifacts/console."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.async_api import Locator, Page, expect

from caucus.client import HubClient
from caucus.domain.forms import FormState
from caucus.operator_client import OperatorClient
from caucus.testing import make_hub, serve
from tests.browser.conftest import PageFactory, shot

QUESTION = [{"key": "go", "type": "radio", "options": ["yes", "no"]}]


async def box(locator: Locator) -> dict[str, float]:
    found = await locator.bounding_box()
    assert found is not None
    return dict(found)


async def viewport_height(page: Page) -> float:
    height: float = await page.evaluate("window.innerHeight")
    return height


async def busy_room(base: str, clients: list[HubClient]) -> None:
    for n, client in enumerate(clients):
        await client.register(f"agent-{n:02}")
        await client.set_status(f"working on part {n} of the release")
    for n in range(80):
        await clients[n % len(clients)].send("all", f"progress note {n}: the build moves on")
    for n, title in enumerate(("Ship tonight?", "Rename the branch?", "Drop the old table?")):
        await clients[n].ask_operator(title, QUESTION)


async def test_the_phone_room_sheet_gives_the_transcript_half_the_screen(
    open_console: PageFactory, tmp_path: Path
) -> None:
    async with make_hub(tmp_path / "phone", send_rate_capacity=1000) as hub, serve(hub) as base:
        clients = [HubClient(base) for _ in range(12)]
        try:
            await busy_room(base, clients)
            page = await open_console(hub.operator.token, width=390, height=844, base=base)
            await expect(page.locator(".messages .msg")).to_have_count(80)
            screen = await viewport_height(page)

            # The oldest question is pinned, compact, with how many more wait.
            pinned = page.locator("[data-pinned]")
            await expect(pinned).to_have_count(1)
            await expect(pinned).to_contain_text("Ship tonight?")
            more = page.locator("[data-more]")
            await expect(more).to_have_text("2 more waiting")
            await expect(pinned).to_be_in_viewport(ratio=1)
            pinned_box = await box(page.locator(".waiting-first"))

            # The filters are folded: the messages keep the screen.
            await expect(page.locator("#search")).to_be_hidden()
            messages = await box(page.locator(".messages"))
            await page.screenshot(path=shot("phone-room-transcript"))
            share = messages["height"] / screen
            print(
                f"phone room sheet: messages {messages['height']:.0f} px of {screen:.0f} "
                f"({share:.0%}); pinned question {pinned_box['height']:.0f} px"
            )
            assert share >= 0.5, (messages, screen)
            assert pinned_box["height"] <= 0.25 * screen, pinned_box
            assert messages["y"] + messages["height"] <= screen

            await unfold_and_filter(page)
            await answer_from_the_pin(page, hub)

            await more.click()
            await expect(page.locator("[data-panel=forms] .card.form")).to_have_count(2)
        finally:
            for client in clients:
                await client.aclose()


async def unfold_and_filter(page: Page) -> None:
    """One button unfolds the filters; folded again, it says how many are on."""
    toggle = page.locator(".filter-toggle")
    await expect(toggle).to_have_text("Filters")
    await toggle.click()
    search = page.locator("#search")
    await expect(search).to_be_in_viewport()
    await search.fill("note 7")
    await expect(page.locator(".messages .msg")).to_have_count(11)  # 7 and 70 to 79
    await page.screenshot(path=shot("phone-room-filters-open"))
    await toggle.click()
    await expect(toggle).to_have_text("Filters · 1 on")
    await expect(search).to_be_hidden()
    await toggle.click()
    await search.fill("")
    await toggle.click()
    await expect(page.locator(".messages .msg")).to_have_count(80)
    # "/" (a phone with a keyboard) unfolds them and puts the caret in the search box.
    await page.locator(".messages").focus()
    await page.keyboard.press("/")
    await expect(search).to_be_focused()
    await expect(toggle).to_have_text("Hide filters")
    await toggle.click()


async def answer_from_the_pin(page: Page, hub: Any) -> None:
    """Answer opens the wizard for the pinned question; once answered, the next is pinned."""
    await page.locator("[data-pinned] button.primary").click()
    dialog = page.get_by_role("dialog")
    await dialog.get_by_label("yes").check()
    await dialog.get_by_role("button", name="Review").click()
    await dialog.get_by_role("button", name="Send answer").click()
    await expect(page.locator("[data-pinned]")).to_contain_text("Rename the branch?")
    await expect(page.locator("[data-more]")).to_have_text("1 more waiting")
    answered = await hub.forms.listing(FormState.ANSWERED)
    assert [f.title for f in answered] == ["Ship tonight?"]


async def test_a_laptop_shows_the_filters_and_no_fold(
    open_console: PageFactory, tmp_path: Path
) -> None:
    async with (
        make_hub(tmp_path / "laptop") as hub,
        serve(hub) as base,
        HubClient(base) as ann,
        OperatorClient(base, token=hub.operator.token),
    ):
        await ann.register("ann")
        await ann.send("all", "hello")
        await ann.ask_operator("Ship tonight?", QUESTION)
        page = await open_console(hub.operator.token, width=1280, height=800, base=base)
        await expect(page.locator("#search")).to_be_in_viewport()
        await expect(page.locator(".filter-toggle")).to_be_hidden()
        await expect(page.locator("[data-pinned]")).to_have_count(0)
        await expect(page.locator("[data-form]")).to_be_visible()
        await page.screenshot(path=shot("laptop-room-transcript"))
