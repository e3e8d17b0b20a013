"""Threads read at a glance (issue 48 item 7): a reply's glimpse of what it answers is plain
words (no Markdown marks, no raw id), a thread's button names no raw id, and opening a thread
never repeats the messages already on screen (it links to their rows)."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import expect

from caucus.client import HubClient
from caucus.testing import make_hub, serve
from tests.browser.conftest import PageFactory, shot


async def test_a_thread_reads_as_words_and_opens_without_repeating(
    open_console: PageFactory, tmp_path: Path
) -> None:
    async with (
        make_hub(tmp_path / "threads") as hub,
        serve(hub) as base,
        HubClient(base) as alice,
        HubClient(base) as bob,
    ):
        await alice.register("alice")
        await bob.register("bob")
        root = await alice.send("bob", "## Deploy\n**Is** the `billing` deploy [done](http://x)?")
        page = await open_console(hub.operator.token, base=base)
        await bob.send("alice", "deploy done at 14:02", reply_to=root.message_id)
        reply = page.locator(".msg.reply")
        await expect(reply).to_have_count(1)
        glimpse = reply.locator("[data-reply-to]")
        await expect(glimpse).to_have_text(f"↳ re #{root.seq} alice: Deploy")
        button = reply.locator("[data-thread]")
        await expect(button).not_to_contain_text("m_")
        await button.click()
        await expect(button).to_contain_text(f"thread from #{root.seq}")
        opened = reply.locator(
            f"[data-thread-of='{reply_seq(await reply.get_attribute('data-seq'))}']"
        )
        await expect(opened.locator("[data-in-view]")).to_have_count(1)
        await expect(opened).not_to_contain_text("billing")  # on screen already: not repeated
        await page.screenshot(path=shot("thread-opened"), full_page=False)


def reply_seq(value: str | None) -> str:
    assert value is not None
    return value
