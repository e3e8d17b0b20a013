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


FOLLOW_UP = "follow-up: "  # a task event's detail that is the sender's further word on it


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
    offer_id: str | None = None  # the job board's offer it was assigned from (not on the wire)
    priority: int = 2  # 0 (most urgent) to 4 (`domain.dependencies`)
    blocked: bool = False  # waiting on others: its item not yet sent to its worker
    on_failure: str = "cancel"  # what a dependency's failure does to it
    blocked_by: list[str] = field(default_factory=list)  # the tasks it waits (or waited) on
    dependents: int = 0  # how many tasks wait on it
    waits_on: int = 0  # how many it waits (or waited) on: `blocked_by` is read when nonzero


# --- who may move a task, from where, to where (data, checked without a database) ----------
class TaskRole(StrEnum):
    SENDER = "sender"
    WORKER = "worker"


class TaskMove(StrEnum):
    COMPLETE = "complete"  # the worker's reply
    FAIL = "fail"
    ASK = "ask"  # the worker asks the sender for input; the task is parked
    ANSWER = "answer"  # the sender's reply to that question; back to the worker
    CANCEL = "cancel"


@dataclass(frozen=True, slots=True)
class Transition:
    actor: TaskRole
    allowed: frozenset[TaskState]
    to_state: TaskState


_UNCLAIMED_OR_WORKING = frozenset({TaskState.PENDING, TaskState.IN_PROGRESS})
OPEN_STATES = frozenset(s for s in TaskState if s.open)

TRANSITIONS: dict[TaskMove, Transition] = {
    TaskMove.COMPLETE: Transition(TaskRole.WORKER, _UNCLAIMED_OR_WORKING, TaskState.COMPLETED),
    TaskMove.FAIL: Transition(TaskRole.WORKER, _UNCLAIMED_OR_WORKING, TaskState.FAILED),
    TaskMove.ASK: Transition(TaskRole.WORKER, _UNCLAIMED_OR_WORKING, TaskState.INPUT_REQUIRED),
    TaskMove.ANSWER: Transition(
        TaskRole.SENDER, frozenset({TaskState.INPUT_REQUIRED}), TaskState.PENDING
    ),
    TaskMove.CANCEL: Transition(TaskRole.SENDER, OPEN_STATES, TaskState.CANCELED),
}


class MoveRefused(Exception):
    """Why a move does not apply: `wrong_party` (someone else's move) or the state."""

    def __init__(self, move: TaskMove, state: TaskState, *, wrong_party: bool) -> None:
        self.move, self.state, self.wrong_party = move, state, wrong_party
        who = "the other party's" if wrong_party else f"not allowed from {state.value}"
        super().__init__(f"{move.value}: {who}")


def next_state(move: TaskMove, state: TaskState, actor: TaskRole) -> TaskState:
    """Where `move`, made by `actor`, takes a task in `state`; MoveRefused if it does not."""
    rule = TRANSITIONS[move]
    if actor is not rule.actor:
        raise MoveRefused(move, state, wrong_party=True)
    if state not in rule.allowed:
        raise MoveRefused(move, state, wrong_party=False)
    return rule.to_state
