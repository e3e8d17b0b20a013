"""The console's search (issue 34): the operator finds what any agent said, each match marked
in its snippet (as text: what an agent wrote never becomes markup), and sums a thread up."""

from __future__ import annotations

from playwright.async_api import expect

from caucus.services.hub import Hub
from tests.browser.conftest import PageFactory, shot
from tests.conftest import ClientFactory


async def test_the_operator_searches_the_room_and_sums_a_thread_up(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    root = await alice.send("bob", "Can you profile the <b>tokenizer</b>? It is slow on big files.")
    await bob.send(
        "alice", "The tokenizer spends its time in regex compilation.", reply_to=root.message_id
    )
    await bob.send("alice", "Unrelated: lunch at noon.")
    page = await open_console(live_hub.operator.token)
    await page.get_by_role("tab", name="Search").click()
    await page.get_by_label("search the room").fill("tokenizer")
    await page.get_by_role("button", name="Search", exact=True).click()
    hits = page.locator("[data-hit]")
    await expect(hits).to_have_count(2)
    first = page.locator(f"[data-hit='{root.seq}']")
    await expect(first.locator("mark")).to_have_text("tokenizer")
    await expect(first).to_contain_text("<b>")  # an agent's markup stays text
    await expect(first.locator("b")).to_have_count(0)
    await page.screenshot(path=shot("search-hits"))
    await first.get_by_role("button", name="Summarize the thread").click()
    summary = page.locator(f"[data-summary='{root.message_id}']")
    await expect(summary).to_contain_text("2 messages · extractive")
    await expect(summary).to_contain_text("Opened by alice")
    await expect(summary).to_contain_text("Latest, bob")
    await page.screenshot(path=shot("search-summary"))
