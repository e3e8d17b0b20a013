"""`caucus bridge` driven by the official MCP SDK client over stdio, against a real hub."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.injection import holds


@asynccontextmanager
async def bridge(
    url: str, tmp_path: Path, name: str | None = None, mode: str = "legacy"
) -> AsyncIterator[Client]:
    env = {**os.environ, "CAUCUS_HUB": url, "XDG_RUNTIME_DIR": str(tmp_path / "run")}
    if name:
        env["CAUCUS_NAME"] = name
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "caucus", "bridge"], env=env, cwd=str(tmp_path)
    )
    async with Client(params, mode=mode) as client:  # type: ignore[arg-type]
        yield client


async def text(client: Client, tool: str, **args: object) -> str:
    result = await client.call_tool(tool, dict(args))
    body = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        raise AssertionError(f"{tool} failed: {body}")
    return str(body)


async def error(client: Client, tool: str, **args: object) -> str:
    result = await client.call_tool(tool, dict(args))
    assert result.is_error, f"{tool} should have failed"
    return str(result.content[0].text)  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_two_agents_talk_through_their_bridges(url: str, tmp_path: Path, mode: str) -> None:
    async with (
        bridge(url, tmp_path, "alice", mode) as alice,
        bridge(url, tmp_path, "bob", mode) as bob,
    ):
        names = {t.name for t in (await alice.list_tools()).tools}
        assert {
            "join",
            "leave",
            "whoami",
            "list_peers",
            "ping",
            "set_status",
            "say",
            "listen",
            "peek",
            "watch_command",
            "protocol_section",
            "join_channel",
            "leave_channel",
            "list_channels",
            "set_channel_topic",
        } <= names
        assert "not joined" in await text(alice, "whoami")
        # Read-only tools work before join; the rest say to join first.
        assert await text(alice, "list_peers") == "nobody here."
        assert await text(alice, "list_channels") == "no channels yet."
        assert "not joined yet" in await text(alice, "peek")
        assert "join first" in await error(alice, "say", to="bob", content="too early")
        assert "join first" in await error(alice, "listen")
        assert "Caucus operating protocol" in await text(alice, "protocol_section")
        assert (await text(alice, "join")).startswith("joined as alice (created)")
        assert (await text(bob, "join")).startswith("joined as bob (created)")
        assert "bob (you): online" in await text(bob, "ping", peer="bob")
        sent = await text(alice, "say", to="bob", content="review please", thread="pr-7")
        assert sent.startswith("sent #")
        assert "1 message(s) waiting" in await text(bob, "peek")
        got = await text(bob, "listen", timeout=5)
        seq = int(sent.split("#")[1].split(" ")[0])
        holds(got, [(seq, "alice", "you", "chat", "review please")])
        assert "alice" in await text(bob, "list_peers")
        await text(bob, "join_channel", channel="#ops")
        assert "bob" in await text(alice, "list_peers", channel="#ops")
        assert "[not_found]" in await error(alice, "say", to="ghost", content="hello?")
        assert "[already_joined]" in await error(alice, "join", name="mallory")
        await text(bob, "leave")
        assert "not joined" in await text(bob, "whoami")


async def test_the_watch_command_points_at_a_private_session_file(url: str, tmp_path: Path) -> None:
    async with bridge(url, tmp_path, "carol") as carol:
        joined = await text(carol, "join")
        command = await text(carol, "watch_command")
        assert command in joined
        argv = shlex.split(command)
        assert argv[1:4] == ["-m", "caucus", "watch"]
        session_file = Path(argv[argv.index("--session") + 1])
        assert session_file.stat().st_mode & 0o777 == 0o600
        assert "cau_" not in command  # the token never appears on a command line
        await text(carol, "leave")
        assert not session_file.exists()


async def test_the_default_name_comes_from_the_working_directory(url: str, tmp_path: Path) -> None:
    project = tmp_path / "my project!"
    project.mkdir()
    async with bridge(url, project) as client:
        assert "my-project" in await text(client, "whoami")
        assert (await text(client, "join")).startswith("joined as my-project")


async def test_the_bridge_writes_nothing_but_json_rpc_to_stdout(url: str, tmp_path: Path) -> None:
    import asyncio
    import json

    env = {**os.environ, "CAUCUS_HUB": url, "XDG_RUNTIME_DIR": str(tmp_path)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "caucus",
        "bridge",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "say", "arguments": {"to": "x", "content": "y"}},
        },  # fails: no join
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "join", "arguments": {"name": "raw-agent"}},
        },
    ]
    assert proc.stdin is not None
    proc.stdin.write(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
    await proc.stdin.drain()
    assert proc.stdout is not None
    answers = []
    async with asyncio.timeout(30):
        while len(answers) < 3:
            line = await proc.stdout.readline()
            message = json.loads(line)  # every stdout line is JSON-RPC
            assert message["jsonrpc"] == "2.0"
            if "id" in message:
                answers.append(message)
    proc.stdin.close()
    await asyncio.wait_for(proc.wait(), 30)
    rest = await proc.stdout.read()
    for line in rest.splitlines():
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert answers[1]["result"]["isError"] is True
    assert answers[2]["result"]["isError"] is False
