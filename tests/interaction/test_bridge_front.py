"""`caucus bridge`'s fast front (issue 30): it answers `initialize`, `tools/list`,
`prompts/list` and `ping` before the MCP SDK has loaded, with exactly what the SDK-served bridge
answers (the hub's own limits in the descriptions), then hands the stream over without losing
or repeating a line."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from caucus.client import HubClient
from caucus.testing import FakeOpenAI, make_hub, serve, serve_fake
from tests.waiting import within

ROOT = Path(__file__).resolve().parents[2]
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "a-host", "version": "1"},
}
# The SDK-served bridge alone, as `caucus bridge` ran before the front.
PLAIN = "import sys; from caucus.cli.main import main; sys.argv[0] = 'caucus'; main()"


def rpc(number: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": method, "params": params or {}}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Host:
    """A host on the bridge's stdio: writes lines (several at once, as one write) and reads
    the answers (an answer given twice fails), keeping the notifications apart."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.answers: dict[Any, Any] = {}
        self.notices: list[Any] = []

    @classmethod
    async def start(cls, argv: list[str], env: dict[str, str], cwd: Path) -> Host:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            env=env,
            cwd=str(cwd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return cls(proc)

    async def write(self, *sent: Any) -> None:
        """Write `sent` as one write, waiting for no answer."""
        stdin = self.proc.stdin
        assert stdin is not None
        stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in sent))
        await stdin.drain()

    async def send(self, *sent: Any) -> list[Any]:
        stdout = self.proc.stdout
        assert stdout is not None
        await self.write(*sent)
        wanted = [m["id"] for m in sent if "id" in m]

        async def read() -> None:
            while not all(n in self.answers for n in wanted):
                message = json.loads(await stdout.readline())
                if "id" not in message:
                    self.notices.append(message)
                    continue
                assert message["id"] not in self.answers, f"answered twice: {message}"
                self.answers[message["id"]] = message

        await within(read(), 60, "the bridge's answers")
        return [self.answers[n] for n in wanted]

    async def notice(self, method: str) -> Any:
        """Wait for a notification the host has not been sent a line for."""
        stdout = self.proc.stdout
        assert stdout is not None

        async def read() -> Any:
            while True:
                found = [n for n in self.notices if n.get("method") == method]
                if found:
                    return found[0]
                message = json.loads(await stdout.readline())
                if "id" in message:
                    assert message["id"] not in self.answers, f"answered twice: {message}"
                    self.answers[message["id"]] = message
                else:
                    self.notices.append(message)

        return await within(read(), 60, f"the bridge's {method}")

    async def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        await within(self.proc.wait(), 30, "the bridge to end")


async def exchange(argv: list[str], env: dict[str, str], cwd: Path, *sent: Any) -> list[Any]:
    """Write all of `sent` at once, read one answer per request, close."""
    host = await Host.start(argv, env, cwd)
    try:
        return await host.send(*sent)
    finally:
        await host.close()


def bridge_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAUCUS_")}
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), XDG_RUNTIME_DIR=str(tmp_path / "run"))
    env.update(extra)
    return env


def front(url: str) -> list[str]:
    return [sys.executable, "-m", "caucus", "bridge", "--hub", url]


def plain(url: str) -> list[str]:
    return [sys.executable, "-c", PLAIN, "bridge", "--hub", url]


@pytest.mark.parametrize(
    ("channel", "client"),
    [("0", "a-host"), ("1", "a-host"), ("0", "claude-code"), ("0", "codex-mcp-client")],
)
async def test_the_front_answers_what_the_sdk_answers_with_the_hub_s_own_limits(
    tmp_path: Path, channel: str, client: str
) -> None:
    who = {**INIT, "clientInfo": {"name": client, "version": "2"}}
    asked = [
        rpc(1, "initialize", who),
        INITIALIZED,
        rpc(2, "tools/list"),
        rpc(3, "prompts/list"),
        rpc(4, "resources/list"),
        rpc(5, "ping"),
    ]
    env = bridge_env(tmp_path, CAUCUS_CLAUDE_CHANNEL=channel, CAUCUS_NAME="front-check")
    # A hub whose limits are not the defaults: the descriptions must say its numbers.
    async with make_hub(tmp_path / "hub", open_offers_max=7) as hub, serve(hub) as url:
        fast = await exchange(front(url), env, tmp_path, *asked)
        slow = await exchange(plain(url), env, tmp_path, *asked)
    assert fast == slow
    offer = next(t for t in fast[1]["result"]["tools"] if t["name"] == "offer")
    assert "(7 open at most)" in offer["description"]
    join = next(t for t in fast[1]["result"]["tools"] if t["name"] == "join")
    assert "front-check" in json.dumps(join)  # the default name, filled in
    names = {t["name"] for t in fast[1]["result"]["tools"]}
    assert ("confirm_delivery" in names) == (channel == "1")
    # A host that would read a result's JSON instead of its text gets no output schemas.
    schemas = {"outputSchema" in t for t in fast[1]["result"]["tools"]}
    assert schemas == {client not in ("claude-code", "codex-mcp-client")}


async def test_an_address_that_is_no_hub_lists_the_default_limits_as_the_sdk_does(
    tmp_path: Path,
) -> None:
    """Something answers there, but not with the hub's limits: not judged at the handshake."""
    asked = [rpc(1, "initialize", INIT), INITIALIZED, rpc(2, "tools/list")]
    env = bridge_env(tmp_path)
    async with serve_fake(FakeOpenAI(lambda _: [])) as elsewhere:  # 404 for /limits
        fast = await exchange(front(elsewhere), env, tmp_path, *asked)
        slow = await exchange(plain(elsewhere), env, tmp_path, *asked)
    assert fast == slow
    assert "result" in fast[0]


@pytest.mark.parametrize("opening", ["handshake", "sessionless"])
async def test_a_hub_that_nothing_answers_for_fails_the_handshake_saying_how_to_start_it(
    tmp_path: Path, opening: str
) -> None:
    """So a host's health check reports the server failed, not connected (issue 50)."""
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{s.getsockname()[1]}"
    first = rpc(1, "initialize", INIT)
    if opening == "sessionless":
        first = rpc(1, "server/discover", envelope())
    host = await Host.start(front(nowhere), bridge_env(tmp_path), tmp_path)
    (answer,) = await host.send(first)
    code = await within(host.proc.wait(), 30, "the bridge to end")
    assert code == 1
    error = answer["error"]
    assert error["code"] == -32000
    assert error["data"] == {"code": "hub_unavailable", "hub": nowhere}
    assert nowhere in error["message"]
    assert "`caucus hub`" in error["message"]


async def test_everything_at_once_is_answered_once_and_in_order_across_the_handover(
    tmp_path: Path,
) -> None:
    env = bridge_env(tmp_path)
    async with make_hub(tmp_path / "hub") as hub, serve(hub) as url, HubClient(url) as alice:
        await alice.register("alice")
        host = await Host.start(front(url), env, tmp_path)
        try:
            first = await host.send(
                rpc(1, "initialize", INIT),
                INITIALIZED,
                rpc(2, "tools/list"),
                rpc(3, "tools/call", {"name": "join", "arguments": {"name": "bob"}}),
                rpc(4, "ping"),
            )
            said = {"name": "say", "arguments": {"to": "alice", "content": "hi"}}
            second = await host.send(rpc(5, "tools/call", said), rpc(6, "tools/list"))
        finally:
            await host.close()
        assert first[2]["result"]["structuredContent"]["name"] == "bob"
        assert host.notices == [
            {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}
        ]
        assert first[3]["result"] == {}
        assert second[0]["result"].get("isError") is not True, second[0]
        assert second[1]["result"] == first[1]["result"]  # the SDK lists what the front did
        got = await alice.receive(timeout=10)
        assert [(m.sender, m.content) for m in got.messages] == [("bob", "hi")]


@pytest.mark.parametrize("version", ["2025-06-18", "1999-01-01"])
async def test_an_older_or_unknown_version_is_negotiated_as_the_sdk_does(
    tmp_path: Path, url: str, version: str
) -> None:
    asked = [rpc(1, "initialize", {**INIT, "protocolVersion": version}), INITIALIZED]
    asked.append(rpc(2, "tools/list"))
    env = bridge_env(tmp_path)
    fast = await exchange(front(url), env, tmp_path, *asked)
    assert fast == await exchange(plain(url), env, tmp_path, *asked)
    assert fast[0]["result"]["protocolVersion"] in ("2025-06-18", "2025-11-25")


def envelope(client: str = "modern", version: str = "2026-07-28") -> dict[str, Any]:
    """A sessionless-era request's params: the envelope every request carries."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {"_meta": meta}


@pytest.mark.parametrize(
    ("channel", "client"),
    [("0", "a-host"), ("1", "a-host"), ("0", "claude-code"), ("0", "codex-mcp-client")],
)
async def test_the_front_answers_the_sessionless_era_as_the_sdk_does(
    tmp_path: Path, channel: str, client: str
) -> None:
    """Claude Code opens with `server/discover` in the 2026-07-28 envelope: the front answers
    it and the lists, as the SDK would, output schemas decided by each request's host."""
    asked = [
        rpc(1, "server/discover", envelope(client)),
        rpc(2, "tools/list", envelope(client)),
        rpc(3, "prompts/list", envelope(client)),
        rpc(4, "resources/list", envelope(client)),
        rpc(5, "tools/list", envelope("another-host")),
    ]
    env = bridge_env(tmp_path, CAUCUS_CLAUDE_CHANNEL=channel, CAUCUS_NAME="front-check")
    async with make_hub(tmp_path / "hub", open_offers_max=7) as hub, serve(hub) as url:
        fast = await exchange(front(url), env, tmp_path, *asked)
        slow = await exchange(plain(url), env, tmp_path, *asked)
    assert fast == slow
    tools = fast[1]["result"]["tools"]
    assert "(7 open at most)" in next(t for t in tools if t["name"] == "offer")["description"]
    assert {"outputSchema" in t for t in tools} == {
        client not in ("claude-code", "codex-mcp-client")
    }
    assert {"outputSchema" in t for t in fast[4]["result"]["tools"]} == {True}


LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


async def opened(argv: list[str], env: dict[str, str], cwd: Path, wanted: Any) -> Any:
    """Open a listen stream asking for `wanted` and return its first frame."""
    host = await Host.start(argv, env, cwd)
    try:
        await host.send(rpc(0, "server/discover", envelope()))
        await host.write(rpc("listen:0", LISTEN, {**envelope(), "notifications": wanted}))
        return await host.notice(ACKNOWLEDGED)
    finally:
        await host.close()


@pytest.mark.parametrize(
    "wanted",
    [
        {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True},
        {"resourcesListChanged": True, "toolsListChanged": False},
        {"resourceSubscriptions": ["caucus://inbox"]},
        {},
    ],
)
async def test_a_listen_stream_is_acknowledged_at_once_as_the_sdk_does(
    tmp_path: Path, url: str, wanted: dict[str, Any]
) -> None:
    """Claude Code sends `server/discover`, then `subscriptions/listen`, and lists nothing
    until the stream is acknowledged: the front acknowledges it, as the SDK would."""
    env = bridge_env(tmp_path)
    fast = await opened(front(url), env, tmp_path, wanted)
    assert fast == await opened(plain(url), env, tmp_path, wanted)


async def test_a_held_listen_stream_is_served_by_the_sdk_after_the_handover(
    tmp_path: Path,
) -> None:
    """The stream the front acknowledged is the SDK's from the handover on: a join is
    announced on it, and the host hears it opened once."""
    env = bridge_env(tmp_path)
    async with make_hub(tmp_path / "hub") as hub, serve(hub) as url:
        host = await Host.start(front(url), env, tmp_path)
        try:
            await host.send(rpc(0, "server/discover", envelope()))
            listen = {**envelope(), "notifications": {"resourcesListChanged": True}}
            await host.write(rpc(9, LISTEN, listen))
            await host.notice(ACKNOWLEDGED)
            listed = await host.send(rpc(1, "tools/list", envelope()))
            assert "join" in {t["name"] for t in listed[0]["result"]["tools"]}
            joined = {"name": "join", "arguments": {"name": "bob"}}
            done = await host.send(rpc(2, "tools/call", {**envelope(), **joined}))
            assert done[0]["result"]["structuredContent"]["name"] == "bob"
            changed = await host.notice("notifications/resources/list_changed")
        finally:
            await host.close()
    assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 9
    assert [n["method"] for n in host.notices].count(ACKNOWLEDGED) == 1
    assert 9 not in host.answers  # the stream stays open until the host goes


async def test_claude_code_s_opening_is_answered_before_the_sdk_could_be_loaded(
    tmp_path: Path, url: str
) -> None:
    """Claude Code 2.1's opening, as it writes it: it hears every answer while the SDK cannot
    even be imported (an `mcp` package that fails shadows the real one), so none of them waits
    for the SDK's half a second, or several seconds on a loaded machine."""
    broken = tmp_path / "shadow" / "mcp"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('the SDK is not loaded yet')\n")
    env = bridge_env(tmp_path, PYTHONPATH=str(broken.parent))
    claude = envelope("claude-code")
    host = await Host.start(front(url), env, tmp_path)
    try:
        await host.send(rpc("server-discover-probe-1", "server/discover", claude))
        listen = {**claude, "notifications": {"toolsListChanged": True}}
        await host.write(rpc("listen:0", LISTEN, listen))
        await host.notice(ACKNOWLEDGED)
        answers = await host.send(
            rpc(0, "server/discover", claude),
            rpc(1, "prompts/list", claude),
            rpc(2, "resources/list", claude),
            rpc(3, "tools/list", claude),
        )
    finally:
        assert host.proc.stdin is not None
        host.proc.stdin.close()
        await within(host.proc.wait(), 30, "the bridge to end")
    assert [a.get("error") for a in answers] == [None] * 4
    assert "join" in {t["name"] for t in answers[3]["result"]["tools"]}


@pytest.mark.parametrize("version", ["2026-07-28", "2099-01-01"])
async def test_a_sessionless_request_the_front_cannot_answer_goes_to_the_sdk(
    tmp_path: Path, url: str, version: str
) -> None:
    said = {"name": "whoami", "arguments": {}}
    asked = [rpc(1, "tools/call", {**envelope(version=version), **said})]
    env = bridge_env(tmp_path)
    fast = await exchange(front(url), env, tmp_path, *asked)
    assert fast == await exchange(plain(url), env, tmp_path, *asked)


def test_the_recorded_answers_are_what_the_code_and_the_sdk_make_now(tmp_path: Path) -> None:
    env = bridge_env(tmp_path, HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "caucus.mcp.front_snapshot", "--check"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
