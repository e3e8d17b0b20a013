"""Teammates on demand (issue 34) on a real hub over HTTP: an agent the operator granted
`spawn` starts a native agent on one of the operator's model profiles; it joins and answers,
shows in the operator's launched agents as the spawner's, is on the ledger, and stops when
asked, when its spawner leaves, or when the operator says. Refused with a clear code: no
grant (never by default), a profile or tool not on the operator's list, past the grant's or
the room's bound, an operator power reached with an agent token."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from mcp import Client

from caucus.client import HubClient
from caucus.domain.spawns import Spawn
from caucus.errors import (
    CapTeammates,
    Forbidden,
    InvalidRequest,
    NameInUse,
    NotFound,
    SpawnNotApproved,
    SpawnNotGranted,
)
from caucus.operator_client import OperatorClient
from caucus.testing import make_hub, serve
from tests.conftest import eventually
from tests.interaction.test_launcher import answer_from, operator_agent
from tests.mcptools import call, fail

FILESERVER = Path(__file__).resolve().parents[1] / "fileserver.py"
PROFILES = {
    "echo": {"backend": "mock", "description": "echoes what it is told"},
    "big": {"backend": "openai", "model": "big-model", "base_url": "http://127.0.0.1:9/v1"},
}


async def test_a_granted_agent_spawns_a_teammate_that_joins_answers_and_is_recorded(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(
            tmp_path / "hub",
            spawn_profiles=PROFILES,
            spawn_tools={"files": f"{sys.executable} {FILESERVER}"},
        ) as hub,
        serve(hub) as url,
        OperatorClient(url, token=hub.operator.token) as operator,
        HubClient(url) as lead,
    ):
        await lead.register("lead")
        options = await lead.teammates()
        assert (options.granted, options.allowed, options.running) == (False, 0, 0)
        assert [p.name for p in options.profiles] == ["big", "echo"]
        assert options.tools == ["files"]
        with pytest.raises(SpawnNotGranted):  # never by default
            await lead.spawn("You echo.", "echo")
        # Without a grant, the grant is what to fix first, whatever else the ask gets wrong.
        for profile, tools in (("unlisted", []), ("echo", ["unlisted"])):
            with pytest.raises(SpawnNotGranted):
                await lead.spawn("You echo.", profile, tools=tools)

        grant = await operator.grant_spawn("lead", teammates=2)
        assert (grant.peer, grant.teammates) == ("lead", 2)
        mate = await lead.spawn("You are lead's echo.", "echo", tools=["files"], name="echo-1")
        assert (mate.name, mate.spawner, mate.profile, mate.state) == (
            "echo-1",
            "lead",
            "echo",
            "running",
        )
        assert mate.launch_id is not None
        assert mate.record is not None

        # The operator sees it among the launched agents, as lead's; the tool's command line
        # is the operator's, handed to the agent as an argument list.
        launched = await operator_agent(operator, mate.launch_id)
        assert launched.spawned_by == "lead"
        assert launched.pid is not None
        argv = Path(f"/proc/{launched.pid}/cmdline").read_bytes().decode().split("\0")
        assert argv[argv.index("--mcp-stdio") + 1] == f"{sys.executable} {FILESERVER}"

        # It joins and answers like any agent.
        await eventually(lambda: _joined(operator, launched.launch_id), within=30, what="join")
        await lead.send("echo-1", "hello teammate")
        assert "hello teammate" in await answer_from(lead, "echo-1")

        # On the ledger: who asked, what was launched with what prompt.
        ledger = [json.loads(line) for line in hub.decisions.path.read_text().splitlines()]
        (record,) = [r for r in ledger if r.get("caucus", {}).get("kind") == "spawn"]
        assert record["hash"] == mate.record
        assert record["caucus"]["spawner"] == "lead"
        assert record["caucus"]["teammate"] == "echo-1"
        assert record["caucus"]["prompt"] == "You are lead's echo."
        assert record["caucus"]["tools"] == ["files"]
        assert [d.subject for d in await lead.decisions()] == ["lead spawned echo-1"]

        overview = await operator.teammates()
        assert [(g.peer, g.teammates) for g in overview.grants] == [("lead", 2)]
        assert [t.name for t in overview.teammates] == ["echo-1"]
        assert overview.room_running == 1

        stopped = await lead.stop_teammate(mate.spawn_id)
        assert (stopped.state, stopped.ended_by, stopped.exit_code) == ("ended", "spawner", 0)
        with pytest.raises(ProcessLookupError):
            os.killpg(launched.pid, 0)
        assert (await lead.teammates()).running == 0


async def test_spawns_are_bounded_per_agent_and_per_room_and_refused_with_clear_codes(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path / "hub", spawn_profiles=PROFILES, spawn_room_max=2) as hub,
        serve(hub) as url,
        OperatorClient(url, token=hub.operator.token) as operator,
        HubClient(url) as lead,
        HubClient(url) as other,
        HubClient(url) as carol,
    ):
        await lead.register("lead")
        await other.register("other")
        await carol.register("carol")
        await operator.grant_spawn("lead", teammates=1)
        await operator.grant_spawn("other", teammates=3)

        with pytest.raises(SpawnNotApproved, match="not on the operator's list"):
            await lead.spawn("You echo.", "gpt-unlimited")
        with pytest.raises(SpawnNotApproved, match="tools"):
            await lead.spawn("You echo.", "echo", tools=["shell"])
        with pytest.raises(InvalidRequest):
            await lead.spawn("   ", "echo")
        with pytest.raises(NameInUse):
            await lead.spawn("You echo.", "echo", name="carol")
        assert (await operator.teammates()).teammates == []  # nothing refused was started

        first = await lead.spawn("You echo.", "echo")
        assert first.name.startswith("lead-")
        with pytest.raises(CapTeammates, match="grant"):
            await lead.spawn("You echo too.", "echo")
        await other.spawn("You echo.", "echo", name="o-1")
        with pytest.raises(CapTeammates, match="room"):
            await other.spawn("You echo.", "echo", name="o-2")

        # Agent tokens reach no operator power, and nobody stops another's teammate.
        async with OperatorClient(url, token=lead.token) as agent_token:
            with pytest.raises(Forbidden):
                await agent_token.grant_spawn("lead", teammates=16)
            with pytest.raises(Forbidden):
                await agent_token.stop_teammate(first.spawn_id)
        with pytest.raises(NotFound):
            await other.stop_teammate(first.spawn_id)
        with pytest.raises(InvalidRequest):
            await operator.grant_spawn("carol", teammates=17)

        # Revoking stops new spawns; those running go on until stopped.
        await operator.revoke_spawn("other")
        with pytest.raises(SpawnNotGranted):
            await other.spawn("You echo.", "echo", name="o-3")
        assert (await other.teammates()).running == 1

        # The operator stops any teammate; a spawner that leaves takes its teammates along.
        stopped = await operator.stop_teammate(first.spawn_id)
        assert (stopped.state, stopped.ended_by) == ("ended", "operator")
        await other.leave()

        async def none_running() -> bool:
            return (await operator.teammates()).room_running == 0

        await eventually(none_running, within=30, what="other's teammate stopped with it")
        ended = {t.name: t.ended_by for t in (await operator.teammates()).teammates}
        assert ended == {first.name: "operator", "o-1": "spawner-left"}


async def test_teammates_end_with_their_hub_and_say_so(tmp_path: Path) -> None:
    async with (
        make_hub(tmp_path / "hub", spawn_profiles=PROFILES) as hub,
        serve(hub) as url,
        HubClient(url) as lead,
        OperatorClient(url, token=hub.operator.token) as op,
    ):
        await lead.register("lead")
        await op.grant_spawn("lead", teammates=1)
        mate = await lead.spawn("You echo.", "echo", name="mate")
    async with (
        make_hub(tmp_path / "hub", spawn_profiles=PROFILES) as hub,
        serve(hub) as url,
        OperatorClient(url, token=hub.operator.token) as op,
    ):
        overview = await op.teammates()
        assert overview.room_running == 0
        ended = [(t.name, t.state, t.ended_by) for t in overview.teammates]
        assert ended == [("mate", "ended", "hub-stopped")]
        assert mate.launch_id is not None


@pytest.mark.sqlite_file
async def test_a_hub_alone_on_its_file_counts_no_teammate_of_a_run_that_crashed(
    tmp_path: Path,
) -> None:
    # What a hub that died without closing leaves: a teammate the room counts as running.
    async with make_hub(tmp_path / "hub", spawn_profiles=PROFILES) as hub:
        lead = (await hub.principals.register(name="lead")).peer
        await hub.spawns.grant("lead", 1)
        left = Spawn(
            id="sp_crashed",
            spawner_id=lead.id,
            spawner="lead",
            name="mate",
            profile="echo",
            tools=(),
            prompt="You echo.",
            process="a process that died",
            launch_id=None,
            record=None,
            state="running",
            ended_by=None,
            exit_code=None,
            started_at=hub.clock.now(),
            ended_at=None,
        )
        await hub._db.write(lambda r: r.spawns.insert(left))
        assert (await hub.spawns.standing(lead)).running == 1
    async with make_hub(tmp_path / "hub", spawn_profiles=PROFILES) as hub:
        standing = await hub.spawns.standing(None)
        assert standing.room_running == 0
        assert [(t.state, t.ended_by) for t in standing.teammates] == [("ended", "hub-stopped")]


async def _joined(operator: OperatorClient, launch_id: str) -> bool:
    return (await operator_agent(operator, launch_id)).joined


async def test_an_mcp_host_spawns_lists_and_stops_a_teammate_with_the_teammate_tool(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path / "hub", spawn_profiles=PROFILES) as hub,
        serve(hub) as url,
        OperatorClient(url, token=hub.operator.token) as operator,
        Client(f"{url}/mcp", mode="legacy") as lead,
    ):
        await call(lead, "join", name="lead")
        ask = {"action": "spawn", "prompt": "You echo.", "profile": "echo"}
        code, text = await fail(lead, "teammate", **ask)
        assert code == "spawn_not_granted"
        assert "operator" in text
        await operator.grant_spawn("lead", teammates=1)
        result = await lead.call_tool(
            "teammate", {"action": "spawn", "prompt": "You echo.", "profile": "echo", "name": "e1"}
        )
        assert not result.is_error, result.content
        data = result.structured_content
        assert data is not None
        assert (data["granted"], data["running"]) == (True, 1)
        (mate,) = data["teammates"]
        assert (mate["name"], mate["state"]) == ("e1", "running")
        text = result.content[0].text  # type: ignore[union-attr]
        assert text.startswith("Spawned e1")
        stopped = await lead.call_tool("teammate", {"action": "stop", "spawn_id": mate["spawn_id"]})
        assert stopped.structured_content is not None
        assert stopped.structured_content["running"] == 0
        assert stopped.structured_content["teammates"][0]["ended_by"] == "spawner"
