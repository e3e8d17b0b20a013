"""The task service's maintenance round, in one unit of work: fail back to the sender the tasks
whose worker left, was kicked or was forgotten; requeue those whose worker went silent but is
still here; keep, marked, those whose worker is away (reaped) within its grace; expire
unclaimed and parked ones past their time to live."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from caucus.domain.messages import AppendOutcome, MessageKind, NewMessage, SystemSender
from caucus.domain.tasks import Task, TaskState
from caucus.storage.repos import Repos

AWAY = "the worker is away: the task waits for it until its grace ends"

# What the sweep sends about a task: the item of `kind` to `to` with `content`.
Item = Callable[..., NewMessage]
Reaction = Callable[[Repos, Task, TaskState, float], list[AppendOutcome] | None]


class TaskSweep:
    """One round at `now`: a claim unmoved since `silent_before` has gone silent."""

    def __init__(
        self, item: Item, reactions: Sequence[Reaction], now: float, silent_before: float
    ) -> None:
        self._item = item
        self._reactions = reactions
        self._now = now
        self._silent_before = silent_before
        self._told: list[AppendOutcome | None] = []

    def __call__(self, r: Repos) -> list[AppendOutcome]:
        # Nobody will work a task whose worker left, was kicked or was forgotten: it goes back
        # to its sender, who can hand it to someone who is here.
        for task in r.tasks.of_ended_workers():
            self._fail_back(r, task)
        for stored in r.tasks.silent(self._silent_before):
            if r.peers.active(stored.worker_id):
                self._requeue(r, stored.task)
            else:
                # Away (reaped): the claim stays theirs until they come back or their grace
                # ends (then the task fails back, above); noted once, so the sender and the
                # operator see why it waits.
                r.tasks.note_once(stored.task.id, self._now, stored.task.state, AWAY)
        for task in r.tasks.stale(self._now):
            self._expire(r, task)
        return [o for o in self._told if o is not None]

    def _react(self, r: Repos, task: Task, state: TaskState) -> None:
        for reaction in self._reactions:
            self._told.extend(reaction(r, task, state, self._now) or [])

    def _fail_back(self, r: Repos, task: Task) -> None:
        error = f"failed: the worker {task.worker} is gone"
        now = self._now
        if not r.tasks.move(task.id, task.state, TaskState.FAILED, now, error=error):
            return
        r.tasks.event(task.id, now, TaskState.FAILED, SystemSender.HUB, "the worker is gone")
        self._react(r, task, TaskState.FAILED)
        task.state, task.error = TaskState.FAILED, error
        failure = self._item(task, MessageKind.FAILURE, sender=None, to=task.sender, content=error)
        self._told.append(r.inbox.to_peer(failure, task.sender))

    def _requeue(self, r: Repos, task: Task) -> None:
        if not r.tasks.requeue(task.id, self._now):
            return
        r.tasks.event(
            task.id, self._now, TaskState.PENDING, SystemSender.HUB, "the worker went silent"
        )
        task.state = TaskState.PENDING
        again = self._item(
            task, MessageKind.TASK, sender=None, to=task.worker, content=task.payload, requeued=True
        )
        self._told.append(r.inbox.to_peer(again, task.worker))

    def _expire(self, r: Repos, task: Task) -> None:
        if not r.tasks.move(task.id, task.state, TaskState.EXPIRED, self._now):
            return
        r.tasks.event(
            task.id, self._now, TaskState.EXPIRED, SystemSender.HUB, "its time to live ran out"
        )
        self._react(r, task, TaskState.EXPIRED)
        task.state = TaskState.EXPIRED
        said = f"task {task.id} expired before it was done"
        failure = self._item(task, MessageKind.FAILURE, sender=None, to=task.sender, content=said)
        self._told.append(r.inbox.to_peer(failure, task.sender))
