"""Tasks: hand a peer work and get an answer back."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus.api.auth import PeerDep, access, hub_of
from caucus.api.schemas import (
    ErrorBody,
    TaskErrorRequest,
    TaskOut,
    TaskQuestionRequest,
    TaskRequest,
    TaskResultRequest,
    TasksResponse,
)
from caucus.services.roles import Access

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
    response_model=TaskOut,
    summary="Send a task to a peer: it receives it like any item, and receiving claims it",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def send_task(body: TaskRequest, request: Request, peer: PeerDep) -> dict[str, Any]:
    task = await hub_of(request).tasks.send(
        peer, to=body.to, payload=body.payload, subject=body.subject, thread=body.thread
    )
    return task.record()


@router.get(
    "",
    response_model=TasksResponse,
    summary="Tasks you sent or received, optionally in one state",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def list_tasks(
    request: Request,
    peer: PeerDep,
    role: Annotated[str, Query(description="sent | received")] = "received",
    status: Annotated[str | None, Query(description="a task state")] = None,
) -> dict[str, Any]:
    tasks = await hub_of(request).tasks.listing(peer, role, status)
    return {"tasks": [t.record() for t in tasks]}


@router.get(
    "/{task_id}",
    response_model=TaskOut,
    summary="A task's state and history (sender and worker only)",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def task_status(task_id: str, request: Request, peer: PeerDep) -> dict[str, Any]:
    return (await hub_of(request).tasks.status(peer, task_id)).record()


@router.post(
    "/{task_id}/reply",
    response_model=TaskOut,
    summary="The worker completes the task; the sender answers the worker's question",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def reply(
    task_id: str, body: TaskResultRequest, request: Request, peer: PeerDep
) -> dict[str, Any]:
    return (await hub_of(request).tasks.reply(peer, task_id, body.result)).record()


@router.post(
    "/{task_id}/fail",
    response_model=TaskOut,
    summary="The worker gives the task up; the sender gets a failure item",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def fail(
    task_id: str, body: TaskErrorRequest, request: Request, peer: PeerDep
) -> dict[str, Any]:
    return (await hub_of(request).tasks.fail(peer, task_id, body.error)).record()


@router.post(
    "/{task_id}/input",
    response_model=TaskOut,
    summary="The worker asks the sender a question; the task waits for the answer",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def request_input(
    task_id: str, body: TaskQuestionRequest, request: Request, peer: PeerDep
) -> dict[str, Any]:
    return (await hub_of(request).tasks.request_input(peer, task_id, body.question)).record()


@router.post(
    "/{task_id}/cancel",
    response_model=TaskOut,
    summary="The sender cancels the task; the worker is told",
    responses=_ERRORS,
    openapi_extra=_AGENT,
)
async def cancel(task_id: str, request: Request, peer: PeerDep) -> dict[str, Any]:
    return (await hub_of(request).tasks.cancel(peer, task_id)).record()
