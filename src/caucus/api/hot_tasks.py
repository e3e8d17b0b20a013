"""The task routes a task's round trip takes: send one, and move it (reply, fail, ask, cancel).

Like send and receive (`hotpath.py`), each is one function from (hub, token, raw input) to a
JSON body, called both by the documented FastAPI routes in `routes/tasks.py` and by `FastLane`
without FastAPI in front. A round trip is four requests (send, the worker's receive, its reply,
the sender's receive); FastAPI's routing and dependency solving for the two task routes cost
the hub more than their units of work did (ADR 0002, extended by ADR 0015).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from caucus.domain.peers import Peer
from caucus.domain.tasks import Task
from caucus.services.hub import Hub
from caucus.web.body import parse_model
from caucus.wire.requests import (
    TaskErrorRequest,
    TaskQuestionRequest,
    TaskRequest,
    TaskResultRequest,
)
from caucus.wire.work import TaskInfo


def _body(task: Task) -> bytes:
    return TaskInfo.__pydantic_serializer__.to_json(TaskInfo.of(task))


async def send_task(hub: Hub, token: str | None, raw: bytes) -> bytes:
    """POST /tasks."""
    peer = await hub.principals.agent(token)
    body: TaskRequest = parse_model(TaskRequest, raw)
    task = await hub.tasks.send(
        peer,
        to=body.to,
        payload=body.content,
        subject=body.subject,
        thread=body.thread,
        blocked_by=body.blocked_by,
        priority=body.priority,
        on_failure=body.on_failure,
    )
    return _body(task)


async def _reply(hub: Hub, peer: Peer, task_id: str, raw: bytes) -> Task:
    body: TaskResultRequest = parse_model(TaskResultRequest, raw)
    return await hub.tasks.reply(peer, task_id, body.result)


async def _fail(hub: Hub, peer: Peer, task_id: str, raw: bytes) -> Task:
    body: TaskErrorRequest = parse_model(TaskErrorRequest, raw)
    return await hub.tasks.fail(peer, task_id, body.error)


async def _ask(hub: Hub, peer: Peer, task_id: str, raw: bytes) -> Task:
    body: TaskQuestionRequest = parse_model(TaskQuestionRequest, raw)
    return await hub.tasks.request_input(peer, task_id, body.question)


async def _cancel(hub: Hub, peer: Peer, task_id: str, raw: bytes) -> Task:
    return await hub.tasks.cancel(peer, task_id)  # no body: whatever came is ignored


_Move = Callable[[Hub, Peer, str, bytes], Awaitable[Task]]

# POST /tasks/{task_id}/<verb>, and whether the verb reads a JSON body.
MOVES: dict[str, tuple[_Move, bool]] = {
    "reply": (_reply, True),
    "fail": (_fail, True),
    "input": (_ask, True),
    "cancel": (_cancel, False),
}


async def move_task(hub: Hub, token: str | None, task_id: str, verb: str, raw: bytes) -> bytes:
    """POST /tasks/{task_id}/{reply|fail|input|cancel}."""
    peer = await hub.principals.agent(token)
    move, _ = MOVES[verb]
    return _body(await move(hub, peer, task_id, raw))
