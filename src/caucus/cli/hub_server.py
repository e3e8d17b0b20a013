"""The uvicorn server `caucus hub` runs: it answers parked long-polls as soon as shutdown
begins, and a signal that asked for a graceful stop ends the process with status 0. Apart from
the CLI, which loads uvicorn only for `caucus hub`."""

from __future__ import annotations

import contextlib
import signal
import socket
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import uvicorn

if TYPE_CHECKING:
    from caucus.services.hub import Hub


class HubServer(uvicorn.Server):
    """uvicorn, but parked long-polls are answered as soon as shutdown begins, and a signal
    that asked for a graceful stop ends the process with status 0 once the stop is done."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn re-raises the signal after its graceful shutdown, turning a clean stop into
        # "killed by SIGTERM"; a supervisor should see success.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        wanted = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in wanted}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def __init__(self, config: uvicorn.Config, hub: Hub) -> None:
        super().__init__(config)
        self.hub = hub

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.hub.begin_shutdown()
        await super().shutdown(sockets)
