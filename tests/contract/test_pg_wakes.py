"""Wake-ups across processes on PostgreSQL (ADR 0014, 0045): every peer a batch queued a
delivery for is named to the other processes, whether its batch's NOTIFY rode on the next
batch's COMMIT (a batch was waiting) or went alone (none was)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from caucus.domain.names import Target, TargetKind
from caucus.services.delivery_units import Append
from caucus.storage.postgres_engine import PgEngine
from caucus.storage.repos import Repos
from caucus.testing.postgres import Server, fresh_database
from tests.contract.test_store_contract import peer
from tests.contract.test_together_contract import direct

WAIT = 10.0  # bounded: a NOTIFY on loopback arrives in milliseconds


class Heard:
    """The peer ids another process's engine was told of."""

    def __init__(self) -> None:
        self.ids: set[int] = set()
        self.changed = asyncio.Event()

    def __call__(self, ids: Sequence[int]) -> None:
        self.ids.update(ids)
        self.changed.set()

    async def all_of(self, wanted: set[int]) -> None:
        while not wanted <= self.ids:
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), WAIT)


async def test_every_batch_s_wake_ups_reach_the_other_processes(postgres_server: Server) -> None:
    dsn = fresh_database(postgres_server)
    # One unit a batch: each send its own batch, the next one queued behind it.
    sender_side, other = PgEngine(dsn, batch_max=1), PgEngine(dsn)
    await sender_side.open()
    await other.open()
    heard = Heard()
    other.on_wake(heard)
    try:
        a = await peer(sender_side, "a")
        receivers = [await peer(sender_side, f"r{i}") for i in range(5)]
        gate = threading.Event()

        def held(_r: Repos) -> None:  # the writer waits here while the sends queue up
            gate.wait(WAIT)

        holding = asyncio.ensure_future(sender_side.write(held))
        sends = [
            asyncio.ensure_future(
                sender_side.write(Append(direct(a, r.name), Target(TargetKind.PEER, r.name), 0.0))
            )
            for r in receivers
        ]
        await asyncio.sleep(0)  # every send submitted behind the held unit
        gate.set()
        await asyncio.gather(holding, *sends)
        await heard.all_of({r.id for r in receivers})
        # Four sends each found the next queued and left their wake-ups to its COMMIT; the
        # last found none and told its own alone.
        assert sender_side.stats["write_wakes_carried"] == 4
        # And alone, with nothing queued behind it.
        late = await peer(sender_side, "late")
        await sender_side.write(Append(direct(a, "late"), Target(TargetKind.PEER, "late"), 0.0))
        await heard.all_of({late.id})
        assert sender_side.stats["write_wakes_carried"] == 4
    finally:
        await other.close()
        await sender_side.close()
