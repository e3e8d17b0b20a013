"""The storage contract for watch keys and tickets (ADR 0011): keys kept newest first, a
ticket spent once and never after it expired, one live ticket per peer, all of them gone with
the peer."""

from __future__ import annotations

from caucus.domain.peers import Peer, PeerState
from caucus.ids import hash_token
from caucus.services.watchers import key_holder, redeem_ticket
from caucus.storage.engine import Engine
from tests.contract.conftest import NOW
from tests.contract.test_store_contract import end, peer


async def add(db: Engine, p: Peer, digest: bytes, kind: str, at: float, keep: int) -> None:
    expires = at + 120 if kind == "ticket" else None
    await db.write(lambda r: r.watch.add(p.id, digest, kind, at, expires, keep))


async def holder(db: Engine, key: str) -> Peer | None:
    digest = hash_token(key)
    return await db.read(lambda r: key_holder(r, digest))


async def redeem(db: Engine, ticket: bytes, key: str, now: float) -> Peer | None:
    digest = hash_token(key)
    return await db.write(lambda r: redeem_ticket(r, ticket, digest, now))


async def test_keys_are_kept_newest_first_and_found_by_hash(db: Engine) -> None:
    bob = await peer(db, "bob")
    for i in range(5):
        await add(db, bob, hash_token(f"wk_{i}"), "key", NOW + i, 4)
    assert await holder(db, "wk_0") is None  # the oldest went
    found = await holder(db, "wk_4")
    assert found is not None
    assert found.name == "bob"
    assert await holder(db, "wt_not-a-key") is None


async def test_a_ticket_is_spent_once_within_its_time(db: Engine) -> None:
    bob = await peer(db, "bob")
    ticket = hash_token("wt_1")
    await add(db, bob, ticket, "ticket", NOW, 1)
    spent = await redeem(db, ticket, "wk_from_ticket", NOW + 1)
    assert spent is not None
    assert spent.name == "bob"
    assert await redeem(db, ticket, "wk_x", NOW + 2) is None
    found = await holder(db, "wk_from_ticket")
    assert found is not None
    assert found.name == "bob"
    late = hash_token("wt_late")
    await add(db, bob, late, "ticket", NOW, 1)
    assert await redeem(db, late, "wk_y", NOW + 121) is None


async def test_one_live_ticket_per_peer_and_nothing_outlives_the_peer(db: Engine) -> None:
    bob = await peer(db, "bob")
    first, second = hash_token("wt_a"), hash_token("wt_b")
    await add(db, bob, first, "ticket", NOW, 1)
    await add(db, bob, second, "ticket", NOW + 1, 1)
    assert await redeem(db, first, "wk_a", NOW + 2) is None
    await add(db, bob, hash_token("wk_kept"), "key", NOW, 4)
    await end(db, bob, PeerState.LEFT, NOW + 3)
    assert await holder(db, "wk_kept") is None
    assert await redeem(db, second, "wk_b", NOW + 4) is None
