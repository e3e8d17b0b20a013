"""The activity view: MCP tool calls, reported by bridges and read by the operator."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus.domain.activity import Via
from caucus.services.roles import Access
from caucus.web.access import PeerDep, ViewerDep, access
from caucus.web.context import hub_of
from caucus.wire.activity import ActivityList, Reported, ToolCallInfo
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import ToolCallReport

router = APIRouter(tags=["activity"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or unknown token"},
    403: {"model": ErrorBody, "description": "a token of the wrong kind"},
}


@router.post(
    "/activity",
    summary="Report an MCP tool call your bridge ran (it shows in the operator's activity view)",
    responses=_ERRORS,
    openapi_extra=access(Access.AGENT),
)
async def report(body: ToolCallReport, request: Request, peer: PeerDep) -> Reported:
    hub_of(request).activity.record(
        peer.name,
        body.tool,
        ok=body.ok,
        error=body.error,
        detail=body.detail,
        ms=body.ms,
        via=Via.BRIDGE,
        arguments=body.arguments,
    )
    return Reported(recorded=True)


@router.get(
    "/operator/activity",
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
