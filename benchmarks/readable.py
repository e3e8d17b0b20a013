"""What a model reads of Caucus's tools, in characters, in one run.

A host hands its model either a tool result's text or, like Claude Code, only its structured
content (JSON.stringify of it: the text is dropped). This prints, for `join` (a first join,
protocol included), `listen` with 5 messages waiting, and `tools/list`, the characters the
model reads on each kind of host, through the stdio bridge as each host starts it, and what
each looks like. Run it on two commits to compare (issue 30 took its figures this way).

Run: `.venv/bin/python benchmarks/readable.py [--show]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp_types import Implementation

from caucus.client import HubClient
from caucus.testing import make_hub, serve

HOSTS = {"text": "gemini-cli-mcp-client", "structured": "claude-code"}


def read_by(host: str, result: Any) -> str:
    """What the model of that kind of host reads of one tool result."""
    if host == "structured" and result.structured_content is not None:
        return json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def measure(url: str, folder: Path, host: str, show: bool) -> dict[str, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAUCUS_")}
    env.update(XDG_STATE_HOME=str(folder / host), XDG_RUNTIME_DIR=str(folder / "run"))
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "caucus", "bridge", "--hub", url], env=env
    )
    figures: dict[str, int] = {}
    who = Implementation(name=HOSTS[host], version="1")
    # As the hosts do today: the initialize handshake (2025-11-25).
    async with Client(params, client_info=who, mode="legacy") as client:
        listed = await client.list_tools()
        tools = [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]
        figures["tools/list"] = len(json.dumps(tools, separators=(",", ":")))
        joined = await client.call_tool("join", {"name": f"reader-{host}"})
        figures["join"] = len(read_by(host, joined))
        async with HubClient(url) as ann:
            await ann.register(f"ann-{host}")
            for n in range(5):
                await ann.send(f"reader-{host}", f"message {n}: the build on main is green again")
        heard = await client.call_tool("listen", {"timeout": 5})
        figures["listen (5 messages)"] = len(read_by(host, heard))
        if show:
            print(f"--- join, as a {host} host's model reads it ---\n{read_by(host, joined)}")
            print(f"--- listen, as a {host} host's model reads it ---\n{read_by(host, heard)}")
    return figures


async def main(show: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="caucus-readable-") as where:
        folder = Path(where)
        async with make_hub(folder / "hub") as hub, serve(hub) as url:
            rows = {host: await measure(url, folder, host, show) for host in HOSTS}
    print(f"{'characters a model reads':28} {'text host':>10} {'Claude Code':>12}")
    for what in rows["text"]:
        print(f"{what:28} {rows['text'][what]:>10} {rows['structured'][what]:>12}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="print what each host's model reads")
    asyncio.run(main(parser.parse_args().show))
