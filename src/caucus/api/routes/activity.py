"""The activity view: MCP tool calls, reported by bridges and read by the operator."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from caucus.domain.activity import Via
from caucus.domain.control import Role
from caucus.domain.peers import Peer
from caucus.web.verbs import Call, serve
from caucus.wire.activity import ActivityList, Reported, ToolCallInfo
from caucus.wire.errors import ErrorBody
from caucus.wire.queries import ActivityQuery
from caucus.wire.requests import ToolCallReport
from caucus.wire.verbs import VERBS, oversight

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


async def _calls(c: Call[Role, ActivityQuery]) -> ActivityList:
    rq = c.rq
    calls = c.hub.activity.listing(limit=rq.limit, caller=rq.caller, tool=rq.tool, errors=rq.errors)
    return ActivityList.model_construct(calls=[ToolCallInfo.of(call) for call in calls])


serve(router, oversight.OPERATOR_ACTIVITY, _calls)
