"""Tasks and their history. Which moves are allowed is the domain's (`domain.tasks`); this
stores what was decided, each move conditional on the state it was decided from."""

from __future__ import annotations

from collections.abc import Iterable

from caucus.domain.messages import Delivery
from caucus.domain.tasks import Task, TaskEvent, TaskState
from caucus.storage.engine import Row, Tx


def task_of(row: Row) -> Task:
    return Task(
        id=row["id"],
        sender=row["sender"],
        worker=row["worker"],
        subject=row["subject"],
        payload=row["payload"],
        thread=row["thread"],
        state=TaskState(row["state"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        expires_at=row["expires_at"],
        result=row["result"],
        error=row["error"],
        question=row["question"],
        answer=row["answer"],
        offer_id=row["offer_id"],
        priority=row["priority"],
        blocked=bool(row["blocked"]),
        on_failure=row["on_failure"],
        dependents=row["dependents"],
        waits_on=row["waits_on"],
    )


class StoredTask:
    """A task with the ids of its parties, which the wire never shows."""

    __slots__ = ("sender_id", "task", "worker_id")

    def __init__(self, task: Task, sender_id: int, worker_id: int) -> None:
        self.task, self.sender_id, self.worker_id = task, sender_id, worker_id


class Tasks:
    def __init__(self, tx: Tx) -> None:
        self._tx = tx

    def insert(
        self,
        *,
        task_id: str,
        sender_id: int,
        sender: str,
        worker_id: int,
        worker: str,
        subject: str | None,
        payload: str,
        thread: str,
        now: float,
        expires_at: float,
        offer_id: str | None = None,
        priority: int = 2,
        blocked: bool = False,
        on_failure: str = "cancel",
    ) -> Task:
        """Store a pending task (blocked: waiting on others) and the first line of its
        history; the task as stored."""
        self._tx.run(
            "task_insert",
            {
                "id": task_id,
                "sender_id": sender_id,
                "sender": sender,
                "worker_id": worker_id,
                "worker": worker,
                "subject": subject,
                "payload": payload,
                "thread": thread,
                "now": now,
                "expires_at": expires_at,
                "offer_id": offer_id,
                "priority": priority,
                "blocked": int(blocked),
                "on_failure": on_failure,
            },
        )
        self.event(task_id, now, TaskState.PENDING, sender, "sent")
        task = Task(
            id=task_id,
            sender=sender,
            worker=worker,
            subject=subject,
            payload=payload,
            thread=thread,
            state=TaskState.PENDING,
            created_at=now,
            updated_at=now,
            expires_at=expires_at,
            offer_id=offer_id,
            priority=priority,
            blocked=blocked,
            on_failure=on_failure,
        )
        task.history = [TaskEvent(now, TaskState.PENDING.value, sender, "sent")]
        return task

    def get(self, task_id: str) -> Task | None:
        """A task with its history."""
        found = self.with_parties(task_id)
        return None if found is None else found.task

    def with_parties(self, task_id: str) -> StoredTask | None:
        """A task with its history and its parties' ids (who may see it: `domain.visibility`)."""
        row = self._tx.one("task_by_id", {"id": task_id})
        if row is None:
            return None
        return StoredTask(self.with_history(task_of(row)), row["sender_id"], row["worker_id"])

    def stored(self, task_id: str) -> StoredTask | None:
        """The task with its parties' ids, locked for this unit where the backend has row
        locks."""
        row = self._tx.one("task_for_update", {"id": task_id})
        if row is None:
            return None
        return StoredTask(task_of(row), row["sender_id"], row["worker_id"])

    def move(
        self,
        task_id: str,
        from_state: TaskState,
        to_state: TaskState,
        now: float,
        *,
        result: str | None = None,
        error: str | None = None,
        question: str | None = None,
        answer: str | None = None,
    ) -> bool:
        """Move a task read in `from_state`; False if it has moved since (nothing changes)."""
        changed = self._tx.run(
            "task_move",
            {
                "id": task_id,
                "from_state": from_state.value,
                "to_state": to_state.value,
                "now": now,
                "result": result,
                "error": error,
                "question": question,
                "answer": answer,
            },
        )
        return changed == 1

    @staticmethod
    def as_moved(task: Task, to_state: TaskState, now: float, fields: dict[str, str]) -> Task:
        """`task` as `move` stores it (`task_move`: a field given replaces the stored one, a
        field not given stays), without its history."""

        def kept(name: str, before: str | None) -> str | None:
            value = fields.get(name)
            return before if value is None else value

        return Task(
            id=task.id,
            sender=task.sender,
            worker=task.worker,
            subject=task.subject,
            payload=task.payload,
            thread=task.thread,
            state=to_state,
            created_at=task.created_at,
            updated_at=now,
            expires_at=task.expires_at,
            result=kept("result", task.result),
            error=kept("error", task.error),
            question=kept("question", task.question),
            answer=kept("answer", task.answer),
            offer_id=task.offer_id,
            priority=task.priority,
            blocked=task.blocked,
            on_failure=task.on_failure,
            blocked_by=task.blocked_by,
            dependents=task.dependents,
            waits_on=task.waits_on,
        )

    def requeue(self, task_id: str, now: float) -> bool:
        """A claimed task whose worker fell silent: pending again."""
        return self._tx.run("task_requeue", {"id": task_id, "now": now}) == 1

    def event(
        self, task_id: str, ts: float, state: TaskState, actor: str, detail: str | None = None
    ) -> None:
        self._tx.run(
            "task_event_insert",
            {"task_id": task_id, "ts": ts, "state": state.value, "actor": actor, "detail": detail},
        )

    def claim_received(
        self, worker_id: int, deliveries: Iterable[Delivery], now: float
    ) -> list[int]:
        """Receiving a task's item claims the task (pending → in progress), in the same unit;
        the claimed tasks' senders are woken with the commit (in every process)."""
        senders: list[int] = []
        for d in deliveries:
            meta = d.message.meta
            if d.message.kind != "task" or not meta or not isinstance(meta.get("task_id"), str):
                continue
            task_id = meta["task_id"]
            claimed = self._tx.one(
                "task_claim", {"id": task_id, "worker_id": worker_id, "now": now}
            )
            if claimed is not None:
                self.event(task_id, now, TaskState.IN_PROGRESS, claimed["worker"], "received")
                senders.append(int(claimed["sender_id"]))
        if senders:
            self._tx.woke(senders)
        return senders

    def of_party(
        self, peer_id: int, role: str, state: TaskState | None, limit: int = 200
    ) -> list[Task]:
        """A peer's tasks as sender (`role` "sent") or worker ("received"), newest first."""
        params = {"peer_id": peer_id, "state": state.value if state else None, "limit": limit}
        query = "tasks_sent_by" if role == "sent" else "tasks_worked_by"
        return [self.with_history(task_of(r)) for r in self._tx.all(query, params)]

    def all(self, state: TaskState | None, limit: int = 200) -> list[Task]:
        """Every peer's tasks (optionally in one state), most recently changed first."""
        if state is None:
            rows = self._tx.all("tasks_all", {"limit": limit})
        else:
            rows = self._tx.all("tasks_in_state", {"state": state.value, "limit": limit})
        return [self.with_history(task_of(r)) for r in rows]

    def silent(self, silent_before: float) -> list[StoredTask]:
        """Claimed tasks not moved since before `silent_before`, with their parties' ids."""
        rows = self._tx.all("tasks_silent", {"silent_before": silent_before})
        return [StoredTask(task_of(r), r["sender_id"], r["worker_id"]) for r in rows]

    def of_ended_workers(self) -> list[Task]:
        """Open tasks whose worker has left, was kicked or was forgotten."""
        return [task_of(r) for r in self._tx.all("tasks_of_ended_workers")]

    def note_once(self, task_id: str, ts: float, state: TaskState, detail: str) -> bool:
        """A hub note in the task's history, unless it says that already."""
        params = {
            "task_id": task_id,
            "ts": ts,
            "state": state.value,
            "actor": "hub",
            "detail": detail,
        }
        return self._tx.run("task_event_once", params) == 1

    def stale(self, now: float) -> list[Task]:
        """Pending and parked tasks past their time to live."""
        return [task_of(r) for r in self._tx.all("tasks_stale", {"now": now})]

    def with_history(self, task: Task) -> Task:
        """`task` with its history as stored (and what it waits on, if anything)."""
        rows = self._tx.all("task_events_of", {"task_id": task.id})
        task.history = [TaskEvent(r["ts"], r["state"], r["actor"], r["detail"]) for r in rows]
        if task.waits_on and not task.blocked_by:
            found = self._tx.all("task_dependencies_of", {"task_id": task.id})
            task.blocked_by = [r["id"] for r in found]
        return task
