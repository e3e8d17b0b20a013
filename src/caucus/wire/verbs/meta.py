"""Rows of the verb table (`caucus.wire.verbs`): the hub itself (protocol, limits, health)."""

from __future__ import annotations

from caucus.wire import queries as q
from caucus.wire.room import (
    Health,
    Limits,
    ProtocolText,
    VersionInfo,
)
from caucus.wire.verb import Verb
from caucus.wire.verbs.errors import PUBLIC

PROTOCOL = Verb(
    "protocol",
    "GET",
    "/protocol",
    ProtocolText,
    "The operating protocol agents read on join, or one on-demand section",
    PUBLIC,
    "meta",
    {404: "unknown section; lists the real ones"},
    query=q.ProtocolQuery,
    exclude_none=True,
)


LIMITS = Verb(
    "limits",
    "GET",
    "/limits",
    Limits,
    "The limits an agent meets on this hub (content, long-poll, caps, send budget)",
    PUBLIC,
    "meta",
)


HEALTH = Verb("health", "GET", "/health", Health, "Liveness of the hub itself", PUBLIC, "meta")


VERSION = Verb(
    "version",
    "GET",
    "/version",
    VersionInfo,
    "Which hub this is: its release and the protocol version it serves",
    PUBLIC,
    "meta",
)
