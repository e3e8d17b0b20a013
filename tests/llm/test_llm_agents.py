"""Two native agents on a real model: Qwen2.5-Coder-0.5B behind llama-cpp-python's
OpenAI-compatible server, a real hub over HTTP. ann's first request is forced to call `say`
(`--start-with-tool say`): the server constrains the answer to that tool's JSON schema, so the
call is certain and its arguments parse; bob-bot, on the same model, answers what reaches him.
A 0.5B model's words are not asserted, only what the runtime guarantees around them."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from tests.agentproc import AgentProcess
from tests.waiting import eventually, within

pytestmark = pytest.mark.llm

ANN = """You are ann-bot, an agent in a team chat. Your teammate is bob-bot.

# On Start
Use the say tool with to="bob-bot" to ask bob-bot what 2 + 3 is.
"""

BOB = """You are bob-bot, an agent in a team chat. Answer every message you get with the say
tool, to the teammate who sent it, in one short sentence.
"""


async def start(
    name: str, prompt: str, hub_url: str, llm_url: str, tmp: Path, *extra: str
) -> AgentProcess:
    path = tmp / f"{name}.md"
    path.write_text(prompt, "utf-8")
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "caucus", "agent", "--model", "qwen", "--base-url", llm_url),
        *("--hub", hub_url, "--name", name, "--prompt", str(path), "--temperature", "0"),
        *("--max-turns", "3", *extra),
        cwd=str(tmp),
        env={**os.environ, "XDG_STATE_HOME": str(tmp / f"state-{name}")},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    return AgentProcess(proc)


async def next_event(agent: AgentProcess, kind: str, limit: float) -> dict[str, Any]:
    """The next event of `kind` on the agent's stdout (a real model on two cores is slow)."""
    assert agent.proc.stdout is not None
    stdout = agent.proc.stdout

    async def read() -> dict[str, Any]:
        while True:
            line = await stdout.readline()
            assert line, "the agent closed stdout early"
            event = json.loads(line)
            agent.events.append(event)
            if event["event"] == kind:
                return event

    return await within(read(), limit, f"{kind} from {agent.proc.pid}")


async def said(hub: Hub, sender: str, to: str) -> list[str]:
    history, _ = await hub.history.page(limit=100)
    return [m.content for m in history if m.sender == sender and m.to == to]


def forced_say(event: dict[str, Any]) -> dict[str, Any]:
    """The arguments of the `say` call an agent's first model message had to make."""
    calls = event["message"]["tool_calls"]
    assert [c["name"] for c in calls] == ["say"], event
    arguments = calls[0]["arguments"]
    assert isinstance(arguments, dict), calls  # it parsed: the runtime keeps text otherwise
    assert isinstance(arguments.get("content"), str), calls
    return arguments


async def test_two_agents_on_a_real_model_exchange_a_message_and_a_forced_call_is_made(
    tmp_path: Path, llm_url: str
) -> None:
    async with make_hub(tmp_path / "hub") as hub, serve(hub) as url:
        bob = await start("bob-bot", BOB, url, llm_url, tmp_path, "--start-with-tool", "say")

        # bob is in the room before ann greets him.
        async def bob_joined() -> bool:
            return "bob-bot" in {p.name for p in await hub.registry.peers()}

        await eventually(bob_joined, within=60, what="bob-bot to join")

        ann = await start("ann-bot", ANN, url, llm_url, tmp_path, "--start-with-tool", "say")
        started = time.monotonic()
        asked = forced_say(await next_event(ann, "NewThreadMessage", 300))
        ann_turn = time.monotonic() - started
        assert asked["to"] == "bob-bot", asked

        # It went through the hub to bob, whose first request was forced to answer with `say`.
        started = time.monotonic()
        answered = forced_say(await next_event(bob, "NewThreadMessage", 300))
        bob_turn = time.monotonic() - started
        heard = [e["text"] for e in bob.events if e["event"] == "NoticeReceived"]
        assert any("from ann-bot to you" in t and asked["content"] in t for t in heard), heard
        assert answered["to"] == "ann-bot", answered

        # bob's words reached ann through the hub in turn.
        await next_event(ann, "NoticeReceived", 300)
        assert "from bob-bot to you" in ann.events[-1]["text"]
        assert answered["content"] in ann.events[-1]["text"]
        print(
            f"llm tier: ann's forced call {ann_turn:.1f} s, bob's {bob_turn:.1f} s",
            file=sys.stderr,
        )
        # What each would say next is not under test, and a 0.5B model can ramble for minutes:
        # the stop lets nothing new start, the interrupts end the runs under way.
        await hub.control.stop()
        for name in ("ann-bot", "bob-bot"):
            await hub.control.interrupt(name)
        for agent in (ann, bob):
            code, stderr = await agent.finish(within=120)
            assert code == 0, stderr
