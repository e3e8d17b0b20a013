"""A response's head and body leave in one write.

uvicorn's ASGI cycle writes a response's status line and headers when the app sends
`http.response.start`, and its body when the app sends `http.response.body`: two writes to the
socket, so two system calls (and, without Nagle, two packets) for every response whose body
was ready with its head, which is nearly all of them. On the hub's own `/mcp` tool calls that
second system call was a fifth of what the door cost over plain HTTP (issue 33; the lean lane
of `uvicorn_http.py` already writes its answers whole).

`OneWrite` stands between a cycle and its transport: the cycle's first write (the head) is held
until its next (the body, which an app sends in the same turn of the loop) and the two go out
joined. A head with no body behind it in that turn (a stream that starts and then waits) goes
out alone at the end of the turn, so nothing a client waits for is held back.
"""

from __future__ import annotations

import asyncio
from typing import Any

_JOINED = 64 * 1024  # a body shorter than this is copied behind its head


class OneWrite:
    """The transport a response cycle writes through (every other call passes to the real
    one, after anything held)."""

    __slots__ = ("_held", "_loop", "_started", "_transport")
    joined = 0  # heads sent with their bodies, ever (a test's evidence that responses pass here)

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None
        self._started = False

    def write(self, data: bytes) -> None:
        if not self._started:  # the head: wait for the body, at most until the turn ends
            self._started = True
            self._held = bytes(data)
            self._loop.call_soon(self.flush)
            return
        held, self._held = self._held, None
        if held is None:
            self._transport.write(data)
            return
        OneWrite.joined += 1
        if len(data) < _JOINED:
            self._transport.write(held + data)
        else:  # not copied: handed over together, for the transport to send as it can
            self._transport.writelines((held, data))

    def flush(self) -> None:
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
