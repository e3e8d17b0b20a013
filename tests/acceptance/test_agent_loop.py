"""Two native agents set to answer everything stop looping: each answers the other a few times,
then the loop dampener fires, the agent stops answering, and the operator is told (the agent's
status, one last message in the room's transcript, an event on its stdout)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from caucus.client import HubClient
from caucus.testing import Call, FakeOpenAI, Say, last_user, make_hub, serve, serve_fake
from tests.agentproc import AgentProcess
from tests.conftest import eventually


def chatty(request: dict[str, Any]) -> list[Any]:
    said = last_user(request)
    if "prompt:on-start" in said:
        if "You are ann" in request["messages"][0]["content"] and not any(
            m["role"] == "tool" for m in request["messages"]
        ):
            return [Call("say", {"to": "bob", "content": "hello bob"})]
        return [Say("NO_REPLY")]
    return [Say(f"and another thing ({len(request['messages'])})")]


async def agent(name: str, hub_url: str, model_url: str, tmp: Path) -> AgentProcess:
    prompt = tmp / f"{name}.md"
    prompt.write_text(f"You are {name}. Answer everything.\n\n# On Start\nGo.\n", "utf-8")
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "caucus", "agent", "--model", "m", "--base-url"),
        *(f"{model_url}/v1", "--hub", hub_url, "--name", name, "--prompt", str(prompt)),
        *("--loop-limit", "3"),
        cwd=str(tmp),
        env={**os.environ, "XDG_STATE_HOME": str(tmp / f"state-{name}")},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    return AgentProcess(proc)


async def test_two_agents_answering_each_other_stop_and_the_operator_is_told(
    tmp_path: Path,
) -> None:
    async with (
        make_hub(tmp_path / "hub") as hub,
        serve(hub) as url,
        serve_fake(FakeOpenAI(chatty)) as model_url,
        HubClient(url) as watcher,
    ):
        await watcher.register("watcher")
        bob = await agent("bob", url, model_url, tmp_path)
        await bob.until("ThreadRunComplete")  # bob is in the room before ann greets him
        ann = await agent("ann", url, model_url, tmp_path)
        fired = await asyncio.gather(
            ann.until("LoopDampened", within=60), bob.until("LoopDampened", within=60)
        )
        assert {f["to"] for f in fired} == {"ann", "bob"}

        async def told() -> bool:
            peers = {p.name: p.status for p in await watcher.peers()}
            return all("a reply loop" in peers[n] for n in ("ann", "bob"))

        # The hub budgets status updates: the last one may wait a few seconds for its turn.
        await eventually(told, within=30, what="both statuses to say so")
        # The exchange is over: no agent answers the other any more.
        history, _ = await hub.history.page(limit=200)
        chat = [m for m in history if m.sender in ("ann", "bob") and m.to in ("ann", "bob")]
        assert sum("looks like a loop" in m.content for m in chat) == 2
        settled = len(chat)

        # Two rounds of a word from the watcher, each answered by both: each agent works its
        # inbox in order, so a loop still going would have sent one more message by the end.
        async def answered(rounds: int) -> bool:
            history, _ = await hub.history.page(limit=200)
            to_watcher = [m.sender for m in history if m.to == "watcher"]
            return all(to_watcher.count(n) >= rounds for n in ("ann", "bob"))

        for rounds in (1, 2):
            for name in ("ann", "bob"):
                await watcher.send(name, f"are you there? ({rounds})")
            await eventually(lambda r=rounds: answered(r), within=30, what=f"round {rounds}")
        history, _ = await hub.history.page(limit=200)
        quiet = [m for m in history if m.sender in ("ann", "bob") and m.to in ("ann", "bob")]
        assert len(quiet) == settled
        await hub.control.stop()
        for a in (ann, bob):
            code, stderr = await a.finish()
            assert code == 0, stderr
