"""Launching native agents from the console: start one, read its output, stop it (operator
only, and only on a hub that binds loopback)."""

from __future__ import annotations

from fastapi import APIRouter

from caucus.domain.control import Role
from caucus.services.launcher import LaunchSpec
from caucus.web.verbs import Call, serve
from caucus.wire.launcher import AgentOutput, LaunchedAgent, LaunchedList
from caucus.wire.queries import OutputQuery
from caucus.wire.requests import LaunchRequest
from caucus.wire.verbs import oversight as v

router = APIRouter()


async def _launch(c: Call[Role, LaunchRequest]) -> LaunchedAgent:
    spec = LaunchSpec(**c.rq.model_dump())
    return LaunchedAgent.of(await c.hub.launcher.launch(spec, c.url_for_agents()))


async def _launched(c: Call[Role, None]) -> LaunchedList:
    launcher = c.hub.launcher
    return LaunchedList(
        enabled=launcher.why_not() is None,
        why_not=launcher.why_not(),
        agents=[LaunchedAgent.of(a) for a in launcher.listing()],
    )


async def _one(c: Call[Role, None]) -> LaunchedAgent:
    return LaunchedAgent.of(c.hub.launcher.get(c.path["launch_id"]))


async def _output(c: Call[Role, OutputQuery]) -> AgentOutput:
    return AgentOutput.of(c.hub.launcher.output(c.path["launch_id"], c.rq.after))


async def _stop(c: Call[Role, None]) -> LaunchedAgent:
    return LaunchedAgent.of(await c.hub.launcher.stop(c.path["launch_id"]))


serve(router, v.LAUNCH_AGENT, _launch)
serve(router, v.LAUNCHED_AGENTS, _launched)
serve(router, v.LAUNCHED_AGENT, _one)
serve(router, v.AGENT_OUTPUT, _output)
serve(router, v.STOP_AGENT, _stop)
