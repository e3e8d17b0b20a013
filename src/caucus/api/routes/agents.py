"""Launching native agents from the console: start one, read its output, stop it (operator
only, and only on a hub that binds loopback)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from caucus.domain.control import Access
from caucus.services.launcher import LaunchSpec
from caucus.web.access import OperatorDep, access
from caucus.web.context import hub_of, socket_url
from caucus.web.openapi import without
from caucus.wire.errors import ErrorBody
from caucus.wire.fields import MAX_INT
from caucus.wire.launcher import AgentOutput, LaunchedAgent, LaunchedList
from caucus.wire.requests import LaunchRequest

router = APIRouter(prefix="/operator/agents", tags=["operator"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or unknown token"},
    403: {
        "model": ErrorBody,
        "description": "an agent or observer token, or `launcher_disabled`: the hub binds an "
        "address other machines reach",
    },
    404: {"model": ErrorBody, "description": "no such launched agent"},
    409: {"model": ErrorBody, "description": "one by that name is running, or too many are"},
    422: {"model": ErrorBody, "description": "a bad name, workdir or backend setting"},
}
_OPERATOR = access(Access.OPERATOR)


def _hub_url(request: Request) -> str:
    return socket_url(request.scope, str(request.base_url))


@router.post(
    "",
    summary="Start a native agent (`caucus agent`) on this machine; it joins the room",
    responses=without(_ERRORS, 404),
    openapi_extra=_OPERATOR,
    status_code=201,
)
async def launch(body: LaunchRequest, request: Request, _: OperatorDep) -> LaunchedAgent:
    spec = LaunchSpec(**body.model_dump())
    return LaunchedAgent.of(await hub_of(request).launcher.launch(spec, _hub_url(request)))


@router.get(
    "",
    summary="Agents launched from this hub process, newest first, and whether it launches any",
    responses=without(_ERRORS, 404, 409),
    openapi_extra=_OPERATOR,
)
async def launched(request: Request, _: OperatorDep) -> LaunchedList:
    launcher = hub_of(request).launcher
    return LaunchedList(
        enabled=launcher.why_not() is None,
        why_not=launcher.why_not(),
        agents=[LaunchedAgent.of(a) for a in launcher.listing()],
    )


@router.get(
    "/{launch_id}",
    summary="One launched agent: its process, and whether it joined and spoke",
    responses=without(_ERRORS, 409),
    openapi_extra=_OPERATOR,
)
async def one(launch_id: str, request: Request, _: OperatorDep) -> LaunchedAgent:
    return LaunchedAgent.of(hub_of(request).launcher.get(launch_id))


@router.get(
    "/{launch_id}/output",
    summary="What the agent printed (the last lines kept), after line `after`",
    responses=without(_ERRORS, 409),
    openapi_extra=_OPERATOR,
)
async def output(
    launch_id: str,
    request: Request,
    _: OperatorDep,
    after: Annotated[int, Query(ge=0, le=MAX_INT)] = 0,
) -> AgentOutput:
    return AgentOutput.of(hub_of(request).launcher.output(launch_id, after))


@router.post(
    "/{launch_id}/stop",
    summary="Stop the agent (SIGTERM to its process group, SIGKILL after 5 s); returns once ended",
    responses=without(_ERRORS, 409),
    openapi_extra=_OPERATOR,
)
async def stop(launch_id: str, request: Request, _: OperatorDep) -> LaunchedAgent:
    return LaunchedAgent.of(await hub_of(request).launcher.stop(launch_id))
