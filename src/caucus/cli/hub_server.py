"""What `caucus hub` serves with, once its socket is bound: the hub opened and announced, and
the uvicorn server that answers parked long-polls as soon as shutdown begins (a signal that
asked for a graceful stop ends the process with status 0). Apart from the CLI, which loads
uvicorn only for `caucus hub`."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import uvicorn
from rich.console import Console

from caucus import __version__
from caucus.cli.common import err
from caucus.errors import CaucusError

if TYPE_CHECKING:
    from caucus.api.mcp.door import McpDoor
    from caucus.config import Settings
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

    def __init__(self, config: uvicorn.Config, hub: Hub, mcp: McpDoor) -> None:
        super().__init__(config)
        self.hub = hub
        self.mcp = mcp
        self._refreeze: asyncio.Future[None] | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        tune_gc()  # once the app and its lifespan are up: all of that lives as long as we do
        self._refreeze = asyncio.ensure_future(self._freeze_once_mcp_loads())

    async def _freeze_once_mcp_loads(self) -> None:
        """`/mcp` loads once the hub serves (ADR 0037): the SDK, the catalog and what they
        import (~200 modules) live as long as the process too, so they are frozen as well,
        out of every later collection (with 1,000 agents busy, a full one took 70 ms)."""
        with contextlib.suppress(RuntimeError):  # it failed to load: nothing more to freeze
            await self.mcp.loaded()
        gc.freeze()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.hub.begin_shutdown()
        await super().shutdown(sockets)


YOUNG = 10_000  # net new objects between young collections (ADR 0002, ADR 0027)


def tune_gc() -> None:
    """Garbage-collector settings for a long-running hub process (ADR 0002, 0027).

    Every message allocates short-lived objects; with the default generation-0 threshold (700)
    the collector ran often enough to take ~10% of the hub's CPU. At 50,000 it ran about once
    in 20 s of full load, but each time stopped the event loop for 19-36 ms: the relay's worst
    tail. At `YOUNG` a pass takes 2-3 ms, still a handful a minute. Everything alive once the
    hub serves (the imports, the app, its caches) lives for the whole process, so it is frozen
    out of every future collection.
    """
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(YOUNG, gen1, gen2)


async def serve(
    settings: Settings, sock: socket.socket, *, access_log: bool, json_output: bool
) -> int:
    from caucus.server import build_app, open_hub
    from caucus.web.serving import uvicorn_config

    hub = open_hub(settings)
    try:
        await hub.start()  # before serving, so a locked or newer database is a clean error
    except (CaucusError, RuntimeError, OSError) as exc:
        err.print(f"[bold red]error:[/] cannot open the database: {exc}")
        return 2
    try:
        bound_port = sock.getsockname()[1]
        shown_host = f"[{settings.host}]" if ":" in settings.host else settings.host
        url = f"http://{shown_host}:{bound_port}"
        db_shown = settings.db_shown()
        token_file = hub.operator.path
        if json_output:
            # Machine-readable, and likely to end up in a supervisor's log: no token, only
            # where to find it.
            line = {
                "url": url,
                "db": db_shown,
                "version": __version__,
                "operator_token_file": str(token_file) if token_file else None,
            }
            print(json.dumps(line), flush=True)
        else:
            out = Console(soft_wrap=True, highlight=False)
            out.print(f"[bold]Caucus hub {__version__}[/] listening on [cyan]{url}[/]")
            out.print(f"database: {db_shown}")
            where = (
                f"{'generated, ' if hub.operator.created else ''}kept in {token_file}"
                if token_file is not None
                else "the one you configured"
            )
            if sys.stdout.isatty():
                # Like Jupyter: the operator's URL carries the token, in the fragment, which
                # browsers never send to a server. Only to a terminal: never into a log file.
                out.print(f"operator: [cyan]{url}/#token={hub.operator.token}[/]")
                out.print(f"[dim](the token: {where})[/]")
            else:
                out.print(f"operator: {url}/ (sign in with the operator token: {where})")
            out.print(f"[dim]Ctrl-C stops the hub; API reference at {url}/openapi.json[/]")
            sys.stdout.flush()
        app = build_app(hub)
        server = HubServer(
            uvicorn_config(
                app,
                settings,
                log_level=settings.log_level,
                access_log=access_log,
                timeout_graceful_shutdown=5,
            ),
            hub,
            app.mcp,
        )
        await server.serve(sockets=[sock])
        return 0 if server.started else 1
    finally:
        await hub.stop()
