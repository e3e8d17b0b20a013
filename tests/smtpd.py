"""A small SMTP server for tests (RFC 5321's plain path: EHLO/HELO, MAIL, RCPT, DATA, RSET,
NOOP, QUIT), on loopback and an ephemeral port, keeping what it receives. The standard
library's smtpd is gone since Python 3.12."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message


@dataclass
class Mail:
    sender: str
    recipients: list[str]
    data: bytes

    @property
    def message(self) -> Message:
        return message_from_bytes(self.data)


@dataclass
class SmtpServer:
    port: int = 0
    received: list[Mail] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def say(line: str) -> None:
            writer.write(line.encode() + b"\r\n")

        say("220 localhost test SMTP")
        sender, recipients = "", []
        while line := await reader.readline():
            verb = line.decode(errors="replace").strip()
            upper = verb.upper()
            if upper.startswith(("EHLO", "HELO")):
                say("250 localhost")
            elif upper.startswith("MAIL FROM:"):
                sender, recipients = verb[10:].strip().strip("<>"), []
                say("250 OK")
            elif upper.startswith("RCPT TO:"):
                recipients.append(verb[8:].strip().strip("<>"))
                say("250 OK")
            elif upper == "DATA":
                say("354 end with <CRLF>.<CRLF>")
                await writer.drain()
                lines = []
                while (data := await reader.readline()) not in (b".\r\n", b".\n", b""):
                    lines.append(data[1:] if data.startswith(b"..") else data)
                self.received.append(Mail(sender, recipients, b"".join(lines)))
                self.arrived.set()
                say("250 OK queued")
            elif upper in ("RSET", "NOOP"):
                say("250 OK")
            elif upper == "QUIT":
                say("221 bye")
                await writer.drain()
                break
            else:
                say("502 not implemented")
            await writer.drain()
        writer.close()


@asynccontextmanager
async def smtp_server() -> AsyncIterator[SmtpServer]:
    server = SmtpServer()
    listener = await asyncio.start_server(server._session, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    async with listener:
        yield server
