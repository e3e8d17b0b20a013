"""Rows of the verb table (`caucus.wire.verbs`): teammates."""

from __future__ import annotations

from caucus.wire import requests as rq
from caucus.wire.spawns import TeammateInfo, Teammates
from caucus.wire.verb import Verb
from caucus.wire.verbs.errors import AGENT, TEAMMATE

TEAMMATES = Verb(
    "teammates",
    "GET",
    "/teammates",
    Teammates,
    "What you may spawn (your grant, the "
    "operator's profiles and tools) and your teammates, newest first",
    AGENT,
    "teammates",
    TEAMMATE,
)


SPAWN = Verb(
    "spawn",
    "POST",
    "/teammates",
    TeammateInfo,
    "Spawn a teammate: a native agent on "
    "one of the operator's model profiles, recorded on the ledger",
    AGENT,
    "teammates",
    {**TEAMMATE, 409: "name_in_use: a peer here holds that name"},
    request=rq.SpawnRequest,
    status=201,
)


STOP_TEAMMATE = Verb(
    "stop_teammate",
    "POST",
    "/teammates/{spawn_id}/stop",
    TeammateInfo,
    "Stop a teammate you spawned (it leaves the room gracefully)",
    AGENT,
    "teammates",
    {**TEAMMATE, 404: "no such teammate of yours"},
)
