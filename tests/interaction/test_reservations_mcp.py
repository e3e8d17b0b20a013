"""The `reservation` tool through the stdio bridge (over HTTP) and at `/mcp` (in process), on
one hub (issue 34): the same answers both ways, conflicts named in the text a model reads, a
reason fenced as another agent's words, the list before joining, and release of everything."""

from __future__ import annotations

from pathlib import Path

from mcp import Client

from tests.interaction.test_mcp_bridge import bridge
from tests.mcptools import call, fail, text_of


async def test_reservations_through_the_bridge_and_at_mcp(url: str, tmp_path: Path) -> None:
    async with (
        bridge(url, tmp_path, "alice") as alice,
        Client(f"{url}/mcp", mode="legacy") as bob,
        Client(f"{url}/mcp", mode="legacy") as stranger,
    ):
        await call(alice, "join")
        await call(bob, "join", name="bob")
        assert (await fail(alice, "reservation", action="reserve"))[0] == "invalid_request"
        held = await call(
            alice, "reservation", action="reserve", paths=["src/"], reason="moving modules"
        )
        assert [(r["holder"], r["pattern"]) for r in held["reservations"]] == [("alice", "src/")]
        text = await text_of(bob, "reservation", action="reserve", paths=["src/app.py"], ttl=600)
        assert "Reserved 1. 1 conflict(s) (advisory: granted all the same)." in text
        assert 'conflict: "src/app.py" meets alice\'s exclusive "src/"' in text
        # Who holds what, before joining; the reason is alice's words, between data markers.
        listing = await text_of(stranger, "reservation", action="list")
        assert listing.startswith("2 reservation(s) stand.")
        assert "<<<caucus-data" in listing
        assert "reason: moving modules" in listing
        mine = await call(stranger, "reservation", action="list", holder="bob")
        assert [r["pattern"] for r in mine["reservations"]] == ["src/app.py"]
        renewed = await call(alice, "reservation", action="renew", ttl=900)
        assert [r["pattern"] for r in renewed["reservations"]] == ["src/"]
        released = await call(alice, "reservation", action="release")  # neither: all of them
        assert [r["pattern"] for r in released["reservations"]] == ["src/"]
        left = await call(bob, "reservation", action="list")
        assert [r["holder"] for r in left["reservations"]] == ["bob"]
