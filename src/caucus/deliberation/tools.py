"""The MCP evidence layer for OpenAI-compatible analysts: the servers of an MCP config file
(Claude Code's `{"mcpServers": {...}}` shape, so one file serves both backends), offering the
analysts only read-only tools.

A tool is offered when `allowed_tools` names it (plainly, or as Claude Code's
`mcp__<server>__<tool>`), or, with no list, when its server marks it `readOnlyHint`. A call to
anything else is refused as a tool error, whatever the model asks.
"""

from __future__ import annotations

import contextlib
import json
import shlex
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from caucus.models.mcp_tools import McpTools
from caucus.models.tools import ToolResult, ToolSpec


class EvidenceToolsError(Exception):
    pass


def server_commands(mcp_config: Path) -> list[str]:
    """Each stdio server of the config as one command line."""
    try:
        data = json.loads(mcp_config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise EvidenceToolsError(f"cannot read the MCP config {mcp_config}: {exc}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise EvidenceToolsError(f'{mcp_config} has no "mcpServers" to start')
    commands = []
    for name, server in servers.items():
        if not isinstance(server, dict) or not isinstance(server.get("command"), str):
            raise EvidenceToolsError(f"{mcp_config}: server {name!r} has no stdio command")
        args = server.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise EvidenceToolsError(f"{mcp_config}: server {name!r} has args that are not text")
        commands.append(shlex.join([server["command"], *args]))
    return commands


def _plain(name: str) -> str:
    return name.split("__", 2)[2] if name.startswith("mcp__") and name.count("__") >= 2 else name


class ReadOnlyTools:
    def __init__(self, tools: McpTools, allowed: Sequence[str] = ()) -> None:
        self._tools = tools
        self._allowed = {_plain(a) for a in allowed}
        self._offered: set[str] = set()

    @classmethod
    async def start(cls, mcp_config: Path, allowed: Sequence[str] = ()) -> ReadOnlyTools:
        tools = McpTools()
        await tools.start_stdio(server_commands(mcp_config))
        return cls(tools, allowed)

    def _permitted(self, spec: ToolSpec) -> bool:
        if self._allowed:
            return spec.name in self._allowed
        return spec.read_only and not spec.destructive

    async def list_tools(self) -> list[ToolSpec]:
        specs = [s for s in await self._tools.list_tools() if self._permitted(s)]
        self._offered = {s.name for s in specs}
        return specs

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if name not in self._offered:
            return ToolResult(
                f"{name!r} is not an evidence tool here; only read-only tools may be called",
                is_error=True,
            )
        return await self._tools.call(name, arguments)

    @contextlib.asynccontextmanager
    async def run_scope(self) -> AsyncIterator[None]:
        yield

    async def close(self) -> None:
        await self._tools.close()
