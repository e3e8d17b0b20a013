"""Native agents launched through the operator API on a real hub: a mock agent joins, is flagged
while it has not spoken, answers a peer, shows its output, and is stopped (its process group,
gracefully); its environment is the allowlist; and the launcher refuses what it must: agent and
observer tokens, a hub that binds an address other machines reach, a missing workdir, a second
agent under a running one's name."""

from __future__ import annotations

import os
from pathlib import Path

import httpx2
import pytest

from caucus.client import HubClient
from caucus.errors import Conflict, Forbidden, InvalidRequest, LauncherDisabled, NotFound
from caucus.operator_client import OperatorClient
from caucus.testing import make_hub, serve
from caucus.wire.launcher import LaunchedAgent
from tests.conftest import eventually


async def answer_from(client: HubClient, sender: str, within: float = 30) -> str:
    async def got() -> bool:
        batch = await client.receive(timeout=2)
        found.extend(m.content for m in batch.messages if m.sender == sender)
        return bool(found)

    found: list[str] = []
    await eventually(got, within=within, what=f"an answer from {sender}")
    return found[0]


async def test_a_launched_mock_agent_joins_answers_and_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAUCUS_SECRET_OF_THE_HUB", "must-not-leak")
    monkeypatch.setenv("MY_MODEL_KEY", "passed-on-by-name")
    work = tmp_path / "work"
    work.mkdir()
    async with (
        make_hub(tmp_path / "hub", observer_token="obs-" + "x" * 20) as hub,
        serve(hub) as url,
        OperatorClient(url, token=hub.operator.token) as operator,
        HubClient(url) as carol,
    ):
        await carol.register("carol")
        listing = await operator.launched_agents()
        assert listing.enabled
        assert listing.agents == []
        launched = await operator.launch_agent(
            "ann",
            backend="mock",
            workdir=str(work),
            api_key_env="MY_MODEL_KEY",
            skills=["echo"],
            prompt="You echo.",
            allow=["read_file"],
            approve=["search"],
        )
        assert launched.state == "running"
        assert launched.pid is not None
        assert os.getpgid(launched.pid) == launched.pid  # its own process group

        environ = Path(f"/proc/{launched.pid}/environ").read_bytes().split(b"\0")
        names = {item.split(b"=", 1)[0].decode() for item in environ if item}
        assert "CAUCUS_SECRET_OF_THE_HUB" not in names
        assert "MY_MODEL_KEY" in names
        assert os.readlink(f"/proc/{launched.pid}/cwd") == str(work)
        argv = Path(f"/proc/{launched.pid}/cmdline").read_bytes().decode().split("\0")
        assert argv[argv.index("--allow") :][:2] == ["--allow", "read_file"]
        assert argv[argv.index("--approve") :][:2] == ["--approve", "search"]

        async def flagged() -> bool:
            agent = await operator_agent(operator, launched.launch_id)
            return agent.joined and agent.silent

        await eventually(flagged, within=30, what="the agent to join (and not yet speak)")
        peer = await carol.ping("ann")
        assert [s.name for s in peer.skills] == ["echo"]

        await carol.send("ann", "hello there")
        answer = await answer_from(carol, "ann")
        assert answer.startswith("echo: ")  # the mock echoes the notice it was given
        assert "hello there" in answer
        agent = await operator_agent(operator, launched.launch_id)
        assert agent.spoke
        assert not agent.silent

        output = await operator.agent_output(launched.launch_id)
        events = [line.text for line in output.lines if line.stream == "stdout"]
        assert any('"ThreadRunComplete"' in text for text in events)
        later = await operator.agent_output(launched.launch_id, after=output.lines[-1].n)
        assert all(line.n > output.lines[-1].n for line in later.lines)

        with pytest.raises(Conflict, match="running"):
            await operator.launch_agent("ann", backend="mock")

        stopped = await operator.stop_agent(launched.launch_id)
        assert stopped.state == "exited"
        assert stopped.exit_code == 0  # SIGTERM is a graceful stop, not a kill
        with pytest.raises(ProcessLookupError):
            os.killpg(launched.pid, 0)
        await eventually(
            lambda: _state_is(carol, "ann", ("offline", "reaped")), within=10, what="ann gone"
        )
        # A stopped agent's name can be launched again, resuming its identity.
        again = await operator.launch_agent("ann", backend="mock", workdir=str(work))
        await eventually(
            lambda: _joined(operator, again.launch_id), within=30, what="ann back in the room"
        )
        await operator.stop_agent(again.launch_id)


async def operator_agent(operator: OperatorClient, launch_id: str) -> LaunchedAgent:
    return next(a for a in (await operator.launched_agents()).agents if a.launch_id == launch_id)


async def _joined(operator: OperatorClient, launch_id: str) -> bool:
    return (await operator_agent(operator, launch_id)).joined


async def _state_is(client: HubClient, name: str, states: tuple[str, ...]) -> bool:
    return (await client.ping(name)).state in states


async def test_the_launcher_refuses_what_it_must(tmp_path: Path) -> None:
    observer_token = "obs-" + "y" * 20
    async with (
        make_hub(tmp_path / "hub", observer_token=observer_token) as hub,
        serve(hub) as url,
        OperatorClient(url, token=hub.operator.token) as operator,
        OperatorClient(url, token=observer_token) as observer,
        HubClient(url) as carol,
    ):
        await carol.register("carol")
        async with OperatorClient(url, token=carol.token) as agent_token:
            for who in (observer, agent_token):
                with pytest.raises(Forbidden):
                    await who.launch_agent("mallory", backend="mock")
                with pytest.raises(Forbidden):
                    await who.launched_agents()
        with pytest.raises(InvalidRequest, match="not an existing directory"):
            await operator.launch_agent("ann", backend="mock", workdir=str(tmp_path / "nope"))
        with pytest.raises(InvalidRequest, match="absolute"):
            await operator.launch_agent("ann", backend="mock", workdir="relative/dir")
        with pytest.raises(InvalidRequest, match="model"):
            await operator.launch_agent("ann", backend="openai")
        with pytest.raises(InvalidRequest):
            await operator.launch_agent("bad name!", backend="mock")
        # A field the launch does not take: the client's row names none (it cannot send one)
        # and the hub refuses one sent anyway, so no command line ever comes from a body.
        with pytest.raises(TypeError, match="launch_agent takes no command"):
            await operator.launch_agent("ann", backend="mock", command="rm -rf /")
        async with httpx2.AsyncClient(base_url=url) as raw:
            refused = await raw.post(
                "/operator/agents",
                json={"name": "ann", "backend": "mock", "command": "rm -rf /"},
                headers={"Authorization": f"Bearer {hub.operator.token}"},
            )
        assert (refused.status_code, refused.json()["error"]) == (422, "invalid_request")
        with pytest.raises(NotFound):
            await operator.agent_output("agent-99")
        assert (await operator.launched_agents()).agents == []

    # A hub that binds an address other machines reach launches nothing, whoever asks.
    async with (
        make_hub(tmp_path / "exposed", host="0.0.0.0", agent_key="k" * 24) as hub,
        serve(hub) as url,
        OperatorClient(url, token=hub.operator.token) as operator,
    ):
        listing = await operator.launched_agents()
        assert not listing.enabled
        assert listing.why_not is not None
        assert "127.0.0.1" in listing.why_not
        with pytest.raises(LauncherDisabled, match=r"127\.0\.0\.1"):
            await operator.launch_agent("ann", backend="mock")


async def test_a_hub_that_asks_for_its_agent_key_gives_it_to_the_agents_it_launches(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path / "hub", agent_key="k" * 24) as hub,
        serve(hub) as url,
        OperatorClient(url, token=hub.operator.token) as operator,
    ):
        launched = await operator.launch_agent("ann", backend="mock")
        await eventually(
            lambda: _joined(operator, launched.launch_id), within=30, what="ann in the room"
        )
        stopped = await operator.stop_agent(launched.launch_id)
        assert stopped.exit_code == 0
