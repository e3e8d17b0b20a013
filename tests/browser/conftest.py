"""The browser tier: the console in Debian's Chromium, driven by Playwright.

`./dev test` installs Chromium (apt) and Playwright (pip). Outside CI a machine without
Chromium skips this tier; under CI=true a missing browser fails it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Literal

import pytest

CHROMIUM = os.environ.get("CAUCUS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "console"
# As the machine's own probe starts it: no background traffic on a closed network.
ARGS = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        raise RuntimeError(f"the browser tests need Chromium at {CHROMIUM}: ./dev test installs it")
    pytest.skip("no Chromium here (./dev test installs it)", allow_module_level=True)

from playwright.async_api import (  # noqa: E402
    Browser,
    BrowserContext,
    Page,
    Request,
    async_playwright,
)

from tests.waiting import eventually  # noqa: E402

PageFactory = Callable[..., Awaitable[Page]]


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def open_console(browser: Browser, url: str) -> AsyncIterator[PageFactory]:
    """A fresh tab (its own session storage) signed in with `token` through the URL fragment,
    as the link `caucus hub` prints does. Page errors fail the test."""
    contexts: list[BrowserContext] = []
    errors: list[str] = []

    async def factory(
        token: str,
        *,
        width: int = 1400,
        height: int = 900,
        base: str | None = None,
        scheme: Literal["light", "dark"] = "light",
    ) -> Page:
        context = await browser.new_context(
            viewport={"width": width, "height": height}, color_scheme=scheme
        )
        contexts.append(context)
        page = await context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        track_requests(page)
        await page.goto(f"{base or url}/#token={token}")
        await page.wait_for_selector("[data-feed=live]")
        return page

    yield factory
    for context in contexts:
        await context.close()
    assert not errors, errors


# The live feed is one request that stays open for the page's life: never "in flight" work.
FEED = "/operator/events"
IN_FLIGHT: dict[int, set[Request]] = {}


def track_requests(page: Page) -> None:
    """Count the page's requests from start to finish, so a test can wait for quiet."""
    flying: set[Request] = set()
    IN_FLIGHT[id(page)] = flying

    def started(request: Request) -> None:
        if FEED not in request.url:
            flying.add(request)

    def ended(request: Request) -> None:
        flying.discard(request)

    page.on("request", started)
    page.on("requestfinished", ended)
    page.on("requestfailed", ended)


async def settled(page: Page, *, within: float = 10) -> None:
    """Every request the page made has been answered and the page has drawn a frame after
    it: whatever those answers would show (an error toast, a dialog) is on the page now."""
    flying = IN_FLIGHT[id(page)]
    await eventually(lambda: not flying, within=within, what="the page's requests to finish")
    await page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r)))")


def shot(name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"
