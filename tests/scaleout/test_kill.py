"""kill -9 one of several hub processes mid-stream (issue 14): its agents come back on another
process with their tokens and nothing acknowledged is lost. What the dead process had claimed
for them and never saw acknowledged is handed out again there at once (a reconnect releases
it), and what it was about to hand out is still owed."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from caucus.client import HubClient
from caucus.errors import HubUnavailable
from tests.acceptance.test_crash_safety import drain, send_all
from tests.conftest import eventually
from tests.scaleout.conftest import Room

pytestmark = pytest.mark.slow


async def test_killing_one_process_mid_stream_loses_nothing_acknowledged(room: Room) -> None:
    a, b = room(2)
    acked: dict[int, str] = {}
    seen: dict[int, str] = {}
    async with HubClient(a.url) as alice, HubClient(a.url) as bob:
        await alice.register("alice")
        await bob.register("bob")
        tokens = {"alice": alice.token, "bob": bob.token}

        async def keep_sending() -> None:
            # The process dies under us: the sends in flight then were never acknowledged.
            with contextlib.suppress(HubUnavailable):
                await send_all(alice, 100_000, acked, width=8)

        async def keep_receiving() -> None:
            with contextlib.suppress(HubUnavailable):
                while True:
                    batch = await bob.receive(timeout=2)
                    seen.update((m.seq, m.content) for m in batch.messages)

        sender = asyncio.create_task(keep_sending())
        receiver = asyncio.create_task(keep_receiving())
        await eventually(lambda: len(acked) >= 300 and len(seen) >= 100, within=120, what="flow")
        a.kill()
        await sender
        await receiver
    stopped_at = len(acked)

    # Both come back on B with their tokens: the same identities, inboxes and cursors.
    async with (
        HubClient(b.url, token=tokens["alice"]) as alice,
        HubClient(b.url, token=tokens["bob"]) as bob,
    ):
        assert (await alice.register("alice")).outcome in ("reaffirmed", "resumed")
        assert (await bob.register("bob")).outcome in ("reaffirmed", "resumed")
        await send_all(alice, 200, acked, width=8)  # the stream goes on, through B
        got = await drain(bob, len(acked) - len(seen) + 16)
    received = {**seen, **dict(got)}
    missing = set(acked) - set(received)
    assert len(acked) == stopped_at + 200
    assert not missing, f"{len(missing)} of {len(acked)} acknowledged messages lost"
    assert [s for s, _ in got] == sorted(s for s, _ in got)  # in seq order on B too
