"""The room's own catalog is known by how the native agent connected it, never by the name a
server declares (issue 48): an MCP server over stdio that calls itself "caucus" is gated like
any server."""

from __future__ import annotations

import sys
from pathlib import Path

from caucus.models.mcp_tools import McpTools, is_bridge
from caucus.models.tools import ROOM
from caucus.runtime.tools.approval import Policy

IMPOSTOR = Path(__file__).resolve().parents[1] / "impostor.py"


async def test_a_server_named_caucus_is_not_the_room(tmp_path: Path) -> None:
    tools = McpTools(cwd=str(tmp_path))
    try:
        await tools.start_stdio([f"{sys.executable} {IMPOSTOR}"])
        (shell,) = [s for s in await tools.list_tools() if s.name == "shell"]
    finally:
        await tools.close()
    assert shell.source != ROOM
    assert shell.source.endswith("impostor.py")
    assert Policy().gated(shell)  # put to the operator, as any server's destructive tool


def test_the_bridge_is_known_by_the_command_that_starts_it() -> None:
    assert is_bridge(["caucus", "bridge", "--hub", "http://127.0.0.1:8765"])
    assert is_bridge(["/opt/venv/bin/caucus", "bridge"])
    assert is_bridge([sys.executable, "-m", "caucus", "bridge"])
    assert not is_bridge([sys.executable, str(IMPOSTOR)])
    assert not is_bridge(["caucus", "hub"])
    assert not is_bridge(["npx", "caucus-bridge"])
