"""A TCP proxy on loopback whose connections a test can cut, as a flaky network would."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class Proxy:
    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self.requests: list[bytes] = []  # the head of every request that went through

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, outbound: bool
    ) -> None:
        with contextlib.suppress(ConnectionError, asyncio.CancelledError):
            while data := await reader.read(65536):
                if outbound and data[:8].split(b" ")[0] in (b"GET", b"POST"):
                    self.requests.append(data.split(b"\r\n\r\n")[0])
                writer.write(data)
                await writer.drain()
        writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        self._writers |= {writer, up_writer}
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer, outbound=True),
                self._pipe(up_reader, writer, outbound=False),
            )
        finally:
            self._writers -= {writer, up_writer}

    def cut(self) -> None:
        """Drop every open connection at once (new ones are accepted again)."""
        for writer in list(self._writers):
            transport = writer.transport
            transport.abort()
        self._writers.clear()


@asynccontextmanager
async def proxy_to(url: str) -> AsyncIterator[tuple[Proxy, str]]:
    proxy = Proxy(int(url.rsplit(":", 1)[1]))
    server = await asyncio.start_server(proxy._serve, "127.0.0.1", 0)
    proxy.port = server.sockets[0].getsockname()[1]
    try:
        yield proxy, f"http://127.0.0.1:{proxy.port}"
    finally:
        proxy.cut()
        server.close()
        await server.wait_closed()
