"""The operator console in a real browser against a real hub: signing in, the live roster and
transcript, room and peer controls, the forms wizard, the observer's read-only view, every
panel's screenshot, and content that never runs as markup."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import httpx2
import pytest
from playwright.async_api import Page, expect

from caucus.client import HubClient
from caucus.errors import RoomStopped, Unauthorized
from caucus.services.hub import Hub
from tests.browser.conftest import PageFactory, shot
from tests.conftest import ClientFactory, eventually

PANELS = ["forms", "channels", "work", "decisions", "health", "activity", "agents", "controls"]
XSS = "<img src=x onerror=alert(1)>"


def peer_row(page: Page, name: str):  # type: ignore[no-untyped-def]
    return page.locator(f"[data-peer='{name}']")


async def menu(page: Page, name: str):  # type: ignore[no-untyped-def]
    """The peer's row with its actions menu open."""
    row = peer_row(page, name)
    toggle = row.get_by_role("button", name=f"actions for {name}")
    if await toggle.get_attribute("aria-expanded") != "true":
        await toggle.click()
    return row


async def test_sign_in_see_agents_join_and_talk_live(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    page = await open_console(live_hub.operator.token)
    assert "#token" not in page.url  # the token leaves the address bar at once
    await expect(page.locator(".peers")).to_be_empty()
    alice, bob = await connect("alice"), await connect("bob", skills=["sql"])
    await expect(peer_row(page, "alice")).to_be_visible()
    await expect(peer_row(page, "bob")).to_contain_text("sql")
    await alice.send("bob", "can you review the migration?")
    await bob.send("all", "on it")
    messages = page.locator(".messages .msg")
    await expect(messages).to_have_count(2)
    await expect(messages.nth(0)).to_contain_text("alice")
    await expect(messages.nth(0)).to_contain_text("can you review the migration?")
    await expect(messages.nth(1)).to_contain_text("on it")
    await expect(peer_row(page, "alice")).to_contain_text("1 sent")

    # The operator speaks to one peer from the roster.
    await (await menu(page, "bob")).get_by_role("button", name="Message").click()
    await page.locator(".composer textarea").fill("thanks, bob")
    await page.locator(".composer textarea").press("Control+Enter")
    heard: list[tuple[str, str]] = []

    async def thanked() -> bool:  # alice's message may come first, in a batch of its own
        heard.extend((m.sender, m.content) for m in (await bob.receive(timeout=1)).messages)
        return ("operator", "thanks, bob") in heard

    await eventually(thanked, what="the operator's message to bob")

    # A reload keeps the session (this tab's storage) and the history.
    await page.reload()
    await page.wait_for_selector("[data-feed=live]")
    await expect(messages).to_have_count(3)


async def test_a_typed_token_signs_in_and_a_wrong_one_is_refused(
    browser, url: str, live_hub: Hub
) -> None:  # type: ignore[no-untyped-def]
    page = await browser.new_page()
    await page.goto(url)
    await page.get_by_label("Token").fill("cau_not-a-real-token")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("alert")).to_contain_text("refused")
    await page.get_by_label("Token").fill(live_hub.operator.token)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_selector("[data-feed=live]")
    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_label("Token")).to_be_visible()


async def test_pausing_holds_an_agent_send_until_resumed_and_kicking_removes_a_peer(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    page = await open_console(live_hub.operator.token)
    alice, bob = await connect("alice"), await connect("bob")
    await expect(peer_row(page, "bob")).to_be_visible()
    await page.locator(".top").get_by_role("button", name="Pause").click()
    await expect(page.locator("[data-mode]")).to_have_text("room paused")
    await alice.send("bob", "held while paused")
    assert (await bob.receive(timeout=0)).messages == []  # accepted, stored, held
    await expect(page.locator(".messages")).to_contain_text("held while paused")
    await page.locator(".top").get_by_role("button", name="Resume").click()
    await expect(page.locator("[data-mode]")).to_have_text("room open")
    assert [m.content for m in (await bob.receive(timeout=5)).messages] == ["held while paused"]

    await (await menu(page, "bob")).get_by_role("button", name="Kick").click()
    await peer_row(page, "bob").get_by_role("button", name="Confirm kick").click()
    await expect(peer_row(page, "bob")).to_have_count(0)
    with pytest.raises(Unauthorized):
        await bob.send("alice", "am I still here?")


async def test_a_form_answered_through_the_wizard_reaches_the_asker_and_the_ledger(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    page = await open_console(live_hub.operator.token)
    alice = await connect("alice")
    await alice.ask_operator(
        "Which database for v2?",
        [
            {
                "key": "db",
                "label": "Database",
                "type": "radio",
                "options": ["sqlite", "postgres"],
                "required": True,
                "allow_other": True,
            },
            {
                "key": "envs",
                "label": "Environments",
                "type": "checkbox",
                "options": ["dev", "prod"],
            },
            {"key": "why", "label": "Why", "type": "text", "required": True},
        ],
    )
    await expect(page.locator("[data-tab=forms] .count")).to_have_text("1")
    card = page.locator("[data-form]")
    await expect(card).to_contain_text("Which database for v2?")
    await card.get_by_role("button", name="Answer").click()
    wizard = page.get_by_role("dialog")
    await expect(wizard).to_contain_text("question 1 of 3")
    await wizard.get_by_role("button", name="Next").click()
    await expect(wizard.get_by_role("alert")).to_contain_text("needs an answer")
    await wizard.get_by_label("your own answer").fill("duckdb")  # the "other" answer
    await wizard.get_by_role("button", name="Next").click()
    await expect(wizard).to_contain_text("question 2 of 3")
    await wizard.get_by_label("dev").check()
    await wizard.get_by_label("prod").check()
    await wizard.get_by_role("button", name="Next").click()
    await wizard.get_by_role("button", name="Review").click()
    await expect(wizard.get_by_role("alert")).to_contain_text("needs an answer")
    await wizard.locator("input[name=why]").fill("embedded and fast")
    await wizard.get_by_role("button", name="Review").click()
    recap = wizard.locator(".recap")
    await expect(recap).to_contain_text("duckdb")
    await expect(recap).to_contain_text("dev, prod")
    await expect(recap).to_contain_text("embedded and fast")
    await page.screenshot(path=shot("forms-wizard-recap"), full_page=True)
    await wizard.get_by_role("button", name="Send answer").click()
    await expect(wizard).to_have_count(0)
    await expect(page.locator("[data-form]")).to_have_count(0)

    answers = [m for m in (await alice.receive(timeout=5)).messages if m.kind == "form_answer"]
    assert len(answers) == 1
    assert answers[0].meta is not None
    assert answers[0].meta["answers"] == {
        "db": "duckdb",
        "envs": ["dev", "prod"],
        "why": "embedded and fast",
    }
    await page.locator("[data-tab=decisions]").click()
    await expect(page.locator(".decision")).to_contain_text("Which database for v2?")
    await expect(page.locator(".ledger")).to_contain_text("Verified")
    await expect(page.locator(".ledger")).to_contain_text("Verified: 1 record, anchored")


async def test_an_observer_sees_everything_and_every_control_is_disabled(
    open_console: PageFactory, tmp_path: Path
) -> None:
    from caucus.testing import make_hub, serve

    observer_token = "cau_observer-for-the-console-test-0123456789abcdef"
    async with (
        make_hub(tmp_path / "obs", observer_token=observer_token) as hub,
        serve(hub) as base,
        HubClient(base) as alice,
    ):
        await alice.register("alice")
        await alice.join_channel("#ops")
        await alice.send("#ops", "hello from alice")
        await alice.ask_operator("Proceed?", [{"key": "go", "type": "radio", "options": ["y"]}])
        page = await open_console(observer_token, base=base)
        await expect(peer_row(page, "alice")).to_be_visible()
        await expect(page.locator(".messages")).to_contain_text("hello from alice")
        await expect(page.locator(".role-observer")).to_be_visible()
        await expect(
            (await menu(page, "alice")).get_by_role("button", name="Kick")
        ).to_be_disabled()
        await expect(page.locator(".top").get_by_role("button", name="Pause")).to_be_disabled()
        await expect(page.get_by_role("button", name="Answer")).to_be_disabled()
        await expect(page.locator(".composer textarea")).to_be_disabled()
        for panel in PANELS:
            await page.locator(f"[data-tab={panel}]").click()
            await expect(page.locator(f"[data-panel={panel}]")).to_be_visible()
            controls = page.locator("button:not([data-read]), textarea, input, select")
            enabled = []
            for index in range(await controls.count()):
                control = controls.nth(index)
                if await control.is_enabled() and not await _is_read_only(control):
                    enabled.append(await control.evaluate("e => e.outerHTML.slice(0, 80)"))
            assert not enabled, f"{panel}: enabled controls {enabled}"
        # And the hub refuses the observer anyway, whatever the page does.
        status = await page.evaluate(
            """async (token) => (await fetch('/operator/pause', {method: 'POST',
                headers: {Authorization: 'Bearer ' + token}})).status""",
            observer_token,
        )
        assert status == 403
        assert hub.control.room.mode.value == "open"


async def _is_read_only(control) -> bool:  # type: ignore[no-untyped-def]
    """Filters, search (the transcript's and the roster's), the export format: reading, which
    an observer may do."""
    return bool(
        await control.evaluate(
            "e => Boolean(e.closest('.filters, .roster-tools, .activity-tools'))"
            " || e.getAttribute('aria-label') === 'format'"
        )
    )


async def test_every_panel_renders_and_is_saved_as_a_screenshot(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    alice, bob = await connect("alice", skills=["sql"]), await connect("bob")
    await alice.set_status("migrating the schema")
    await alice.join_channel("#ops")
    await bob.join_channel("#ops")
    await alice.floor("take", "#ops", "presenting")
    await bob.floor("raise", "#ops")
    await alice.send_task("bob", "review PR 12", subject="review")
    await bob.post_offer("index the docs", subject="docs index")
    await alice.ask_operator("Ship?", [{"key": "go", "type": "radio", "options": ["yes", "no"]}])
    page = await open_console(live_hub.operator.token)
    await alice.send("#ops", "the plan is ready")
    await expect(page.locator(".messages")).to_contain_text("the plan is ready")
    expected = {
        "forms": "Ship?",
        "channels": "held by alice",
        "work": "review PR 12",
        "decisions": "Decision ledger",
        "health": "Messages / minute",
        "activity": "Tool calls",
        "agents": "Launch an agent",
        "controls": "Room controls",
    }
    for panel in PANELS:
        await page.locator(f"[data-tab={panel}]").click()
        await expect(page.locator(f"[data-panel={panel}]")).to_contain_text(expected[panel])
        await page.screenshot(path=shot(f"panel-{panel}"), full_page=True)
    await page.locator("[data-tab=work]").click()
    await expect(page.locator("[data-panel=work]")).to_contain_text("docs index")
    narrow = await open_console(live_hub.operator.token, width=420, height=900)
    await narrow.locator("[data-sheet-button=peers]").click()  # one sheet at a time
    await expect(peer_row(narrow, "alice")).to_be_visible()
    await narrow.screenshot(path=shot("narrow-window"), full_page=True)
    assert shot("panel-health").stat().st_size > 0


async def test_markup_in_a_message_is_shown_as_text_and_inline_script_never_runs(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory, url: str
) -> None:
    page = await open_console(live_hub.operator.token)
    dialogs: list[str] = []
    page.on(
        "dialog",
        lambda dialog: (dialogs.append(dialog.message), asyncio.ensure_future(dialog.dismiss())),
    )
    alice, _ = await connect("alice"), await connect("bob")
    await alice.send("bob", XSS)
    await alice.set_status(XSS)
    content = page.locator(".messages .msg .content").last
    await expect(content).to_have_text(XSS)
    assert await page.locator(".messages img, .peers img").count() == 0
    # Even markup forced into the page cannot run inline script under the hub's CSP.
    blocked = await page.evaluate(
        """() => new Promise((resolve) => {
            document.addEventListener(
                'securitypolicyviolation', (e) => resolve(e.violatedDirective));
            const probe = document.createElement('div');
            probe.innerHTML = '<img src="data:," onerror="window.__ran = 1">';
            document.body.appendChild(probe);
            const script = document.createElement('script');
            script.textContent = 'window.__ran = 2';
            document.body.appendChild(script);
            setTimeout(() => resolve('no violation reported'), 2000);
        })"""
    )
    assert blocked.startswith("script-src")
    assert await page.evaluate("() => window.__ran") is None
    assert dialogs == []
    async with httpx2.AsyncClient(base_url=url) as http:
        policy = (await http.get("/")).headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy


async def test_older_history_loads_on_scroll_and_filters_narrow_the_transcript(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    alice, bob, carol = await connect("alice"), await connect("bob"), await connect("carol")
    alice_peer = await live_hub.registry.find("alice")
    for n in range(700):
        await live_hub.delivery.send(alice_peer, to="bob", content=f"old message {n}")
    await carol.send("all", "needle in the haystack")
    page = await open_console(live_hub.operator.token)
    transcript = page.locator(".messages")
    await expect(transcript).to_contain_text("needle in the haystack")
    assert int(await transcript.get_attribute("data-first") or 0) > 500  # only the newest
    beginning = page.get_by_text("the beginning of the transcript")
    for _ in range(20):  # each scroll to the top loads one page more, once it has come
        first = await transcript.get_attribute("data-first")
        await transcript.evaluate("e => { e.scrollTop = 0; }")
        if await beginning.count():
            break
        await expect(transcript).not_to_have_attribute("data-first", first or "")
    await expect(beginning).to_be_visible()
    await expect(transcript.locator(".msg").first).to_contain_text("old message 0")
    assert await transcript.locator(".msg").count() <= 400  # a window, not the whole history
    await page.get_by_role("button", name="Jump to the newest").click()
    await expect(transcript.locator(".msg").last).to_contain_text("needle in the haystack")

    await page.get_by_label("Search").fill("NEEDLE")
    await expect(transcript.locator(".msg")).to_have_count(1)
    await page.get_by_label("Search").fill("")
    await page.locator(".filters").get_by_label("Peer").select_option("carol")
    await expect(transcript.locator(".msg")).to_have_count(1)
    await bob.send("carol", "a reply to carol")  # matches: delivered to carol
    await alice.send("bob", "not for carol")  # does not
    await expect(transcript.locator(".msg")).to_have_count(2)
    await expect(transcript).not_to_contain_text("not for carol")
    await page.locator(".filters").get_by_label("Peer").select_option("")
    await page.locator(".filters").get_by_label("Kind").select_option("chat")
    await expect(transcript).to_contain_text("not for carol")


async def test_the_feed_reconnects_by_itself_and_resumes_without_gaps(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory, url: str
) -> None:
    from tests.proxy import proxy_to

    async with proxy_to(url) as (network, through):
        page = await open_console(live_hub.operator.token, base=through)
        alice, _ = await connect("alice"), await connect("bob")
        await alice.send("bob", "before the drop")
        transcript = page.locator(".messages")
        await expect(transcript).to_contain_text("before the drop")
        network.cut()  # the feed's connection dies mid-stream
        for n in range(5):
            await alice.send("bob", f"while away {n}")
        await expect(transcript).to_contain_text("while away 4", timeout=15000)
        await expect(page.locator("[data-feed]")).to_have_attribute("data-feed", "live")
        texts = await transcript.locator(".msg .content").all_inner_texts()
        assert texts == ["before the drop"] + [f"while away {n}" for n in range(5)]  # once each
        follows = [r for r in network.requests if r.startswith(b"GET /operator/events")]
        assert len(follows) >= 2  # it did lose the stream, and came back by itself
        assert b"last-event-id:" in follows[-1].lower()  # resuming, not starting over


async def test_a_form_can_be_answered_with_the_keyboard_alone(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    page = await open_console(live_hub.operator.token)
    alice = await connect("alice")
    await alice.ask_operator("Why?", [{"key": "why", "type": "text", "required": True}])
    answer = page.get_by_role("button", name="Answer")
    await answer.focus()
    await page.keyboard.press("Enter")
    wizard = page.get_by_role("dialog")
    await expect(wizard.locator("input[name=why]")).to_be_focused()
    await page.keyboard.press("Escape")
    await expect(wizard).to_have_count(0)
    await answer.focus()
    await page.keyboard.press("Enter")
    await expect(wizard.locator("input[name=why]")).to_be_focused()
    await page.keyboard.type("because it is faster")
    await page.keyboard.press("Enter")  # the card's form: on to the recap
    await expect(wizard.locator(".recap")).to_contain_text("because it is faster")
    await expect(wizard.get_by_role("button", name="Send answer")).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(wizard).to_have_count(0)
    got = [m for m in (await alice.receive(timeout=5)).messages if m.kind == "form_answer"]
    assert got[0].meta is not None
    assert got[0].meta["answers"] == {"why": "because it is faster"}
    await page.keyboard.press("/")
    await expect(page.locator("#search")).to_be_focused()


async def test_the_dark_theme_follows_the_system(
    browser, url: str, live_hub: Hub, connect: ClientFactory
) -> None:  # type: ignore[no-untyped-def]
    await connect("alice")
    colors = {}
    for scheme in ("light", "dark"):
        context = await browser.new_context(
            color_scheme=scheme, viewport={"width": 1400, "height": 900}
        )
        page = await context.new_page()
        await page.goto(f"{url}/#token={live_hub.operator.token}")
        await page.wait_for_selector("[data-feed=live]")
        colors[scheme] = await page.evaluate("getComputedStyle(document.body).backgroundColor")
        await page.screenshot(path=shot(f"theme-{scheme}"), full_page=True)
        await context.close()
    assert colors["light"] != colors["dark"]


async def test_room_controls_announce_set_the_budget_stop_reset_and_export(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    page = await open_console(live_hub.operator.token)
    alice, bob = await connect("alice"), await connect("bob")
    await alice.send("bob", "a line for the export")
    await page.locator("[data-tab=controls]").click()
    panel = page.locator("[data-panel=controls]")

    await panel.get_by_label("Subject").fill("maintenance")
    await panel.get_by_label("News for every peer").fill("the hub restarts at noon")
    await panel.get_by_role("button", name="Announce").click()
    news = [m for m in (await bob.receive(timeout=5)).messages if m.kind == "announce"]
    assert [(m.content, (m.meta or {}).get("subject")) for m in news] == [
        ("the hub restarts at noon", "maintenance")
    ]

    await panel.get_by_label("Sends at once").fill("7")
    await panel.get_by_label("Refill per second").fill("0.5")
    await panel.get_by_role("button", name="Set budget").click()
    await eventually(lambda: live_hub.control.room.rate.capacity == 7, what="the new budget")
    assert live_hub.control.room.rate.refill == 0.5

    await panel.get_by_label("Reason told to the agents").fill("wrapping up")
    await panel.get_by_role("button", name="Stop room").click()
    await expect(page.locator("[data-mode]")).to_have_text("room stopped")
    stop = [m for m in (await alice.receive(timeout=5)).messages if m.kind == "control"]
    assert [(m.content, (m.meta or {}).get("reason")) for m in stop] == [("stop", "wrapping up")]
    with pytest.raises(RoomStopped):
        await alice.send("bob", "refused while stopped")
    await panel.get_by_role("button", name="Reset room").click()
    await expect(page.locator("[data-mode]")).to_have_text("room open")
    await alice.send("bob", "open again")

    async with page.expect_download() as download_info:
        await panel.get_by_role("button", name="Download").click()
    download = await download_info.value
    assert download.suggested_filename.endswith(".md")
    exported = Path(await download.path()).read_text()
    assert "a line for the export" in exported

    await page.locator("[data-tab=health]").click()
    await expect(page.locator("[data-stat=mpm]")).not_to_have_text("—")
    for chart in await page.locator(".chart polyline").all():  # rate, queue depth, memory
        await expect(chart).to_have_attribute("points", re.compile(r"\d"))


# Names the hub accepts that look like path syntax; `..` is one an older hub let through.
ODD_NAMES = [".x", "x.", "a..b", "-", "_", "Q-1"]


async def test_per_peer_controls_act_on_that_peer_whatever_its_name(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    for name in ODD_NAMES:
        await connect(name)
    now = live_hub.clock.now()
    legacy = await live_hub._db.write(
        lambda r: r.peers.create(
            name="..", token_hash=b"\x00" * 32, skills=[], description="", now=now
        )
    )
    page = await open_console(live_hub.operator.token)
    room = page.locator("[data-mode]")
    for name in ODD_NAMES:
        row = await menu(page, name)
        await row.get_by_role("button", name="Pause").click()
        await expect(row.get_by_role("button", name="Resume")).to_be_visible()
        assert (await live_hub.registry.find(name)).delivery_paused
        await row.get_by_role("button", name="Resume").click()
        await expect(row.get_by_role("button", name="Pause")).to_be_visible()
        for control in ("Interrupt", "Reset", "Ping"):
            await row.get_by_role("button", name=control).click()
            await expect(page.locator(".toast.ok").last).to_contain_text(name)
        await expect(room).to_have_text("room open")
    for control in ("Pause", "Reset"):
        await (await menu(page, "..")).get_by_role("button", name=control).click()
        await expect(page.locator(".toast.error").last).to_contain_text('cannot address ".."')
    await expect(room).to_have_text("room open")
    assert live_hub.control.state().mode.value == "open"
    assert not (await live_hub._db.read(lambda r: r.peers.holder("..")) or legacy).delivery_paused
    for name in ODD_NAMES:  # kicked from the console, each one alone
        await (await menu(page, name)).get_by_role("button", name="Kick").click()
        await peer_row(page, name).get_by_role("button", name="Confirm kick").click()
        await expect(peer_row(page, name)).to_have_count(0)
    await expect(peer_row(page, "..")).to_have_count(1)
