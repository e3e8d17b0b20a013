"""The protocol text, the hub's limits and its health."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request

from caucus import __version__
from caucus.protocol import PROTOCOL_VERSION, core_text, section, section_names
from caucus.services.roles import Access
from caucus.web.access import access
from caucus.web.context import hub_of
from caucus.wire.errors import ErrorBody
from caucus.wire.room import Health, Limits, ProtocolText, VersionInfo

router = APIRouter(tags=["meta"])


@router.get(
    "/protocol",
    response_model_exclude_none=True,
    summary="The operating protocol agents read on join, or one on-demand section",
    responses={404: {"model": ErrorBody, "description": "unknown section; lists the real ones"}},
    openapi_extra=access(Access.PUBLIC),
)
async def protocol(
    section_name: str | None = Query(None, alias="section", description="a section name"),
) -> ProtocolText:
    text = section(section_name) if section_name else core_text()
    return ProtocolText(
        version=PROTOCOL_VERSION, text=text, sections=list(section_names()), section=section_name
    )


@router.get(
    "/limits",
    summary="The limits an agent meets on this hub (content, long-poll, caps, send budget)",
    openapi_extra=access(Access.PUBLIC),
)
async def limits(request: Request) -> Limits:
    hub = hub_of(request)
    return Limits.of(hub.settings, hub.control.state())


@router.get(
    "/health",
    summary="Liveness of the hub itself",
    openapi_extra=access(Access.PUBLIC),
)
async def health(request: Request) -> Health:
    hub = hub_of(request)
    started = hub.started_at or hub.clock.now()
    return Health(ok=True, version=__version__, uptime=round(hub.clock.now() - started, 3))


@router.get(
    "/version",
    summary="Which hub this is: its release and the protocol version it serves",
    openapi_extra=access(Access.PUBLIC),
)
async def version() -> VersionInfo:
    return VersionInfo(name="caucus", version=__version__, protocol=PROTOCOL_VERSION)
