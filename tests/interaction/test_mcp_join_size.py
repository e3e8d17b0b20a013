"""`join` costs a model the same whatever the room (issue 50): at most 1,500 characters of text
and of structured content, the roster summed up in a big room (the full one is `peers`), the
protocol in short (the whole is `protocol`), and what waited from before cut to the newest few.
benchmarks/join.py prints the figures at 5, 50 and 500 peers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from caucus.client import HubClient
from caucus.protocol import core_text, essentials_text
from caucus.testing import make_hub, serve

JOIN_CEILING = 1_500


def _read(result: Any) -> tuple[str, str]:
    text = "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return text, json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("others", [0, 3, 200])
async def test_a_join_fits_its_ceiling_whatever_the_room(tmp_path: Path, others: int) -> None:
    async with make_hub(tmp_path) as hub, serve(hub) as url:
        for n in range(others):
            await hub.registry.register(name=f"peer-{n:03d}", skills=["python", "review"])
        for n in range(4):  # more news than a join shows, each longer than it shows
            await hub.control.announce(f"news {n}: " + "the release moves to Friday " * 10)
        async with Client(f"{url}/mcp", mode="legacy") as client, HubClient(url) as ann:
            first = await client.call_tool("join", {"name": "newcomer"})
            await ann.register("ann")
            await ann.send("newcomer", "welcome")
            again = await client.call_tool("join", {"name": "newcomer"})
    text, data = _read(first)
    assert len(text) <= JOIN_CEILING, text
    assert len(data) <= JOIN_CEILING, data
    assert essentials_text().strip() in text
    assert core_text().strip() not in text
    assert "Before you came: 4 announcement(s)" in text
    assert text.count("news ") == 1
    assert "news 3: the release" in text  # the newest, cut
    if others > 5:
        assert f"Here: {others} others" in text
        assert "`peers` lists them" in text
        assert "peer-150" not in text
    text, data = _read(again)
    assert len(text) <= JOIN_CEILING
    assert len(data) <= JOIN_CEILING
    assert "1 message(s) wait for you (the last from ann): call listen." in text
