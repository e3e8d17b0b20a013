"""Tasks: hand a peer work and get an answer back."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus.api.auth import PeerDep, access
from caucus.api.context import hub_of
from caucus.api.requests import (
    TaskErrorRequest,
    TaskQuestionRequest,
    TaskRequest,
    TaskResultRequest,
)
from caucus.services.roles import Access
from caucus.web.errors import ErrorBody
from caucus.web.work import TaskInfo, TaskList

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
    summary="Send a task to a peer: it receives it like any item, and receiving claims it",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def send_task(body: TaskRequest, request: Request, peer: PeerDep) -> TaskInfo:
    task = await hub_of(request).tasks.send(
        peer, to=body.to, payload=body.payload, subject=body.subject, thread=body.thread
    )
    return TaskInfo.of(task)


@router.get(
    "",
    summary="Tasks you sent or received, optionally in one state",
    responses=_ERRORS,
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
    "/{task_id}",
    summary="A task's state and history (sender and worker only)",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def task_status(task_id: str, request: Request, peer: PeerDep) -> TaskInfo:
    return TaskInfo.of(await hub_of(request).tasks.status(peer, task_id))


@router.post(
    "/{task_id}/reply",
    summary="The worker completes the task; the sender answers the worker's question",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def reply(task_id: str, body: TaskResultRequest, request: Request, peer: PeerDep) -> TaskInfo:
    return TaskInfo.of(await hub_of(request).tasks.reply(peer, task_id, body.result))


@router.post(
    "/{task_id}/fail",
    summary="The worker gives the task up; the sender gets a failure item",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def fail(task_id: str, body: TaskErrorRequest, request: Request, peer: PeerDep) -> TaskInfo:
    return TaskInfo.of(await hub_of(request).tasks.fail(peer, task_id, body.error))


@router.post(
    "/{task_id}/input",
    summary="The worker asks the sender a question; the task waits for the answer",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def request_input(
    task_id: str, body: TaskQuestionRequest, request: Request, peer: PeerDep
) -> TaskInfo:
    return TaskInfo.of(await hub_of(request).tasks.request_input(peer, task_id, body.question))


@router.post(
    "/{task_id}/cancel",
    summary="The sender cancels the task; the worker is told",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def cancel(task_id: str, request: Request, peer: PeerDep) -> TaskInfo:
    return TaskInfo.of(await hub_of(request).tasks.cancel(peer, task_id))
