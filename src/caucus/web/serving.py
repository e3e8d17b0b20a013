"""How the hub is served by uvicorn (its public API): the deadlines and the lean lane of
`web/uvicorn_http.py`, and how many connections at once."""

from __future__ import annotations

import logging
import resource
from typing import Any

import uvicorn

from caucus.config import Settings
from caucus.web.uvicorn_http import patient_http

log = logging.getLogger(__name__)

# Descriptors kept back from the connection cap: the database, the ledger, logs, the loop.
RESERVED_FDS = 64


def connection_cap(wanted: int, reserve: int = 0) -> int:
    """At most `wanted` connections, and never more than the descriptors this process may
    open (raised to its hard limit first) leave room for, with `reserve` more kept for the
    operator past the cap: past it a client gets 503 instead of the hub failing to accept
    anything at all."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    room = max(16, soft - RESERVED_FDS - reserve)
    if wanted > room:
        log.warning(
            "serving at most %d connections (not %d): this process may open %d descriptors",
            room,
            wanted,
            soft,
        )
    return min(wanted, room)


def uvicorn_config(app: Any, settings: Settings, **options: Any) -> uvicorn.Config:
    """How the hub is served, by `caucus hub` and by `caucus.testing.serve` alike: the
    deadlines and the connection cap of `settings`, and no logging setup of uvicorn's own
    (`caucus.logs` serves every logger)."""
    return uvicorn.Config(
        app,
        http=patient_http(settings.head_timeout, settings.body_timeout),
        limit_concurrency=connection_cap(settings.max_connections, settings.operator_reserve),
        log_config=None,
        lifespan="on",
        proxy_headers=False,  # trusting X-Forwarded-* is a deployment decision
        **options,
    )
