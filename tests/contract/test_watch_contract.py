"""The storage contract for watch keys and tickets (ADR 0011), the first repository cut out
of the store (issue 14): keys kept newest first, a ticket spent once and never after it
expired, one live ticket per peer, all of them gone with the peer."""

from __future__ import annotations

from caucus.domain.peers import PeerState
from caucus.ids import hash_token
from caucus.storage.base import Store
from tests.contract.test_store_contract import NOW, peer


async def test_keys_are_kept_newest_first_and_found_by_hash(store: Store) -> None:
    bob = await peer(store, "bob")
    for i in range(5):
        await store.create_watch_credential(bob.id, hash_token(f"wk_{i}"), "key", NOW + i, None, 4)
    assert await store.peer_by_watch_key(hash_token("wk_0")) is None  # the oldest went
    found = await store.peer_by_watch_key(hash_token("wk_4"))
    assert found is not None
    assert found.name == "bob"
    assert await store.peer_by_watch_key(hash_token("wt_not-a-key")) is None


async def test_a_ticket_is_spent_once_within_its_time(store: Store) -> None:
    bob = await peer(store, "bob")
    ticket, key = hash_token("wt_1"), hash_token("wk_from_ticket")
    await store.create_watch_credential(bob.id, ticket, "ticket", NOW, NOW + 120, 1)
    spent = await store.redeem_watch_ticket(ticket, key, NOW + 1, 4)
    assert spent is not None
    assert spent.name == "bob"
    assert await store.redeem_watch_ticket(ticket, hash_token("wk_x"), NOW + 2, 4) is None
    holder = await store.peer_by_watch_key(key)
    assert holder is not None
    assert holder.name == "bob"
    late = hash_token("wt_late")
    await store.create_watch_credential(bob.id, late, "ticket", NOW, NOW + 120, 1)
    assert await store.redeem_watch_ticket(late, hash_token("wk_y"), NOW + 121, 4) is None


async def test_one_live_ticket_per_peer_and_nothing_outlives_the_peer(store: Store) -> None:
    bob = await peer(store, "bob")
    first, second = hash_token("wt_a"), hash_token("wt_b")
    await store.create_watch_credential(bob.id, first, "ticket", NOW, NOW + 120, 1)
    await store.create_watch_credential(bob.id, second, "ticket", NOW + 1, NOW + 121, 1)
    assert await store.redeem_watch_ticket(first, hash_token("wk_a"), NOW + 2, 4) is None
    key = hash_token("wk_kept")
    await store.create_watch_credential(bob.id, key, "key", NOW, None, 4)
    await store.end_peer(bob.id, PeerState.LEFT, NOW + 3)
    assert await store.peer_by_watch_key(key) is None
    assert await store.redeem_watch_ticket(second, hash_token("wk_b"), NOW + 4, 4) is None
