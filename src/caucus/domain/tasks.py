"""Tasks: a message with a lifecycle, named after the A2A task states."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class TaskState(StrEnum):
    PENDING = "pending"  # A2A: submitted
    IN_PROGRESS = "in_progress"  # A2A: working
    INPUT_REQUIRED = "input_required"  # A2A: input-required
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"
    EXPIRED = "expired"  # not an A2A state: an unclaimed or parked task outlived its TTL

    @property
    def open(self) -> bool:
        return self in (TaskState.PENDING, TaskState.IN_PROGRESS, TaskState.INPUT_REQUIRED)

    @property
    def a2a(self) -> str:
        return A2A_STATES[self]


A2A_STATES = {
    TaskState.PENDING: "submitted",
    TaskState.IN_PROGRESS: "working",
    TaskState.INPUT_REQUIRED: "input-required",
    TaskState.COMPLETED: "completed",
    TaskState.FAILED: "failed",
    TaskState.CANCELED: "canceled",
    TaskState.EXPIRED: "failed",  # A2A has no expiry; a consumer sees a failure
}


class TaskKind(StrEnum):
    """Kinds of the inbox items a task produces."""

    TASK = "task"  # to the worker: do this (again, with `answer` after an input request)
    RESULT = "result"  # to the sender: completed
    FAILURE = "failure"  # to the sender: failed or expired
    INPUT_REQUEST = "input_request"  # to the sender: the worker asks a question
    CANCELED = "task_canceled"  # to the worker: the sender canceled


@dataclass(slots=True)
class TaskEvent:
    ts: float
    state: str
    actor: str
    detail: str | None = None


@dataclass(slots=True)
class Task:
    id: str
    sender: str
    worker: str
    subject: str | None
    payload: str
    thread: str
    state: TaskState
    created_at: float
    updated_at: float
    expires_at: float
    result: str | None = None
    error: str | None = None
    question: str | None = None
    answer: str | None = None
    history: list[TaskEvent] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        return {
            "task_id": self.id,
            "sender": self.sender,
            "worker": self.worker,
            "subject": self.subject,
            "payload": self.payload,
            "thread": self.thread,
            "state": self.state.value,
            "a2a_state": self.state.a2a,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "expires_at": self.expires_at,
            "result": self.result,
            "error": self.error,
            "question": self.question,
            "answer": self.answer,
            "history": [
                {"ts": e.ts, "state": e.state, "actor": e.actor, "detail": e.detail}
                for e in self.history
            ],
        }
