"""The console's channel list shows which channels are private (issue 47 item 2): an agent's
approvals channel carries the marker from its creation; the operator makes a channel
private and invites an agent into it from the card."""

from __future__ import annotations

from playwright.async_api import expect

from caucus.services.hub import Hub
from tests.browser.conftest import PageFactory, shot
from tests.conftest import ClientFactory, eventually


async def test_the_channel_list_marks_private_channels_and_the_operator_invites_from_it(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    editor, carol = await connect("editor"), await connect("carol")
    await editor.join_channel("#approve-editor")
    await editor.join_channel("#release")
    page = await open_console(live_hub.operator.token)
    await page.locator("[data-tab=channels]").click()
    approvals = page.locator("[data-channel='#approve-editor']")
    await expect(approvals.locator(".badge.private")).to_be_visible()
    release = page.locator("[data-channel='#release']")
    await expect(release.locator(".badge.private")).to_have_count(0)

    await release.get_by_role("button", name="Make private").click()
    await expect(release.locator(".badge.private")).to_be_visible()
    box = await release.locator(".badge.private").bounding_box()
    card = await release.bounding_box()
    assert box is not None
    assert card is not None
    assert card["x"] <= box["x"]
    assert box["x"] + box["width"] <= card["x"] + card["width"]
    await release.get_by_label("Invite into #release").select_option("carol")

    async def invited() -> bool:
        batch = await carol.receive(timeout=0)
        return any((m.meta or {}).get("invited") for m in batch.messages)

    await eventually(invited, what="carol's invitation")
    await carol.join_channel("#release")
    await expect(release).to_contain_text("carol")
    await page.screenshot(path=shot("private-channels"), full_page=True)
