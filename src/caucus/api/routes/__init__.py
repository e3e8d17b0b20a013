"""One module per resource; `ROUTERS`, every router of the API in the order it is served.

Importing the package binds every verb's glue (`web.verbs.bind`), which the in-process doors
(`/mcp`'s port) call as the routes do."""

from __future__ import annotations

from fastapi import APIRouter

from caucus.api.routes import (
    a2a,
    activity,
    agents,
    channels,
    deliberations,
    floors,
    forms,
    messages,
    meta,
    offers,
    operator,
    peers,
    reservations,
    search,
    tasks,
    teammates,
    watch,
)
from caucus.web.verbs import named_router

ROUTERS: tuple[APIRouter, ...] = (
    *(
        m.router
        for m in (
            activity,
            agents,
            peers,
            messages,
            watch,
            channels,
            floors,
            forms,
            tasks,
            offers,
            reservations,
            search,
            teammates,
            deliberations,
            operator,
            meta,
            a2a,
        )
    ),
    named_router(),
)
