"""Following a task: each new state of it as its party's wake-ups reveal it, the one wait every
door that waits for a task's outcome uses (the A2A door's blocking sends and streams, the
deliberations' live seats).

A wake-up is only a cue: the task is read again after each, and the wake-up is taken before
the read it guards, so an outcome committed between the two still wakes the follower. The
claim, every move and every outcome of a task reach its sender's wake-ups from any hub process
sharing the database (ADR 0038)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterable
from typing import TYPE_CHECKING, Any

from caucus.clock import Clock
from caucus.domain.peers import Peer
from caucus.domain.tasks import Task
from caucus.services.notifier import Notifier

if TYPE_CHECKING:
    from caucus.services.tasks import TaskService


async def follow_task(
    tasks: TaskService,
    notifier: Notifier,
    clock: Clock,
    peer: Peer,
    task_id: str,
    since: Task | None,
    until: float | None,
    ended: Iterable[asyncio.Future[Any]],
) -> AsyncGenerator[Task, None]:
    alarm = clock.alarm(until) if until is not None else None
    stops = {*ended, *([alarm] if alarm is not None else [])}
    seen = None if since is None else (since.state, since.updated_at)
    try:
        while not notifier.closing and not any(f.done() for f in stops):
            with notifier.woken(peer.id) as woken:
                task = await tasks.status(peer, task_id)
                changed = (task.state, task.updated_at) != seen
                if not changed and task.state.open:
                    await asyncio.wait({woken, *stops}, return_when=asyncio.FIRST_COMPLETED)
                    continue
            seen = (task.state, task.updated_at)
            if changed:
                yield task
            if not task.state.open:
                return
    finally:
        if alarm is not None:
            alarm.cancel()
