"""/mcp and the bridge as MCP hosts' own tools see them: the MCP Inspector CLI (installed from
npm by `./dev test`). The MCP conformance suite is a tier of its own: tests/conformance."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from tests.nodebin import BIN
from tests.nodebin import node_bin as tool
from tests.waiting import within


async def run(*argv: str | Path, env: dict[str, str] | None = None) -> str:
    # Node 22 from the Node tools first on PATH.
    full_env = {**os.environ, "PATH": f"{BIN}:{os.environ.get('PATH', '')}", **(env or {})}
    proc = await asyncio.create_subprocess_exec(
        *map(str, argv),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=full_env,
    )
    out, _ = await within(proc.communicate(), 180, "the process to end")
    return out.decode()


def json_of(output: str) -> dict[str, object]:
    """The first JSON document the tool printed (the Inspector may add an error line after)."""
    value, _ = json.JSONDecoder().raw_decode(output[output.index("{") :])
    assert isinstance(value, dict), output
    return value


async def test_the_inspector_lists_and_calls_tools_on_mcp(url: str, tmp_path: Path) -> None:
    inspector = tool("mcp-inspector")
    env = {"MCP_CATALOG_PATH": str(tmp_path / "catalog.json")}
    listed = json_of(await run(inspector, "--cli", f"{url}/mcp", "--method", "tools/list", env=env))
    names = {t["name"] for t in listed["tools"]}  # type: ignore[attr-defined]
    assert {"join", "say", "listen", "protocol"} <= names
    for listed_tool in listed["tools"]:  # type: ignore[attr-defined]
        assert listed_tool["outputSchema"]["type"] == "object", listed_tool["name"]
    called = json_of(
        await run(
            inspector,
            "--cli",
            f"{url}/mcp",
            "--method",
            "tools/call",
            "--tool-name",
            "protocol",
            "--tool-arg",
            "section=delivery",
            env=env,
        )
    )
    assert called["isError"] is False
    assert "Delivery guarantees" in called["structuredContent"]["text"]  # type: ignore[index]


async def test_the_inspector_lists_and_calls_tools_on_the_bridge(url: str, tmp_path: Path) -> None:
    inspector = tool("mcp-inspector")
    bridge = [sys.executable, "-m", "caucus", "bridge"]
    env_args = ["-e", f"CAUCUS_HUB={url}", "-e", f"XDG_RUNTIME_DIR={tmp_path}"]
    env = {"MCP_CATALOG_PATH": str(tmp_path / "catalog.json")}
    listed = json_of(
        await run(inspector, "--cli", *env_args, "--method", "tools/list", "--", *bridge, env=env)
    )
    assert "listen" in {t["name"] for t in listed["tools"]}  # type: ignore[attr-defined]
    called = json_of(
        await run(
            inspector,
            "--cli",
            *env_args,
            "--method",
            "tools/call",
            "--tool-name",
            "say",
            "--tool-arg",
            "to=bob",
            "--tool-arg",
            "content=hi",
            "--",
            *bridge,
            env=env,
        )
    )
    assert called["isError"] is True
    assert "[not_joined]" in called["content"][0]["text"]  # type: ignore[index]
