"""The console follows the conversation and the work: joins, leaves and kicks inline in the
transcript; a thread and a reply open in place; tasks grouped by thread with their request,
state history and result; the job board with its claims; a native agent's run state in the
roster; every MCP tool call in the activity view."""

from __future__ import annotations

from mcp import Client
from playwright.async_api import expect

from caucus.operator_client import OperatorClient
from caucus.services.hub import Hub
from tests.browser.conftest import PageFactory, shot
from tests.conftest import ClientFactory
from tests.mcptools import call, fail


async def test_joins_leaves_and_kicks_show_inline_and_threads_open_in_place(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory, operator: OperatorClient
) -> None:
    alice = await connect("alice")
    page = await open_console(live_hub.operator.token)
    bob = await connect("bob")
    events = page.locator(".messages .room-event")
    await expect(events.filter(has_text="bob joined")).to_have_count(1)

    first = await alice.send("bob", "shall we ship **v2**?", thread="deploy")
    await bob.send("alice", "after the tests pass", reply_to=first.message_id)
    chatter = await alice.send("bob", "unrelated chatter")
    await alice.send("bob", "tests are green", thread="deploy")
    await bob.send("alice", "which chatter?", reply_to=chatter.message_id)
    rows = page.locator(".messages .msg")
    await expect(rows).to_have_count(5)

    # The first message's thread: the reply to it (in its thread) and the later message.
    opener = rows.nth(0).get_by_role("button", name="thread deploy")
    await opener.click()
    await expect(opener).to_have_attribute("aria-expanded", "true")
    thread = rows.nth(0).locator("ol.thread li")
    await expect(thread).to_have_count(2)
    # Both are on screen already: the thread links to their rows, never repeats them (#48).
    await expect(rows.nth(0).locator("ol.thread li[data-in-view]")).to_have_count(2)
    await expect(thread.nth(0)).to_contain_text("bob shown below")
    await expect(rows.nth(0).locator("ol.thread")).not_to_contain_text("tests are green")
    # A message with no thread has no badge; the reply to it opens what it answers.
    await expect(rows.nth(2).locator("[data-thread]")).to_have_count(0)
    await rows.nth(4).locator("[data-thread]").click()
    await expect(rows.nth(4).locator("ol.thread li")).to_have_count(1)
    await expect(rows.nth(4).locator("ol.thread li")).to_contain_text("shown above")
    await page.screenshot(path=shot("transcript-thread-open"))

    await bob.leave()
    await expect(events.filter(has_text="bob left")).to_have_count(1)
    await connect("carol")
    await expect(events.filter(has_text="carol joined")).to_have_count(1)
    await operator.kick("carol")
    await expect(events.filter(has_text="carol was kicked by the operator")).to_have_count(1)
    # Events sit in order between the messages: bob joined before the first message.
    texts = await page.locator(".messages > .msg, .messages > .room-event").all_inner_texts()
    joined = next(i for i, t in enumerate(texts) if "bob joined" in t)
    shipped = next(i for i, t in enumerate(texts) if "shall we ship" in t)
    left = next(i for i, t in enumerate(texts) if "bob left" in t)
    assert joined < shipped < left


async def test_tasks_grouped_by_thread_with_history_and_result_and_the_board_with_claims(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    alice, bob, cy = await connect("alice"), await connect("bob"), await connect("cy")
    one = await alice.send_task("bob", "count the rows", subject="rows", thread="audit")
    two = await alice.send_task(
        "cy", "check the schema " + "x" * 600, subject="schema", thread="audit"
    )
    await alice.send_task("bob", "unrelated job", subject="other", thread="misc")
    await bob.reply_task(one.task_id, "**412** rows")
    await cy.fail_task(two.task_id, "no access to the schema")
    offer = await alice.post_offer("review the migration", subject="review")
    await bob.claim_offer(offer.offer_id, note="I know this one")
    await cy.claim_offer(offer.offer_id)

    page = await open_console(live_hub.operator.token)
    await page.get_by_role("tab", name="Tasks & board").click()
    audit = page.locator("[data-task-thread=audit]")
    await expect(audit).to_contain_text("2 tasks")
    await expect(audit.locator("[data-task]")).to_have_count(2)
    done = audit.locator(f"[data-task='{one.task_id}']")
    await expect(done.locator("[data-result]")).to_contain_text("**412** rows")
    await done.get_by_role("button", name="history (").click()
    final = await alice.task_status(one.task_id)
    assert [e.state for e in final.history][-1] == "completed"
    await expect(done.locator("[data-history] li")).to_have_count(len(final.history))
    failed = audit.locator(f"[data-task='{two.task_id}']")
    await expect(failed.locator("[data-result]")).to_contain_text("failed: no access")
    await failed.get_by_role("button", name="show all").click()
    await expect(failed).to_contain_text("x" * 600)
    await expect(page.locator("[data-task-thread=misc] [data-task]")).to_have_count(1)

    board = page.locator(f"[data-offer='{offer.offer_id}']")
    await expect(board.locator("[data-claim]")).to_have_count(2)
    await expect(board.locator("[data-claim=bob]")).to_contain_text("I know this one")
    await page.screenshot(path=shot("work-tasks-board"))


async def test_a_native_agents_run_state_shows_in_the_roster(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    worker = await connect("worker")
    page = await open_console(live_hub.operator.token)
    doing = page.locator("[data-peer=worker] [data-doing]")
    await worker.set_status("running tool write_file")
    await expect(doing).to_have_text("running tool write_file")
    await worker.set_status("interrupted")
    await expect(doing).to_have_text("interrupted")
    await expect(doing).to_have_class("badge warn")
    await worker.set_status("composing a reply")
    await expect(doing).to_have_text("composing")


async def test_the_activity_view_shows_every_tool_call_live(
    open_console: PageFactory, live_hub: Hub, url: str, connect: ClientFactory
) -> None:
    await connect("carol")
    page = await open_console(live_hub.operator.token)
    await page.get_by_role("tab", name="Activity").click()
    async with Client(f"{url}/mcp", mode="legacy") as alice:
        await call(alice, "join", name="alice")
        await call(alice, "say", to="carol", content="hi")
        await fail(alice, "say", to="nobody-here", content="hi?")
    rows = page.locator("table.activity tbody tr")
    await expect(rows).to_have_count(3)
    await expect(rows.nth(0)).to_contain_text("not_found")
    await expect(rows.nth(0)).to_contain_text("nobody-here")
    await expect(rows.nth(2)).to_contain_text("join")
    await expect(rows.nth(2).locator("[data-witness=observed]")).to_be_visible()
    invented = await connect("mallory")
    await invented.report_tool_call("shell", ok=True, error=None, detail=None, ms=1.0)
    await expect(rows).to_have_count(4)
    await expect(rows.nth(0).locator("[data-witness=self-reported]")).to_have_text("self-reported")
    await page.get_by_label("failed only").check()
    await expect(rows).to_have_count(1)
    await page.get_by_label("failed only").uncheck()
    await page.get_by_label("find calls").fill("join")
    await expect(rows).to_have_count(1)
    await page.screenshot(path=shot("activity"))
    # A reload reads what happened before it from the hub.
    await page.reload()
    await page.get_by_role("tab", name="Activity").click()
    await expect(rows).to_have_count(4)


async def test_file_reservations_show_and_follow_their_holders_live(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory, operator: OperatorClient
) -> None:
    alice, bob = await connect("alice"), await connect("bob")
    held = (await alice.reserve(["src/parser/"], reason="rewriting the lexer")).reservations[0]
    page = await open_console(live_hub.operator.token)
    await page.get_by_role("tab", name="Tasks & board").click()
    card = page.locator(f"[data-reservation='{held.reservation_id}']")
    await expect(card).to_contain_text("alice")
    await expect(card).to_contain_text("src/parser/")
    await expect(card).to_contain_text("exclusive")
    await expect(card).to_contain_text("rewriting the lexer")
    # Live: a new one appears, a release and a kick take theirs away.
    shared = (await bob.reserve(["docs/"], exclusive=False)).reservations[0]
    other = page.locator(f"[data-reservation='{shared.reservation_id}']")
    await expect(other).to_contain_text("shared")
    await page.screenshot(path=shot("work-reservations"))
    await alice.release(all=True)
    await expect(card).to_have_count(0)
    await operator.kick("bob")  # a kicked holder's reservations are void at once
    await expect(other).to_have_count(0)
    await expect(page.get_by_text("Nobody holds a file.")).to_be_visible()
    # The operator's switch: the room refuses conflicting reservations from then on.
    switch = page.get_by_label("Enforce: refuse a reservation")
    await expect(switch).not_to_be_checked()
    # A click asks the hub; the box follows what the hub says, on its event (so not at once:
    # Playwright's check() would want the state changed by the click itself). The box shows
    # checked as soon as it is clicked, so the hub's word is what is waited for.
    await switch.click()
    await expect(page.get_by_text("file reservations: enforce")).to_be_visible()
    await expect(switch).to_be_checked()
    assert (await alice.reservations()).policy == "enforce"
