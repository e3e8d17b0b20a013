"""The console under load: 200 peers and 10,000 messages, beside an empty room, in one run.

For each room it measures, in headless Chromium against a real hub on loopback:
- render: from opening the signed-in page until the roster and transcript are shown;
- history: loading the whole transcript into the page (every "Load older" until the start);
- 100 live events: from the first of 100 sends until the 100th is on screen, with a peer
  joining every tenth (shown inline) and a tool call every fifth (the activity view);
- and how long the page's main thread was busy applying them (tasks over 50 ms: their sum and
  the longest).
The empty room is the baseline; the ratios say what the load costs.
Run: `.venv/bin/python benchmarks/console.py` (needs Chromium: `./dev test` installs it).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.async_api import Page, async_playwright

from caucus.domain.activity import Via
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--disable-gpu", "--disable-background-networking", "--disable-component-update"]
LONG_TASKS = """() => {
  window.__busy = 0;
  window.__longest = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      window.__busy += entry.duration;
      window.__longest = Math.max(window.__longest, entry.duration);
    }
  }).observe({ type: "longtask", buffered: false });
}"""


async def fill(hub: Hub, peers: int, messages: int) -> None:
    joined = [await hub.principals.register(name=f"agent-{n:03d}") for n in range(peers)]
    sent = 0
    while sent < messages:
        batch = min(250, messages - sent)
        await asyncio.gather(
            *[
                hub.delivery.send(
                    joined[(sent + i) % len(joined)].peer,
                    to=f"agent-{(sent + i + 1) % len(joined):03d}",
                    content=f"message {sent + i}: status of the work, with a realistic length",
                )
                for i in range(batch)
            ]
        )
        sent += batch
        print(f"  {sent:,}/{messages:,} messages", end="\r", flush=True)
    print()


async def measure(page: Page, url: str, hub: Hub, speaker: Any, listener: str) -> dict[str, float]:
    started = time.perf_counter()
    await page.goto(f"{url}/#token={hub.operator.token}")
    await page.wait_for_selector("[data-feed=live]")
    await page.wait_for_function("() => document.querySelectorAll('.peer').length > 0")
    render = time.perf_counter() - started

    started = time.perf_counter()
    while await page.locator(".older button").count():
        first = await page.locator(".messages").get_attribute("data-first")
        await page.locator(".older button").click()
        await page.wait_for_function(
            "(first) => document.querySelector('.messages').dataset.first !== first"
            " || !document.querySelector('.older button')",
            arg=first,
        )
    history = time.perf_counter() - started
    held = int(await page.locator(".messages").get_attribute("data-total") or 0)
    shown = await page.locator(".messages .msg").count()
    jump = page.get_by_role("button", name="Jump to the newest")
    if await jump.count():
        await jump.click()

    await page.evaluate(LONG_TASKS)
    started = time.perf_counter()
    for n in range(100):
        await hub.delivery.send(speaker, to=listener, content=f"live event {n}")
        if n % 10 == 0:
            await hub.principals.register(name=f"newcomer-{n:02d}")
        if n % 5 == 0:
            hub.activity.record(
                listener, "say", ok=n % 15 != 0, error=None, detail=None, ms=1.0, via=Via.MCP
            )
    await page.wait_for_function(
        "() => [...document.querySelectorAll('.messages .msg .content')]"
        ".some((e) => e.textContent === 'live event 99')"
    )
    live = time.perf_counter() - started
    busy = await page.evaluate("() => window.__busy") / 1000
    longest = await page.evaluate("() => window.__longest")
    return {
        "render": render,
        "history": history,
        "held": held,
        "rows": shown,
        "live": live,
        "busy": busy,
        "longest": longest,
    }


async def room(directory: Path, peers: int, messages: int) -> dict[str, float]:
    async with make_hub(directory, send_rate_capacity=10**9, send_rate_refill=10**9) as hub:
        await fill(hub, peers, messages)
        speaker = await hub.principals.register(name="speaker")
        await hub.principals.register(name="listener")
        async with serve(hub) as url, async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 900})
                return await measure(page, url, hub, speaker.peer, "listener")
            finally:
                await browser.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print("baseline: an empty room")
        empty = await room(Path(tmp) / "empty", 0, 0)
        print(f"loaded: {args.peers} peers, {args.messages:,} messages")
        loaded = await room(Path(tmp) / "loaded", args.peers, args.messages)
    print(f"{'':28}{'empty':>10}{'loaded':>10}{'ratio':>8}")
    for key, label in (
        ("render", "render (s)"),
        ("history", "load all history (s)"),
        ("live", "100 live events shown (s)"),
        ("busy", "main thread busy (s)"),
    ):
        ratio = loaded[key] / empty[key] if empty[key] > 0.001 else float("nan")
        print(f"{label:28}{empty[key]:10.3f}{loaded[key]:10.3f}{ratio:8.2f}")
    print(f"{'messages held by the page':28}{empty['held']:10.0f}{loaded['held']:10.0f}")
    print(f"{'transcript rows in the page':28}{empty['rows']:10.0f}{loaded['rows']:10.0f}")
    print(f"{'longest main-thread task (ms)':28}{empty['longest']:10.0f}{loaded['longest']:10.0f}")
    print(f"per live event, loaded: {loaded['live'] * 10:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
