"""Tasks: hand a peer work and get an answer back. (The verbs that name their service, as
ready work, a task's state and its dependencies, are served by `web.verbs.named_router`.)

Sending a task and moving it are documented here but implemented in `api/hot_tasks.py`, which
`FastLane` also serves without FastAPI in front (ADR 0015)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from caucus.api import hot_tasks  # noqa: F401  (binds the task verbs' glue)
from caucus.domain.peers import Peer
from caucus.web.access import bearer_token
from caucus.web.context import hub_of
from caucus.web.verbs import Call, answer_raw, route_args, serve
from caucus.wire.queries import TasksQuery
from caucus.wire.verb import Verb
from caucus.wire.verbs import work
from caucus.wire.work import TaskInfo, TaskList

router = APIRouter()


async def _answer(request: Request, verb: Verb[TaskInfo], path: dict[str, str]) -> Response:
    hub, token = hub_of(request), bearer_token(request)
    body = await answer_raw(hub, token, verb, path, await request.body())
    return Response(body, media_type="application/json")


@router.api_route(**route_args(work.SEND_TASK))
async def send_task(request: Request) -> Response:
    return await _answer(request, work.SEND_TASK, {})


def _move(verb: Verb[TaskInfo]) -> None:
    async def moved(request: Request, task_id: str) -> Response:
        return await _answer(request, verb, {"task_id": task_id})

    router.api_route(**route_args(verb))(moved)


async def _listing(c: Call[Peer, TasksQuery]) -> TaskList:
    return TaskList.of(await c.hub.tasks.listing(c.who, c.rq.role, c.rq.status))


serve(router, work.LIST_TASKS, _listing)
for _verb in (work.REPLY_TASK, work.FAIL_TASK, work.REQUEST_INPUT, work.CANCEL_TASK):
    _move(_verb)
