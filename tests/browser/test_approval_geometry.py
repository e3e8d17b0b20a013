"""Every argument of a call is on the approval card, whole, where the operator can see it
(issue 48 item 1): checked by geometry against every clipping ancestor, not by Playwright's
visibility (which ignores clipping by an ancestor), at 1280x800 and at 390x844. An argument
past its box says how much more there is, and approving waits until it was shown whole."""

from __future__ import annotations

import pytest
from playwright.async_api import Locator, Page, expect

from caucus.domain.approvals import ToolCallSubject, approve_option
from caucus.services.hub import Hub
from tests.browser.conftest import PageFactory, shot
from tests.conftest import ClientFactory

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGxk deploy@ci"
# The review's call: the dangerous argument sorts last, under two harmless ones.
CALL = {"content": KEY, "mode": "append", "path": "/home/op/.ssh/authorized_keys"}

# Whether the element's box lies inside every ancestor that clips it for good: one whose
# overflow is hidden or clipped, or clamped to some lines (an ancestor the operator can scroll
# is no clip). Nothing is scrolled first: a script can scroll a hidden overflow, a person not.
INSIDE = """el => {
  const box = el.getBoundingClientRect();
  if (box.width === 0 || box.height === 0) return "empty";
  for (let a = el.parentElement; a; a = a.parentElement) {
    const s = getComputedStyle(a);
    const clips = [s.overflowX, s.overflowY].some((o) => o === "hidden" || o === "clip")
      || /\\d/.test(s.webkitLineClamp || "");
    if (!clips) continue;
    const c = a.getBoundingClientRect();
    if (box.top < c.top - 1 || box.bottom > c.bottom + 1
        || box.left < c.left - 1 || box.right > c.right + 1) {
      return `clipped by ${a.tagName.toLowerCase()}.${a.className}`;
    }
  }
  return "inside";
}"""


async def shown_whole(value: Locator) -> str:
    return str(await value.evaluate(INSIDE))


async def ask(agent_name: str, connect: ClientFactory) -> tuple[str, ToolCallSubject]:
    agent = await connect(agent_name)
    channel = f"#approve-{agent_name}"
    await agent.join_channel(channel)
    subject = ToolCallSubject("write_file", CALL, {}, {"destructiveHint": True})
    field = {
        "key": "decision",
        "label": "Run write_file exactly as shown?",
        "type": "radio",
        "options": [approve_option(subject.digest()), "deny"],
        "required": True,
    }
    form = await agent.ask_operator(
        f"{agent_name} asks to run write_file", [field], to=channel, call=subject.record()
    )
    return form.form_id, subject


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
async def test_every_argument_is_inside_the_card_at_both_sizes(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory, width: int, height: int
) -> None:
    form_id, subject = await ask("writer", connect)
    page: Page = await open_console(live_hub.operator.token, width=width, height=height)
    if width < 600:  # at phone width the console is one sheet at a time
        await page.locator("[data-sheet-button=panels]").click()
    await page.locator("[data-tab=forms]").click()
    card = page.locator(f"[data-form='{form_id}']")
    await expect(card.locator("[data-call]")).to_be_attached()
    for key, value in CALL.items():
        shown = card.locator(f"[data-arg={key}] .call-value")
        await expect(shown).to_have_text(value)
        assert await shown_whole(shown) == "inside", f"{key} at {width}x{height}"
    await page.screenshot(path=shot(f"approval-geometry-{width}"), full_page=True)
    digest = card.locator(".call-canonical summary code")
    await expect(digest).to_have_text(subject.digest()[:12] + "…")


TROJAN = "echo '\u202e\u2066'\u2069\u2066; rm -rf ~; echo '\u2069\u202c'"


async def test_hidden_characters_are_shown_as_escapes_with_a_badge(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    agent = await connect("shelly")
    await agent.join_channel("#approve-shelly")
    subject = ToolCallSubject(
        "shell", {"command": TROJAN, "url": "https://g\u0456thub.com"}, {}, {}
    )
    field = {
        "key": "decision",
        "label": "Run shell exactly as shown?",
        "type": "radio",
        "options": [approve_option(subject.digest()), "deny"],
        "required": True,
    }
    form = await agent.ask_operator(
        "shelly asks to run shell", [field], to="#approve-shelly", call=subject.record()
    )
    assert form.call is not None
    assert form.call.hidden
    page = await open_console(live_hub.operator.token, width=1280, height=800)
    await page.locator("[data-tab=forms]").click()
    card = page.locator(f"[data-form='{form.form_id}']")
    await expect(card.locator("[data-hidden]")).to_contain_text("hidden characters")
    command = card.locator("[data-arg=command] .call-value")
    await expect(command).to_have_text(
        "echo '⟨U+202E⟩⟨U+2066⟩'⟨U+2069⟩⟨U+2066⟩; rm -rf ~; echo '⟨U+2069⟩⟨U+202C⟩'"
    )
    assert await shown_whole(command) == "inside"
    await expect(card.locator("[data-finding=lookalike]")).to_contain_text("U+0456")
    await page.screenshot(path=shot("approval-hidden-characters"), full_page=True)
