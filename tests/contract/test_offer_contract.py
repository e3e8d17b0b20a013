"""The storage contract for the job board and announcements (issue 14: the contract first):
an offer is announced and opened or neither (caps), claims (one per claimant, never one's
own), selection (a task for the winner, notices for the rest, atomically) or withdrawal, the
task's ending settling its offer, expiry, and claimants racing."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from caucus.domain.messages import NewMessage
from caucus.domain.offers import Offer
from caucus.domain.tasks import TaskState
from caucus.errors import CapHourly, CapInterval, CapOpenOffers, Conflict, Forbidden, NotFound
from caucus.storage.base import Store
from tests.contract.test_store_contract import NOW, claim, peer
from tests.contract.test_task_contract import move

_ids = itertools.count(1)


def message(sender: Any, to: str, kind: str, ts: float = NOW, **meta: Any) -> NewMessage:
    return NewMessage(
        id=f"m_o{next(_ids)}",
        ts=ts,
        sender_id=sender.id,
        sender=sender.name,
        to=to,
        kind=kind,
        content=f"{kind} for {to}",
        meta=meta or None,
        joins_channel=False,
    )


async def post(
    store: Store,
    poster: Any,
    *,
    ts: float = NOW,
    ttl: float = 3600,
    max_open: int = 5,
    min_interval: float = 0,
    hourly: int = 100,
) -> Offer:
    offer_id = f"o_{next(_ids)}"
    offer, outcome = await store.create_offer(
        offer_id=offer_id,
        poster_id=poster.id,
        announcement=message(poster, "all", "announce", ts, offer_id=offer_id),
        subject="help wanted",
        payload="port the parser",
        required_skills=[{"id": "rust", "name": "rust"}],
        now=ts,
        expires_at=ts + ttl,
        max_open=max_open,
        min_interval=min_interval,
        hourly=hourly,
    )
    assert outcome.receipt.seq > 0
    return offer


async def take(store: Store, offer: Offer, claimant: Any, ts: float = NOW + 1) -> Offer:
    found, _ = await store.claim_offer(
        offer.id,
        claimant_id=claimant.id,
        claimant=claimant.name,
        note=None,
        now=ts,
        notice=lambda o: message(claimant, o.poster, "offer_claim", ts, offer_id=o.id),
    )
    return found


async def resolve(store: Store, offer: Offer, poster: Any, select: str | None) -> Any:
    def assign(o: Offer, winner: str) -> tuple[str, NewMessage, float]:
        task_id = f"t_o{next(_ids)}"
        return task_id, message(poster, winner, "task", NOW + 2, task_id=task_id), NOW + 3600

    def notice(o: Offer, claimant: str, how: str) -> NewMessage:
        return message(poster, claimant, f"offer_{how}", NOW + 2, offer_id=o.id)

    return await store.resolve_offer(
        offer.id, poster_id=poster.id, select=select, now=NOW + 2, assign=assign, notice=notice
    )


async def test_an_offer_is_announced_and_opened_together(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    offer = await post(store, alice)
    assert (offer.state, offer.poster, offer.winner) == ("open", "alice", None)
    assert [d.message.kind for d in (await claim(store, bob)).deliveries] == ["announce"]
    assert [o.id for o in await store.list_offers("open")] == [offer.id]


async def test_caps_refuse_the_offer_and_its_announcement_both(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    await post(store, alice, max_open=1)
    with pytest.raises(CapOpenOffers):
        await post(store, alice, max_open=1, ts=NOW + 100)
    with pytest.raises(CapInterval):
        await post(store, alice, min_interval=60, ts=NOW + 10)
    with pytest.raises(CapHourly):
        await post(store, alice, hourly=1, ts=NOW + 200)
    assert len(await store.list_offers(None)) == 1
    assert len((await claim(store, bob)).deliveries) == 1  # one announcement, not four


async def test_claims_one_per_claimant_never_ones_own(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    offer = await post(store, alice)
    with pytest.raises(Forbidden):
        await take(store, offer, alice)
    claimed = await take(store, offer, bob)
    assert [(c.claimant, c.state) for c in claimed.claims] == [("bob", "pending")]
    with pytest.raises(Conflict):
        await take(store, offer, bob)
    kinds = [d.message.kind for d in (await claim(store, alice)).deliveries]
    assert kinds == ["offer_claim"]


async def test_selecting_gives_the_winner_a_task_and_tells_the_rest(store: Store) -> None:
    alice, bob, carol = (
        await peer(store, "alice"),
        await peer(store, "bob"),
        await peer(store, "carol"),
    )
    offer = await post(store, alice)
    await take(store, offer, bob)
    await take(store, offer, carol)
    await claim(store, bob)  # the announcements, out of the way
    await claim(store, carol)
    with pytest.raises(Forbidden):
        await resolve(store, offer, bob, "bob")  # only the poster selects
    resolution = await resolve(store, offer, alice, "bob")
    assert (resolution.offer.state, resolution.offer.winner) == ("assigned", "bob")
    task_id = resolution.offer.task_id
    assert task_id is not None
    task = await store.get_task(task_id)
    assert task is not None
    assert (task.worker, task.state) == ("bob", TaskState.PENDING)
    states = {c.claimant: c.state for c in resolution.offer.claims}
    assert states == {"bob": "selected", "carol": "rejected"}
    bob_got = [d.message.kind for d in (await claim(store, bob, now=NOW + 3)).deliveries]
    carol_got = [d.message.kind for d in (await claim(store, carol, now=NOW + 3)).deliveries]
    assert (bob_got, carol_got) == (["task"], ["offer_not_selected"])
    with pytest.raises(Conflict):
        await resolve(store, offer, alice, "carol")  # assigned: it cannot be assigned again


async def test_the_tasks_ending_settles_its_offer(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    done = await post(store, alice)
    await take(store, done, bob)
    won = await resolve(store, done, alice, "bob")
    task = await store.get_task(won.offer.task_id)
    assert task is not None
    await move(store, task, bob, "worker", TaskState.COMPLETED, now=NOW + 5)
    settled = await store.get_offer(done.id)
    assert settled is not None
    assert settled.state == "completed"
    # A failed assignment re-opens the offer, for another claimant.
    again = await post(store, alice, ts=NOW + 10)
    await take(store, again, bob, ts=NOW + 11)
    second = await resolve(store, again, alice, "bob")
    failed = await store.get_task(second.offer.task_id)
    assert failed is not None
    await move(store, failed, bob, "worker", TaskState.FAILED, now=NOW + 12)
    reopened = await store.get_offer(again.id)
    assert reopened is not None
    assert (reopened.state, reopened.winner, reopened.task_id) == ("open", None, None)


async def test_withdrawal_tells_the_claimants_and_expiry_ends_the_open(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    withdrawn = await post(store, alice)
    await take(store, withdrawn, bob)
    await claim(store, bob)
    gone = await resolve(store, withdrawn, alice, None)
    assert gone.offer.state == "withdrawn"
    assert [d.message.kind for d in (await claim(store, bob, now=NOW + 3)).deliveries] == [
        "offer_withdrawn"
    ]
    stale = await post(store, alice, ttl=10, ts=NOW + 20)
    assert await store.expire_offers(NOW + 31) == 1
    ended = await store.get_offer(stale.id)
    assert ended is not None
    assert ended.state == "expired"
    assert await store.expire_offers(NOW + 32) == 0


async def test_an_unknown_offer_is_not_found(store: Store) -> None:
    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    ghost = Offer("o_ghost", "alice", None, "", [], "open", NOW, NOW, NOW + 1, None, None)
    with pytest.raises(NotFound):
        await take(store, ghost, bob)
    with pytest.raises(NotFound):
        await resolve(store, ghost, alice, None)


async def test_claimants_racing_each_get_one_claim(store: Store) -> None:
    alice = await peer(store, "alice")
    claimants = [await peer(store, f"c{i}") for i in range(6)]
    offer = await post(store, alice)
    await asyncio.gather(*(take(store, offer, c) for c in claimants))
    final = await store.get_offer(offer.id)
    assert final is not None
    assert sorted(c.claimant for c in final.claims) == sorted(c.name for c in claimants)


async def announce(store: Store, sender: Any, ts: float, **caps: Any) -> Any:
    msg = message(sender, "all", "announce", ts)
    return await store.append_announcement(
        msg, min_interval=caps.get("min_interval", 0), hourly=caps.get("hourly", 100)
    )


async def test_announcements_are_capped_per_sender_and_caught_up_by_newcomers(
    store: Store,
) -> None:
    from caucus.ids import hash_token, new_token

    alice, bob = await peer(store, "alice"), await peer(store, "bob")
    await announce(store, alice, NOW, min_interval=30)
    with pytest.raises(CapInterval):
        await announce(store, alice, NOW + 10, min_interval=30)
    await announce(store, bob, NOW + 10, min_interval=30)  # the interval is per sender
    await announce(store, alice, NOW + 40, min_interval=30, hourly=2)
    with pytest.raises(CapHourly):
        await announce(store, alice, NOW + 80, min_interval=30, hourly=2)
    await announce(store, alice, NOW + 3700, min_interval=30, hourly=2)  # an hour later
    # A newcomer catches up on what was announced since the window it is given.
    carol = await store.create_peer(
        name="carol",
        token_hash=hash_token(new_token()),
        skills=[],
        description="",
        now=NOW + 3701,
        announcements_since=NOW + 5,
    )
    caught = [d.message.ts for d in (await claim(store, carol, now=NOW + 3702)).deliveries]
    assert caught == [NOW + 10, NOW + 40, NOW + 3700]
