"""What waits for the disk (ADR 0041): a batch holding only claims commits without waiting,
anything else as the store is configured, on every backend."""

from __future__ import annotations

import asyncio

from caucus.domain.messages import ClaimRequest
from caucus.domain.slices import Slices
from caucus.services.delivery_units import Claim
from caucus.storage.engine import Engine
from caucus.storage.repos import Repos
from tests.contract.conftest import NOW
from tests.contract.test_store_contract import peer, send

RELAXED = (1, "off")  # SQLite's NORMAL (in WAL mode: no sync at commit), PostgreSQL's off


class Probe:
    """A unit that reports what its transaction's commit waits for."""

    together = None

    def __init__(self, *, durable: bool) -> None:
        self.durable = durable

    def __call__(self, r: Repos) -> object:
        return r.tx.value("commit_sync")


async def test_claims_alone_do_not_wait_for_the_disk_anything_beside_them_does(
    db: Engine,
) -> None:
    assert Claim.durable is False  # a receive's claim is a lease: losing it shows it again
    configured = await db.read(lambda r: r.tx.value("commit_sync"))
    assert await db.write(Probe(durable=False)) in RELAXED
    assert await db.write(Probe(durable=True)) == configured
    assert await db.write(lambda r: r.tx.value("commit_sync")) == configured  # a plain unit
    if db.dialect == "sqlite":
        assert configured == 2  # FULL: the hub's default
    # Queued together, the durable one decides for the batch.
    both = await asyncio.gather(db.write(Probe(durable=False)), db.write(Probe(durable=True)))
    assert list(both) == [configured, configured]


async def test_a_claim_committed_without_waiting_is_seen_by_the_next_one(db: Engine) -> None:
    a, b = await peer(db, "a"), await peer(db, "b")
    await send(db, a, "b", "one")
    request = ClaimRequest(b.id, NOW, 60, 10, None, False)
    first = await db.write(Claim(request))
    assert [d.message.content for d in first.deliveries] == ["one"]
    again = await db.write(Claim(request))
    assert again.deliveries == []  # hidden by the first claim, though it did not wait


async def test_housekeeping_slices_do_not_wait_for_the_disk(db: Engine) -> None:
    """Retention, the search index, the sent counts: redone after a power cut, so a send
    queued behind one of their slices does not wait for its sync too."""
    slices = Slices(lambda: 0.0, most=10, least=1)
    got = await db.write(slices.unit(lambda r, _size: r.tx.value("commit_sync"), lambda _: 0))
    assert got in RELAXED
