"""An approval the operator can read: the whole tool call on the form's card and in the wizard,
however long the harmless arguments before the dangerous one (issue 31)."""

from __future__ import annotations

from playwright.async_api import expect

from caucus.domain.approvals import ToolCallSubject, approve_option
from caucus.mcp.renderings import forms_text
from caucus.services.hub import Hub
from tests.browser.conftest import PageFactory, shot
from tests.conftest import ClientFactory, eventually

DANGER = "rm -rf ~/ --no-preserve-root"


async def test_a_dangerous_argument_after_10_kb_of_harmless_ones_is_shown_whole(
    open_console: PageFactory, live_hub: Hub, connect: ClientFactory
) -> None:
    page = await open_console(live_hub.operator.token)
    agent = await connect("cleaner")
    await agent.join_channel("#approve-cleaner")
    # The model's key order puts 10 KB of routine words first; the command comes last.
    arguments = {"note": "routine cleanup of temporary files. " * 300, "command": DANGER}
    assert len(arguments["note"]) > 10_000
    subject = ToolCallSubject("shell", arguments, {}, {})
    field = {
        "key": "decision",
        "label": "Run shell exactly as shown?",
        "type": "radio",
        "options": [approve_option(subject.digest()), "deny"],
        "required": True,
    }
    form = await agent.ask_operator(
        "cleaner asks to run shell", [field], to="#approve-cleaner", call=subject.record()
    )
    assert form.call is not None
    assert DANGER in form.call.canonical  # on the wire: the whole call
    assert DANGER in forms_text([form], me=None)  # what a model listing the forms reads

    card = page.locator(f"[data-form='{form.form_id}']")
    await expect(card.locator("[data-call]")).to_be_visible()
    command = card.locator("[data-arg=command] .call-value")
    await expect(command).to_have_text(DANGER)
    await command.scroll_into_view_if_needed()
    await expect(command).to_be_in_viewport()
    note = card.locator("[data-arg=note] .call-value")
    assert await note.evaluate("el => el.scrollHeight > el.clientHeight")  # scrolls, not cut
    await expect(card.locator("[data-arg=note] [data-more]")).to_contain_text("more lines")
    assert await note.evaluate("el => el.textContent.length") == len(arguments["note"])
    await expect(card).to_contain_text("no annotations: it may change things")
    await page.screenshot(path=shot("approval-card"), full_page=True)

    await card.get_by_role("button", name="Answer").click()
    wizard = page.get_by_role("dialog")
    await expect(wizard.locator("[data-arg=command] .call-value")).to_have_text(DANGER)
    short = approve_option(subject.digest())[: len("approve sha256:") + 12] + "…"
    await wizard.get_by_label(short).check()
    await wizard.get_by_role("button", name="Review").click()
    await page.screenshot(path=shot("approval-wizard"), full_page=True)
    # 10 KB of note is more than its box: approving waits until it has been shown whole.
    send = wizard.get_by_role("button", name="Send answer")
    await expect(send).to_be_disabled()
    await expect(wizard.locator("[data-unseen]")).to_contain_text("note")
    await wizard.locator("[data-arg=note] [data-more]").click()
    await send.click()
    await expect(page.locator("[data-form]")).to_have_count(0)

    # The ledger records the text the digest covers (just after the form settles).
    async def recorded() -> bool:
        return len(await live_hub.decisions.recent(10, None)) == 1

    await eventually(recorded, what="the answer on the ledger")
    (record,) = await live_hub.decisions.recent(10, None)
    call = record.record["caucus"]["call"]
    assert call == {"canonical": subject.canonical(), "sha256": subject.digest()}
    assert DANGER in call["canonical"]
