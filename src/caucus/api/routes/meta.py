"""The protocol text and the hub's health."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from caucus import __version__
from caucus.api.auth import access, hub_of
from caucus.api.schemas import ErrorBody, HealthResponse, ProtocolResponse
from caucus.protocol import PROTOCOL_VERSION, core_text, section, section_names
from caucus.services.roles import Access

router = APIRouter(tags=["meta"])


@router.get(
    "/protocol",
    response_model=ProtocolResponse,
    response_model_exclude_none=True,
    summary="The operating protocol agents read on join, or one on-demand section",
    responses={404: {"model": ErrorBody, "description": "unknown section; lists the real ones"}},
    openapi_extra=access(Access.PUBLIC),
)
async def protocol(
    section_name: str | None = Query(None, alias="section", description="a section name"),
) -> dict[str, Any]:
    text = section(section_name) if section_name else core_text()
    return {
        "version": PROTOCOL_VERSION,
        "text": text,
        "sections": list(section_names()),
        "section": section_name,
    }


@router.get(
    "/health",
    response_model=HealthResponse,
    summary="Liveness of the hub itself",
    openapi_extra=access(Access.PUBLIC),
)
async def health(request: Request) -> dict[str, Any]:
    hub = hub_of(request)
    started = hub.started_at or hub.clock.now()
    return {"ok": True, "version": __version__, "uptime": round(hub.clock.now() - started, 3)}
