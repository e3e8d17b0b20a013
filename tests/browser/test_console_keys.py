"""The operator's keyboard and composer: p, r and s brake the room (s asks first, and Escape
keeps going), never while typing; ? lists the keys; @peer and #channel complete in the
composer; the room pauses while the operator types, only when asked to."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page, expect

from caucus.domain.control import RoomMode
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from tests.browser.conftest import PageFactory, shot
from tests.conftest import ClientFactory, eventually


async def mode_is(hub: Hub, mode: RoomMode) -> bool:
    return hub.control.state().mode is mode


async def test_the_room_brakes_on_the_keyboard(open_console: PageFactory, live_hub: Hub) -> None:
    page = await open_console(live_hub.operator.token)
    badge = page.locator("[data-mode]")
    await page.keyboard.press("p")
    await expect(badge).to_have_attribute("data-mode", "paused")
    await page.keyboard.press("r")
    await expect(badge).to_have_attribute("data-mode", "open")

    # Typing a p in the composer is a p, not a brake.
    await page.get_by_label("message", exact=True).fill("")
    await page.get_by_label("message", exact=True).press("p")
    await page.get_by_label("message", exact=True).press("s")
    assert await mode_is(live_hub, RoomMode.OPEN)
    await page.get_by_label("message", exact=True).fill("")
    await page.locator("body").click(position={"x": 5, "y": 500})

    await page.keyboard.press("s")
    dialog = page.get_by_role("dialog", name="Stop the room?")
    await expect(dialog).to_be_visible()
    await page.screenshot(path=shot("stop-confirmation"))
    await page.keyboard.press("Escape")
    await expect(dialog).to_have_count(0)
    assert await mode_is(live_hub, RoomMode.OPEN)

    await page.keyboard.press("s")
    await dialog.get_by_label("Reason told to the agents").fill("end of the day")
    await dialog.get_by_role("button", name="Stop the room").click()
    await expect(badge).to_have_attribute("data-mode", "stopped")
    await page.keyboard.press("r")
    await expect(badge).to_have_attribute("data-mode", "open")

    await page.keyboard.press("?")
    await expect(page.get_by_role("dialog", name="Keys")).to_contain_text("pause the room")
    await page.keyboard.press("Escape")
    await expect(page.get_by_role("dialog", name="Keys")).to_have_count(0)


async def test_the_header_stop_asks_first(open_console: PageFactory, live_hub: Hub) -> None:
    page = await open_console(live_hub.operator.token)
    await page.locator("header.top").get_by_role("button", name="Stop").click()
    dialog = page.get_by_role("dialog", name="Stop the room?")
    await dialog.get_by_role("button", name="Keep going").click()
    await expect(dialog).to_have_count(0)
    assert await mode_is(live_hub, RoomMode.OPEN)


async def test_an_observer_has_no_brakes(open_console: PageFactory, tmp_path: Path) -> None:
    observer_token = "obs-" + "q" * 20
    async with make_hub(tmp_path / "hub", observer_token=observer_token) as hub, serve(hub) as url:
        page = await open_console(observer_token, base=url)
        await page.keyboard.press("p")
        await expect(page.locator(".toast.error")).to_contain_text("observer")
        await page.keyboard.press("s")
        await expect(page.get_by_role("dialog")).to_have_count(0)
        assert await mode_is(hub, RoomMode.OPEN)


async def completions(page: Page) -> list[str]:
    return (
        await page.get_by_role("listbox", name="suggestions")
        .get_by_role("option")
        .all_inner_texts()
    )


async def test_peers_and_channels_complete_in_the_composer(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    await connect("albert")
    await connect("bob")
    await alice.join_channel("#ops")
    await alice.join_channel("#outreach")
    page = await open_console(live_hub.operator.token)
    box = page.get_by_label("message", exact=True)
    suggested = page.get_by_role("listbox", name="suggestions").get_by_role("option")
    await box.click()
    await box.press_sequentially("hi @al")
    await expect(suggested).to_have_count(2)
    assert await completions(page) == ["@albert", "@alice"]
    await box.press("ArrowDown")
    await box.press("Tab")
    await expect(box).to_have_value("hi @alice ")
    await box.press_sequentially("see #o")
    assert await completions(page) == ["#ops", "#outreach"]
    await box.press("Enter")
    await expect(box).to_have_value("hi @alice see #ops ")
    await box.press_sequentially("and @zz")
    await expect(suggested).to_have_count(0)
    await box.press_sequentially(" @b")
    await expect(suggested).to_have_count(1)
    await box.press("Escape")
    await expect(suggested).to_have_count(0)
    await box.press("Control+Enter")
    await expect(page.locator(".messages .msg").last).to_contain_text(
        "hi @alice see #ops and @zz @b"
    )


async def test_pause_while_typing_is_off_by_default_and_works_when_on(
    open_console: PageFactory, live_hub: Hub
) -> None:
    page = await open_console(live_hub.operator.token)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    box = page.get_by_label("message", exact=True)
    await box.press_sequentially("no pause")
    # Sent and shown: every keystroke before it was handled, and none asked for a pause.
    await box.press("Control+Enter")
    await expect(page.locator(".messages .msg").last).to_contain_text("no pause")
    assert not [url for url in asked if url.endswith("/operator/pause")]
    assert await mode_is(live_hub, RoomMode.OPEN)

    await page.get_by_role("tab", name="Controls").click()
    toggle = page.get_by_label("Pause the room while I type")
    await expect(toggle).not_to_be_checked()
    await toggle.check()
    await box.press_sequentially("hold on, everyone")
    await eventually(lambda: mode_is(live_hub, RoomMode.PAUSED), within=5, what="paused")
    await box.press("Control+Enter")
    await eventually(lambda: mode_is(live_hub, RoomMode.OPEN), within=5, what="resumed")
    # Clearing the text resumes too.
    await box.press_sequentially("x")
    await eventually(lambda: mode_is(live_hub, RoomMode.PAUSED), within=5, what="paused")
    await box.fill("")
    await box.dispatch_event("input")
    await eventually(lambda: mode_is(live_hub, RoomMode.OPEN), within=5, what="resumed")
    # The choice is kept for the next visit.
    await page.reload()
    await page.get_by_role("tab", name="Controls").click()
    await expect(page.get_by_label("Pause the room while I type")).to_be_checked()
