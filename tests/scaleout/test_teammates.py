"""Teammates across hub processes (issue 34): two `caucus hub` processes on one PostgreSQL
database. A teammate spawned through one runs there; the operator, on the other, sees it and
stops it (the stop travels by the database's signal to the process that runs it, which ends
it and says so); the room's bound counts teammates of every process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caucus.client import HubClient
from caucus.errors import CapTeammates
from caucus.operator_client import OperatorClient
from tests.conftest import eventually
from tests.scaleout.conftest import Room, operator_token

PROFILES = json.dumps({"echo": {"backend": "mock"}})


async def test_a_teammate_spawned_on_one_process_is_stopped_from_another(
    room: Room, tmp_path: Path
) -> None:
    first, second = room(2, env={"CAUCUS_SPAWN_PROFILES": PROFILES, "CAUCUS_SPAWN_ROOM_MAX": "1"})
    token = operator_token(tmp_path)
    async with (
        HubClient(first.url) as lead,
        HubClient(second.url) as other,
        OperatorClient(second.url, token=token) as operator,
    ):
        await lead.register("lead")
        await other.register("other")
        await operator.grant_spawn("lead", teammates=1)
        await operator.grant_spawn("other", teammates=1)
        mate = await lead.spawn("You echo.", "echo", name="mate")
        with pytest.raises(CapTeammates, match="room"):  # the room's bound spans processes
            await other.spawn("You echo.", "echo", name="mate-2")

        async def joined() -> bool:
            return any(p.name == "mate" for p in await other.peers())

        await eventually(joined, within=30, what="mate to join")  # its graceful stop is set up
        seen = await operator.teammates()
        assert [(t.name, t.state) for t in seen.teammates] == [("mate", "running")]
        stopped = await operator.stop_teammate(mate.spawn_id)
        assert (stopped.state, stopped.ended_by, stopped.exit_code) == ("ended", "operator", 0)
