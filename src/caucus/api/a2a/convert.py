"""Caucus tasks in A2A's words, and A2A messages in Caucus's: one function each way."""

from __future__ import annotations

import json
from typing import Any

from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import ContentTypeNotSupportedError, InvalidParamsError
from google.protobuf.json_format import MessageToDict
from google.protobuf.timestamp_pb2 import Timestamp

from caucus.domain.tasks import FOLLOW_UP, Task, TaskState

STATES: dict[TaskState, int] = {
    TaskState.PENDING: pb.TASK_STATE_SUBMITTED,
    TaskState.IN_PROGRESS: pb.TASK_STATE_WORKING,
    TaskState.INPUT_REQUIRED: pb.TASK_STATE_INPUT_REQUIRED,
    TaskState.COMPLETED: pb.TASK_STATE_COMPLETED,
    TaskState.FAILED: pb.TASK_STATE_FAILED,
    TaskState.CANCELED: pb.TASK_STATE_CANCELED,
    TaskState.EXPIRED: pb.TASK_STATE_FAILED,  # A2A has no expiry: a consumer sees a failure
}
# What an A2A `status` filter names, in Caucus's states.
FROM_STATE: dict[int, list[TaskState]] = {}
for _state, _a2a in STATES.items():
    FROM_STATE.setdefault(_a2a, []).append(_state)

MAX_CONTEXT = 200  # a context id becomes the task's thread


def settled(task: Task) -> bool:
    """Nothing more happens to it without the caller: it ended, or it asks for input."""
    return not task.state.open or task.state is TaskState.INPUT_REQUIRED


def message_text(message: pb.Message) -> str:
    """What a Caucus agent reads of an A2A message: its text parts, its data parts as JSON,
    a file given by URL as that URL. Bytes have no text a model could read: refused."""
    chunks: list[str] = []
    for part in message.parts:
        kind = part.WhichOneof("content")
        if kind == "text":
            chunks.append(part.text)
        elif kind == "data":
            chunks.append(json.dumps(MessageToDict(part.data), ensure_ascii=False))
        elif kind == "url":
            label = f"{part.filename} " if part.filename else ""
            chunks.append(f"[file {label}at {part.url}]")
        else:
            raise ContentTypeNotSupportedError(
                "a Caucus agent reads text: send text or data parts, or a file by its URL"
            )
    text = "\n\n".join(c for c in chunks if c)
    if not text.strip():
        raise InvalidParamsError("the message has no text: give it a text or data part")
    return text


def metadata_of(message: pb.Message) -> dict[str, Any]:
    return MessageToDict(message.metadata) if message.HasField("metadata") else {}


def _stamp(ts: float) -> Timestamp:
    stamp = Timestamp()
    stamp.FromNanoseconds(int(ts * 1e9))
    return stamp


def _say(task: Task, suffix: str, role: int, text: str) -> pb.Message:
    return pb.Message(
        message_id=f"{task.id}-{suffix}",
        context_id=task.thread,
        task_id=task.id,
        role=role,  # type: ignore[arg-type]  # the enum's values are plain ints in the stubs
        parts=[pb.Part(text=text)],
    )


def history(task: Task) -> list[pb.Message]:
    """The turns a task holds: the request, its sender's follow-ups, the question and its
    answer, the outcome."""
    turns = [_say(task, "request", pb.ROLE_USER, task.payload)]
    notes = [e.detail for e in task.history if e.detail and e.detail.startswith(FOLLOW_UP)]
    for n, note in enumerate(notes, 1):
        turns.append(_say(task, f"follow-up-{n}", pb.ROLE_USER, note[len(FOLLOW_UP) :]))
    if task.question:
        turns.append(_say(task, "question", pb.ROLE_AGENT, task.question))
    if task.answer:
        turns.append(_say(task, "answer", pb.ROLE_USER, task.answer))
    if task.state is TaskState.COMPLETED and task.result is not None:
        turns.append(_say(task, "result", pb.ROLE_AGENT, task.result))
    return turns


def status(task: Task) -> pb.TaskStatus:
    found = pb.TaskStatus(state=STATES[task.state], timestamp=_stamp(task.updated_at))  # type: ignore[arg-type]
    said: pb.Message | None = None
    if task.state is TaskState.INPUT_REQUIRED and task.question:
        said = _say(task, "question", pb.ROLE_AGENT, task.question)
    elif task.state in (TaskState.FAILED, TaskState.EXPIRED) and task.error:
        said = _say(task, "error", pb.ROLE_AGENT, task.error)
    elif task.state is TaskState.COMPLETED and task.result is not None:
        said = _say(task, "result", pb.ROLE_AGENT, task.result)
    if said is not None:
        found.message.CopyFrom(said)
    return found


def artifact(task: Task) -> pb.Artifact | None:
    """A completed task's result, as the artifact A2A clients look for."""
    if task.state is not TaskState.COMPLETED or task.result is None:
        return None
    return pb.Artifact(
        artifact_id=f"{task.id}-result",
        name="result",
        description=f"{task.worker}'s result",
        parts=[pb.Part(text=task.result)],
    )


def task_proto(task: Task, history_length: int | None = None) -> pb.Task:
    """`task` as an A2A Task; `history_length` keeps that many of the latest turns (0: none)."""
    turns = history(task)
    if history_length is not None:
        turns = turns[len(turns) - history_length :] if history_length > 0 else []
    found = pb.Task(id=task.id, context_id=task.thread, status=status(task), history=turns)
    made = artifact(task)
    if made is not None:
        found.artifacts.append(made)
    found.metadata.update(
        {
            "caucus": {
                "sender": task.sender,
                "worker": task.worker,
                "state": task.state.value,
                **({"subject": task.subject} if task.subject else {}),
            }
        }
    )
    return found


def passed_states(task: Task, told: int) -> list[pb.TaskStatusUpdateEvent]:
    """The states `task` passed through after its first `told` history events and before the
    one it is in now, each once, as status events with the time it entered them."""
    passed: list[pb.TaskStatusUpdateEvent] = []
    last = task.history[told - 1].state if 0 < told <= len(task.history) else None
    for event in task.history[told:-1]:
        if event.state == last:
            continue
        last = event.state
        state = STATES[TaskState(event.state)]
        stamped = pb.TaskStatus(state=state, timestamp=_stamp(event.ts))  # type: ignore[arg-type]
        passed.append(
            pb.TaskStatusUpdateEvent(task_id=task.id, context_id=task.thread, status=stamped)
        )
    return passed


def status_event(task: Task) -> pb.TaskStatusUpdateEvent:
    return pb.TaskStatusUpdateEvent(task_id=task.id, context_id=task.thread, status=status(task))


def artifact_event(task: Task) -> pb.TaskArtifactUpdateEvent | None:
    made = artifact(task)
    if made is None:
        return None
    return pb.TaskArtifactUpdateEvent(
        task_id=task.id, context_id=task.thread, artifact=made, last_chunk=True
    )
