"""The console draws what waits on what (issue 34): a thread's tasks and the tasks they wait
on in one card, as a graph whose edges run from a task to those waiting on it, kept live as
tasks are held back, released and done."""

from __future__ import annotations

from playwright.async_api import expect

from caucus.services.hub import Hub
from tests.browser.conftest import PageFactory, shot
from tests.conftest import ClientFactory


async def test_a_pipeline_of_tasks_shows_as_a_graph_that_follows_its_progress(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    lead, alice, _ = [await connect(n) for n in ("lead", "alice", "bob")]
    page = await open_console(live_hub.operator.token)
    await page.get_by_role("tab", name="Tasks & board").click()
    spec = await lead.send_task("alice", "write the spec", subject="spec")
    tests = await lead.send_task("alice", "write the tests", subject="tests")
    build = await lead.send_task(
        "bob", "build it", subject="build", blocked_by=[spec.task_id, tests.task_id], priority=0
    )
    node = page.locator(f"[data-graph-task='{build.task_id}']")
    await expect(node).to_have_attribute("data-graph-state", "blocked")  # no item told of it
    for dep in (spec, tests):
        await expect(page.locator(f"[data-edge='{dep.task_id}>{build.task_id}']")).to_have_count(1)
    card = page.locator(f"[data-task='{build.task_id}']")
    await expect(card.locator("[data-blocked]")).to_be_visible()
    await expect(card.locator("[data-waits]")).to_have_text("waits on “spec”, “tests”")
    await expect(card).to_contain_text("P0")
    await page.screenshot(path=shot("task-graph-blocked"))
    await alice.reply_task(spec.task_id, "spec.md")
    await alice.reply_task(tests.task_id, "tests.py")
    await expect(node).to_have_attribute("data-graph-state", "pending")
    await expect(page.locator(f"[data-graph-task='{spec.task_id}']")).to_have_attribute(
        "data-graph-state", "completed"
    )
    await expect(card.locator("[data-blocked]")).to_have_count(0)
    await page.screenshot(path=shot("task-graph-released"))


async def test_the_graph_fits_a_narrow_panel_with_the_blocked_task_in_view(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    """Issue 48: at 1280 wide the panel is ~350 px, the graph across three columns ~520: it
    lays out top to bottom instead, every node inside the panel, titles whole on focus."""
    lead, _, _ = [await connect(n) for n in ("lead", "alice", "bob")]
    page = await open_console(live_hub.operator.token, width=1280, height=800)
    await page.get_by_role("tab", name="Tasks & board").click()
    spec = await lead.send_task(
        "alice", "write the specification document", subject="specification of the export format"
    )
    code = await lead.send_task("alice", "write it", subject="code", blocked_by=[spec.task_id])
    ship = await lead.send_task(
        "bob", "ship it", subject="ship the release", blocked_by=[code.task_id]
    )
    box = page.locator(".task-graph-box")
    await expect(box).to_have_attribute("data-graph-layout", "down")
    panel = await box.bounding_box()
    assert panel is not None
    for task in (spec, code, ship):
        node = await page.locator(f"[data-graph-task='{task.task_id}'] rect").bounding_box()
        assert node is not None
        assert panel["x"] - 1 <= node["x"]
        assert node["x"] + node["width"] <= panel["x"] + panel["width"] + 1
    blocked = page.locator(f"[data-graph-task='{ship.task_id}']")
    await expect(blocked).to_have_attribute(
        "aria-label", f"{ship.task_id}: ship the release (blocked, bob)"
    )
    await page.screenshot(path=shot("task-graph-narrow"))
