"""The task verbs a task's round trip takes: send one, and move it (reply, fail, ask, cancel).

Like send and receive (`hotpath.py`), each is answered both by its documented FastAPI route in
`routes/tasks.py` and by the lanes without FastAPI in front, from the raw body
(`web.verbs.answer_raw`); the glue here is what every door calls, `/mcp`'s port included. A
round trip is four requests (send, the worker's receive, its reply, the sender's receive);
FastAPI's routing and dependency solving for the two task routes cost the hub more than their
units of work did (ADR 0002, extended by ADR 0015).
"""

from __future__ import annotations

from caucus.domain.peers import Peer
from caucus.web.verbs import Call, bind
from caucus.wire.requests import (
    TaskErrorRequest,
    TaskQuestionRequest,
    TaskRequest,
    TaskResultRequest,
)
from caucus.wire.verbs import work
from caucus.wire.work import TaskInfo


async def _send(c: Call[Peer, TaskRequest]) -> TaskInfo:
    rq = c.rq
    task = await c.hub.tasks.send(
        c.who,
        to=rq.to,
        payload=rq.content,
        subject=rq.subject,
        thread=rq.thread,
        blocked_by=rq.blocked_by,
        priority=rq.priority,
        on_failure=rq.on_failure,
    )
    return TaskInfo.of(task)


async def _reply(c: Call[Peer, TaskResultRequest]) -> TaskInfo:
    return TaskInfo.of(await c.hub.tasks.reply(c.who, c.path["task_id"], c.rq.result))


async def _fail(c: Call[Peer, TaskErrorRequest]) -> TaskInfo:
    return TaskInfo.of(await c.hub.tasks.fail(c.who, c.path["task_id"], c.rq.error))


async def _ask(c: Call[Peer, TaskQuestionRequest]) -> TaskInfo:
    task = await c.hub.tasks.request_input(c.who, c.path["task_id"], c.rq.question)
    return TaskInfo.of(task)


async def _cancel(c: Call[Peer, None]) -> TaskInfo:
    return TaskInfo.of(await c.hub.tasks.cancel(c.who, c.path["task_id"]))


bind(work.SEND_TASK, _send)
bind(work.REPLY_TASK, _reply)
bind(work.FAIL_TASK, _fail)
bind(work.REQUEST_INPUT, _ask)
bind(work.CANCEL_TASK, _cancel)
