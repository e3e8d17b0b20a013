"""The activity view: MCP tool calls, reported by bridges and read by the operator."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus.api.verbs import Call, serve
from caucus.domain.activity import Via
from caucus.domain.control import Access
from caucus.domain.peers import Peer
from caucus.web.access import ViewerDep, access
from caucus.web.context import hub_of
from caucus.wire.activity import ActivityList, Reported, ToolCallInfo
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import ToolCallReport
from caucus.wire.verbs import VERBS

router = APIRouter()

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or unknown token"},
    403: {"model": ErrorBody, "description": "a token of the wrong kind"},
}


async def _report(c: Call[Peer, ToolCallReport]) -> Reported:
    rq = c.rq
    c.hub.activity.record(
        c.who.name,
        rq.tool,
        ok=rq.ok,
        error=rq.error,
        detail=rq.detail,
        ms=rq.ms,
        via=Via.BRIDGE,
        arguments=rq.arguments,
    )
    return Reported(recorded=True)


serve(router, VERBS["report_tool_call"], _report)


@router.get(
    "/operator/activity",
    tags=["activity"],
    summary="MCP tool calls, newest first: tool, caller, outcome, error, duration",
    responses=_ERRORS,
    openapi_extra=access(Access.VIEWER),
)
async def activity(
    request: Request,
    _: ViewerDep,
    limit: Annotated[int, Query(ge=1, le=2000)] = 200,
    caller: Annotated[str | None, Query(max_length=64)] = None,
    tool: Annotated[str | None, Query(max_length=64)] = None,
    errors: bool = False,
) -> ActivityList:
    calls = hub_of(request).activity.listing(limit=limit, caller=caller, tool=tool, errors=errors)
    return ActivityList.model_construct(calls=[ToolCallInfo.of(c) for c in calls])
