"""Claude Code channel push from the stdio bridge (`CAUCUS_CLAUDE_CHANNEL=1`), against a
scripted MCP host that speaks JSON-RPC line by line: the capability, the probe and its nonce,
nothing drained before `confirm_delivery`, bursts coalesced, the operator at once, channel
mode for listen and the watcher, and a kick that ends pushing for good."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from caucus.mcp.push import CHANNEL_METHOD
from caucus.mcp.watch import Ending
from caucus.operator_client import OperatorClient
from tests.conftest import ClientFactory, eventually
from tests.waiting import within

GAP, CAP = 3.0, 10.0  # wide, so the checks below never hinge on how busy the machine is


class Host:
    """What Claude Code does with a channel server: call tools, collect channel events."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log = log
        self.events: list[dict[str, Any]] = []
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._next = 0
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            message = json.loads(line)
            if message.get("method") == CHANNEL_METHOD:
                self.events.append(message["params"])
            elif "id" in message and message["id"] in self._answers:
                self._answers.pop(message["id"]).set_result(message)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[self._next] = future
        assert self.proc.stdin is not None
        payload = {"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(payload).encode() + b"\n")
        await self.proc.stdin.drain()
        answer = await within(future, 30, "the other process")
        result: dict[str, Any] = answer["result"]
        return result

    async def tool(self, name: str, **args: object) -> dict[str, Any]:
        result = await self.request("tools/call", {"name": name, "arguments": args})
        data: dict[str, Any] = result["structuredContent"]
        if result.get("isError"):
            return {"error": data.get("error"), **data}
        return data

    def stderr(self) -> str:
        return self.log.read_text("utf-8", errors="replace") if self.log.exists() else ""

    async def event(self, index: int) -> dict[str, Any]:
        await eventually(lambda: len(self.events) > index, within=30, what=f"channel event {index}")
        return self.events[index]


@asynccontextmanager
async def channel_host(
    url: str, tmp_path: Path, name: str, *, gap: float = GAP, cap: float = CAP
) -> AsyncIterator[tuple[Host, dict[str, Any]]]:
    env = dict(os.environ)
    env.pop("CAUCUS_AGENT_KEY", None)
    env.update(
        CAUCUS_HUB=url,
        CAUCUS_NAME=name,
        CAUCUS_CLAUDE_CHANNEL="1",
        CAUCUS_PUSH_GAP=str(gap),
        CAUCUS_PUSH_CAP=str(cap),
        XDG_RUNTIME_DIR=str(tmp_path / "run"),
        XDG_STATE_HOME=str(tmp_path / "state"),
    )
    log = tmp_path / f"{name}-bridge.log"
    with log.open("wb") as stderr:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "caucus",
            "bridge",
            env=env,
            cwd=str(tmp_path),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
    host = Host(proc, log)
    init = await host.request(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            # Not "claude-code": that name gets results as text alone, and this host reads data.
            "clientInfo": {"name": "scripted-channel-host", "version": "2"},
        },
    )
    assert proc.stdin is not None
    proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    try:
        yield host, init
    finally:
        proc.stdin.close()
        await within(proc.wait(), 30, "the process to end")
        host._reader.cancel()


def nonce_of(probe: dict[str, Any]) -> str:
    assert probe["meta"] == {"source": "caucus", "kind": "probe"}
    return str(probe["content"].split("nonce '")[1].split("'")[0])


async def test_the_bridge_declares_the_channel_and_goes_live_only_on_the_nonce(
    url: str, connect: ClientFactory, tmp_path: Path
) -> None:
    alice = await connect("alice")
    async with channel_host(url, tmp_path, "bob") as (host, init):
        assert init["capabilities"]["experimental"] == {"claude/channel": {}}
        await host.tool("join")
        probe = await host.event(0)
        # Until the host proves it shows events, nothing is drained: the watcher delivers.
        sent = await alice.send("bob", "before the channel is proven")
        watch = await host.tool("watch_command")
        assert watch["via"] == "session_file"
        assert (await host.tool("whoami"))["pending"] == 1
        assert len(host.events) == 1
        wrong = await host.tool("confirm_delivery", nonce="0000")
        assert wrong["error"] == "invalid_request"
        live = await host.tool("confirm_delivery", nonce=nonce_of(probe))
        assert live["mode"] == "live"
        event = await host.event(1)
        assert event["meta"]["sender"] == "alice"
        assert event["meta"]["seq"] == str(sent.seq)
        assert "<<<caucus-data" in event["content"]  # fenced as untrusted data
        assert "before the channel is proven" in event["content"]
        await eventually(lambda: _pending(host, 0), what="the pushed message acknowledged")
        assert (await host.tool("listen"))["error"] == "channel_mode"
        assert (await host.tool("watch_command"))["via"] == "channel"


async def _pending(host: Host, count: int) -> bool:
    return (await host.tool("whoami"))["pending"] == count


async def test_a_burst_is_one_event(url: str, connect: ClientFactory, tmp_path: Path) -> None:
    alice = await connect("alice")
    async with channel_host(url, tmp_path, "bob") as (host, _):
        await host.tool("join")
        await host.tool("confirm_delivery", nonce=nonce_of(await host.event(0)))
        for i in range(3):
            await alice.send("bob", f"part {i}")
        burst = await host.event(1)
        assert burst["meta"]["count"] == "3"
        assert [f"part {i}" in burst["content"] for i in range(3)] == [True] * 3


async def test_the_operator_goes_at_once_and_takes_the_gathering_burst_with_it(
    url: str, connect: ClientFactory, tmp_path: Path, operator: OperatorClient
) -> None:
    alice = await connect("alice")
    # A gap and a cap longer than any wait here: chatter alone would never be pushed in time.
    async with channel_host(url, tmp_path, "bob", gap=3600, cap=3600) as (host, _):
        await host.tool("join")
        await host.tool("confirm_delivery", nonce=nonce_of(await host.event(0)))
        await alice.send("bob", "chatter while the burst gathers")
        await eventually(lambda: _pending(host, 1), what="the chatter to arrive")
        await operator.say("bob", "stop what you are doing")
        urgent = await host.event(1)
        assert (urgent["meta"]["sender"], urgent["meta"]["count"]) == ("alice,operator", "2")
        assert "stop what you are doing" in urgent["content"]
        assert "chatter while the burst gathers" in urgent["content"]


async def test_going_live_displaces_a_running_watcher(
    url: str, connect: ClientFactory, tmp_path: Path
) -> None:
    alice = await connect("alice")
    async with channel_host(url, tmp_path, "bob") as (host, _):
        await host.tool("join")
        probe = await host.event(0)
        watch = await host.tool("watch_command")
        watcher = await asyncio.create_subprocess_shell(
            watch["command"], stdout=asyncio.subprocess.PIPE
        )

        async def parked() -> bool:
            return (await alice.ping("bob")).listening

        await eventually(parked, what="the watcher parked")
        await host.tool("confirm_delivery", nonce=nonce_of(probe))
        out, _ = await within(watcher.communicate(), 30, "the process to end")
        assert (watcher.returncode, out.decode().strip()) == (5, Ending.DISPLACED.line())


@pytest.mark.parametrize("ending", ["kick", "leave"])
async def test_an_ended_identity_ends_pushing_and_is_not_registered_again(
    url: str, connect: ClientFactory, tmp_path: Path, operator: OperatorClient, ending: str
) -> None:
    alice = await connect("alice")
    async with channel_host(url, tmp_path, "bob") as (host, _):
        await host.tool("join")
        await host.tool("confirm_delivery", nonce=nonce_of(await host.event(0)))
        if ending == "kick":
            await operator.kick("bob")
            # The push loop hears the kick on its parked receive and ends there for good.
            await eventually(lambda: "channel push stopped" in host.stderr(), what="the end")
        else:
            await host.tool("leave")  # pushing ends before the tool answers
        names = [p.name for p in await alice.peers()]
        assert "bob" not in names
        assert len(host.events) == 1  # the probe, and nothing after it
