"""The protocol text, the hub's limits and its health."""

from __future__ import annotations

from fastapi import APIRouter

from caucus import __version__
from caucus.protocol import PROTOCOL_VERSION, core_text, section, section_names
from caucus.web.verbs import Call, serve
from caucus.wire.queries import ProtocolQuery
from caucus.wire.room import Health, Limits, ProtocolText, VersionInfo
from caucus.wire.verbs import VERBS

router = APIRouter()


async def _protocol(c: Call[None, ProtocolQuery]) -> ProtocolText:
    name = c.rq.section
    return ProtocolText(
        version=PROTOCOL_VERSION,
        text=section(name) if name else core_text(),
        sections=list(section_names()),
        section=name,
    )


async def _limits(c: Call[None, None]) -> Limits:
    return Limits.of(c.hub.settings, c.hub.control.state())


async def _health(c: Call[None, None]) -> Health:
    started = c.hub.started_at or c.hub.clock.now()
    return Health(ok=True, version=__version__, uptime=round(c.hub.clock.now() - started, 3))


async def _version(_: Call[None, None]) -> VersionInfo:
    return VersionInfo(name="caucus", version=__version__, protocol=PROTOCOL_VERSION)


serve(router, VERBS["protocol"], _protocol)
serve(router, VERBS["limits"], _limits)
serve(router, VERBS["health"], _health)
serve(router, VERBS["version"], _version)
