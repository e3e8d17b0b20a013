"""What `join` costs a model as the room grows, in one run: 5, 50 and 500 peers.

A first `join` over `/mcp` (the protocol in short included, an announcement from before caught
up) and a second one (the protocol already read, a message waiting), with 5, 50 and 500 other
peers in the room: the characters of the text a model reads, and of the structured content a
program reads (compact JSON). The bar (1,500 characters whatever the room) is a test
(tests/interaction/test_mcp_join_size.py); this prints the figures, and the ratio of the
largest room to the smallest (flat is 1.00). Issue 50 measured 4,500-4,700 at 7bd1b70.

Run: `.venv/bin/python benchmarks/join.py`.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from typing import Any

from mcp import Client

from caucus.client import HubClient
from caucus.testing import make_hub, serve

ROOMS = (5, 50, 500)


def sizes(result: Any) -> tuple[int, int]:
    text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    structured = json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)
    return len(text), len(structured)


async def one_room(peers: int) -> tuple[tuple[int, int], tuple[int, int]]:
    with tempfile.TemporaryDirectory() as folder:
        async with make_hub(folder) as hub, serve(hub) as url:
            for n in range(peers - 1):
                await hub.registry.register(name=f"peer-{n:03d}", skills=["python", "review"])
            await hub.control.announce("the release is on Friday " * 8, subject="release")
            async with Client(f"{url}/mcp", mode="legacy") as client, HubClient(url) as ann:
                first = await client.call_tool("join", {"name": "newcomer"})
                await ann.register("ann")
                await ann.send("newcomer", "welcome: read #plan first")
                again = await client.call_tool("join", {"name": "newcomer"})
            return sizes(first), sizes(again)


async def main() -> None:
    columns = ("first: text", "structured", "again: text", "structured")
    print(f"{'peers':>6} " + " ".join(f"{c:>12}" for c in columns))
    firsts = []
    for peers in ROOMS:
        (text, data), (text2, data2) = await one_room(peers)
        firsts.append(text)
        print(f"{peers:>6} {text:>12} {data:>11} {text2:>12} {data2:>11}")
    print(f"first join's text, {ROOMS[-1]} peers vs {ROOMS[0]}: {firsts[-1] / firsts[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
