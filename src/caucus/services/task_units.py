"""The units of work that store a task: one handed out at once (its `task` item in the
worker's inbox, in the same unit), and one that waits on others (its item not sent yet). Used
by the task service and the job board (an offer's winner gets a task)."""

from __future__ import annotations

from caucus.domain.dependencies import DEFAULT_PRIORITY, OnFailure
from caucus.domain.messages import AppendOutcome, NewMessage, SystemSender
from caucus.domain.names import Target, TargetKind
from caucus.domain.tasks import Task, TaskState
from caucus.errors import Hint, InvalidRequest, NotFound
from caucus.storage.repos import Repos


def open_task(
    r: Repos,
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
    offer_id: str | None = None,
    priority: int = DEFAULT_PRIORITY,
    on_failure: str = OnFailure.CANCEL,
) -> tuple[Task, AppendOutcome]:
    """Store a pending task and put its `task` item in the worker's inbox, in one unit (a task
    for a peer that is not here is refused before anything is written)."""
    outcome = r.inbox.append(message, Target(TargetKind.PEER, to))
    worker = outcome.recipients[0]
    task = r.tasks.insert(
        task_id=task_id,
        sender_id=sender_id,
        sender=sender,
        worker_id=worker.peer_id,
        worker=worker.name,
        subject=subject,
        payload=payload,
        thread=thread,
        now=now,
        expires_at=expires_at,
        offer_id=offer_id,
        priority=priority,
        on_failure=on_failure,
    )
    return task, outcome


def wait_task(
    r: Repos,
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
    priority: int,
    on_failure: str,
) -> Task:
    """Store a task that waits on others, its item not sent yet (its worker must be here)."""
    worker = r.peers.holder(to)
    if worker is None:
        raise NotFound(f"no peer named {to!r} is here", hint=Hint.LIST_PEERS, to=to)
    if worker.id == sender_id:
        raise InvalidRequest("a task goes to another peer, not to yourself", field="to")
    task = r.tasks.insert(
        task_id=task_id,
        sender_id=sender_id,
        sender=sender,
        worker_id=worker.id,
        worker=worker.name,
        subject=subject,
        payload=payload,
        thread=thread,
        now=now,
        expires_at=expires_at,
        priority=priority,
        blocked=True,
        on_failure=on_failure,
    )
    r.tasks.event(task_id, now, TaskState.PENDING, SystemSender.HUB, "blocked")
    return task
