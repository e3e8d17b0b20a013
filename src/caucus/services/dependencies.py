"""Task dependencies (issue 34, `domain.dependencies`): checked when a task is sent or made to
wait, and settled, in the same unit of work, whenever a task that others wait on ends.

A dependent whose dependencies are all done is released: its item goes to its worker as a
new task's would, and its time to live starts. One whose dependency failed is canceled when
its poster chose `cancel` (its sender is told, and what waits on it is settled in turn).
"""

from __future__ import annotations

from collections.abc import Callable

from caucus.domain.dependencies import (
    MAX_BLOCKED_BY,
    PRIORITIES,
    OnFailure,
    cycle,
    dooms,
    met,
)
from caucus.domain.messages import AppendOutcome, MessageKind, NewMessage, SystemSender
from caucus.domain.peers import Peer
from caucus.domain.tasks import Task, TaskState
from caucus.errors import Conflict, Hint, InvalidRequest, NotFound
from caucus.storage.repos import Repos

# How a task's item is made (`TaskService._item`): the task, its kind, from and to whom (by
# name), the words.
Item = Callable[[Task, MessageKind, str, str, str], NewMessage]


def check_terms(blocked_by: list[str] | None, priority: int, on_failure: str) -> OnFailure:
    """A sender's terms, checked before anything is read."""
    if priority not in PRIORITIES:
        raise InvalidRequest("priority is 0 (most urgent) to 4", field="priority")
    try:
        policy = OnFailure(on_failure)
    except ValueError:
        raise InvalidRequest("on_failure is cancel or proceed", field="on_failure") from None
    if blocked_by is not None and len(blocked_by) > MAX_BLOCKED_BY:
        raise InvalidRequest(f"blocked_by names at most {MAX_BLOCKED_BY} tasks", field="blocked_by")
    return policy


class TaskGraph:
    def __init__(self, item: Item, ttl: float) -> None:
        self._item = item
        self._ttl = ttl
        # What else waits on a task this graph cancels (the job board's offers), settled in
        # the same unit; returns what it sends.
        self.on_ended: list[Callable[[Repos, Task, TaskState, float], list[AppendOutcome]]] = []

    @staticmethod
    def unmet(
        r: Repos, peer: Peer, task_id: str | None, blocked_by: list[str], policy: OnFailure
    ) -> list[str]:
        """Of `blocked_by`, those not done yet; refused if one is not the sender's to wait on
        (it is neither its sender nor its worker), already failed where that cancels, or would
        close a cycle."""
        unmet: list[str] = []
        for dep_id in dict.fromkeys(blocked_by):
            found = r.tasks.stored(dep_id)
            if found is None or peer.id not in (found.sender_id, found.worker_id):
                raise NotFound(
                    f"no task {dep_id!r} of yours to wait on",
                    hint=Hint.LIST_TASKS,
                    field="blocked_by",
                    task_id=dep_id,
                )
            state = found.task.state
            if dooms(state, policy):
                raise Conflict(
                    f"task {dep_id} is {state.value}: a task waiting on it would be canceled at "
                    "once (on_failure='proceed' waits on it anyway)",
                    task_id=dep_id,
                    state=state.value,
                )
            if not met(state, policy):
                unmet.append(dep_id)
        if task_id is not None:
            path = cycle(task_id, blocked_by, lambda t: [d.task_id for d in r.dependencies.of(t)])
            if path:
                raise Conflict(
                    "that would make a cycle: " + " waits on ".join(path),
                    field="blocked_by",
                    cycle=path,
                )
        return unmet

    def settle(self, r: Repos, task: Task, to_state: TaskState, now: float) -> list[AppendOutcome]:
        """What `task` moving to `to_state` does to the tasks waiting on it, and on down."""
        if not task.dependents:
            return []
        told: list[AppendOutcome | None] = []
        ended = [(task.id, to_state)]
        while ended:
            done_id, state = ended.pop()
            for waiting in r.dependencies.waiting_on(done_id):
                dependent = waiting.task
                policy = OnFailure(dependent.on_failure)
                if dooms(state, policy):
                    told.append(self._cancel(r, dependent, done_id, state, now))
                    ended.append((dependent.id, TaskState.CANCELED))
                    for also in self.on_ended:
                        told.extend(also(r, dependent, TaskState.CANCELED, now))
                    continue
                if not all(met(d.state, policy) for d in r.dependencies.of(dependent.id)):
                    continue
                told.append(self._release(r, waiting.worker_id, dependent, now))
        return [o for o in told if o is not None]

    def _release(self, r: Repos, worker_id: int, task: Task, now: float) -> AppendOutcome | None:
        if not r.dependencies.release(task.id, now, now + self._ttl):
            return None
        r.tasks.event(task.id, now, TaskState.PENDING, SystemSender.HUB, "ready")
        holder = r.peers.holder(task.worker)
        if holder is None or holder.id != worker_id:
            return None  # its worker is gone: the sweep fails it back to its sender
        item = self._item(task, MessageKind.TASK, task.sender, task.worker, task.payload)
        return r.inbox.to_peer(item, task.worker)

    def _cancel(
        self, r: Repos, task: Task, because: str, state: TaskState, now: float
    ) -> AppendOutcome | None:
        error = f"canceled: task {because} it waited on is {state.value}"
        if not r.tasks.move(task.id, TaskState.PENDING, TaskState.CANCELED, now, error=error):
            return None
        r.tasks.event(task.id, now, TaskState.CANCELED, SystemSender.HUB, error)
        task.state, task.error = TaskState.CANCELED, error
        notice = self._item(task, MessageKind.FAILURE, SystemSender.HUB, task.sender, error)
        return r.inbox.to_peer(notice, task.sender)
