"""The approval card over the whole adversarial corpus (issue 48 item 3), at 1280x800 and at
390x844: for every call, its argument's box lies inside every clipping ancestor (geometry,
not Playwright's visibility), shows the hub's escapes, says when characters are hidden, and
says how much more there is when the value is longer than its box (approving then waits)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page, expect

from caucus.client import HubClient
from caucus.domain.approvals import ToolCallSubject, approve_option
from caucus.domain.legibility import escaped
from caucus.testing import make_hub, serve
from tests.browser.conftest import PageFactory, shot
from tests.browser.test_approval_geometry import shown_whole

CORPUS: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[1] / "corpus" / "unicode.json").read_text()
)
HIDDEN = {"bidi", "invisible", "control"}


async def _ask_all(url: str) -> dict[str, dict[str, Any]]:
    """One form per corpus string, each the call `shell {"command": <string>}`."""
    forms: dict[str, dict[str, Any]] = {}
    async with HubClient(url) as agent:
        await agent.register("prober")
        await agent.join_channel("#approve-prober")
        for case in CORPUS:
            subject = ToolCallSubject("shell", {"command": case["value"]}, {}, {})
            field = {
                "key": "decision",
                "label": "Run shell exactly as shown?",
                "type": "radio",
                "options": [approve_option(subject.digest()), "deny"],
                "required": True,
            }
            form = await agent.ask_operator(
                case["name"][:200], [field], to="#approve-prober", call=subject.record()
            )
            forms[form.form_id] = case
    return forms


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
async def test_every_corpus_call_reads_whole_or_says_why_not(
    open_console: PageFactory, tmp_path: Path, width: int, height: int
) -> None:
    async with make_hub(tmp_path / "hub", pending_forms_max=100) as hub, serve(hub) as url:
        forms = await _ask_all(url)
        page: Page = await open_console(hub.operator.token, width=width, height=height, base=url)
        if width < 600:
            await page.locator("[data-sheet-button=panels]").click()
        await page.locator("[data-tab=forms]").click()
        await expect(page.locator("[data-form]")).to_have_count(len(forms))
        for form_id, case in forms.items():
            card = page.locator(f"[data-form='{form_id}']")
            value = card.locator("[data-arg=command] .call-value")
            await expect(value).to_have_text(escaped(case["value"]))
            assert await shown_whole(value) == "inside", (case["name"], width)
            if HIDDEN & set(case["kinds"]):
                await expect(card.locator("[data-hidden]")).to_be_visible()
            else:
                await expect(card.locator("[data-hidden]")).to_have_count(0)
            overflows = await value.evaluate("el => el.scrollHeight > el.clientHeight + 1")
            if overflows:  # longer than its box: it says so
                await expect(card.locator("[data-arg=command] [data-more]")).to_be_visible()
        await page.screenshot(path=shot(f"approval-corpus-{width}"), full_page=True)
