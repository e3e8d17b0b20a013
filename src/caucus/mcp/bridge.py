"""`caucus bridge`: the tool catalog as a stdio MCP server, for hosts that spawn one per session.

Dormant until `join`. Talks to the hub over HTTP with `HubClient` (sending `CAUCUS_AGENT_KEY`
to a hub that requires one). Its token is kept per (hub, name) in the user's state directory
(`mcp/identity.py`), so a restarted host resumes the same peer with the same inbox. For
`caucus watch`, a watch key (which only waits for this peer's messages) goes in a 0600 session
file (never a command line), removed on leave and exit. When the host closes stdin or stops
the bridge (SIGTERM, SIGINT), the bridge tells the hub before it exits: the peer shows offline
at once and stays resumable. Nothing but JSON-RPC goes to stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import Any

from mcp.server.stdio import stdio_server

from caucus.client import HubClient
from caucus.config import Settings
from caucus.domain.names import name_from
from caucus.errors import CaucusError, HubUnavailable
from caucus.mcp.bridge_inbox import BridgeInbox
from caucus.mcp.front import ACKNOWLEDGED, REPLAYED_ID, SUBSCRIPTION_KEY, Handover
from caucus.mcp.identity import IdentityStore
from caucus.mcp.ports import HubPort
from caucus.mcp.push import CHANNEL_CAPABILITY, ChannelMode, ChannelPush
from caucus.mcp.remote import RemotePort
from caucus.mcp.results import WaitVia, WatchCommand
from caucus.mcp.server import Context, ToolServer, follows_lines, is_modern
from caucus.mcp.tool_call import Call
from caucus.mcp.tools import Catalog
from caucus.mcp.watch import Session, by_session_file, session_dir, write_session
from caucus.service import start_if_installed
from caucus.wire.room import Limits

log = logging.getLogger(__name__)

CHANNEL_ENV = "CAUCUS_CLAUDE_CHANNEL"  # "1": push messages into a Claude Code session
GOODBYE_TIMEOUT = 5.0  # seconds to tell the hub this session ended
MAX_LINE = 16 * 1024 * 1024  # one JSON-RPC message on stdin, at most


def default_name(cwd: Path | None = None) -> str | None:
    """`CAUCUS_NAME`, else the working directory's name made into a valid peer name."""
    configured = os.environ.get("CAUCUS_NAME")
    if configured:
        return configured
    return name_from((cwd or Path.cwd()).name)


class Bridge:
    def __init__(
        self,
        hub_url: str,
        *,
        name: str | None = None,
        agent_key: str | None = None,
        identities: IdentityStore | None = None,
        channel: bool | None = None,
    ) -> None:
        self.hub_url = hub_url.rstrip("/")
        key = agent_key or os.environ.get("CAUCUS_AGENT_KEY") or None
        self.client = HubClient(self.hub_url, agent_key=key)
        self.identities = identities or IdentityStore(self.hub_url)
        self.port = RemotePort(self.client, self.identities)
        self.name = name
        self.session_file = session_dir() / f"{secrets.token_hex(8)}.session"
        self._background: set[asyncio.Future[None]] = set()
        self._said_goodbye = False
        self._watching: str | None = None  # the name the session file's key waits for
        # Claude Code channel push, when asked for: it needs the connection to write events to,
        # which the first tool call (join comes first) brings.
        self.push: ChannelPush | None = None
        if channel if channel is not None else os.environ.get(CHANNEL_ENV) == "1":
            defaults = Settings()
            self.push = ChannelPush(self.client, gap=defaults.push_gap, cap=defaults.push_cap)
        self._connection: Any = None
        # The inbox as a resource (woken by the hub, claiming nothing), and the session and
        # era to tell when the resource list changes.
        self.inbox = BridgeInbox(self.client, lambda: self.port.name)
        self._session: Any = None
        self._modern = False

    def _default_name(self) -> str | None:
        return self.name or default_name()

    async def watch_for(self, call: Call, port: HubPort) -> WatchCommand | None:
        """The watcher, with a watch key in its session file (never the token); nothing to
        run once channel push is live."""
        if port.name is None:
            return None
        if self.push is not None and self.push.live:
            return WatchCommand(
                command=None,
                via=WaitVia.CHANNEL,
                how="nothing to run: this session is in channel mode, and messages arrive in "
                "the conversation by themselves",
            )
        if self._watching != port.name or not self.session_file.exists():
            key = await port.mint_watch_key()
            write_session(self.session_file, Session(self.hub_url, port.name, key.key))
            self._watching = port.name
        return by_session_file(self.session_file, follow=call.follows)

    async def _joined(self, port: HubPort) -> None:
        if self.push is not None and self._connection is not None and port.name is not None:
            outbound = self._connection.outbound

            async def notify(method: str, params: dict[str, Any]) -> None:
                await outbound.notify(method, params)

            await self.push.probe(notify, port.name)
        await self.inbox.changed(self._session, modern=self._modern)

    async def _left(self, port: HubPort) -> None:
        await self.inbox.changed(self._session, modern=self._modern)
        self.session_file.unlink(missing_ok=True)
        self._watching = None
        if self.push is not None:
            await self.push.close()
            self.push.mode = ChannelMode.OFF

    async def _limits(self, _: Context) -> Limits:
        try:
            return await self.port.limits()
        except CaucusError:  # the hub is not up yet: describe the defaults
            return Limits.of(Settings())

    def tools(self) -> ToolServer:
        catalog = Catalog(
            watch_for=self.watch_for,
            push=self.push,
            inbox_uri=self._inbox_uri,
            on_join=self._joined,
            on_leave=self._left,
        )

        async def call_for(ctx: Context, __: str | None) -> Call:
            # The connection's own outbound channel: a channel event is a notification of a
            # method the SDK has no type for (ADR 0011), sent outside any request.
            self._connection = ctx.session._connection
            self._session, self._modern = ctx.session, is_modern(ctx)
            return Call(self.port, default_name=self._default_name(), follows=follows_lines(ctx))

        return ToolServer(
            catalog,
            call_for=call_for,
            limits_for=self._limits,
            default_name=lambda _: self._default_name(),
            resources=self.inbox,
        )

    async def _inbox_uri(self, _: HubPort) -> str | None:
        return self.inbox.uri()

    async def run(self, handover: Handover | None = None) -> None:
        """Serve the host until it closes stdin or stops the bridge; from where the fast front
        (`mcp/front.py`) left the stream, if it answered first."""
        server = self.tools().server
        loop = asyncio.get_running_loop()
        this = asyncio.current_task()
        stopping = False

        def stop(*_: Any) -> None:
            nonlocal stopping
            if not stopping and this is not None:
                stopping = True
                this.cancel()
                self._background.add(asyncio.ensure_future(self._stop_anyway()))

        self._background.add(asyncio.ensure_future(self._wake_hub()))
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop)
        try:
            if handover is None:
                stdin, stdout = await _stdin_lines(), None
            else:
                stdin, stdout = await _handed_over(handover)
            async with stdio_server(stdin=stdin, stdout=stdout) as (read, write):
                experimental: dict[str, dict[str, Any]] | None = (
                    {CHANNEL_CAPABILITY: {}} if self.push is not None else None
                )
                options = server.create_initialization_options(
                    experimental_capabilities=experimental
                )
                await server.run(read, write, options)
        except asyncio.CancelledError:
            if not stopping or this is None:
                raise
            this.uncancel()  # our own stop: end normally
        finally:
            await self._goodbye()

    async def _wake_hub(self) -> None:
        """A hub that is down is started, if it is installed as a service: a connector never
        spawns a hub of its own."""
        try:
            async with asyncio.timeout(2.0):
                await self.client.health()
        except (HubUnavailable, TimeoutError):
            if await asyncio.to_thread(start_if_installed):
                log.warning("the hub was down: started the caucus-hub service")
        except CaucusError:
            pass

    async def _stop_anyway(self) -> None:
        """A stdin that is not a pipe is read in a thread nothing can interrupt: if the stop
        does not get through it in time, say goodbye here and end the process."""
        await asyncio.sleep(GOODBYE_TIMEOUT + 1)
        await self._goodbye()
        os._exit(0)

    async def _goodbye(self) -> None:
        """The session is over: the hub hears it now, not after the TTL."""
        if self._said_goodbye:
            return
        self._said_goodbye = True
        self.session_file.unlink(missing_ok=True)
        await self.inbox.close()
        if self.push is not None:
            await self.push.close()
        try:
            async with asyncio.timeout(GOODBYE_TIMEOUT):
                await self.port.offline()
        except (CaucusError, TimeoutError) as exc:
            log.warning("could not tell the hub this session ended: %s", exc)
        finally:
            self.identities.close()
            await self.client.aclose()


class _Lines:
    """stdin as the async line iterator `stdio_server` reads, on a pipe the event loop
    watches, so a stop interrupts it (the SDK's own reads it in a worker thread); `first`, the
    lines the fast front read and hands on, come before it."""

    def __init__(self, reader: asyncio.StreamReader, first: list[bytes] | None = None) -> None:
        self._reader = reader
        self._first = list(first or [])

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        if self._first:
            return self._first.pop(0).decode("utf-8", errors="replace")
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


async def _stdin_lines() -> Any:
    """A `_Lines` over stdin, or None (the SDK's reader) where stdin is not a pipe."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    try:
        pipe = os.fdopen(os.dup(0), "rb", 0)
    except OSError:  # no stdin at all
        return None
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    except (ValueError, OSError):  # a regular file: the SDK's reader handles it
        pipe.close()
        return None
    return _Lines(reader)


async def _handed_over(handover: Handover) -> tuple[Any, Any]:
    """The wire as the fast front leaves it: its descriptors, the lines it read and did not
    answer (after the replayed `initialize`), and the bytes past its last line."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    reader.feed_data(handover.rest)
    pipe = os.fdopen(handover.wire_in, "rb", 0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    stdin = _Lines(reader, [*handover.replay, *handover.pending])
    return stdin, _Wire(handover.wire_out, handover.acknowledged)


class _Wire:
    """stdout for `stdio_server` after the fast front: what the front already told the host
    is dropped (the answer to the replayed opening, the acknowledgement of each listen stream
    it held), the rest written in order."""

    def __init__(self, fd: int, acknowledged: list[Any]) -> None:
        self._file = os.fdopen(fd, "wb", 0)
        self._replayed = True
        self._acknowledged = list(acknowledged)

    async def write(self, text: str) -> None:
        if (self._replayed or self._acknowledged) and self._told(text):
            return
        await asyncio.to_thread(self._file.write, text.encode("utf-8"))

    def _told(self, text: str) -> bool:
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if self._replayed and message.get("id") == REPLAYED_ID:
            self._replayed = False
            return True
        if message.get("method") == ACKNOWLEDGED:
            stream = ((message.get("params") or {}).get("_meta") or {}).get(SUBSCRIPTION_KEY)
            if stream in self._acknowledged:
                self._acknowledged.remove(stream)
                return True
        return False

    async def flush(self) -> None:
        return


def run_bridge(bridge: Bridge, handover: Handover | None = None) -> int:
    """Serve until the host is done: the process's exit status."""
    # stdout carries JSON-RPC only: every log line goes to stderr.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)

    async def serve() -> int:
        await bridge.run(handover)
        return 0

    try:
        import uvloop
    except ImportError:  # uvloop is optional (not on Windows)
        return asyncio.run(serve())
    return uvloop.run(serve())
