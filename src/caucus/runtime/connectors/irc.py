"""A native agent on an IRC network (`caucus agent --irc HOST:PORT --nick N -c '#chan'`).

The connector registers its nick, joins its channels, and turns every message from someone
else — in a channel it is in, or sent to it — into a notice, its text wrapped as untrusted data
with the envelope the hub uses; its own messages are filtered out even where the server echoes
them. With `mention_only`, only messages that name its nick count. An answer goes back where
the newest message of its turn came from (the channel, or the sender of a private message), one
message per non-empty line, lines longer than 400 bytes wrapped at word boundaries; `NO_REPLY`
posts nothing. Pings are answered; the server closing the connection ends the agent.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from caucus.models.envelope import wrap
from caucus.runtime.connectors.hub import NO_REPLY
from caucus.runtime.connectors.routing import Routes
from caucus.runtime.events import Event, ThreadRunComplete
from caucus.runtime.orchestrator import Control, Notice

log = logging.getLogger(__name__)

LINE_BYTES = 400  # of a message's text, at most, in one PRIVMSG
REGISTER_TIMEOUT = 20.0


class IrcError(Exception):
    """The agent cannot join the network; the message says what to do."""


@dataclass(frozen=True, slots=True)
class Line:
    """One IRC protocol line: `:prefix COMMAND params… :trailing` (tags dropped)."""

    prefix: str
    command: str
    params: list[str]

    @property
    def nick(self) -> str:
        return self.prefix.split("!", 1)[0]


def parse(raw: str) -> Line | None:
    text = raw.rstrip("\r\n")
    if text.startswith("@"):  # IRCv3 tags: not used here
        _, _, text = text.partition(" ")
    prefix = ""
    if text.startswith(":"):
        prefix, _, text = text[1:].partition(" ")
    if not text:
        return None
    head, sep, trailing = text.partition(" :")
    parts = head.split()
    if not parts:
        return None
    params = parts[1:] + ([trailing] if sep else [])
    return Line(prefix, parts[0].upper(), params)


def wrapped(text: str, limit: int = LINE_BYTES) -> list[str]:
    """A reply as IRC lines: one per non-empty line, each at most `limit` bytes of UTF-8,
    broken at spaces where it can be (a longer word is cut between characters)."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        current = ""
        for word in line.split(" "):
            candidate = f"{current} {word}" if current else word
            if len(candidate.encode()) <= limit:
                current = candidate
                continue
            if current:
                out.append(current)
            while len(word.encode()) > limit:
                cut = limit
                while len(word[:cut].encode()) > limit:
                    cut -= 1
                out.append(word[:cut])
                word = word[cut:]
            current = word
        if current:
            out.append(current)
    return [x for x in out if x.strip()]


@dataclass(frozen=True, slots=True)
class _Said:
    """An IRC message in the shape the untrusted-data envelope takes."""

    seq: int
    sender: str
    to: str
    content: str
    kind: str = "chat"
    thread: str | None = None


class IrcConnector:
    def __init__(
        self,
        host: str,
        port: int,
        nick: str,
        channels: list[str],
        *,
        mention_only: bool = False,
    ) -> None:
        self.host = host
        self.port = port
        self.nick = nick
        self.channels = [c if c.startswith(("#", "&")) else f"#{c}" for c in channels]
        self.mention_only = mention_only
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._queue: asyncio.Queue[Notice | Control | None] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._keys = itertools.count(1)
        self._routes: Routes[str] = Routes()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.sent: list[tuple[str, str]] = []  # (target, line) posted, in order

    async def open(self) -> None:
        try:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        except OSError as exc:
            raise IrcError(
                f"cannot reach the IRC server at {self.host}:{self.port} ({exc}); check --irc"
            ) from None
        await self._send(f"NICK {self.nick}")
        await self._send(f"USER {self.nick} 0 * :caucus agent")
        try:
            async with asyncio.timeout(REGISTER_TIMEOUT):
                await self._registered()
        except TimeoutError:
            raise IrcError(f"the IRC server did not welcome {self.nick} in time") from None
        for channel in self.channels:
            await self._send(f"JOIN {channel}")
        self._pump = asyncio.ensure_future(self._read())

    async def _registered(self) -> None:
        assert self._reader is not None
        while raw := await self._reader.readline():
            line = parse(raw.decode("utf-8", "replace"))
            if line is None:
                continue
            if line.command == "PING":
                await self._send(f"PONG :{line.params[-1] if line.params else ''}")
            elif line.command == "001":
                self.nick = line.params[0] if line.params else self.nick
                return
            elif line.command in ("432", "433", "436"):
                raise IrcError(
                    f"the nick {self.nick!r} is taken or not allowed: pick another --nick"
                )
            elif line.command == "ERROR":
                raise IrcError(f"the IRC server refused: {' '.join(line.params)}")
        raise IrcError("the IRC server closed the connection before welcoming the agent")

    async def _read(self) -> None:
        assert self._reader is not None
        try:
            while raw := await self._reader.readline():
                line = parse(raw.decode("utf-8", "replace"))
                if line is None:
                    continue
                if line.command == "PING":
                    await self._send(f"PONG :{line.params[-1] if line.params else ''}")
                elif line.command == "PRIVMSG" and len(line.params) == 2:
                    self._heard(line)
        finally:
            log.warning("the IRC server closed the connection")
            self._queue.put_nowait(Control("stop", "the IRC connection closed"))

    def _heard(self, line: Line) -> None:
        target, text = line.params
        if line.nick.casefold() == self.nick.casefold():
            return  # our own message, echoed back
        if self.mention_only and not re.search(
            rf"(?<![\w-]){re.escape(self.nick)}(?![\w-])", text, re.IGNORECASE
        ):
            return
        private = target.casefold() == self.nick.casefold()
        origin = line.nick if private else target
        key = f"irc:{next(self._keys)}"
        self._routes.remember(key, origin)
        said = _Said(next(self._keys), line.nick, target, text)
        self._queue.put_nowait(Notice(key, wrap([said], me=self.nick)))

    async def notices(self) -> AsyncIterator[Notice | Control]:
        while (item := await self._queue.get()) is not None:
            yield item

    def observe(self, event: Event) -> None:
        ended = self._routes.follow(event)
        if ended is None:
            return
        end, origin = ended
        if isinstance(end, ThreadRunComplete) and origin is not None:
            reply = end.reply.strip()
            if reply and reply != NO_REPLY:
                task = asyncio.ensure_future(self._say(origin, reply))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _say(self, target: str, text: str) -> None:
        for line in wrapped(text):
            await self._send(f"PRIVMSG {target} :{line}")
            self.sent.append((target, line))

    async def _send(self, line: str) -> None:
        if self._writer is None:
            return
        self._writer.write((line.replace("\r", " ").replace("\n", " ") + "\r\n").encode())
        await self._writer.drain()

    async def close(self) -> None:
        for task in list(self._tasks):
            with contextlib.suppress(Exception):
                await task
        if self._writer is not None:
            with contextlib.suppress(OSError, ConnectionError):
                await self._send("QUIT :caucus agent stopping")
                self._writer.close()
                await self._writer.wait_closed()
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump
        self._queue.put_nowait(None)
