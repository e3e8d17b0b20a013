"""Tasks: a message with a lifecycle, named after the A2A task states."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

MAX_SUBJECT = 120


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
        return A2A_STATES[self].value


class A2AState(StrEnum):
    SUBMITTED = "submitted"
    WORKING = "working"
    INPUT_REQUIRED = "input-required"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"


A2A_STATES = {
    TaskState.PENDING: A2AState.SUBMITTED,
    TaskState.IN_PROGRESS: A2AState.WORKING,
    TaskState.INPUT_REQUIRED: A2AState.INPUT_REQUIRED,
    TaskState.COMPLETED: A2AState.COMPLETED,
    TaskState.FAILED: A2AState.FAILED,
    TaskState.CANCELED: A2AState.CANCELED,
    TaskState.EXPIRED: A2AState.FAILED,  # A2A has no expiry; a consumer sees a failure
}


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
