"""What the console reads besides the feed: who it is, history, every task and offer."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus import __version__
from caucus.api.auth import ViewerDep, access, hub_of
from caucus.api.schemas import (
    ErrorBody,
    HistoryResponse,
    OffersResponse,
    SessionResponse,
    TasksResponse,
)
from caucus.dashboard.feed import message_data
from caucus.services.roles import Access

router = APIRouter(prefix="/operator", tags=["operator"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or unknown token"},
    403: {"model": ErrorBody, "description": "an agent token"},
    422: {"model": ErrorBody, "description": "a bad filter"},
}
_VIEWER = access(Access.VIEWER)


@router.get(
    "/session",
    response_model=SessionResponse,
    summary="Who this token is: the operator, or the read-only observer",
    responses=_ERRORS,
    openapi_extra=_VIEWER,
)
async def session(_request: Request, role: ViewerDep) -> dict[str, Any]:
    return {"role": role.value, "version": __version__}


@router.get(
    "/messages",
    response_model=HistoryResponse,
    summary="Routed messages before a seq, newest last, filtered by peer, channel, kind or text",
    responses=_ERRORS,
    openapi_extra=_VIEWER,
)
async def messages(
    request: Request,
    _: ViewerDep,
    before: Annotated[int | None, Query(description="only messages with a lower seq")] = None,
    limit: Annotated[int, Query(description="1-500")] = 200,
    peer: Annotated[str | None, Query(description="from, to or delivered to this peer")] = None,
    channel: Annotated[str | None, Query(description="sent to this #channel")] = None,
    kind: Annotated[str | None, Query(description="chat, operator, system, task, ...")] = None,
    q: Annotated[str | None, Query(description="text the content holds (any case)")] = None,
) -> dict[str, Any]:
    page, more = await hub_of(request).delivery.history(
        before=before, limit=limit, peer=peer, channel=channel, kind=kind, text=q
    )
    return {"messages": [message_data(m, m.delivered_to or []) for m in page], "more": more}


@router.get(
    "/tasks",
    response_model=TasksResponse,
    summary="Every peer's tasks, most recently changed first",
    responses=_ERRORS,
    openapi_extra=_VIEWER,
)
async def tasks(
    request: Request,
    _: ViewerDep,
    status: Annotated[str | None, Query(description="a task state")] = None,
    limit: Annotated[int, Query(description="1-500")] = 200,
) -> dict[str, Any]:
    return {"tasks": [t.record() for t in await hub_of(request).tasks.all(status, limit)]}


@router.get(
    "/offers",
    response_model=OffersResponse,
    summary="The job board: every offer (optionally in one state) with its claims",
    responses=_ERRORS,
    openapi_extra=_VIEWER,
)
async def offers(
    request: Request,
    _: ViewerDep,
    status: Annotated[str | None, Query(description="open | assigned | ...")] = None,
) -> dict[str, Any]:
    return {"offers": [o.record() for o in await hub_of(request).offers.listing(status)]}
