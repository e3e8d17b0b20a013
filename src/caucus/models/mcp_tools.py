"""Tools from MCP servers, through the official `mcp` SDK client: servers the agent starts
over stdio (`--mcp-stdio 'CMD ARGS'`, repeatable), and any client already connected (the hub's
own catalog, served in-process to a native agent on the hub).

Each server is listed at the start of every run. Two servers offering the same name: the first
keeps it, the second's is skipped with a warning. An attached client's `hidden` names are
never offered (the hub connector joins, receives and leaves itself; a `caucus bridge` started
with `--mcp-stdio` offers them all, since there the model joins). What a stdio server writes
on stderr is logged line by line (as NDJSON, like the agent's own logs), so the agent's stderr
stays machine-readable.

Resource changes arrive in the server's protocol era: a 2025-era server takes
`resources/subscribe` and sends `notifications/resources/updated` and `list_changed`; a
2026-07-28 server (such as `caucus bridge`) has neither, and is followed instead with one
`subscriptions/listen` stream per server, opened at the start (for list changes) and opened
again with the new filter whenever the watched set changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shlex
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from caucus.models.tools import ROOM, ToolResult, ToolSpec

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0  # seconds for a server to start and answer its first request
CALL_TIMEOUT = 300.0


def is_bridge(argv: list[str]) -> bool:
    """Whether a command the agent was given runs `caucus bridge`: the room's own catalog by
    the command the user wrote (`caucus bridge …`, `python -m caucus bridge …`), never by the
    name the server it starts gives itself."""
    if len(argv) >= 2 and os.path.basename(argv[0]) in ("caucus", "caucus.exe"):
        return argv[1] == "bridge"
    return argv[1:4] == ["-m", "caucus", "bridge"]


class ToolServerError(Exception):
    """A tool server that would not start; the message names it and says why."""


class McpTools:
    def __init__(self, *, cwd: str | None = None) -> None:
        self._hidden: dict[int, frozenset[str]] = {}  # id(client) -> names it never offers
        # The room's own catalog, known by how it was connected (`attach(room=True)`), never
        # by the name a server gives itself: an impostor calling itself "caucus" is gated
        # like any server (issue 48).
        self._room: set[int] = set()
        self._cwd = cwd
        self._stack = AsyncExitStack()
        self._clients: list[tuple[str, Client]] = []
        self._routes: dict[str, Client] = {}
        self._resource_routes: dict[str, Client] = {}
        self._stderr_tasks: list[asyncio.Task[None]] = []
        # A server said a resource it was asked to watch changed (its URI); a server said
        # the list of its resources changed.
        self.on_resource_updated: Callable[[str], None] | None = None
        self.on_resources_changed: Callable[[], None] | None = None
        # 2026-07-28 servers: the URIs followed on each one's listen stream, and the stream.
        # (Keyed by id(): a Client is not hashable.)
        self._followed: dict[int, set[str]] = {}
        self._streams: dict[int, asyncio.Task[None]] = {}

    async def attach(
        self,
        label: str,
        client: Client,
        *,
        hidden: frozenset[str] = frozenset(),
        room: bool = False,
    ) -> None:
        """Offer the tools of a client not yet entered (entered here, closed with these),
        but for the names in `hidden`. `room`: it is the room's own catalog, whose tools act
        where the operator oversees them, so they are not put to the operator one by one."""
        self._hidden[id(client)] = hidden
        if room:
            self._room.add(id(client))
        await self._stack.enter_async_context(client)
        self._clients.append((label, client))
        await self._follow(client)

    async def start_stdio(self, commands: list[str]) -> None:
        """Start each server; on a failure, close what started and raise ToolServerError."""
        try:
            for command in commands:
                await self._start(command)
        except BaseException:
            await self.close()
            raise

    async def _start(self, command: str) -> None:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ToolServerError(
                f"cannot read the tool server command {command!r}: {exc}"
            ) from None
        if not argv:
            raise ToolServerError("an empty --mcp-stdio command")
        # The agent's whole environment, as a shell would pass it: the user wrote the command
        # (the SDK's default keeps only HOME, PATH and a few others, which would drop what a
        # server needs, such as CAUCUS_HUB or an API key).
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], cwd=self._cwd, env=dict(os.environ)
        )
        errlog = await self._stderr_logger(argv[0])
        client = Client(stdio_client(params, errlog=errlog), message_handler=self._message)
        try:
            async with asyncio.timeout(START_TIMEOUT):
                await self._stack.enter_async_context(client)
                await client.list_tools()
        except TimeoutError:
            raise ToolServerError(
                f"the tool server `{command}` did not answer within {START_TIMEOUT:g} s"
            ) from None
        except Exception as exc:
            raise ToolServerError(f"the tool server `{command}` did not start: {exc}") from None
        self._clients.append((command, client))
        if is_bridge(argv):
            self._room.add(id(client))
        await self._follow(client)

    async def _stderr_logger(self, name: str) -> Any:
        """A file the server writes its stderr to, whose lines are logged here."""
        read_fd, write_fd = os.pipe()
        reader = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", 0)
        )
        server_log = logging.getLogger(f"caucus.tools.{os.path.basename(name)}")

        async def relay() -> None:
            while line := await reader.readline():
                server_log.info("%s", line.decode("utf-8", "replace").rstrip())

        self._stderr_tasks.append(asyncio.ensure_future(relay()))
        errlog = os.fdopen(write_fd, "w")
        self._stack.callback(errlog.close)
        return errlog

    async def list_tools(self) -> list[ToolSpec]:
        specs: list[ToolSpec] = []
        routes: dict[str, Client] = {}
        for command, client in self._clients:
            cursor: str | None = None
            while True:
                listed = await client.list_tools(cursor=cursor)
                for tool in listed.tools:
                    if tool.name in self._hidden.get(id(client), ()):
                        continue
                    if tool.name in routes:
                        log.warning(
                            "`%s` also offers %r; the first server's is used", command, tool.name
                        )
                        continue
                    routes[tool.name] = client
                    hints = tool.annotations
                    source = ROOM if id(client) in self._room else command
                    given = (
                        hints.model_dump(by_alias=True, exclude_none=True)
                        if hints is not None
                        else {}
                    )
                    specs.append(
                        ToolSpec(
                            tool.name,
                            tool.description or tool.title or tool.name,
                            dict(tool.input_schema or {"type": "object"}),
                            bool(hints is not None and hints.destructive_hint),
                            dict(tool.output_schema) if tool.output_schema else None,
                            bool(hints is not None and hints.read_only_hint),
                            source=source,
                            annotations=given,
                        )
                    )
                cursor = listed.next_cursor
                if not cursor:
                    break
        self._routes = routes
        return specs

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        client = self._routes.get(name)
        if client is None:
            return ToolResult(f"there is no tool named {name!r}", is_error=True)
        try:
            result = await client.call_tool(name, arguments, read_timeout_seconds=CALL_TIMEOUT)
        except Exception as exc:  # the server failed the call: the model hears why
            return ToolResult(f"{type(exc).__name__}: {exc}", is_error=True)
        parts = []
        for item in result.content:
            text = getattr(item, "text", None)
            if isinstance(text, str):
                parts.append(text)
            else:
                parts.append(f"[{getattr(item, 'type', 'content')} omitted]")
        if not parts and result.structured_content is not None:
            parts.append(json.dumps(result.structured_content))
        return ToolResult(
            "\n".join(parts), is_error=bool(result.is_error), data=result.structured_content
        )

    async def _message(self, message: Any) -> None:
        updated, changed = self.on_resource_updated, self.on_resources_changed
        if isinstance(message, types.ResourceUpdatedNotification) and updated is not None:
            updated(message.params.uri)
        elif isinstance(message, types.ResourceListChangedNotification) and changed is not None:
            changed()

    # --- 2026-07-28: listen streams ------------------------------------------------------------
    @staticmethod
    def _modern(client: Client) -> bool:
        return client.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def _follow(self, client: Client) -> None:
        """(Re)open `client`'s listen stream with what is followed now; back once the server
        acknowledged it, so nothing that happens after this returns is missed."""
        if not self._modern(client) or client.server_capabilities.resources is None:
            return
        earlier = self._streams.pop(id(client), None)
        if earlier is not None:
            earlier.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await earlier
        opened = asyncio.Event()
        task = asyncio.ensure_future(self._stream(client, opened))
        self._streams[id(client)] = task
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(START_TIMEOUT):
                await asyncio.wait(
                    [task, asyncio.ensure_future(opened.wait())],
                    return_when=asyncio.FIRST_COMPLETED,
                )

    async def _stream(self, client: Client, opened: asyncio.Event) -> None:
        uris = sorted(self._followed.get(id(client), ()))
        try:
            async with client.listen(
                resources_list_changed=True, resource_subscriptions=uris
            ) as stream:
                opened.set()
                async for event in stream:
                    if isinstance(event, ResourceUpdated) and self.on_resource_updated:
                        self.on_resource_updated(event.uri)
                    elif isinstance(event, ResourcesListChanged) and self.on_resources_changed:
                        self.on_resources_changed()
        except Exception as exc:  # the server ended the stream or went away
            log.warning("following the resources of a tool server ended: %s", exc)
        finally:
            opened.set()

    # --- resources -----------------------------------------------------------------------------
    async def list_resources(self) -> list[dict[str, Any]]:
        """Every resource the servers list: uri, name, mime type, description, server."""
        found: list[dict[str, Any]] = []
        routes: dict[str, Client] = {}
        for label, client in self._clients:
            caps = client.server_capabilities.resources
            if caps is None:
                continue
            cursor: str | None = None
            while True:
                listed = await client.list_resources(cursor=cursor)
                for r in listed.resources:
                    routes.setdefault(r.uri, client)
                    found.append(
                        {
                            "uri": r.uri,
                            "name": r.name,
                            "mime_type": r.mime_type,
                            "description": r.description,
                            "server": label,
                        }
                    )
                cursor = listed.next_cursor
                if not cursor:
                    break
        self._resource_routes = routes
        return found

    def _resource_client(self, uri: str) -> list[Client]:
        known = self._resource_routes.get(uri)
        others = [c for _, c in self._clients if c is not known]
        return [known, *others] if known is not None else others

    async def read_resource(self, uri: str) -> str:
        """A resource's text (binary parts described, not included). Raises LookupError when
        no server has it."""
        last: Exception | None = None
        for client in self._resource_client(uri):
            if client.server_capabilities.resources is None:
                continue
            try:
                read = await client.read_resource(uri)
            except Exception as exc:  # this server does not have it: try the next
                last = exc
                continue
            parts = []
            for item in read.contents:
                text = getattr(item, "text", None)
                parts.append(text if isinstance(text, str) else f"[{item.mime_type} data omitted]")
            return "\n".join(parts)
        raise LookupError(f"no server has {uri!r}" + (f" ({last})" if last else ""))

    async def subscribe(self, uri: str, *, on: bool = True) -> bool:
        """Ask the server that has `uri` to say when it changes (or to stop); False when no
        server can."""
        for client in self._resource_client(uri):
            caps = client.server_capabilities.resources
            if caps is None or not caps.subscribe:
                continue
            if self._modern(client):
                followed = self._followed.setdefault(id(client), set())
                before = set(followed)
                if on:
                    followed.add(uri)
                else:
                    followed.discard(uri)
                if followed != before:
                    await self._follow(client)
                return True
            with warnings.catch_warnings():
                # The handshake era's verb (servers such as server-everything speak it); the
                # SDK warns it is gone from 2026-07-28.
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                try:
                    if on:
                        await client.subscribe_resource(uri)
                    else:
                        await client.unsubscribe_resource(uri)
                except Exception as exc:
                    log.warning("subscribing to %s failed: %s", uri, exc)
                    continue
            return True
        return False

    @contextlib.asynccontextmanager
    async def run_scope(self) -> AsyncIterator[None]:
        yield

    async def close(self) -> None:
        for task in self._streams.values():
            task.cancel()
        for task in self._streams.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._streams.clear()
        with contextlib.suppress(Exception):
            await self._stack.aclose()
        for task in self._stderr_tasks:
            task.cancel()
        for task in self._stderr_tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._stderr_tasks.clear()
