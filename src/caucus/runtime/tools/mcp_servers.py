"""Tools from MCP servers, through the official `mcp` SDK client: servers the agent starts
over stdio (`--mcp-stdio 'CMD ARGS'`, repeatable), and any client already connected (the hub's
own catalog, served in-process to a native agent on the hub).

Each server is listed at the start of every run. Two servers offering the same name: the first
keeps it, the second's is skipped with a warning. Names in `hidden` are never offered (the hub
connector joins, receives and leaves itself). What a stdio server writes on stderr is logged
line by line (as NDJSON, like the agent's own logs), so the agent's stderr stays
machine-readable.
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

from caucus.runtime.tools.executor import ToolResult, ToolSpec

log = logging.getLogger(__name__)

START_TIMEOUT = 60.0  # seconds for a server to start and answer its first request
CALL_TIMEOUT = 300.0


class ToolServerError(Exception):
    """A tool server that would not start; the message names it and says why."""


class McpTools:
    def __init__(self, *, hidden: frozenset[str] = frozenset(), cwd: str | None = None) -> None:
        self._hidden = hidden
        self._cwd = cwd
        self._stack = AsyncExitStack()
        self._clients: list[tuple[str, Client]] = []
        self._routes: dict[str, Client] = {}
        self._resource_routes: dict[str, Client] = {}
        self._stderr_tasks: list[asyncio.Task[None]] = []
        # A server said a resource it was asked to watch changed (its URI).
        self.on_resource_updated: Callable[[str], None] | None = None

    async def attach(self, label: str, client: Client) -> None:
        """Offer the tools of a client not yet entered (entered here, closed with these)."""
        await self._stack.enter_async_context(client)
        self._clients.append((label, client))

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
        params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=self._cwd)
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
                    if tool.name in self._hidden:
                        continue
                    if tool.name in routes:
                        log.warning(
                            "`%s` also offers %r; the first server's is used", command, tool.name
                        )
                        continue
                    routes[tool.name] = client
                    hints = tool.annotations
                    specs.append(
                        ToolSpec(
                            tool.name,
                            tool.description or tool.title or tool.name,
                            dict(tool.input_schema or {"type": "object"}),
                            bool(hints is not None and hints.destructive_hint),
                            dict(tool.output_schema) if tool.output_schema else None,
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
        updated = self.on_resource_updated
        if isinstance(message, types.ResourceUpdatedNotification) and updated is not None:
            updated(message.params.uri)

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
        with contextlib.suppress(Exception):
            await self._stack.aclose()
        for task in self._stderr_tasks:
            task.cancel()
        for task in self._stderr_tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._stderr_tasks.clear()
