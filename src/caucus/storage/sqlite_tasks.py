"""Task operations of the SQLite store. A task's change and the inbox item it sends commit in
one transaction, so a task is never completed without its result reaching the sender."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Collection
from typing import Any

from caucus.domain.messages import AppendOutcome, Delivery, NewMessage, SystemSender
from caucus.domain.names import Target, TargetKind
from caucus.domain.offers import OfferState, after_assignment
from caucus.domain.tasks import Task, TaskEvent, TaskState
from caucus.errors import Conflict, Forbidden, Hint, NotFound
from caucus.storage.sqlite_messages import MessageOps

_TASK_COLS = (
    "id, sender, worker, subject, payload, thread, state, created_at, updated_at, expires_at,"
    " result, error, question, answer, sender_id, worker_id"
)
_OPEN = ("pending", "in_progress", "input_required")


def _task(row: tuple[Any, ...]) -> Task:
    return Task(
        id=row[0],
        sender=row[1],
        worker=row[2],
        subject=row[3],
        payload=row[4],
        thread=row[5],
        state=TaskState(row[6]),
        created_at=row[7],
        updated_at=row[8],
        expires_at=row[9],
        result=row[10],
        error=row[11],
        question=row[12],
        answer=row[13],
    )


def _history(conn: sqlite3.Connection, task: Task) -> Task:
    rows = conn.execute(
        "SELECT ts, state, actor, detail FROM task_events WHERE task_id = ? ORDER BY n",
        (task.id,),
    ).fetchall()
    task.history = [TaskEvent(*r) for r in rows]
    return task


def _event(
    conn: sqlite3.Connection,
    task_id: str,
    ts: float,
    state: str,
    actor: str,
    detail: str | None = None,
) -> None:
    conn.execute(
        "INSERT INTO task_events (task_id, n, ts, state, actor, detail) VALUES (?,"
        " (SELECT COALESCE(MAX(n), 0) + 1 FROM task_events WHERE task_id = ?), ?, ?, ?, ?)",
        (task_id, task_id, ts, state, actor, detail),
    )


def _settle_offer(conn: sqlite3.Connection, task_id: str, state: TaskState, now: float) -> None:
    """The job board: the offer a task was assigned from follows the task's ending
    (`domain.offers.after_assignment`); a claimant whose assignment ended is rejected."""
    row = conn.execute(
        "SELECT id, winner, expires_at FROM offers WHERE task_id = ? AND state = 'assigned'",
        (task_id,),
    ).fetchone()
    if row is None:
        return
    becomes = after_assignment(state, row[2], now)
    if becomes is OfferState.COMPLETED:
        conn.execute(
            "UPDATE offers SET state = 'completed', updated_at = ? WHERE id = ?", (now, row[0])
        )
    elif becomes is not None:
        conn.execute(
            "UPDATE offers SET state = ?, winner = NULL, task_id = NULL, updated_at = ?"
            " WHERE id = ?",
            (becomes.value, now, row[0]),
        )
        conn.execute(
            "UPDATE offer_claims SET state = 'rejected' WHERE offer_id = ? AND claimant = ?",
            (row[0], row[1]),
        )


def _peer_target(name: str) -> Target:
    return Target(TargetKind.PEER, name)


class TaskOps(MessageOps):
    async def create_task(
        self,
        *,
        task_id: str,
        sender_id: int,
        sender: str,
        to: str,
        subject: str | None,
        payload: str,
        thread: str,
        now: float,
        expires_at: float,
        message: NewMessage,
    ) -> tuple[Task, AppendOutcome]:
        """Store a pending task and put its `task` item in the worker's inbox."""

        def op(conn: sqlite3.Connection) -> tuple[Task, AppendOutcome]:
            return self._create_task(
                conn,
                task_id,
                sender_id,
                sender,
                to,
                subject,
                payload,
                thread,
                now,
                expires_at,
                message,
            )

        return await self._write(op)

    def _create_task(
        self,
        conn: sqlite3.Connection,
        task_id: str,
        sender_id: int,
        sender: str,
        to: str,
        subject: str | None,
        payload: str,
        thread: str,
        now: float,
        expires_at: float,
        message: NewMessage,
        offer_id: str | None = None,
    ) -> tuple[Task, AppendOutcome]:
        outcome = self._append(conn, message, _peer_target(to), 0.0)  # NotFound first
        worker = outcome.recipients[0]
        conn.execute(
            "INSERT INTO tasks (id, sender_id, sender, worker_id, worker, subject, payload,"
            " thread, state, created_at, updated_at, expires_at, offer_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)",
            (
                task_id,
                sender_id,
                sender,
                worker.peer_id,
                worker.name,
                subject,
                payload,
                thread,
                now,
                now,
                expires_at,
                offer_id,
            ),
        )
        _event(conn, task_id, now, "pending", sender, "sent")
        return self._load(conn, task_id), outcome

    async def task_transition(
        self,
        task_id: str,
        *,
        actor_id: int | None,
        actor: str,
        role: str,
        allowed: Collection[TaskState],
        to_state: TaskState,
        now: float,
        fields: dict[str, Any],
        notify: Callable[[Task], tuple[NewMessage, str] | None],
        detail: str | None = None,
    ) -> tuple[Task, AppendOutcome | None]:
        """Move a task from one of `allowed` to `to_state` if `actor` plays `role` (worker or
        sender) in it, and send the item `notify` builds, all at once. A task in another state
        raises Conflict and changes nothing."""
        assignments = ", ".join(f"{k} = ?" for k in fields)

        def op(conn: sqlite3.Connection) -> tuple[Task, AppendOutcome | None]:
            row = conn.execute(
                f"SELECT {_TASK_COLS} FROM tasks WHERE id = ?", (task_id,)
            ).fetchone()
            if row is None:
                raise NotFound(f"no task {task_id!r}", hint=Hint.LIST_TASKS, task_id=task_id)
            task = _task(row)
            party_id = row[15] if role == "worker" else row[14]
            if actor_id != party_id:
                if actor_id not in (row[14], row[15]):
                    raise NotFound(
                        f"no task {task_id!r}", hint=Hint.LIST_TASKS, task_id=task_id
                    )  # not yours to see
                raise Forbidden(f"only the task's {role} may do that")
            if task.state not in allowed:
                raise Conflict(
                    f"task {task_id} is {task.state.value}: that is not possible now",
                    task_id=task_id,
                    state=task.state.value,
                )
            sets = f"state = ?, updated_at = ?{', ' + assignments if fields else ''}"
            conn.execute(
                f"UPDATE tasks SET {sets} WHERE id = ?",
                (to_state.value, now, *fields.values(), task_id),
            )
            _event(conn, task_id, now, to_state.value, actor, detail)
            _settle_offer(conn, task_id, to_state, now)
            updated = self._load(conn, task_id)
            item = notify(updated)
            outcome = None
            if item is not None:
                message, recipient = item
                try:
                    outcome = self._append(conn, message, _peer_target(recipient), 0.0)
                except NotFound:
                    outcome = None  # the other party left for good: the state still changes
            return updated, outcome

        return await self._write(op)

    def _claimed(
        self, conn: sqlite3.Connection, peer_id: int, deliveries: list[Delivery], now: float
    ) -> None:
        # Receiving a task's item claims the task, in the same transaction as the receive.
        for d in deliveries:
            meta = d.message.meta
            if d.message.kind != "task" or not meta or not isinstance(meta.get("task_id"), str):
                continue
            cur = conn.execute(
                "UPDATE tasks SET state = 'in_progress', updated_at = ?"
                " WHERE id = ? AND worker_id = ? AND state = 'pending'",
                (now, meta["task_id"], peer_id),
            )
            if cur.rowcount:
                worker = conn.execute(
                    "SELECT worker FROM tasks WHERE id = ?", (meta["task_id"],)
                ).fetchone()[0]
                _event(conn, meta["task_id"], now, "in_progress", worker, "received")

    async def get_task(self, task_id: str) -> Task | None:
        def op(conn: sqlite3.Connection) -> Task | None:
            row = conn.execute(
                f"SELECT {_TASK_COLS} FROM tasks WHERE id = ?", (task_id,)
            ).fetchone()
            return _history(conn, _task(row)) if row else None

        return await self._read(op)

    async def task_parties(self, task_id: str) -> tuple[int, int] | None:
        def op(conn: sqlite3.Connection) -> tuple[int, int] | None:
            row = conn.execute(
                "SELECT sender_id, worker_id FROM tasks WHERE id = ?", (task_id,)
            ).fetchone()
            return (row[0], row[1]) if row else None

        return await self._read(op)

    async def list_tasks(
        self, peer_id: int, role: str, state: TaskState | None, limit: int = 200
    ) -> list[Task]:
        column = "sender_id" if role == "sent" else "worker_id"

        def op(conn: sqlite3.Connection) -> list[Task]:
            sql = f"SELECT {_TASK_COLS} FROM tasks WHERE {column} = ?"
            params: list[Any] = [peer_id]
            if state is not None:
                sql += " AND state = ?"
                params.append(state.value)
            rows = conn.execute(sql + " ORDER BY created_at DESC LIMIT ?", (*params, limit))
            return [_history(conn, _task(r)) for r in rows.fetchall()]

        return await self._read(op)

    async def all_tasks(self, state: TaskState | None, limit: int = 200) -> list[Task]:
        def op(conn: sqlite3.Connection) -> list[Task]:
            sql = f"SELECT {_TASK_COLS} FROM tasks"
            params: list[Any] = []
            if state is not None:
                sql += " WHERE state = ?"
                params.append(state.value)
            rows = conn.execute(sql + " ORDER BY updated_at DESC LIMIT ?", (*params, limit))
            return [_history(conn, _task(r)) for r in rows.fetchall()]

        return await self._read(op)

    async def sweep_tasks(
        self,
        now: float,
        silent_before: float,
        requeue: Callable[[Task], NewMessage],
        expire: Callable[[Task], NewMessage],
    ) -> list[AppendOutcome]:
        """Claimed tasks whose worker fell silent go back to pending (and to the worker's inbox);
        pending and parked tasks past their TTL expire (and the sender is told)."""

        def op(conn: sqlite3.Connection) -> list[AppendOutcome]:
            outcomes: list[AppendOutcome] = []
            silent = conn.execute(
                f"SELECT {_TASK_COLS} FROM tasks WHERE state = 'in_progress' AND updated_at < ?",
                (silent_before,),
            ).fetchall()
            for row in silent:
                task = _task(row)
                conn.execute(
                    "UPDATE tasks SET state = 'pending', visible_at = NULL, updated_at = ?"
                    " WHERE id = ?",
                    (now, task.id),
                )
                _event(conn, task.id, now, "pending", SystemSender.HUB, "the worker went silent")
                task.state = TaskState.PENDING
                # A worker that left for good gets nothing: the task waits for its TTL.
                with contextlib.suppress(NotFound):
                    outcomes.append(
                        self._append(conn, requeue(task), _peer_target(task.worker), 0.0)
                    )
            stale = conn.execute(
                f"SELECT {_TASK_COLS} FROM tasks WHERE state IN ('pending', 'input_required')"
                " AND expires_at < ?",
                (now,),
            ).fetchall()
            for row in stale:
                task = _task(row)
                conn.execute(
                    "UPDATE tasks SET state = 'expired', updated_at = ? WHERE id = ?",
                    (now, task.id),
                )
                _event(conn, task.id, now, "expired", SystemSender.HUB, "its time to live ran out")
                _settle_offer(conn, task.id, TaskState.EXPIRED, now)
                task.state = TaskState.EXPIRED
                with contextlib.suppress(NotFound):
                    outcomes.append(
                        self._append(conn, expire(task), _peer_target(task.sender), 0.0)
                    )
            return outcomes

        return await self._write(op)

    def _load(self, conn: sqlite3.Connection, task_id: str) -> Task:
        row = conn.execute(f"SELECT {_TASK_COLS} FROM tasks WHERE id = ?", (task_id,)).fetchone()
        return _history(conn, _task(row))
