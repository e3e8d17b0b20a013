"""WorkSet: first completed first, tasks added between takes, one pull outstanding per
stream, the end of a stream as a value, and nothing left running after close."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from caucus.runtime.workset import STOP, WorkSet


async def now(value: str) -> str:
    return value


async def once(gate: asyncio.Event, value: str) -> str:
    """`value`, once the test opens `gate` (never, if it does not)."""
    await gate.wait()
    return value


async def test_tasks_are_taken_in_the_order_they_finish_and_may_be_added_between_takes() -> None:
    async with WorkSet[str]() as work:
        slow = asyncio.Event()
        work.add("slow", once(slow, "slow"))
        work.add("fast", now("fast"))
        first = await work.next()
        assert (first.key, first.result()) == ("fast", "fast")
        work.add("again", now("again"))
        assert (await work.next()).key == "again"
        slow.set()
        assert (await work.next()).key == "slow"
        with pytest.raises(LookupError):
            await work.next()


async def test_a_failed_task_comes_back_as_a_failure_not_a_crash() -> None:
    async def boom() -> None:
        raise ValueError("no")

    async with WorkSet[str]() as work:
        work.add("boom", boom())
        done = await work.next()
        assert done.failed
        with pytest.raises(ValueError, match="no"):
            done.result()


async def test_closing_cancels_every_task_and_leaves_no_orphans() -> None:
    before = asyncio.all_tasks()
    started = asyncio.Event()
    cancelled: list[str] = []

    async def forever(name: str) -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(name)
            raise

    work = WorkSet[str]()
    for name in ("a", "b", "c"):
        work.add(name, forever(name))
    work.add("d", once(asyncio.Event(), "d"))
    work.cancel("d")  # cancelled alone: still awaited on close
    await started.wait()
    await work.close()
    assert sorted(cancelled) == ["a", "b", "c"]
    assert asyncio.all_tasks() == before
    with pytest.raises(RuntimeError, match="closed"):
        work.add("late", now("late"))


async def test_a_pumped_stream_has_one_pull_outstanding_and_ends_with_the_stop_value() -> None:
    pulls = 0

    async def numbers() -> AsyncIterator[int]:
        nonlocal pulls
        for n in range(3):
            pulls += 1
            yield n

    stream = numbers()
    seen: list[object] = []
    async with WorkSet[str]() as work:
        work.pump("n", stream)
        while True:
            value = (await work.next()).result()
            seen.append(value)
            assert pulls == len(seen) or value is STOP  # never more than one ahead
            if value is STOP:
                break
            work.pump("n", stream)
    assert seen == [0, 1, 2, STOP]
