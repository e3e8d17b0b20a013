"""Every view of the console, in a room with something in each, at a desktop (1440x900) and a
phone (390x844) size, light and dark: saved as screenshots under test-artifacts/console/views
for a person to look at, and checked for what a person would notice first: the view is there,
nothing spills sideways off a phone's screen, and the page raised no error."""

from __future__ import annotations

from typing import Literal

import pytest
from mcp import Client
from playwright.async_api import Page, expect

from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from tests.browser.conftest import ARTIFACTS, PageFactory
from tests.conftest import ClientFactory
from tests.mcptools import call, fail

TABS = ["forms", "channels", "work", "decisions", "health", "activity", "agents", "controls"]
SIZES = {"desktop": (1440, 900), "phone": (390, 844)}


async def furnish(url: str, connect: ClientFactory, operator: OperatorClient) -> None:
    """A room with a little of everything: peers in several states, a thread, a channel with
    a topic and a floor, tasks done and failed, an offer with claims, a form answered (on the
    ledger) and one waiting, tool calls that worked and one that failed."""
    alice = await connect("alice", skills=["sql", "review"])
    bob = await connect("bob", skills=["deploy"])
    cy = await connect("cy")
    await connect("dormant")
    await operator.pause_peer("dormant")
    await alice.join_channel("#ops")
    await bob.join_channel("#ops")
    await alice.set_topic("#ops", "the v2 release")
    await alice.floor("take", scope="#ops", reason="release notes")
    first = await alice.send(
        "bob", "Shall we ship `v2` today?\n\n- tests green\n- docs done", thread="ship"
    )
    await bob.send("alice", "After the **migration** check.", reply_to=first.message_id)
    await alice.send("#ops", "```\nSELECT count(*) FROM runs;\n```")
    await bob.set_status("deploying to staging")
    task = await alice.send_task(
        "bob", "Count the rows in runs", subject="row count", thread="ship"
    )
    await bob.reply_task(task.task_id, "412 rows")
    failed = await alice.send_task("cy", "Check the schema", subject="schema")
    await cy.fail_task(failed.task_id, "no access to the schema")
    offer = await alice.post_offer("Review the migration", subject="review")
    await bob.claim_offer(offer.offer_id, note="I wrote half of it")
    await cy.claim_offer(offer.offer_id)
    answered = await alice.ask_operator(
        "Ship v2 today?", [{"key": "go", "type": "radio", "options": ["yes", "no"]}]
    )
    await operator.answer_form(answered.form_id, {"go": "yes"})
    await bob.ask_operator(
        "Which region first?", [{"key": "region", "type": "radio", "options": ["eu", "us"]}]
    )
    async with Client(f"{url}/mcp", mode="legacy") as dee:
        await call(dee, "join", name="dee")
        await call(dee, "say", to="alice", content="hello from MCP")
        await fail(dee, "say", to="nobody-here", content="hello?")


async def no_sideways_spill(page: Page) -> None:
    wide = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert wide <= 0, f"the page is {wide} px wider than the screen"


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_every_view_at_desktop_and_phone_size(
    open_console: PageFactory,
    live_hub: Hub,
    url: str,
    connect: ClientFactory,
    operator: OperatorClient,
    scheme: Literal["light", "dark"],
) -> None:
    await furnish(url, connect, operator)
    folder = ARTIFACTS / "views"
    folder.mkdir(parents=True, exist_ok=True)
    for size, (width, height) in SIZES.items():
        page = await open_console(
            live_hub.operator.token, width=width, height=height, scheme=scheme
        )
        await expect(page.locator(".messages .msg")).to_have_count(13)
        await expect(page.locator("[data-waiting]")).to_be_visible()
        await no_sideways_spill(page)
        await page.screenshot(path=folder / f"room-{size}-{scheme}.png", full_page=size == "phone")
        if size == "phone":  # the panels are a sheet of their own there
            await page.locator("[data-sheet-button=panels]").click()
        for tab in TABS:
            await page.locator(f"[data-tab={tab}]").click()
            panel = page.locator(f"[data-panel={tab}]")
            await expect(panel).not_to_be_empty()
            await no_sideways_spill(page)
            await page.evaluate("window.scrollTo(0, 0)")  # a full page, its header on top
            await page.screenshot(
                path=folder / f"{tab}-{size}-{scheme}.png", full_page=size == "phone"
            )
        await page.keyboard.press("?")
        await page.screenshot(path=folder / f"keys-{size}-{scheme}.png")
        await page.keyboard.press("Escape")
    shots = sorted(p.name for p in folder.glob(f"*-{scheme}.png"))
    assert len(shots) == 2 * (len(TABS) + 2)
