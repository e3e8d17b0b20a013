"""Teammates on demand (issue 34): an agent with the operator's spawn grant starts native
agents on the operator's model profiles; the operator grants, watches and stops."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from caucus.domain.control import Role
from caucus.domain.peers import Peer
from caucus.services.spawns import SpawnAsk
from caucus.web.verbs import Call, serve
from caucus.wire.errors import ErrorBody
from caucus.wire.requests import SpawnGrantRequest, SpawnRequest
from caucus.wire.spawns import SpawnGrantInfo, TeammateInfo, Teammates, TeammatesOverview
from caucus.wire.verbs import VERBS, oversight
from caucus.wire.verbs.errors import TEAMMATE

router = APIRouter()
_ERRORS: dict[int | str, dict[str, Any]] = {
    s: {"model": ErrorBody, "description": d} for s, d in TEAMMATE.items()
}


async def _mine(c: Call[Peer, None]) -> Teammates:
    return Teammates.of(await c.hub.spawns.standing(c.who))


async def _spawn(c: Call[Peer, SpawnRequest]) -> TeammateInfo:
    rq = c.rq
    ask = SpawnAsk(prompt=rq.prompt, profile=rq.profile, tools=rq.tools, name=rq.name)
    return TeammateInfo.of(await c.hub.spawns.spawn(c.who, ask, c.url_for_agents()))


async def _stop(c: Call[Peer, None]) -> TeammateInfo:
    return TeammateInfo.of(await c.hub.spawns.stop_teammate(c.path["spawn_id"], c.who))


serve(router, VERBS["teammates"], _mine)
serve(router, VERBS["spawn"], _spawn)
serve(router, VERBS["stop_teammate"], _stop)


async def _overview(c: Call[Role, None]) -> TeammatesOverview:
    return TeammatesOverview.of(await c.hub.spawns.standing(None))


async def _grant(c: Call[Role, SpawnGrantRequest]) -> SpawnGrantInfo:
    return SpawnGrantInfo.of(await c.hub.spawns.grant(c.path["name"], c.rq.teammates))


async def _revoke(c: Call[Role, None]) -> None:
    await c.hub.spawns.revoke(c.path["name"])


async def _stop_any(c: Call[Role, None]) -> TeammateInfo:
    return TeammateInfo.of(await c.hub.spawns.stop_teammate(c.path["spawn_id"], None))


serve(router, oversight.OPERATOR_TEAMMATES, _overview)
serve(router, oversight.GRANT_SPAWN, _grant)
serve(router, oversight.REVOKE_SPAWN, _revoke)
serve(router, oversight.STOP_ANY_TEAMMATE, _stop_any)
