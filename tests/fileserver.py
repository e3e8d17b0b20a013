"""A small MCP tool server over stdio for the approval tests: `write_file`, marked
destructive (so a native agent on a hub asks the operator first), and `read_file`.

Run: `python tests/fileserver.py` (its working directory is where the files are)."""

from __future__ import annotations

from pathlib import Path

from mcp.server import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("files")


@server.tool(annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False))
def write_file(path: str, content: str) -> str:
    """Replace a file's content."""
    Path(path).write_text(content, "utf-8")
    return f"wrote {len(content)} characters to {path}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_file(path: str) -> str:
    """A file's content."""
    return Path(path).read_text("utf-8")


if __name__ == "__main__":
    server.run("stdio")
