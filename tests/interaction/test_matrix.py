"""One scenario, five paths: in-process services, the HTTP API, MCP over HTTP in both protocol
eras (handshake sessions, and 2026-07-28 through the state handle), and the stdio bridge.

Each path's adapter turns its own answers (return values, wire models, structured tool results,
never sentences) into the same plain values, and the scenario asserts one expected outcome for
all of them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import pytest
from mcp import Client, StdioServerParameters

from caucus.api.mcp.local_port import LocalPort
from caucus.client import HubClient
from caucus.errors import CaucusError
from caucus.mcp.ports import HubPort
from caucus.mcp.remote import RemotePort
from caucus.services.hub import Hub
from caucus.testing import make_hub, serve
from caucus.wire.verbs import identity, messages, room
from tests.mcptools import Session, ToolFailed

Seen = tuple[str, str, str, str]  # sender, to (as addressed), kind, content


class Agent(Protocol):
    async def join(self, name: str) -> str: ...
    async def say(self, to: str, content: str) -> list[str]: ...
    async def listen(self) -> list[Seen]: ...
    async def peek(self) -> int: ...
    async def join_channel(self, channel: str) -> list[str]: ...
    async def peers(self) -> list[str]: ...
    async def leave(self) -> None: ...
    async def ask(self, title: str, fields: list[dict[str, Any]], to: str) -> str: ...
    async def forms(self) -> list[str]: ...
    async def decisions(self) -> list[str]: ...
    async def error(self, action: Callable[[], Awaitable[Any]]) -> str: ...


class PortAgent:
    """In-process services (LocalPort) or the HTTP API (RemotePort over HubClient)."""

    def __init__(self, port: HubPort) -> None:
        self.port = port

    async def join(self, name: str) -> str:
        joined = await self.port.join(
            name, None, None, protocol_version=None, handle=None, agent_key=None
        )
        return joined.name

    async def say(self, to: str, content: str) -> list[str]:
        return (await self.port.say(to, content, None, None)).delivered_to

    async def listen(self) -> list[Seen]:
        me = self.port.name
        return [
            (m.sender, "you" if m.to == me else m.to, m.kind, m.content)
            for m in (await self.port.listen(2)).messages
        ]

    async def peek(self) -> int:
        return (await self.port.verb(messages.PEEK)).pending

    async def join_channel(self, channel: str) -> list[str]:
        return (await self.port.verb(room.JOIN_CHANNEL, channel=channel)).members

    async def peers(self) -> list[str]:
        return sorted(p.name for p in (await self.port.verb(identity.PEERS)).peers)

    async def leave(self) -> None:
        await self.port.leave()

    async def ask(self, title: str, fields: list[dict[str, Any]], to: str) -> str:
        return (await self.port.verb(room.ASK_OPERATOR, title=title, fields=fields, to=to)).to

    async def forms(self) -> list[str]:
        return [f.title for f in (await self.port.verb(room.FORMS)).forms]

    async def decisions(self) -> list[str]:
        return [d.subject for d in (await self.port.verb(room.DECISIONS, limit=20)).decisions]

    async def error(self, action: Callable[[], Awaitable[Any]]) -> str:
        try:
            await action()
        except CaucusError as exc:
            return exc.code
        raise AssertionError("expected an error")


class McpAgent:
    """The tool catalog through the official MCP SDK client (over HTTP or stdio), read only
    through its structured results; `Session` carries the state handle where the client keeps
    no session (2026-07-28)."""

    def __init__(self, client: Client) -> None:
        self.session = Session(client)

    async def _tool(self, tool: str, /, **args: object) -> dict[str, Any]:
        try:
            return await self.session.call(tool, **args)
        except ToolFailed as failed:
            raise _ToolFailed(failed.code) from None

    async def join(self, name: str) -> str:
        return str((await self._tool("join", name=name))["name"])

    async def say(self, to: str, content: str) -> list[str]:
        return list((await self._tool("say", to=to, content=content))["delivered_to"])

    async def listen(self) -> list[Seen]:
        me = (await self._tool("whoami"))["name"]
        heard = (await self._tool("listen", timeout=2))["messages"]
        return [
            (m["sender"], "you" if m["to"] == me else m["to"], m["kind"], m["content"])
            for m in heard
        ]

    async def peek(self) -> int:
        return int((await self._tool("whoami"))["pending"])

    async def join_channel(self, channel: str) -> list[str]:
        joined = await self._tool("channel", action="join", channel=channel)
        return list(joined["channels"][0]["members"])

    async def peers(self) -> list[str]:
        return sorted(p["name"] for p in (await self._tool("peers"))["peers"])

    async def leave(self) -> None:
        await self._tool("leave")

    async def ask(self, title: str, fields: list[dict[str, Any]], to: str) -> str:
        asked = await self._tool("ask_operator", title=title, fields=fields, to=to)
        return str(asked["forms"][0]["to"])

    async def forms(self) -> list[str]:
        return [f["title"] for f in (await self._tool("ask_operator"))["forms"]]

    async def decisions(self) -> list[str]:
        return [d["subject"] for d in (await self._tool("decisions"))["decisions"]]

    async def error(self, action: Callable[[], Awaitable[Any]]) -> str:
        try:
            await action()
        except _ToolFailed as exc:
            return str(exc)
        raise AssertionError("expected an error")


class _ToolFailed(Exception):
    pass


Factory = Callable[[AsyncExitStack], Awaitable[Agent]]


@asynccontextmanager
async def path_for(kind: str, tmp_path: Path) -> AsyncIterator[tuple[Factory, Hub]]:
    async with make_hub(tmp_path, send_rate_capacity=1000) as hub, serve(hub) as url:

        async def mcp_http_modern(stack: AsyncExitStack) -> Agent:
            client = await stack.enter_async_context(Client(f"{url}/mcp"))  # the SDK's default
            return McpAgent(client)

        async def in_process(stack: AsyncExitStack) -> Agent:
            return PortAgent(LocalPort(hub))

        async def http_api(stack: AsyncExitStack) -> Agent:
            client = await stack.enter_async_context(HubClient(url))
            return PortAgent(RemotePort(client))

        async def mcp_http(stack: AsyncExitStack) -> Agent:
            client = await stack.enter_async_context(Client(f"{url}/mcp", mode="legacy"))
            return McpAgent(client)

        async def mcp_stdio(stack: AsyncExitStack) -> Agent:
            env = {
                **os.environ,
                "CAUCUS_HUB": url,
                "XDG_RUNTIME_DIR": str(tmp_path / "run"),
                "XDG_STATE_HOME": str(tmp_path / "state"),
            }
            params = StdioServerParameters(
                command=sys.executable, args=["-m", "caucus", "bridge"], env=env
            )
            client = await stack.enter_async_context(Client(params, mode="legacy"))
            return McpAgent(client)

        yield (
            {
                "in-process": in_process,
                "http-api": http_api,
                "mcp-http": mcp_http,
                "mcp-http-2026": mcp_http_modern,
                "mcp-stdio": mcp_stdio,
            }[kind],
            hub,
        )


@pytest.mark.parametrize(
    "kind", ["in-process", "http-api", "mcp-http", "mcp-http-2026", "mcp-stdio"]
)
async def test_the_same_scenario_gives_the_same_results_on_every_path(
    kind: str, tmp_path: Path
) -> None:
    async with path_for(kind, tmp_path) as (new_agent, hub), AsyncExitStack() as stack:
        alice, bob, carol = [await new_agent(stack) for _ in range(3)]
        assert [await a.join(n) for a, n in ((alice, "alice"), (bob, "bob"), (carol, "carol"))] == [
            "alice",
            "bob",
            "carol",
        ]
        assert await alice.peers() == ["alice", "bob", "carol"]

        assert await alice.say("bob", "direct") == ["bob"]
        assert await alice.say("all", "broadcast") == ["bob", "carol"]
        assert await bob.join_channel("#ops") == ["bob"]
        assert await alice.say("#ops", "channel news") == ["bob"]

        assert await bob.peek() == 3
        assert await bob.listen() == [
            ("alice", "you", "chat", "direct"),
            ("alice", "all", "chat", "broadcast"),
            ("alice", "#ops", "chat", "channel news"),
        ]
        assert await carol.listen() == [("alice", "all", "chat", "broadcast")]
        assert await bob.listen() == []  # the previous batch was acknowledged, nothing new
        assert await bob.peek() == 0

        assert await alice.error(lambda: alice.say("ghost", "hello?")) == "not_found"
        assert await alice.error(lambda: alice.say("alice", "me")) == "invalid_request"
        assert await alice.error(lambda: alice.say("bob", "")) == "invalid_request"
        assert await alice.error(lambda: alice.say("bob", "x" * 9000)) == "payload_too_large"
        assert await alice.error(lambda: alice.say("not a name", "x")) == "invalid_request"

        ship = [{"key": "ship", "label": "Ship", "type": "radio", "options": ["yes", "no"]}]
        assert await bob.forms() == []
        assert await carol.ask("Ship it?", ship, "all") == "all"
        assert await bob.forms() == ["Ship it?"]
        assert await carol.error(lambda: carol.ask("Ours?", ship, "#ops")) == "forbidden"
        text_with_options = [{"key": "why", "type": "text", "options": ["a"]}]
        assert await carol.error(lambda: carol.ask("Why?", text_with_options, "all")) == (
            "invalid_request"
        )
        (form,) = await hub.forms.listing()
        await hub.forms.answer(form.id, {"ship": "yes"})
        answer = 'The operator answered "Ship it?" (asked by carol):\n- Ship: yes'
        assert await bob.listen() == [("operator", "all", "form_answer", answer)]
        assert await carol.listen() == [("operator", "all", "form_answer", answer)]
        assert await bob.forms() == []
        assert await bob.decisions() == ["Ship it?"]

        await bob.leave()
        assert await alice.error(lambda: alice.say("bob", "still there?")) == "not_found"
        assert await alice.peers() == ["alice", "carol"]
