"""Tasks: hand a peer work and get an answer back.

Sending a task and moving it are documented here but implemented in `api/hot_tasks.py`, which
`FastLane` also serves without FastAPI in front (ADR 0015)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from caucus.api import hot_tasks
from caucus.services.roles import Access
from caucus.web.access import PeerDep, access, bearer_token
from caucus.web.context import hub_of
from caucus.web.openapi import without
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import (
    DependRequest,
    TaskErrorRequest,
    TaskQuestionRequest,
    TaskRequest,
    TaskResultRequest,
    body_schema,
)
from caucus.wire.work import TaskInfo, TaskList

router = APIRouter(prefix="/tasks", tags=["tasks"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing, unknown or ended token"},
    403: {"model": ErrorBody, "description": "you are the wrong party for this"},
    404: {"model": ErrorBody, "description": "no such task (or not yours)"},
    409: {"model": ErrorBody, "description": "the task's state does not allow it (already ended)"},
    422: {"model": ErrorBody, "description": "malformed input"},
}
_AGENT = access(Access.AGENT)


@router.post(
    "",
    response_model=TaskInfo,
    summary="Send a task to a peer: it receives it like any item, and receiving claims it",
    responses=_ERRORS,
    openapi_extra=access(Access.AGENT, **body_schema(TaskRequest)),
)
async def send_task(request: Request) -> Response:
    body = await hot_tasks.send_task(hub_of(request), bearer_token(request), await request.body())
    return Response(body, media_type="application/json")


@router.get(
    "",
    summary="Tasks you sent or received, optionally in one state",
    responses=without(_ERRORS, 403, 404, 409),
    openapi_extra=_AGENT,
)
async def list_tasks(
    request: Request,
    peer: PeerDep,
    role: Annotated[str, Query(description="sent | received")] = "received",
    status: Annotated[str | None, Query(description="a task state")] = None,
) -> TaskList:
    return TaskList.of(await hub_of(request).tasks.listing(peer, role, status))


@router.get(
    "/ready",
    summary="What you can start now: your pending tasks nothing holds back, most urgent first",
    responses=without(_ERRORS, 403, 404, 409),
    openapi_extra=_AGENT,
)
async def ready_tasks(
    request: Request,
    peer: PeerDep,
    limit: Annotated[int, Query(ge=1, le=200, description="1-200")] = 50,
) -> TaskList:
    return TaskList.of(await hub_of(request).tasks.ready(peer, limit))


@router.get(
    "/{task_id}",
    summary="A task's state and history (sender and worker only)",
    responses=without(_ERRORS, 403, 409),
    openapi_extra=_AGENT,
)
async def task_status(task_id: str, request: Request, peer: PeerDep) -> TaskInfo:
    return TaskInfo.of(await hub_of(request).tasks.status(peer, task_id))


async def _moved(request: Request, task_id: str, verb: str) -> Response:
    hub, token = hub_of(request), bearer_token(request)
    body = await hot_tasks.move_task(hub, token, task_id, verb, await request.body())
    return Response(body, media_type="application/json")


@router.post(
    "/{task_id}/reply",
    response_model=TaskInfo,
    summary="The worker completes the task; the sender answers the worker's question",
    responses=_ERRORS,
    openapi_extra=access(Access.AGENT, **body_schema(TaskResultRequest)),
)
async def reply(task_id: str, request: Request) -> Response:
    return await _moved(request, task_id, "reply")


@router.post(
    "/{task_id}/fail",
    response_model=TaskInfo,
    summary="The worker gives the task up; the sender gets a failure item",
    responses=_ERRORS,
    openapi_extra=access(Access.AGENT, **body_schema(TaskErrorRequest)),
)
async def fail(task_id: str, request: Request) -> Response:
    return await _moved(request, task_id, "fail")


@router.post(
    "/{task_id}/input",
    response_model=TaskInfo,
    summary="The worker asks the sender a question; the task waits for the answer",
    responses=_ERRORS,
    openapi_extra=access(Access.AGENT, **body_schema(TaskQuestionRequest)),
)
async def request_input(task_id: str, request: Request) -> Response:
    return await _moved(request, task_id, "input")


@router.post(
    "/{task_id}/cancel",
    response_model=TaskInfo,
    summary="The sender cancels the task; the worker is told",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def cancel(task_id: str, request: Request) -> Response:
    return await _moved(request, task_id, "cancel")


@router.post(
    "/{task_id}/blocked_by",
    summary="Make a task of yours that still waits wait on more tasks (never a cycle)",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def depend(task_id: str, body: DependRequest, request: Request, peer: PeerDep) -> TaskInfo:
    return TaskInfo.of(await hub_of(request).tasks.depend(peer, task_id, body.blocked_by))
