"""Task dependencies (`domain.dependencies`): who waits on whom, and releasing the ready."""

from __future__ import annotations

from caucus.domain.tasks import Task, TaskState
from caucus.storage.engine import Tx
from caucus.storage.repos.tasks import StoredTask, task_of


class DependencyRow:
    """A task waited on: its id, state and parties."""

    __slots__ = ("sender_id", "state", "task_id", "worker_id")

    def __init__(self, task_id: str, state: TaskState, sender_id: int, worker_id: int) -> None:
        self.task_id, self.state = task_id, state
        self.sender_id, self.worker_id = sender_id, worker_id


class Dependencies:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def add(self, task_id: str, depends_on: list[str]) -> None:
        """`task_id` waits on each of `depends_on` (already waited on: kept once)."""
        for dep in depends_on:
            if self._tx.run("task_dependency_insert", {"task_id": task_id, "depends_on": dep}):
                self._tx.run("task_dependents_add", {"id": dep})
        self._tx.run("task_waits_on_count", {"id": task_id})

    def add_to_offer(self, offer_id: str, depends_on: list[str]) -> None:
        """An offer waits on each of these tasks."""
        for dep in depends_on:
            params = {"offer_id": offer_id, "depends_on": dep}
            if self._tx.run("offer_dependency_insert", params):
                self._tx.run("task_dependents_add", {"id": dep})

    def offer_waits_on(self, offer_id: str) -> list[TaskState]:
        """The states of the tasks an offer waits (or waited) on."""
        rows = self._tx.all("offer_dependencies_of", {"offer_id": offer_id})
        return [TaskState(r["state"]) for r in rows]

    def offers_waiting_on(self, task_id: str) -> list[str]:
        """The blocked offers that wait on `task_id`."""
        return [r["id"] for r in self._tx.all("offers_waiting_on", {"task_id": task_id})]

    def release_offer(self, offer_id: str, now: float) -> bool:
        return self._tx.run("offer_release", {"id": offer_id, "now": now}) == 1

    def of(self, task_id: str) -> list[DependencyRow]:
        """What `task_id` waits (or waited) on, oldest first."""
        rows = self._tx.all("task_dependencies_of", {"task_id": task_id})
        return [
            DependencyRow(r["id"], TaskState(r["state"]), r["sender_id"], r["worker_id"])
            for r in rows
        ]

    def waiting_on(self, task_id: str) -> list[StoredTask]:
        """The blocked tasks that wait on `task_id`, with their parties' ids."""
        rows = self._tx.all("task_dependents_blocked", {"task_id": task_id})
        return [StoredTask(task_of(r), r["sender_id"], r["worker_id"]) for r in rows]

    def release(self, task_id: str, now: float, expires_at: float) -> bool:
        """A blocked task made ready: its time to live starts now."""
        params = {"id": task_id, "now": now, "expires_at": expires_at}
        return self._tx.run("task_release", params) == 1

    def ready(self, worker_id: int, limit: int) -> list[Task]:
        """A worker's pending tasks nothing holds back, most urgent then oldest first."""
        rows = self._tx.all("tasks_ready", {"worker_id": worker_id, "limit": limit})
        return [task_of(r) for r in rows]
