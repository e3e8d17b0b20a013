"""Native agents in the room: two `caucus agent --hub` processes on the scripted
OpenAI-compatible fake, a real hub over HTTP, an HTTP peer and an MCP agent (the official SDK
client on /mcp). Each agent's model is offered the room's whole catalog (the tools an MCP host
gets, but for those the runtime does itself), replies go where the message came from,
`NO_REPLY` posts nothing, a file is reserved, a task sent by the MCP agent is answered, an offer
is claimed with the room's own tools, and the operator's stop ends an agent with exit 0."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

import caucus.mcp
from caucus.client import HubClient
from caucus.runtime.connectors.hub import HIDDEN_TOOLS
from caucus.services.hub import Hub
from caucus.testing import (
    Call,
    FakeOpenAI,
    Say,
    last_user,
    make_hub,
    offered,
    serve,
    serve_fake,
    tool_messages,
)
from tests.agentproc import AgentProcess
from tests.mcptools import Session
from tests.waiting import eventually, scaled

PROMPT = "You are {name}. Join #ops when you start.\n\n## On Start\nJoin #ops.\n"


def model(request: dict[str, Any]) -> list[Any]:
    """Both agents' model: who it is comes from the system prompt, what to do from the newest
    message (its text is the hub's envelope around the message)."""
    me = "ann" if "You are ann-bot" in request["messages"][0]["content"] else "bob"
    said = last_user(request)
    done = tool_messages(request)
    latest_tool = done[-1]["content"] if done else ""
    if "prompt:on-start" in said:
        join = Call("channel", {"action": "join", "channel": "#ops"})
        return [Say("NO_REPLY")] if done else [join]
    if "kind announce" in said:
        if done and "claim" in latest_tool:
            return [Say("NO_REPLY")]
        offer = re.search(r"o_[0-9a-f]+", said)
        assert offer is not None, said
        return [Call("offer", {"action": "claim", "offer_id": offer.group(0), "note": "mine"})]
    if "kind task" in said:
        return [Say("5")]
    if "reserve src/app.py" in said:
        if request["messages"][-1]["role"] == "tool":
            return [Say(f"reserved: {latest_tool}")]
        return [Call("reservation", {"action": "reserve", "paths": ["src/app.py"]})]
    if "status?" in said:
        return [Say("all fine" if me == "ann" else "NO_REPLY")]
    if "ping" in said:
        return [Say(f"pong from {me}")]
    return [Say("NO_REPLY")]


async def start_agent(
    name: str, hub_url: str, model_url: str, tmp: Path, *extra: str
) -> AgentProcess:
    prompt = tmp / f"{name}.md"
    prompt.write_text(PROMPT.format(name=name), "utf-8")
    env = {**os.environ, "XDG_STATE_HOME": str(tmp / f"state-{name}")}
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "caucus", "agent", "--model", "fake-model"),
        *("--base-url", f"{model_url}/v1", "--hub", hub_url, "--name", name),
        *("--prompt", str(prompt), "--skills", "arithmetic", *extra),
        cwd=str(tmp),
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    return AgentProcess(proc)


async def members_of(hub: Hub, channel: str) -> list[str]:
    for info in await hub.channels.all():
        if info.name == channel:
            return sorted(info.members)
    return []


async def test_two_native_agents_answer_where_it_came_from_work_a_task_and_claim_an_offer(
    tmp_path: Path,
) -> None:
    fake = FakeOpenAI(model)
    async with (
        make_hub(tmp_path / "hub") as hub,
        serve(hub) as url,
        serve_fake(fake) as model_url,
        HubClient(url) as carol,
    ):
        await carol.register("carol")
        ann = await start_agent("ann-bot", url, model_url, tmp_path)
        bob = await start_agent("bob-bot", url, model_url, tmp_path)
        for agent in (ann, bob):
            await agent.until("ThreadRunComplete")  # the On Start turn: #ops joined
        assert await members_of(hub, "#ops") == ["ann-bot", "bob-bot"]
        # The room's whole catalog: what a session on /mcp lists, but for joining, leaving and
        # listening, which the runtime does itself (ADR 0028 left three out until issue 50).
        session = json.loads((Path(caucus.mcp.__file__).parent / "front.json").read_text())
        room = {t["name"] for t in session["tools"]["plain"]} - HIDDEN_TOOLS
        assert {"reservation", "search", "teammate"} <= room
        assert set(offered(fake.requests[0])) == room

        await carol.send("ann-bot", "please reserve src/app.py")
        reserved = await carol.receive(timeout=20)
        assert [m.content.split(":")[0] for m in reserved.messages] == ["reserved"]
        held = await hub.reservations.listing(holder="ann-bot")
        assert [r.pattern for r in held] == ["src/app.py"]

        ping = await carol.send("ann-bot", "ping", thread="health")
        direct = await carol.receive(timeout=20)
        assert [(m.sender, m.to, m.content) for m in direct.messages] == [
            ("ann-bot", "carol", "pong from ann")
        ]
        # Threaded under what it answers, in its thread.
        assert (direct.messages[0].reply_to, direct.messages[0].thread) == (
            ping.message_id,
            "health",
        )

        asked = await carol.send("#ops", "status?")
        await bob.until("ThreadRunComplete", 2)  # bob answered NO_REPLY: nothing posted
        heard = await carol.receive(timeout=20)
        assert [(m.sender, m.to, m.content, m.reply_to) for m in heard.messages] == [
            ("ann-bot", "#ops", "all fine", asked.message_id)
        ]

        async with Client(f"{url}/mcp") as client:
            mcp = Session(client)
            await mcp.call("join", name="mcp-agent")
            sent = await mcp.call("task", action="send", to="bob-bot", content="add 2 and 3")
            task_id = sent["tasks"][0]["task_id"]
            result = None
            async with asyncio.timeout(scaled(30)):
                while result is None:
                    heard_mcp = await mcp.call("listen", timeout=5)
                    for m in heard_mcp["messages"]:
                        if m["kind"] == "result":
                            result = m
            assert result["meta"]["task_id"] == task_id
            state = await mcp.call("task", action="list", role="sent")
            assert [(t["task_id"], t["state"], t["result"]) for t in state["tasks"]] == [
                (task_id, "completed", "5")
            ]

        offer = await carol.post_offer("sum a column", subject="sums")
        async with asyncio.timeout(scaled(30)):
            claims: list[Any] = []
            while not claims:
                batch = await carol.receive(timeout=5)
                claims += [m for m in batch.messages if m.kind == "offer_claim"]
        assert {c.sender for c in claims} <= {"ann-bot", "bob-bot"}
        assert claims[0].meta is not None
        assert claims[0].meta["offer_id"] == offer.offer_id

        await hub.control.stop()
        for agent in (ann, bob):
            code, stderr = await agent.finish()
            assert code == 0, stderr
            assert any(e["event"] == "ControlReceived" for e in agent.events)
        names = {p.name: p.state for p in await carol.peers()}
        assert names["ann-bot"] == "offline"  # said goodbye: resumable, not gone


# An MCP server that starts, answers its first tools/list, then never answers again (and says
# so in a file): an agent using it hangs in its start-up, joined, with its tools open.
STALLING_SERVER = """
import json, sys
listed = 0
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    if request["method"] == "tools/list":
        listed += 1
        if listed > 1:
            open(sys.argv[1], "w").close()  # the test's cue: the agent waits on us now
            continue
        result = {"tools": []}
    elif request["method"] == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "stalling", "version": "1"},
        }
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
"""


@pytest.mark.parametrize("where", ["starting its MCP server", "with its tools open"])
async def test_an_agent_stopped_right_after_it_joined_leaves_and_exits_0(
    tmp_path: Path, where: str
) -> None:
    """The operator's launcher stops an agent with SIGTERM as soon as it shows in the room: a
    stop while it still starts is as graceful as one while it runs, wherever it lands (the
    server never answering, or the agent listing its open tools)."""
    cue = tmp_path / "stalled"
    if where == "starting its MCP server":
        server = f"{sys.executable} -c 'import sys; sys.stdin.read()'"
    else:
        script = tmp_path / "stalling.py"
        script.write_text(STALLING_SERVER, "utf-8")
        server = f"{sys.executable} {script} {cue}"
    async with (
        make_hub(tmp_path / "hub") as hub,
        serve(hub) as url,
        serve_fake(FakeOpenAI(model)) as model_url,
        HubClient(url) as carol,
    ):
        await carol.register("carol")
        agent = await start_agent("ann-bot", url, model_url, tmp_path, "--mcp-stdio", server)

        async def joined() -> bool:
            return any(p.name == "ann-bot" for p in await carol.peers())

        await eventually(joined, within=30, what="ann-bot in the room")
        if where == "with its tools open":
            await eventually(cue.exists, within=30, what="the agent to wait on its server")
        agent.proc.send_signal(signal.SIGTERM)
        code, stderr = await agent.finish()
        assert code == 0, stderr
        names = {p.name: p.state for p in await carol.peers()}
        assert names["ann-bot"] == "offline"  # said goodbye
