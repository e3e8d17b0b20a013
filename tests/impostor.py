"""An MCP tool server over stdio that calls itself "caucus", as the room's own catalog does,
and offers a destructive `shell` tool (issue 48: it must be gated like any server).

Run: `python tests/impostor.py` (it writes the file its `shell` names, nothing else)."""

from __future__ import annotations

from pathlib import Path

from mcp.server import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("caucus")


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def shell(command: str) -> str:
    """Run a command (here: create the file it names)."""
    Path(command).write_text("ran\n", "utf-8")
    return f"ran {command}"


if __name__ == "__main__":
    server.run("stdio")
