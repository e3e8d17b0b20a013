"""Structured concurrency for the runtime's reactors: a set of tasks taken as they complete.

A reactor (the orchestrator, an agent's run) waits on several things at once: input lines,
notices, timers, a backend's stream. `WorkSet` holds one task per thing; `next()` hands back
whichever finished first, with the key it was added under, and the caller may add tasks between
calls. Closing the set cancels every task still in it and waits for them, so a reactor that
returns or fails leaves no task behind. `pump()` turns an async iterator into a chain of such
tasks with exactly one pull outstanding; its normal end comes back as the `STOP` sentinel, a
value, never a task error.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Coroutine
from types import TracebackType
from typing import Any, Final, Generic, Self, TypeVar

K = TypeVar("K")
T = TypeVar("T")


class _Stop:
    __slots__ = ()

    def __repr__(self) -> str:
        return "STOP"


STOP: Final = _Stop()  # an iterator pumped into a WorkSet has ended


class Done(Generic[K]):
    """A finished task: its key, and its value or the exception it raised."""

    __slots__ = ("_task", "key")

    def __init__(self, key: K, task: asyncio.Task[Any]) -> None:
        self.key = key
        self._task = task

    @property
    def failed(self) -> bool:
        return self._task.exception() is not None

    def result(self) -> Any:
        """The value, or raises what the task raised."""
        return self._task.result()


class WorkSet(Generic[K]):
    """Tasks keyed by what they wait for, taken first-completed, cancelled together on close."""

    def __init__(self) -> None:
        self._tasks: dict[asyncio.Task[Any], K] = {}
        self._done: list[Done[K]] = []
        self._cancelled: set[asyncio.Task[Any]] = set()  # awaited on close
        self._closed = False

    def __len__(self) -> int:
        return len(self._tasks) + len(self._done)

    def add(self, key: K, work: Coroutine[Any, Any, Any] | Awaitable[Any]) -> None:
        if self._closed:
            if asyncio.iscoroutine(work):
                work.close()  # never started: nothing to cancel, and no "never awaited" warning
            raise RuntimeError("the work set is closed")
        task = asyncio.ensure_future(work)
        self._tasks[task] = key

    def ready(self) -> bool:
        """Whether a task has finished and not been taken yet."""
        return bool(self._done) or any(t.done() for t in self._tasks)

    def pump(self, key: K, stream: AsyncIterator[Any]) -> None:
        """Pull the next item of `stream` as a task under `key`; call again after taking it to
        pull the one after (one pull outstanding). The end of the stream is `STOP`."""
        self.add(key, _pull(stream))

    async def next(self) -> Done[K]:
        """The next finished task (in completion order). Raises LookupError when empty."""
        while not self._done:
            if not self._tasks:
                raise LookupError("the work set is empty")
            finished, _ = await asyncio.wait(self._tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in sorted(finished, key=lambda t: id(t)):
                self._done.append(Done(self._tasks.pop(task), task))
        return self._done.pop(0)

    def cancel(self, key: K) -> None:
        """Cancel (and forget) every task added under `key`."""
        for task, k in list(self._tasks.items()):
            if k == key:
                task.cancel()
                del self._tasks[task]
                self._cancelled.add(task)
        self._done = [d for d in self._done if d.key != key]

    async def close(self) -> None:
        """Cancel every task still here and wait until each has ended."""
        self._closed = True
        tasks = [*self._tasks, *self._cancelled]
        self._tasks.clear()
        self._cancelled.clear()
        self._done.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


async def _pull(stream: AsyncIterator[T]) -> T | _Stop:
    try:
        return await anext(stream)
    except StopAsyncIteration:
        return STOP
