"""The console shows the room's meaning, not its plumbing (issue 35), at a laptop's and a
phone's size, light and dark, with a screenshot of each kept in test-artifacts/console."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import pytest
from playwright.async_api import Page, expect

from caucus.client import HubClient
from caucus.operator_client import OperatorClient
from caucus.testing import FakeClock, make_hub, serve
from tests.browser.conftest import PageFactory, shot
from tests.waiting import eventually

SIZES = [(1440, 900), (390, 844)]
SCHEMES: list[Literal["light", "dark"]] = ["light", "dark"]


async def sheet(page: Page, name: str) -> None:
    """At phone width, switch to the sheet `name` (room, peers, panels); wider, all show."""
    button = page.locator(f"[data-sheet-button={name}]")
    if await button.is_visible():
        await button.click()


async def panel(page: Page, tab: str) -> None:
    await sheet(page, "panels")
    await page.locator(f"[data-tab={tab}]").click()


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
        await panel(page, "health")
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


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_an_idle_agent_reads_calm_and_gone_ones_fold_away_with_a_legend(
    open_console: PageFactory, tmp_path: Path, width: int, height: int, scheme: str
) -> None:
    clock = FakeClock()
    async with make_hub(tmp_path / "liveness", clock=clock) as hub, serve(hub) as base:
        clients = [HubClient(base) for _ in range(4)]
        try:
            for name, client in zip(("gone-1", "gone-2"), clients, strict=False):
                await client.register(name)
                await client.set_status("running tool read_file")
            clock.advance(hub.settings.peer_ttl + 1)
            await hub.maintain()  # silent past the TTL: reaped
            await clients[2].register("waiter")
            await clients[2].set_status("composing")
            clock.advance(200)  # past stale_after (180 s): the hub calls it stale
            await hub.maintain()
            await clients[3].register("fresh")

            page = await open_console(
                hub.operator.token, width=width, height=height, base=base, scheme=scheme
            )
            await expect(page.locator("[data-counts]")).to_contain_text(
                "1 online · 1 idle · 2 gone"
            )
            await sheet(page, "peers")
            waiter = page.locator("[data-peer=waiter]")
            await expect(waiter.locator("[data-state]")).to_have_text("idle 3 min")
            # Grey, as the legend's own text: not the alarm colour it used to be.
            grey = await page.locator("[data-legend]").evaluate("e => getComputedStyle(e).color")
            dot = await waiter.locator(".dot").evaluate("e => getComputedStyle(e).backgroundColor")
            assert dot == grey, (dot, grey)

            folded = page.locator("[data-gone='2']")
            await expect(folded.locator("summary")).to_have_text("gone (2)")
            await expect(page.locator("[data-peer=gone-1]")).to_be_hidden()
            await folded.locator("summary").click()
            gone = page.locator("[data-peer=gone-1]")
            await expect(gone).to_be_visible()
            await expect(gone.locator("[data-state]")).to_have_text("gone")
            await expect(gone.locator("[data-doing]")).to_have_count(0)  # its run is over
            await expect(gone).not_to_contain_text("running tool")

            legend = page.locator("[data-legend]")
            await legend.locator("summary").click()
            await expect(legend).to_contain_text("idle, not broken")
            await expect(legend).to_contain_text("gone")
            await page.locator("#roster-title").scroll_into_view_if_needed()
            await page.screenshot(path=shot(f"roster-liveness-{width}-{scheme}"), full_page=False)
        finally:
            for client in clients:
                await client.aclose()


LONG_STATUS = "reviewing the migration plan for the billing service before it ships tonight"


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_status_lines_read_whole_and_forms_answers_and_hands_are_in_the_transcript(
    open_console: PageFactory, tmp_path: Path, width: int, height: int, scheme: str
) -> None:
    async with (
        make_hub(tmp_path / "said") as hub,
        serve(hub) as base,
        HubClient(base) as alice,
        HubClient(base) as bob,
        OperatorClient(base, token=hub.operator.token) as operator,
    ):
        await alice.register("alice")
        await bob.register("bob")
        await alice.set_status(LONG_STATUS)
        page = await open_console(
            hub.operator.token, width=width, height=height, base=base, scheme=scheme
        )
        await sheet(page, "peers")
        status = page.locator("[data-peer=alice] [data-status]")
        await expect(status).to_contain_text(LONG_STATUS)
        await expect(status).to_have_attribute("title", LONG_STATUS)
        box = await status.bounding_box()
        assert box is not None
        assert box["width"] > 0.6 * min(width, 400) - 60, box  # not cut to a letter

        await sheet(page, "room")
        form = await alice.ask_operator(
            "Ship it tonight?", [{"key": "go", "type": "radio", "options": ["yes", "no"]}]
        )
        asked = page.locator(".room-event[data-event=form-asked]")
        await expect(asked).to_contain_text("alice asks the operator: Ship it tonight?")
        await operator.answer_form(form.form_id, {"go": "yes"})
        answered = page.locator(".msg.kind-form_answer")  # the hub's own message says it
        await expect(answered).to_contain_text("go: yes")

        await alice.floor("take", "all")
        await bob.floor("raise", "all")
        await expect(page.locator(".msg.kind-system")).to_contain_text("alice took the floor")
        await expect(page.locator(".room-event[data-event=hand]")).to_contain_text(
            "bob raised a hand for the floor of all"
        )
        await page.locator(".room-event[data-event=hand]").scroll_into_view_if_needed()
        await page.screenshot(path=shot(f"transcript-said-{width}-{scheme}"), full_page=False)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_the_activity_view_shows_what_each_call_was_given_with_secrets_redacted(
    open_console: PageFactory, tmp_path: Path, width: int, height: int, scheme: str
) -> None:
    secret = "sk-live-0123456789abcdef"
    async with make_hub(tmp_path / "calls") as hub, serve(hub) as base, HubClient(base) as ann:
        await ann.register("ann")
        page = await open_console(
            hub.operator.token, width=width, height=height, base=base, scheme=scheme
        )
        await panel(page, "activity")
        await ann.report_tool_call(
            "say",
            ok=True,
            error=None,
            detail=None,
            ms=3.0,
            arguments={"to": "bob", "content": "the build is green", "api_key": secret},
        )
        shown = page.locator("[data-call=say] [data-arguments]")
        await expect(shown).to_contain_text('"content": "the build is green"')
        await expect(shown).to_contain_text('"api_key": "[redacted]"')
        await expect(page.locator("table.activity")).not_to_contain_text(secret)
        await page.get_by_label("find calls").fill("green")  # arguments are searchable
        await expect(page.locator("[data-call]")).to_have_count(1)
        await page.locator("[data-call=say]").scroll_into_view_if_needed()
        await page.screenshot(path=shot(f"activity-arguments-{width}-{scheme}"), full_page=False)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_a_reply_sits_under_what_it_answers_with_a_glimpse_of_it(
    open_console: PageFactory, tmp_path: Path, width: int, height: int, scheme: str
) -> None:
    async with (
        make_hub(tmp_path / "replies") as hub,
        serve(hub) as base,
        HubClient(base) as alice,
        HubClient(base) as bob,
    ):
        await alice.register("alice")
        await bob.register("bob")
        earlier = await alice.send("bob", "is the deploy of the billing service done yet?")
        page = await open_console(
            hub.operator.token, width=width, height=height, base=base, scheme=scheme
        )
        await alice.send("bob", "and the docs?")
        # As a native agent now answers: threaded under the message it answers.
        await bob.send("alice", "deploy done at 14:02", reply_to=earlier.message_id)
        reply = page.locator(".msg.reply")
        await expect(reply).to_have_count(1)
        glimpse = reply.locator("[data-reply-to]")
        await expect(glimpse).to_have_attribute("data-reply-to", str(earlier.seq))
        await expect(glimpse).to_contain_text(
            f"re #{earlier.seq} alice: is the deploy of the billing service done yet?"
        )
        await expect(reply).to_contain_text("deploy done at 14:02")
        await reply.scroll_into_view_if_needed()
        await page.screenshot(path=shot(f"transcript-reply-{width}-{scheme}"), full_page=False)


async def height_ratio(page: Page) -> float:
    """The document's height over the viewport's: 1.0 is one screen, nothing below it."""
    ratio: float = await page.evaluate("document.documentElement.scrollHeight / window.innerHeight")
    return ratio


@pytest.mark.parametrize("scheme", SCHEMES)
async def test_a_phone_gets_one_screen_with_what_waits_first_and_a_sheet_at_a_time(
    open_console: PageFactory, tmp_path: Path, scheme: str
) -> None:
    async with make_hub(tmp_path / "phone", send_rate_capacity=1000) as hub, serve(hub) as base:
        clients = [HubClient(base) for _ in range(12)]
        try:
            for n, client in enumerate(clients):
                await client.register(f"agent-{n:02}")
                await client.set_status(f"working on part {n} of the release")
            for n in range(80):
                await clients[n % 12].send("all", f"progress note {n}: the build moves on")
            await clients[0].ask_operator(
                "Ship tonight?", [{"key": "go", "type": "radio", "options": ["yes", "no"]}]
            )
            page = await open_console(
                hub.operator.token, width=390, height=844, base=base, scheme=scheme
            )
            await expect(page.locator(".messages .msg")).to_have_count(80)
            # The first screen: what waits for the operator and the room's state.
            for first in ("[data-waiting]", "[data-mode]", "[data-counts]", "[data-form]"):
                await expect(page.locator(first)).to_be_in_viewport()
            ratios = {"room": await height_ratio(page)}
            await page.screenshot(path=shot(f"phone-room-{scheme}"), full_page=True)
            for name, shown in (("peers", "[data-peer=agent-00]"), ("panels", "[data-tab=health]")):
                await sheet(page, name)
                await expect(page.locator(shown)).to_be_in_viewport()
                ratios[name] = await height_ratio(page)
                await page.screenshot(path=shot(f"phone-{name}-{scheme}"), full_page=True)
            print(f"phone document height / viewport ({scheme}): {ratios}")
            assert all(r <= 1.02 for r in ratios.values()), ratios
        finally:
            for client in clients:
                await client.aclose()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_a_deliberation_is_one_card_in_the_transcript_with_positions_as_fields(
    open_console: PageFactory, tmp_path: Path, width: int, height: int, scheme: str
) -> None:
    async with (
        make_hub(tmp_path / "deliberation") as hub,
        serve(hub) as base,
        HubClient(base) as lead,
        HubClient(base) as ann,
        HubClient(base) as ben,
        OperatorClient(base, token=hub.operator.token) as operator,
    ):
        for client, name in ((lead, "lead"), (ann, "ann"), (ben, "ben")):
            await client.register(name)
        page = await open_console(
            hub.operator.token, width=width, height=height, base=base, scheme=scheme
        )
        await lead.send("all", "shall we settle the database question?")
        convened = await lead.convene(
            "Adopt PostgreSQL for the shared deployment?",
            ["ann", "ben"],
            evidence=[{"source": "benchmarks", "ref": "scaleout.txt"}],
            rounds=1,
            deadline=30,
        )
        d = convened.deliberation_id

        async def positions_asked() -> bool:
            return all(p.task_id for p in (await lead.deliberation(d)).panel)

        await eventually(positions_asked, within=10, what="both position requests")
        await ann.submit_position(
            d, "approve", "the scale-out numbers hold up", 0.8, evidence=["scaleout.txt"]
        )
        await ben.submit_position(d, "reject", "one more moving part to run", 0.65)

        card = page.locator(f"[data-deliberation-card={d}]")
        await expect(card).to_have_count(1)  # its requests and answers are one row
        await expect(card).to_contain_text("Adopt PostgreSQL for the shared deployment?")
        await expect(card.locator("[data-position=ben] [data-stance]")).to_have_text("reject")
        await expect(card.locator("[data-position=ben]")).to_contain_text(
            "one more moving part to run"
        )
        await expect(card.locator("[data-position=ann]")).to_contain_text("80%")
        await expect(card.locator("[data-position=ann]")).to_contain_text("evidencescaleout.txt")
        messages = page.locator(".messages")
        await expect(messages.locator(".msg.kind-task")).to_have_count(0)
        await expect(messages.locator(".msg.kind-result")).to_have_count(0)
        # The chair's question is the hub's, not the convener's.
        chair = page.locator(".room-event[data-event=form-asked]")
        await expect(chair).to_contain_text("hub asks the operator to chair: Adopt PostgreSQL")
        await expect(chair).not_to_contain_text("lead asks")

        pending = await operator.forms()
        (form,) = [f for f in pending if f.title.startswith(f"Chair {d}")]
        await operator.answer_form(
            form.form_id,
            {"stance": "approve", "decision": "Adopt it behind a flag.", "confidence": "80%"},
        )
        await expect(card.locator("[data-verdict]")).to_contain_text(
            "Adopt it behind a flag. (80%) · dissent: ben"
        )
        # The chair's answer folds into the card too: no loose "asked by lead" message.
        await expect(messages.locator(".msg.kind-form_answer")).to_have_count(0)
        await card.scroll_into_view_if_needed()
        await page.screenshot(
            path=shot(f"transcript-deliberation-{width}-{scheme}"), full_page=False
        )
        # The messages as sent are one click away, the requests credited to the hub.
        raw = card.locator("[data-raw]")
        await expect(raw.locator(".raw").first).to_be_hidden()
        await raw.locator("summary").click()
        await expect(raw).to_contain_text("hub, for lead → ann · task")
        await expect(raw).to_contain_text("Position request")

        # On the tasks tab too: each request as what it means, the prompt one click away.
        await panel(page, "work")
        requests = page.locator(f"[data-task-thread={d}] [data-position-request]")
        await expect(requests).to_have_count(2)
        ben_request = requests.filter(has_text="position request to ben")
        await expect(ben_request).to_contain_text("from the hub, for lead")
        await expect(ben_request.locator("[data-result]")).to_have_text(
            "reject (65%): one more moving part to run"
        )
        await expect(ben_request.locator("pre")).to_be_hidden()
