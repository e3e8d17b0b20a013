"""The sockets the hub listens on send a response's small writes at once (TCP_NODELAY): asyncio
sets it only on sockets created as IPPROTO_TCP, and without it every keep-alive response whose
head and body are two writes waited ~40 ms for the client's delayed ACK."""

from __future__ import annotations

import asyncio
import socket

from caucus.cli.hub import _bind


async def nodelay_of_accepted(sock: socket.socket) -> int:
    seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def on_connect(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted = writer.get_extra_info("socket")
        seen.set_result(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(on_connect, sock=sock)
    async with server:
        port = sock.getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        value = await asyncio.wait_for(seen, 5)
        writer.close()
    return value


async def test_the_hubs_listening_socket_accepts_connections_with_nodelay() -> None:
    assert await nodelay_of_accepted(_bind("127.0.0.1", 0)) != 0
