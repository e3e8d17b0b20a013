"""Console bugs an operator met, each pinned by a test that failed before its fix: a toast on
typing a search, the boot line left after a refused token, an operator link pasted into an
open tab ignored (and its token left in the address bar), an empty ledger shown as
"0 records,UNANCHORED", and a health chart without axes."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from playwright.async_api import Browser, expect

from caucus.client import HubClient
from caucus.services.hub import Hub
from caucus.testing import FakeClock, make_hub, serve
from tests.browser.conftest import PageFactory, settled, shot
from tests.conftest import ClientFactory


async def test_typing_a_search_over_a_long_transcript_raises_no_error(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    alice, _ = await connect("alice"), await connect("bob")
    for n in range(60):
        await alice.send("bob", f"line {n}")
    page = await open_console(live_hub.operator.token)
    await expect(page.locator(".messages .msg")).to_have_count(60)
    search = page.get_by_placeholder('words or "a phrase" ( / )')
    await search.fill("nothing-matches-this")
    # Scrolled to the top before the filter's first page is back: the console must wait.
    await page.locator(".messages").evaluate("e => { e.scrollTop = 0; }")
    await settled(page)  # the filter's page and any older page the scroll asked for are in
    await expect(page.locator(".toast.error")).to_have_count(0)
    await expect(page.locator(".messages .msg")).to_have_count(0)
    await search.fill("line 59")
    await expect(page.locator(".messages .msg")).to_have_count(1)
    await expect(page.locator(".toast.error")).to_have_count(0)


async def test_a_refused_token_leaves_only_the_sign_in_form(browser: Browser, url: str) -> None:
    page = await browser.new_page()
    await page.goto(url)
    await page.get_by_label("Token").fill("cau_not-a-real-token")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("alert")).to_contain_text("refused")
    await expect(page.locator(".boot")).to_have_count(0)
    await expect(page.locator("#app")).not_to_contain_text("Loading the Caucus console")
    linked = await browser.new_page()
    await linked.goto(f"{url}/#token=cau_not-a-real-token")
    await expect(linked.get_by_role("alert")).to_contain_text("refused")
    await expect(linked.locator(".boot")).to_have_count(0)
    assert "#token" not in linked.url


async def test_an_operator_link_pasted_into_an_open_tab_signs_in_with_its_token(
    open_console: PageFactory, live_hub: Hub
) -> None:
    page = await open_console(live_hub.operator.token)
    await page.evaluate("location.hash = '#token=cau_someone-elses-token'")
    await expect(page.get_by_role("alert")).to_contain_text("refused")
    assert "#token" not in page.url
    await page.evaluate(f"location.hash = '#token={live_hub.operator.token}'")
    await page.wait_for_selector("[data-feed=live]")
    assert "#token" not in page.url


async def test_an_empty_ledger_reads_as_empty_not_as_an_alarm(
    open_console: PageFactory, live_hub: Hub
) -> None:
    page = await open_console(live_hub.operator.token)
    await page.locator("[data-tab=decisions]").click()
    ledger = page.locator(".ledger")
    await expect(ledger).to_contain_text("Empty: no decision recorded yet")
    await expect(ledger).not_to_contain_text("UNANCHORED")
    await expect(ledger).to_have_class("card ledger ok")


async def test_the_health_charts_have_axes_with_units_and_the_room_is_put_in_words(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    await connect("bob")
    await alice.ask_operator("Ship it?", [{"key": "go", "type": "radio", "options": ["yes", "no"]}])
    page = await open_console(live_hub.operator.token)
    await page.locator("[data-tab=health]").click()
    units = {
        "messages per minute": "/min",
        "queue depth (deliveries not yet acknowledged)": "",
        "hub memory (resident)": " MiB",
    }
    for label, unit in units.items():
        chart = page.locator(f"[data-chart='{label}'] svg")
        await expect(chart.locator("[data-axis=y-top]")).to_contain_text(unit or "")
        await expect(chart.locator("[data-axis=y-zero]")).to_have_text("0")
        await expect(chart.locator("[data-axis=x-end]")).to_have_text("now")
        await expect(chart.locator("[data-axis=x-start]")).to_contain_text("−")
    memory = page.locator("[data-chart='hub memory (resident)'] [data-axis=y-top]")
    await expect(memory).to_have_text(re.compile(r"^\d+(\.\d)? MiB$"))
    words = page.locator("[data-room-words]")
    await expect(words).to_contain_text("The room is open.")
    await expect(words).to_contain_text("2 of 2 peers are live")
    await expect(words).to_contain_text("1 question waits for you in Forms.")
    await page.keyboard.press("p")
    await expect(words).to_contain_text("The room is paused")


async def test_what_waits_for_the_operator_is_seen_first_at_phone_width(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    alice = await connect("alice")
    for n in range(30):
        await alice.send("all", f"chatter {n}")
    page = await open_console(live_hub.operator.token, width=390, height=844)
    await alice.ask_operator(
        "Ship tonight?", [{"key": "go", "type": "radio", "options": ["yes", "no"]}]
    )
    badge = page.locator("[data-waiting]")
    await expect(badge).to_have_text("1 waiting for you")
    await expect(badge).to_be_in_viewport()
    await expect(page.locator("[data-form]")).to_be_in_viewport()
    await page.screenshot(path=shot("waiting-first-390"), full_page=False)


async def test_thirty_peers_live_ones_first_at_a_glance_with_filter_search_and_menu(
    open_console: PageFactory, tmp_path: Path
) -> None:
    clock = FakeClock()
    async with make_hub(tmp_path / "glance", clock=clock) as hub, serve(hub) as base:
        clients = []
        for n in range(10):
            clients.append(HubClient(base))
            await clients[-1].register(f"old-{n:02}")
        clock.advance(hub.settings.peer_ttl + 1)
        await hub.maintain()  # the ten fall silent past the TTL: reaped
        for n in range(20):
            clients.append(HubClient(base))
            await clients[-1].register(f"live-{n:02}", skills=["sql"] if n % 2 else [])
        try:
            page = await open_console(hub.operator.token, width=1440, height=900, base=base)
            rows = page.locator(".peers > li")
            await expect(rows).to_have_count(30)
            for n in range(20):  # every live peer visible without scrolling
                await expect(page.locator(f"[data-peer='live-{n:02}']")).to_be_in_viewport()
            assert (await rows.first.get_attribute("data-peer")) == "live-00"
            assert (await rows.last.get_attribute("data-peer")) == "old-09"
            await expect(page.locator("[data-counts]")).to_contain_text("20 online · 10 gone")
            await expect(page.locator("[data-gone='10'] summary")).to_have_text("gone (10)")
            await expect(page.locator("[data-peer='old-00']")).to_be_hidden()  # folded away
            await expect(page.locator("#roster-title .count")).to_have_text("20 live of 30")
            await page.screenshot(path=shot("roster-30-1440"), full_page=False)

            await page.get_by_label("show").select_option("gone")
            await expect(rows).to_have_count(10)
            await page.get_by_label("show").select_option("all")
            await page.get_by_label("find a peer").fill("sql")  # by skill
            await expect(rows).to_have_count(10)
            await page.get_by_label("find a peer").fill("live-1")  # by name
            await expect(rows).to_have_count(10)

            row = page.locator("[data-peer='live-13']")
            await row.get_by_role("button", name="actions for live-13").click()
            await row.get_by_role("button", name="Pause").click()
            await expect(row.get_by_role("button", name="Resume")).to_be_visible()
            assert (await hub.registry.find("live-13")).delivery_paused
        finally:
            for client in clients:
                await client.aclose()


async def test_the_transcript_marks_who_speaks_and_to_whom(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    await alice.join_channel("#ops")
    page = await open_console(live_hub.operator.token)
    await alice.send("bob", "direct one", thread="deploy")
    await alice.send("all", "to everyone")
    await alice.send("#ops", "to the channel")
    await bob.send_task("alice", "check the logs")
    rows = page.locator(".messages .msg")
    await expect(rows).to_have_count(4)
    scopes = [await rows.nth(i).locator("[data-scope]").inner_text() for i in range(4)]
    assert scopes == ["direct", "broadcast", "channel", "task"]
    await expect(rows.nth(0).locator("[data-thread]")).to_contain_text("thread deploy")
    alice_colour = await rows.nth(0).locator(".sender").get_attribute("class")
    assert alice_colour == await rows.nth(2).locator(".sender").get_attribute("class")
    roster_colour = await page.locator("[data-peer='alice'] .peer-name").get_attribute("class")
    assert alice_colour is not None
    assert roster_colour is not None
    assert alice_colour.split()[-1] == roster_colour.split()[-1]  # one colour per agent


HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "[click me](javascript:alert(1)) and [docs](https://example.org/a)",
    "````\n```\n<script>alert(2)</script>\n```\n````",
    "`<b>inline</b>` and **bold** and _em_",
    "- one\n- <svg onload=alert(3)>\n1. first\n2. second",
    "zero\u200bwidth\u202e and ```unclosed\n<iframe src=x>",
]


async def test_markdown_renders_a_hostile_corpus_as_text_never_as_markup(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    page = await open_console(live_hub.operator.token)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), asyncio.ensure_future(d.dismiss())))
    alice, _ = await connect("alice"), await connect("bob")
    for text in HOSTILE:
        await alice.send("bob", text)
    rows = page.locator(".messages .msg .content")
    await expect(rows).to_have_count(len(HOSTILE))
    injected = (
        ".messages img, .messages script, .messages svg, .messages iframe, .messages a, .messages b"
    )
    assert await page.locator(injected).count() == 0
    await expect(rows.nth(0)).to_have_text("<img src=x onerror=alert(1)>")
    link = rows.nth(1)
    await expect(link).to_contain_text("click me (javascript:alert(1))")
    await expect(link).to_contain_text("docs (https://example.org/a)")
    nested = rows.nth(2).locator("pre code")
    await expect(nested).to_have_count(1)
    await expect(nested).to_contain_text("<script>alert(2)</script>")
    await expect(rows.nth(3).locator("code")).to_have_text("<b>inline</b>")
    await expect(rows.nth(3).locator("strong")).to_have_text("bold")
    await expect(rows.nth(3).locator("em")).to_have_text("em")
    await expect(rows.nth(4).locator("ul li")).to_have_count(2)
    await expect(rows.nth(4).locator("ul li").nth(1)).to_have_text("<svg onload=alert(3)>")
    await expect(rows.nth(4).locator("ol li")).to_have_count(2)
    await expect(rows.nth(5)).to_contain_text("```unclosed")  # a fence only opens a line
    await expect(rows.nth(5)).to_contain_text("<iframe src=x>")
    await settled(page)  # an injected element's request (img src=x) would have run its handler
    assert dialogs == []


# Each 100 KB on one line: what made the old pattern backtrack over the rest of the line from
# every position (one 8 KB message of "[a[a[a…" took 404 ms to render).
PATHOLOGICAL = {
    "brackets": "[a" * 50_000,
    "unclosed links": "[a](b " * 16_667,
    "backticks": "`a``" * 25_000,
    "one backtick run": "`" * 100_000,
    "links without a close": "[a](" * 25_000,
    "stars": "*a **a " * 14_286,
    "underscores": "_a" * 50_000,
}
TIMING = """async (cases) => {
  const { markdown } = await import("/console/markdown.js");
  const best = (text) => {
    let fastest = Infinity;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      markdown(text);
      fastest = Math.min(fastest, performance.now() - t0);
    }
    return fastest;
  };
  // The baseline: ordinary Markdown of the same size, every kind of span in it.
  const plain = best("see `code`, **bold**, _em_ and [a link](https://x.org) here. ".repeat(1_800));
  const out = { plain };
  for (const [name, text] of Object.entries(cases)) out[name] = best(text);
  return out;
}"""


async def test_markdown_renders_pathological_input_in_linear_time(
    open_console: PageFactory, live_hub: Hub
) -> None:
    """A ratio to ordinary Markdown of the same size, measured in the same page: a quadratic
    pattern is hundreds of times slower on 100 KB, a linear scanner a small multiple."""
    page = await open_console(live_hub.operator.token)
    took = await page.evaluate(TIMING, PATHOLOGICAL)
    plain = max(took.pop("plain"), 1.0)  # milliseconds; the timer's grain is coarse
    ratios = {name: round(ms / plain, 1) for name, ms in took.items()}
    assert all(r < 20 for r in ratios.values()), (ratios, plain)
