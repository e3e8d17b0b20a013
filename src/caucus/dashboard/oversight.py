"""What the console reads besides the feed: who it is, history, every task and offer."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus import __version__
from caucus.domain.control import Access
from caucus.web.access import ViewerDep, access
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
from caucus.wire.fields import MAX_INT
from caucus.wire.messages import DroppedInfo, History, RoutedMessage
from caucus.wire.room import SessionInfo
from caucus.wire.work import OfferList, TaskList

router = APIRouter(prefix="/operator", tags=["operator"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or unknown token"},
    403: {"model": ErrorBody, "description": "an agent token"},
    422: {"model": ErrorBody, "description": "a bad filter"},
}
_VIEWER = access(Access.VIEWER)


@router.get(
    "/session",
    summary="Who this token is: the operator, or the read-only observer",
    responses=_ERRORS,
    openapi_extra=_VIEWER,
)
async def session(_request: Request, role: ViewerDep) -> SessionInfo:
    return SessionInfo(role=role.value, version=__version__)


@router.get(
    "/messages",
    summary="Routed messages before a seq, newest last, filtered by peer, channel, kind or text",
    responses={
        **_ERRORS,
        503: {"model": ErrorBody, "description": "a text filter ran past its time budget"},
    },
    openapi_extra=_VIEWER,
)
async def messages(
    request: Request,
    _: ViewerDep,
    before: Annotated[
        int | None, Query(ge=0, le=MAX_INT, description="only messages with a lower seq")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="1-500")] = 200,
    peer: Annotated[str | None, Query(description="from, to or delivered to this peer")] = None,
    channel: Annotated[str | None, Query(description="sent to this #channel")] = None,
    kind: Annotated[str | None, Query(description="chat, operator, system, task, ...")] = None,
    q: Annotated[str | None, Query(description="text the content holds (any case)")] = None,
) -> History:
    page, more = await hub_of(request).delivery.history(
        before=before, limit=limit, peer=peer, channel=channel, kind=kind, text=q
    )
    hub = hub_of(request)
    gone = await hub.retention.dropped()
    dropped = (
        DroppedInfo(
            messages=gone.messages, through_seq=gone.through_seq, through_ts=gone.through_ts
        )
        if gone.messages
        else None
    )
    return History(messages=[RoutedMessage.of(m) for m in page], more=more, dropped=dropped)


@router.get(
    "/tasks",
    summary="Every peer's tasks, most recently changed first",
    responses=_ERRORS,
    openapi_extra=_VIEWER,
)
async def tasks(
    request: Request,
    _: ViewerDep,
    status: Annotated[str | None, Query(description="a task state")] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="1-500")] = 200,
) -> TaskList:
    return TaskList.of(await hub_of(request).tasks.all(status, limit))


@router.get(
    "/offers",
    summary="The job board: every offer (optionally in one state) with its claims",
    responses=_ERRORS,
    openapi_extra=_VIEWER,
)
async def offers(
    request: Request,
    _: ViewerDep,
    status: Annotated[str | None, Query(description="open | assigned | ...")] = None,
) -> OfferList:
    return OfferList.of(await hub_of(request).offers.listing(status))
