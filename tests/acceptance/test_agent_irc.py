"""The IRC bridge against a real IRC server (Debian's ngircd) and a second IRC client: with
--mention-only only messages naming the agent run turns; an answer is one message per
non-empty line, lines over 400 bytes wrapped at word boundaries, blank lines dropped; a private
message is answered privately; --max-turns ends the agent; --no-stdin reads no input."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from caucus.runtime.connectors.irc import parse
from caucus.testing import FakeOpenAI, Say, last_user, serve_fake
from tests.acceptance.test_agent_cli import start
from tests.ircd import irc_server
from tests.waiting import scaled

LONG = " ".join(f"word{n:03d}" for n in range(120))  # about 960 bytes


def model(request: dict[str, Any]) -> list[Any]:
    said = last_user(request)
    if "prompt:on-start" in said:
        return [Say("NO_REPLY")]
    if "essay" in said:
        return [Say(f"Title line\n\n{LONG}\n   \nLast line")]
    return [Say("hi from bot")]


class Client:
    """A plain IRC client, as a person's would be."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def join(cls, host: str, port: int, nick: str, channel: str) -> Client:
        reader, writer = await asyncio.open_connection(host, port)
        client = cls(reader, writer)
        await client.send(f"NICK {nick}", f"USER {nick} 0 * :{nick}", f"JOIN {channel}")
        await client.until(lambda line: line.command == "366")  # the channel's names: joined
        return client

    async def send(self, *lines: str) -> None:
        self.writer.write("".join(f"{line}\r\n" for line in lines).encode())
        await self.writer.drain()

    async def until(self, wanted: Any, limit: float = 20) -> Any:
        async with asyncio.timeout(scaled(limit)):
            while True:
                line = parse((await self.reader.readline()).decode())
                if line is not None and line.command == "PING":
                    await self.send(f"PONG :{line.params[-1]}")
                elif line is not None and wanted(line):
                    return line

    async def messages(self, count: int) -> list[tuple[str, str]]:
        """The next `count` PRIVMSGs: (target, text)."""
        got = []
        for _ in range(count):
            line = await self.until(lambda x: x.command == "PRIVMSG")
            got.append((line.params[0], line.params[1]))
        return got


async def test_the_agent_lives_on_an_irc_channel(tmp_path: Path) -> None:
    with irc_server() as (host, port):
        alice = await Client.join(host, port, "alice", "#room")
        async with serve_fake(FakeOpenAI(model)) as url:
            agent = await start(
                *("--model", "m", "--base-url", f"{url}/v1", "--no-stdin"),
                *("--irc", f"{host}:{port}", "--nick", "bot", "-c", "#room", "--mention-only"),
                *("--max-turns", "3"),
                cwd=tmp_path,
            )
            await agent.until("ThreadRunComplete")  # On Start: NO_REPLY, nothing posted
            await alice.until(lambda x: x.command == "JOIN" and x.nick == "bot")
            await alice.send("PRIVMSG #room :hello everyone")  # no mention: no turn
            await alice.send("PRIVMSG #room :bot, an essay please")
            got = await alice.messages(5)
            assert {target for target, _ in got} == {"#room"}
            texts = [text for _, text in got]
            assert (texts[0], texts[-1]) == ("Title line", "Last line")  # blank lines dropped
            body = texts[1:-1]
            assert " ".join(body) == LONG  # wrapped at word boundaries, nothing lost
            assert all(len(text.encode()) <= 400 for text in body)
            assert len(body) == 3
            await alice.send("PRIVMSG bot :bot are you there?")
            private = await alice.until(lambda x: x.command == "PRIVMSG")
            assert private.params == ["alice", "hi from bot"]
            code, stderr = await agent.finish()  # the third turn was its last
        assert code == 0, stderr
        inputs = [e for e in agent.events if e["event"] == "NoticeReceived"]
        assert [e["source"].split(":")[0] for e in inputs] == ["prompt", "irc", "irc"]
        assert not any("hello everyone" in e["text"] for e in inputs)
        assert "untrusted content" in inputs[1]["text"]
        alice.writer.close()
