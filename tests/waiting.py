"""How tests wait: on a condition, never for a window (issue 29).

Every limit here is an upper bound on waiting for something another party makes true (a process
starts, a peer parks, a message arrives); none is a duration the test needs to pass. They are
multiplied by `CAUCUS_TEST_TIMEOUT_SCALE` (CI sets it generously: a cold `caucus hub` on a
loaded 2-core machine takes many times its quiet start-up), and each wait gives up at once when
a helper server it may depend on has died (`tests.processes.check`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from tests.processes import HelperDied, check

T = TypeVar("T")
POLL = 0.01  # a condition is looked at this often
WATCH = 0.1  # helpers are looked at this often while a block runs


def scale() -> float:
    raw = os.environ.get("CAUCUS_TEST_TIMEOUT_SCALE", "1")
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"CAUCUS_TEST_TIMEOUT_SCALE must be a number, not {raw!r}") from None
    return max(value, 1.0)


def scaled(seconds: float) -> float:
    """A limit on waiting, stretched for a slow or loaded machine."""
    return seconds * scale()


async def eventually(
    condition: Callable[[], Awaitable[bool] | bool], *, within: float = 10.0, what: str = ""
) -> None:
    """Wait, bounded, for a condition another party makes true (a peer starts listening, the
    reaper runs). Fails the test with `what` if it does not happen in `within` seconds
    (scaled)."""
    loop = asyncio.get_running_loop()
    limit = scaled(within)
    deadline = loop.time() + limit
    while True:
        outcome = condition()
        if not isinstance(outcome, bool):
            outcome = await outcome
        if outcome:
            return
        check()
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {limit:.0f} s waiting for {what or condition}")
        await asyncio.sleep(POLL)


def eventually_sync(condition: Callable[[], bool], *, within: float = 10.0, what: str = "") -> None:
    """`eventually` for a test without an event loop."""
    limit = scaled(within)
    deadline = time.monotonic() + limit
    while not condition():
        check()
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {limit:.0f} s waiting for {what or condition}")
        time.sleep(POLL)


# The death a watcher cancelled a task for, to be raised in place of its CancelledError by the
# innermost wait or watched block the cancellation passes through.
_DIED: dict[asyncio.Task[object], HelperDied] = {}


def _taken_back(task: asyncio.Task[object]) -> HelperDied | None:
    died = _DIED.pop(task, None)
    if died is not None and task.cancelling():
        task.uncancel()
    return died


def _current() -> asyncio.Task[object]:
    task = asyncio.current_task()
    assert task is not None
    return task


async def within(awaitable: Awaitable[T], seconds: float, what: str) -> T:
    """Await `awaitable` for at most `seconds` (scaled); a helper's death ends the wait at once."""
    current = _current()
    task = asyncio.ensure_future(awaitable)
    loop = asyncio.get_running_loop()
    limit = scaled(seconds)
    deadline = loop.time() + limit
    try:
        while True:
            await asyncio.wait({task}, timeout=min(WATCH, max(deadline - loop.time(), 0)))
            if task.done():
                return task.result()
            check()
            if loop.time() >= deadline:
                raise AssertionError(f"timed out after {limit:.0f} s waiting for {what}")
    except asyncio.CancelledError:
        if (died := _taken_back(current)) is None:
            raise
        raise died from None
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@contextlib.asynccontextmanager
async def watching() -> AsyncIterator[None]:
    """Cancel the block when a helper dies unasked and raise HelperDied in its place: wraps
    every async test (tests/process_plugin.py), so no wait inside one outlasts a dead server."""
    current = _current()

    async def watch() -> None:
        while True:
            await asyncio.sleep(WATCH)
            try:
                check()
            except HelperDied as exc:
                _DIED[current] = exc
                current.cancel()
                return

    watcher = asyncio.create_task(watch())
    try:
        yield
    except asyncio.CancelledError:
        if (died := _taken_back(current)) is None:
            raise
        raise died from None
    finally:
        watcher.cancel()
    # The block ended on its own just as the helper went.
    if (died := _taken_back(current)) is not None:
        raise died
